"""`--session` selection: full ids, root-relative paths or id prefixes (the short ids reports show)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Sequence

from measure.akm.read import rel
from measure.runner.redact import redact


class UnknownSessions(ValueError):
    """Raised when a `--session` value matches no listed session; names the closest ids."""

    def __init__(self, missing: dict[str, list[str]], listed: int):
        self.missing, self.listed = missing, listed
        parts = [f"no session matches {value!r}" + (f"; closest: {', '.join(map(_printable, closest))}" if closest else "")
                 for value, closest in missing.items()]
        if not listed:
            parts.append("(no sessions were listed under the root)")
        super().__init__("; ".join(parts))

    def __reduce__(self):  # pickled by its own arguments: raised in `measure report`'s child, re-raised in the parent
        return type(self), (self.missing, self.listed)


def _printable(session_id: str) -> str:
    """The id as one line of plain text: an id is a file name, and one holding a newline or an
    escape sequence must neither forge a line of output nor reach the terminal raw."""
    return session_id if session_id.isprintable() else repr(session_id)[1:-1]


def matches(value: str, session_id: str, session_path: str) -> bool:
    """A value names a session by its id, its root-relative path (with or without .jsonl) or an id
    prefix; a `sha256:` prefix names it by its id as a `--redact` report shows it."""
    if value.startswith("sha256:"):
        return redact(session_id).startswith(value)
    return value in (session_id, session_path, session_path.removesuffix(".jsonl")) or session_id.startswith(value)


def closest_ids(value: str, ids: Iterable[str], n: int = 3) -> list[str]:
    """The `n` ids most like `value` (by prefix, then difflib similarity), best first."""
    ids = sorted(set(ids))
    key = value.split("/")[-1].removesuffix(".jsonl")

    def score(i: str) -> tuple[float, str]:
        return (-(len(os.path.commonprefix([key, i])) + difflib.SequenceMatcher(None, key, i).ratio()), i)

    return sorted(ids, key=score)[:n]


def select_sessions(listings: Sequence, wanted: Iterable[str], root: str, redacted: bool = False) -> list:
    """The listings named by `wanted` (listing order kept); raises UnknownSessions for a value naming
    none, with the closest ids (`redacted`: as a `--redact` report shows them, which select them too)."""
    wanted = list(dict.fromkeys(wanted))
    paths = [rel(s.path, root) for s in listings]
    chosen = [s for s, p in zip(listings, paths) if any(matches(w, s.session_id, p) for w in wanted)]
    missing = {w: closest_ids(w, [redact(s.session_id) if redacted else s.session_id for s in listings])
               for w in wanted if not any(matches(w, s.session_id, p) for s, p in zip(listings, paths))}
    if missing:
        raise UnknownSessions(missing, len(listings))
    return chosen
