"""akm's `hashSessionContent`: sha256 over the canonical folded stream."""

from __future__ import annotations

import hashlib

from measure.akm.jscompat import to_utf8
from measure.akm.records import Event


def canonical(events: tuple[Event, ...] | list[Event]) -> str:
    """Role and text of every event, joined by newline-NUL-newline (ts and paths excluded)."""
    return "\n\0\n".join(f"{e.role}\n{e.text}" for e in events)


def content_hash(events: tuple[Event, ...] | list[Event]) -> str:
    """Lowercase hex sha256 of the canonical string's UTF-8 (lone surrogates as U+FFFD)."""
    h = hashlib.sha256()
    _feed(h, events, 0, len(events))
    return h.hexdigest()


def _feed(h, events, start: int, stop: int) -> None:
    """Add events[start:stop] to `h`, the hash of events[:start] (separator first unless start is 0).

    Fed in batches of events: one string per batch keeps per-event overhead low, and a 90 MB
    session never becomes one giant string. The pieces are joined once (an f-string per event
    would copy every text one more time).
    """
    for i in range(start, stop, 512):
        parts: list[str] = []
        add = parts.append
        for e in events[i : min(i + 512, stop)]:
            add(e.role)
            add("\n")
            add(e.text)
            add("\n\0\n")
        parts.pop()
        if i:
            h.update(b"\n\x00\n")
        h.update(to_utf8("".join(parts)))


class PrefixHashes:
    """`content_hash(events[:k])` for a growing k, each in time proportional to the events added
    since the last one (a replay hashes a session at many moments of its growth)."""

    def __init__(self, events: tuple[Event, ...] | list[Event]):
        self.events = events
        self._h = hashlib.sha256()
        self._n = 0

    def of(self, k: int) -> str:
        """The hash of the first `k` events; `k` never decreases from one call to the next."""
        if k < self._n:
            raise ValueError(f"prefix {k} is shorter than the last one ({self._n})")
        _feed(self._h, self.events, self._n, k)
        self._n = k
        return self._h.copy().hexdigest()
