"""Raw-line collectors: what the suite's own tables need from transcript lines akm's events drop.

akm's reader keeps only (role, ts, text) per line. Tables such as tokens, wake-ups or background
tasks need fields it passes over (`message.id`, `usage`, `queue-operation`, `toolUseResult`, ...).
They must not read the files a second time: each table family registers a collector here, the
per-session job hands `SessionLines.observe` to `read_session`, and the reader shows every parsed
JSON object to every collector in the same pass.

A collector is a class registered with `@collector("name")`: one instance per transcript file,
called as `instance(record, line_number)` for each object line whose `type` is in its `TYPES`
(a set of record types; a collector without `TYPES` sees every line),
and asked for `result()` once the file is read. The observer routes each line by its `type`
once, so a line reaches only the collectors that read its type. Keep what it stores small
(numbers, ids, short strings): it lives as long as the session is being measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


COLLECTORS: dict[str, type] = {}


def collector(name: str) -> Callable[[type], type]:
    """Register a per-file line collector (the class the module doc describes) under `name`."""

    def register(cls: type) -> type:
        COLLECTORS[name] = cls
        return cls

    return register


class SessionLines:
    """The collectors of one session's files; `observe` is what `read_session` takes."""

    def __init__(self, names: tuple[str, ...] | None = None):
        self.names = tuple(COLLECTORS) if names is None else names
        self._files: dict[str, dict[str, Any]] = {}

    def observe(self, label: str) -> Callable[[dict, int], None]:
        instances = {name: COLLECTORS[name](label) for name in self.names}
        self._files[label] = instances
        found = tuple(instances.values())
        routes: dict[str | None, tuple] = {}  # record type -> the collectors that read it

        def each(record: dict, line: int) -> None:
            kind = record.get("type")
            if type(kind) is not str:
                kind = None  # an absent or non-string `type`: no collector names it
            calls = routes.get(kind)
            if calls is None:
                calls = routes[kind] = tuple(c for c in found if kind in getattr(type(c), "TYPES", {kind}))  # no TYPES: every type
            for call in calls:
                call(record, line)

        return each

    def get(self, name: str) -> dict[str, Any]:
        """Collector `name`'s result per file label, in read order (parent first)."""
        return {label: found[name].result() for label, found in self._files.items() if name in found}
