"""The properties of issue #26: each a strategy for its cases, a check, and its share of a campaign.

Cheap inputs are grouped so one run checks many: the line and sidecar properties put many
sessions in one root and measure it in-process (`drive.run_in_process`); the others drive the
command line (`roots`, `interruptions`, `privacy`, and `inspect` here). `PROPERTIES` lists them
for the bounded profile (`test_fuzz.py`) and the campaign (`campaign.py`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from . import checks, drive, interruptions, privacy, roots
from .jsontext import line
from .mutations import Line, file_bytes, mutated_transcript
from .records import NAME_CANARY
from .sidecars import Sidecar, sidecars
from .trees import SessionPlan, Sub, TreePlan, build, rel
from .violations import Violation


@dataclass(frozen=True)
class Property:
    """One property: its cases (per profile), the check, and how many inputs one case holds."""

    name: str
    cases: Callable[[str], st.SearchStrategy]  # "bounded" or "campaign" -> a strategy of cases
    check: Callable[[object, Path], list[Violation]]
    inputs: Callable[[object], int]
    share: float  # of a campaign's cases
    split: Callable[[object], list] = lambda case: []  # the case's inputs as cases of one input each
    examples: tuple = ()  # explicit cases the bounded profile always runs


def _plain_tree(bodies, sub_for=None) -> TreePlan:
    sessions = tuple(SessionPlan(b"-home-" + NAME_CANARY.encode() + b"p", b"s%d" % i, body, sub_for(i) if sub_for else ())
                     for i, body in enumerate(bodies))
    return TreePlan(b"projects", sessions)


def _in_process_command(root: Path, out: Path, cache: Path | None, **opts) -> str:
    parts = ["python -m measure run --root", str(root), "--out", str(out)]
    parts += ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    if opts.get("replay"):
        parts += ["--replay", f"--replay-at={opts['replay']}"]
    return " ".join(parts) + "   # measured in-process with jobs=1 (run_measurement)"


# --- lines: mutated transcripts, many per root, in-process -----------------------------------


@dataclass(frozen=True)
class LinesCase:
    sessions: tuple[tuple[Line, ...], ...]
    replay: str | None
    cache: bool


def lines_cases(profile: str) -> st.SearchStrategy[LinesCase]:
    per_root = 12 if profile == "bounded" else 25
    return st.builds(LinesCase, st.lists(mutated_transcript(1, 8), min_size=1, max_size=per_root).map(tuple),
                     st.sampled_from([None, None, "turn_end", "final", "every:5"]), st.booleans())


def check_lines(case: LinesCase, work: Path) -> list[Violation]:
    prop = "lines"
    built = build(_plain_tree(case.sessions), work)
    found = []
    for path in sorted(built.paths.values()):
        escaped = drive.read_one(path, built.root)
        if escaped:
            found.append(Violation(prop, f"read_session raised {checks.normalize(escaped)}", f"{path}: {escaped}"))
    out, cache = work / "out", (work / "cache" if case.cache else None)
    command = _in_process_command(built.root, out, cache, replay=case.replay)
    run = drive.run_in_process(built.root, out, cache_dir=cache, replay=case.replay)
    found += checks.lost_in_process(prop, run, command)
    if run.lost and cache is not None:  # what a lost run hides: the same root without the cache
        out, cache = work / "out-no-cache", None
        command = _in_process_command(built.root, out, cache, replay=case.replay)
        run = drive.run_in_process(built.root, out, replay=case.replay)
        found += checks.lost_in_process(prop, run, command)
    if not run.lost:
        found += checks.reported(prop, built, out, command)
    return found


# --- sidecars: one subagent per session, many per root, in-process ---------------------------


_SUB_BODY = (Line(line({"type": "user", "timestamp": "2026-05-01T10:00:03.000Z", "isSidechain": True,
                        "message": {"role": "user", "content": "the subagent's prompt"}})),)


def sidecar_cases(profile: str) -> st.SearchStrategy[tuple[Sidecar, ...]]:
    return st.lists(sidecars(), min_size=1, max_size=15 if profile == "bounded" else 30).map(tuple)


def check_sidecars(case: tuple[Sidecar, ...], work: Path) -> list[Violation]:
    prop = "sidecars"
    plan = _plain_tree([(Line(line({"type": "user", "timestamp": "2026-05-01T10:00:01.000Z",
                                    "message": {"role": "user", "content": "look at the build"}})),)] * len(case),
                       lambda i: (Sub(b"agent-a%d.jsonl" % i, _SUB_BODY, case[i]),))
    built = build(plan, work)
    out = work / "out"
    command = _in_process_command(built.root, out, None)
    run = drive.run_in_process(built.root, out)
    found = checks.lost_in_process(prop, run, command)
    if run.lost:
        return found
    found += checks.reported(prop, built, out, command)
    broken_rows = {e["path"] for e in run.errors if e["kind"] == "broken_sidecar"}
    for i, sc in enumerate(case):
        meta = rel(built, os.path.join(os.fsencode(built.root), plan.sessions[i].project, b"s%d/subagents/agent-a%d.meta.json" % (i, i)))
        if not sc.broken and meta in broken_rows:
            found.append(Violation(prop, "a readable sidecar reported broken", f"{meta}: {sc.how}: {sc.data[:200]!r}", command))
    return found


# --- measure inspect on one mutated transcript ------------------------------------------------


@dataclass(frozen=True)
class InspectCase:
    body: tuple[Line, ...]
    flags: tuple[str, ...]


def inspect_cases(profile: str) -> st.SearchStrategy[InspectCase]:
    return st.builds(InspectCase, mutated_transcript(1, 8),
                     st.lists(st.sampled_from(["--json", "--show-prompt"]), unique=True).map(tuple))


def check_inspect(case: InspectCase, work: Path) -> list[Violation]:
    """`measure inspect` on a transcript shows it, or says in one line why it cannot (exit 2); it
    never prints a traceback or hangs."""
    prop = "inspect"
    path = work / "-home-x" / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(file_bytes(case.body))
    r = drive.measure("inspect", path, *case.flags, cwd=work)
    return checks.refused_or_completed(prop, r)  # exit 2 with its one line: akm's pipeline cannot show it


PROPERTIES = (
    Property("lines", lines_cases, check_lines, lambda c: len(c.sessions), 0.60,
             lambda c: [dataclasses.replace(c, sessions=(s,)) for s in c.sessions]),
    Property("sidecars", sidecar_cases, check_sidecars, len, 0.25, lambda c: [(s,) for s in c]),
    Property("trees", roots.tree_cases, roots.check_tree, lambda c: 1, 0.04, roots.split_tree, (roots.PLAIN_TREE,)),
    Property("options", roots.option_cases, roots.check_options, lambda c: 1, 0.04),
    Property("inspect", inspect_cases, check_inspect, lambda c: 1, 0.02),
    Property("redact", privacy.redact_cases, privacy.check_redact, lambda c: 1, 0.02),
    Property("changes", interruptions.change_cases, interruptions.check_changes, lambda c: 1, 0.02),
    Property("signals", interruptions.signal_cases, interruptions.check_signals, lambda c: len(c.steps), 0.01),
)
"""Shares are of inputs (a lines case holds up to 25 transcripts, a sidecar case up to 30)."""
