"""akm's `hashSessionContent`: sha256 over the canonical folded stream."""

from __future__ import annotations

import hashlib

from measure.akm.jscompat import to_utf8
from measure.akm.records import Event


def canonical(events: tuple[Event, ...] | list[Event]) -> str:
    """Role and text of every event, joined by newline-NUL-newline (ts and paths excluded)."""
    return "\n\0\n".join(f"{e.role}\n{e.text}" for e in events)


def content_hash(events: tuple[Event, ...] | list[Event]) -> str:
    """Lowercase hex sha256 of the canonical string's UTF-8 (lone surrogates as U+FFFD).

    Fed in batches of events: one string per batch keeps per-event overhead low, and a 90 MB
    session never becomes one giant string. The pieces are joined once (an f-string per event
    would copy every text one more time).
    """
    h = hashlib.sha256()
    for i in range(0, len(events), 512):
        parts: list[str] = []
        for e in events[i : i + 512]:
            parts.extend((e.role, "\n", e.text, "\n\0\n"))
        parts.pop()
        if i:
            h.update(b"\n\x00\n")
        h.update(to_utf8("".join(parts)))
    return h.hexdigest()
