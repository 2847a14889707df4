"""The `tokens` table: native API usage per session x origin, one call per `message.id`.

Claude Code writes one line per content block of a response, each carrying the response's
`usage` (claude-code-format.md §6), and re-embeds subagent messages in the parent as
`progress/agent_progress` lines. The `usage` collector therefore keeps, per file, the usage of
the LAST line of each `message.id` (a line without an id is a call of its own), skips every
`progress` line, and also sums every assistant line's usage as it comes (the naive per-line sum
that per-line tools report). Subagent spend comes from the subagent files themselves.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from operator import add

from measure.akm.jscompat import MAX_EXACT
from measure.akm.records import Session
from measure.measurements.lines import collector
from measure.measurements.subagents import Subagent

#: usage fields in the order of `Call.usage` / `Usage.fields`.
FIELDS = ("input_tokens", "cache_creation_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens",
          "cache_read_tokens", "output_tokens")

SUMMED = tuple((f, FIELDS.index(f)) for f in ("input_tokens", "cache_creation_tokens", "cache_read_tokens", "output_tokens"))
"""The usage fields that naive sums and wake-up rows report, with their index into `Call.usage`."""

ORIGINS = ("parent", "task_agent", "workflow_agent", "fork", "compaction_helper", "side_question", "other", "total")
"""Row order of the tokens table within a session (the sort key uses `origin_order`); a subagent's origin is
its kind (`subagents.classify`), `other` for an unknown one."""


@dataclass(frozen=True, slots=True)
class Call:
    """One API call: the line its first block was written on, and the last line's usage."""

    line: int  # first line of the message id (where the response starts, for turn attribution)
    usage: tuple[int, int, int, int, int, int]  # FIELDS
    model: str | None
    placeholder_output: bool  # written by CC >= 2.1 (or no version): output_tokens is a streaming placeholder


@dataclass(frozen=True, slots=True)
class Usage:
    """A file's API calls in order of first line, the naive per-line sums, and what was skipped."""

    calls: tuple[Call, ...]
    naive_lines: int  # assistant lines with a usage object
    naive: tuple[int, int, int, int, int, int]  # FIELDS summed over every such line
    progress_usage_lines: int  # progress lines re-embedding a message with usage (never counted)


def usage_tuple(u: dict) -> tuple[int, int, int, int, int, int]:
    """The six counted fields of a `usage` object (missing or non-integer values are 0)."""
    cc = u.get("cache_creation")
    if type(cc) is dict:
        c5, c1 = cc.get("ephemeral_5m_input_tokens"), cc.get("ephemeral_1h_input_tokens")
    else:
        c5 = c1 = 0
    i, c, r, o = u.get("input_tokens"), u.get("cache_creation_input_tokens"), u.get("cache_read_input_tokens"), u.get("output_tokens")
    # _int inlined: this runs once per assistant line
    return (
        i if type(i) is int and i > 0 else _huge(i) if type(i) is float else 0,
        c if type(c) is int and c > 0 else _huge(c) if type(c) is float else 0,
        c5 if type(c5) is int and c5 > 0 else _huge(c5) if type(c5) is float else 0,
        c1 if type(c1) is int and c1 > 0 else _huge(c1) if type(c1) is float else 0,
        r if type(r) is int and r > 0 else _huge(r) if type(r) is float else 0,
        o if type(o) is int and o > 0 else _huge(o) if type(o) is float else 0,
    )


def _huge(v: float) -> int:
    """An integer past 64 bits, which orjson reads as a float (infinity past a double): kept as an
    integer, which the run clamps and counts (measure.runner.job.clamp_counts); other floats are 0."""
    return int(min(v, 2.0**64)) if v > MAX_EXACT else 0


def placeholder_version(version) -> bool:
    """True when a line's CC `version` writes placeholder output_tokens (2.1.x and later, or unknown)."""
    if type(version) is str:
        with suppress(ValueError):  # not two numbers: unknown
            major, minor = (int(p) for p in version.split(".")[:2])
            return (major, minor) >= (2, 1)
    return True


@collector("usage")
class UsageCollector:
    """Per file: the last usage of each message id, and the naive per-line sums."""

    TYPES = frozenset({"assistant", "progress"})

    __slots__ = ("calls", "naive", "naive_lines", "progress_lines", "_version", "_placeholder")

    def __init__(self, label: str):
        self.calls: dict[str, list] = {}  # id -> [first line, usage, model, placeholder]
        self.naive = [0] * 6
        self.naive_lines = 0
        self.progress_lines = 0
        self._version: object = None  # the last line's `version` and its verdict: lines repeat it
        self._placeholder = True

    def __call__(self, record: dict, line: int) -> None:
        kind = record.get("type")
        if kind == "progress":
            data = record.get("data")
            inner = data.get("message") if type(data) is dict else None
            msg = inner.get("message") if type(inner) is dict else None
            if type(msg) is dict and type(msg.get("usage")) is dict:
                self.progress_lines += 1
            return
        msg = record.get("message")  # an assistant line: TYPES routes no other here
        if type(msg) is not dict or type(msg.get("usage")) is not dict:
            return
        u = usage_tuple(msg["usage"])
        self.naive_lines += 1
        self.naive = list(map(add, self.naive, u))
        mid = msg.get("id")
        if type(mid) is not str or not mid:
            mid = f"\0line{line}"  # no id: a call of its own
        model = msg.get("model")
        if type(model) is not str:
            model = None
        version = record.get("version")
        if type(version) is not str:  # any other value reads as no version (and may nest too deep for `!=`)
            version = None
        if version != self._version:
            self._version, self._placeholder = version, placeholder_version(version)
        found = self.calls.get(mid)
        if found is None:
            self.calls[mid] = [line, u, model, self._placeholder]
        else:  # the last line of an id wins (its usage is final); the first line keeps the position
            found[1], found[2], found[3] = u, model or found[2], self._placeholder

    def result(self) -> Usage:
        calls = tuple(Call(*c) for c in self.calls.values())
        return Usage(calls, self.naive_lines, tuple(self.naive), self.progress_lines)


def token_rows(session: Session, usage: dict[str, Usage], subagents: dict[str, Subagent]) -> list[dict]:
    """One row per origin (see ORIGINS) with API calls, the parent always, then the session's total."""
    origins = {path: sub.kind if sub.kind in ORIGINS else "other" for path, sub in subagents.items()}
    origins[session.parent.path] = "parent"
    groups: dict[str, list[Usage]] = {"parent": []}
    for path, u in usage.items():
        groups.setdefault(origins.get(path, "other"), []).append(u)
    rows = [_row(o, groups[o]) for o in ORIGINS[:-1] if o == "parent" or any(u.calls or u.naive_lines for u in groups.get(o, ()))]
    rows.append(_row("total", list(usage.values())))
    return rows


def _row(origin: str, files: list[Usage]) -> dict:
    calls = [c for u in files for c in u.calls]
    dedup = [sum(c.usage[i] for c in calls) for i in range(6)]
    naive = [sum(u.naive[i] for u in files) for i in range(6)]
    models = sorted({c.model for c in calls if c.model})
    return {
        "origin": origin, "origin_order": ORIGINS.index(origin), "files": sum(1 for u in files if u.calls),
        "api_calls": len(calls), **dict(zip(FIELDS, dedup)),
        "output_tokens_is_lower_bound": any(c.placeholder_output for c in calls), "models": ",".join(models) or None,
        "naive_lines": sum(u.naive_lines for u in files), **{f"naive_{f}": naive[i] for f, i in SUMMED},
        "progress_usage_lines": sum(u.progress_usage_lines for u in files),
    }
