"""Breakdowns by project, Claude Code version and month: sessions, subagent share, eviction, calls.

The Claude Code version is the `version` field of transcript lines, which akm's reader drops: the
`tasks` collector counts it per file in the run's single read (`Timeline.versions`). A session's version is the one
most of its parent's lines carry (ties: the newest); when the parent carries none, its subagents'.
Its month is the UTC month of its first event (akm's `startedAt`), its project the first folder of
its path under the root.
"""

from __future__ import annotations

import re
from collections import Counter

from measure.measurements.tasks import iso_time
from measure.numbers import percent, rounded

DIMENSIONS = ("project", "cc_version", "month")
"""The breakdown table's dimensions, in its sort order."""


UNKNOWN = "unknown"
"""The value of a dimension a session does not carry (no version line, no timestamp)."""


def version_key(version: str) -> tuple:
    """Order versions as numbers where they are numbers: 2.1.10 after 2.1.9."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-+]", version))


def session_version(per_file: dict[str, dict[str, int]]) -> tuple[str | None, int]:
    """The session's Claude Code version and how many distinct versions its files carry.

    `per_file`: per file label, parent first, its version counts (`Timeline.versions`).
    """
    files = list(per_file.values())
    everything = sum(map(Counter, files), Counter())
    source = files[0] if files and files[0] else everything
    if not source:
        return None, 0
    best = max(source.items(), key=lambda vn: (vn[1], version_key(vn[0])))  # the most lines, then the newest
    return best[0], len(everything)


def session_info_rows(session_path: str, started_at_ms: float | None, per_file: dict[str, dict[str, int]]) -> list[dict]:
    """One row: what the session can be grouped by (project, Claude Code version, month)."""
    version, versions = session_version(per_file)
    started = iso_time(started_at_ms) if started_at_ms else None  # None beyond JS's Date range (a -1e308 timestamp)
    return [{"project": session_path.split("/", 1)[0] if "/" in session_path else "", "cc_version": version,
             "cc_versions": versions, "month": started[:7] if started else None, "started_at": started}]


def breakdown_rows(info: list[dict], sessions: list[dict], eviction: list[dict], subagents: list[dict]) -> list[dict]:
    """Per project, per Claude Code version and per month: sessions, subagent share, eviction, calls.

    Built from the per-session tables of one run (at its budget). Eviction percentages are of the
    group's summed parent chars kept alone; calls are summed over the group's sessions.
    """
    calls = {(row["session_path"], row["strategy"]): row["llm_calls"] for row in sessions}
    parent_chars = {row["session_path"]: row["raw_chars"] for row in sessions if row["strategy"] == "link"}
    sub_chars: Counter[str] = Counter()
    for row in subagents:
        sub_chars[row["session_path"]] += row["chars"] or 0
    sub_files = Counter(row["session_path"] for row in subagents)
    evicted = {(r["session_path"], r["strategy"]): (r["evicted_chars"], r["alone_parent_kept_chars"]) for r in eviction}

    groups: dict[tuple[str, str], list[str]] = {}
    for row in info:
        for dim in DIMENSIONS:
            groups.setdefault((dim, UNKNOWN if row[dim] is None else row[dim]), []).append(row["session_path"])

    def total(paths: list[str], strategy: str, which: int) -> int:
        return sum(evicted[(p, strategy)][which] for p in paths if (p, strategy) in evicted)

    out = []
    for (dim, value), paths in sorted(groups.items(), key=lambda kv: (DIMENSIONS.index(kv[0][0]), kv[0][1])):
        subs = sum(sub_chars[p] for p in paths)
        link_calls = sum(calls.get((p, "link"), 0) for p in paths)
        chunked_calls = sum(calls.get((p, "chunked"), 0) for p in paths)
        out.append({
            "dimension": dim, "value": value, "sessions": len(paths),
            "sessions_with_subagents": sum(1 for p in paths if sub_files[p]),
            "subagent_files": sum(sub_files[p] for p in paths),
            "subagent_chars_pct": percent(subs, subs + sum(parent_chars.get(p, 0) for p in paths)),
            "fold_evicted_chars": total(paths, "fold", 0),
            "fold_evicted_pct": percent(total(paths, "fold", 0), total(paths, "fold", 1)),
            "hybrid_evicted_pct": percent(total(paths, "hybrid", 0), total(paths, "hybrid", 1)),
            "llm_calls_link": link_calls, "llm_calls_chunked": chunked_calls,
            "chunked_multiplier": rounded(chunked_calls / link_calls, 2) if link_calls else None,
        })
    return out
