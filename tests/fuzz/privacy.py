"""Redaction and privacy: no planted canary leaves the machine where the README says none does.

Every name and id of a generated tree (project folders, session and agent ids, tool-use ids,
agent types, the root's own name) carries `NAME_CANARY`, every transcript text `TEXT_CANARY`.
Under `--redact` neither may appear in any output file, file name, cache entry, stdout or
stderr — of a run, a warm re-run from the cache, or a `--session` that matches nothing. Without
`--redact` and `--show-excerpts`, no transcript text may appear in the tables. (Claude Code
versions, model names and notification statuses carry no canary: issue #26 leaves what
`--redact` does with them to be decided.)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from . import checks, drive
from .records import CANARIES, NAME_CANARY, TEXT_CANARY
from .trees import TreePlan, build, tree_plans
from .violations import Violation


@dataclass(frozen=True)
class RedactCase:
    plan: TreePlan
    show_excerpts: bool
    nomatch: bool


def redact_cases(profile: str) -> st.SearchStrategy[RedactCase]:
    plans = tree_plans(max_projects=2, max_sessions=3).map(lambda p: dataclasses.replace(p, root_name=NAME_CANARY.encode() + b"root"))
    return st.builds(RedactCase, plans, st.booleans(), st.booleans())


def _streams(label: str, r: drive.Result) -> dict[str, bytes]:
    return {f"stderr of {label}": r.stderr.encode(), f"stdout of {label}": r.stdout.encode()}


def check_redact(case: RedactCase, work: Path) -> list[Violation]:
    prop = "redact"
    found: list[Violation] = []
    with drive.shared_folder("measure-fuzz-red-") as base:
        built = build(case.plan, base)
        cache = base / "cache"
        excerpts = ("--show-excerpts",) if case.show_excerpts else ()
        runs = {}
        for label, out in (("run", "out-1"), ("warm re-run", "out-2")):
            runs[label] = drive.measure("run", "--root", built.root, "--out", base / out, "--redact", "--cache-dir", cache, *excerpts, cwd=base)
            found += checks.completed(prop, runs[label])
        if case.nomatch:
            r = drive.measure("run", "--root", built.root, "--out", base / "out-3", "--redact", "--no-cache", "--session=zzzz", cwd=base)
            found += checks.refused_or_completed(prop, r)
            runs["--session matching nothing"] = r
        places: dict[str, bytes] = {}
        for folder in ("out-1", "out-2", "out-3", "cache"):
            if (base / folder).exists():
                places.update(checks.folder_contents(base / folder))
        for label, r in runs.items():
            places.update(_streams(label, r))
        command = runs["run"].shown()
        found += checks.canaries(prop, CANARIES, places, command)
        plain = drive.measure("run", "--root", built.root, "--out", base / "out-4", "--no-cache", cwd=base)
        found += checks.completed("plain tables", plain)
        found += checks.canaries("plain tables (no --show-excerpts)", (TEXT_CANARY,), checks.folder_contents(base / "out-4"), plain.shown())
    return found
