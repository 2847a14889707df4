"""A long fuzzing campaign (`make fuzz`): every property, a seed, a case budget, a summary.

Each property gets its share of the budget (in inputs: a line case holds many transcripts) and
runs in rounds of Hypothesis examples. A case whose violations are all of classes already
found is counted and passes; a case with a new class fails, so Hypothesis shrinks it to a
minimal example and the round ends; the next round (a seed derived from the campaign's) goes
on with what is left of the budget. So every class of failure is found once, shrunk once and
counted always. Each minimal case is then run again into `<out>/failures/<n>/` so that the
commands in the summary can be pasted. The summary (cases per property, every failure with its
minimal example, whether issue #26 lists it, the duration) goes to `<out>/summary.md` and
stdout; the exit code is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as fixed_seed

from . import drive, known
from .properties import PROPERTIES, Property
from .violations import PropertyViolated, raised

MAX_ROUNDS = 40


@dataclass
class Found:
    """One class of failure: how often it was seen, and its minimal example."""

    signature: str
    count: int = 0
    example: str = ""  # Hypothesis's "Falsifying example", the minimal case
    violation: str = ""  # what the minimal case did, with the command (re-run into the report)
    case: object = None


@dataclass
class Tally:
    prop: Property
    examples: int = 0
    inputs: int = 0
    seconds: float = 0.0
    found: dict[str, Found] = field(default_factory=dict)
    seen: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)  # the fuzzer's own failures


@contextlib.contextmanager
def shrink_budget(seconds: float):
    """Bound the time Hypothesis spends shrinking one failure (its own cap is 300 s; a case
    here costs up to a few CLI runs, so each failure would take minutes)."""
    from hypothesis.internal.conjecture import engine

    old = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if old is None:
        yield
        return
    engine.MAX_SHRINKING_SECONDS = seconds
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = old


def _violations_of(exc: BaseException):
    """The PropertyViolated exceptions inside `exc` (groups, flaky failures and causes included)."""
    if isinstance(exc, PropertyViolated):
        yield exc
    for inner in getattr(exc, "exceptions", ()) or ():
        yield from _violations_of(inner)


def _round(tally: Tally, examples: int, seed: int, budget_s: float) -> None:
    prop = tally.prop
    shrink = [Phase.shrink] if budget_s > 0 else []

    @fixed_seed(seed)
    @settings(max_examples=examples, database=None, deadline=None, derandomize=False, report_multiple_bugs=True,
              phases=[Phase.generate, *shrink], suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
              print_blob=False)
    @given(prop.cases("campaign"))
    def case_passes(case):
        with tempfile.TemporaryDirectory(prefix=f"measure-fuzz-{prop.name}-") as work:
            violations = prop.check(case, Path(work))
        tally.examples += 1
        tally.inputs += prop.inputs(case)
        for v in violations:
            tally.seen[v.signature] += 1
        new = [v for v in violations if v.signature not in tally.found]
        if new:
            exc = raised(new)
            exc.case = case
            raise exc

    try:
        with shrink_budget(budget_s):
            case_passes()
    except Exception as exc:  # noqa: BLE001 - a failing round is the point; our own bugs are reported too
        caught = list(_violations_of(exc))
        if not caught:
            tally.errors.append(f"{type(exc).__name__}: {exc}"[:3000])
        for v in caught:
            sig = type(v).signature
            if sig in tally.found:
                continue
            case = getattr(v, "case", None)
            tally.found[sig] = Found(sig, example=_shown(case), violation=str(v), case=case)


def _shown(case) -> str:
    """A minimal case as Hypothesis would print it (our cases are frozen dataclasses)."""
    import pprint

    return pprint.pformat(case, width=110, compact=True)


def run_property(prop: Property, cases: int, seed: int, shrink_s: float) -> Tally:
    tally = Tally(prop)
    t0 = time.monotonic()
    per_case = None  # inputs per example: measured on a first round of a few examples
    for n in range(MAX_ROUNDS):
        left = cases - tally.inputs
        if left <= 0:
            break
        examples = min(left, 5) if per_case is None else max(1, math.ceil(left / per_case))
        before = tally.examples
        _round(tally, examples, seed * 1_000 + n, shrink_s)
        if tally.examples:
            per_case = max(1.0, tally.inputs / tally.examples)
        if tally.examples == before and tally.errors:
            break  # the fuzzer itself is broken: say so instead of looping
    tally.seconds = time.monotonic() - t0
    return tally


def replay_failures(tallies: list[Tally], out: Path) -> None:
    """Run every minimal case again with its folders kept under `out/failures/`, so the commands
    in the summary point at files that exist."""
    for t in tallies:
        for i, f in enumerate(t.found.values()):
            if f.case is None:
                continue
            folder = out / "failures" / f"{t.prop.name}-{i}-{hashlib.sha256(f.signature.encode()).hexdigest()[:8]}"
            folder.mkdir(parents=True, exist_ok=True)
            drive.KEEP.append(folder)
            try:
                again = []
                for k, case in enumerate([*t.prop.split(f.case), f.case]):  # one input alone, if one alone fails
                    before = set(folder.iterdir())
                    work = folder / f"work-{k}"
                    work.mkdir(exist_ok=True)
                    again = [v for v in t.prop.check(case, work) if v.signature == f.signature]
                    if again:
                        f.case, f.example = case, _shown(case)
                        break
                    for left in set(folder.iterdir()) - before:
                        drive.remove_tree(left)
                if again:
                    f.violation = str(again[0])
                else:
                    f.violation += "\n  (did not fail again when replayed: timing-dependent)"
            except Exception as exc:  # noqa: BLE001
                f.violation += f"\n  (replay failed: {type(exc).__name__}: {exc})"
            finally:
                drive.KEEP.pop()


def _cut(text: str, limit: int = 6000) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters: see summary.json)"


def summary(tallies: list[Tally], seed: int, cases: int, seconds: float) -> str:
    lines = [f"# measure fuzz campaign: seed {seed}, {cases} cases asked, {seconds:.0f} s", ""]
    lines += ["| property | examples | inputs checked | seconds | failure classes | failing cases |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for t in tallies:
        lines.append(f"| {t.prop.name} | {t.examples} | {t.inputs} | {t.seconds:.0f} | {len(t.found)} | {sum(t.seen.values())} |")
    total_inputs = sum(t.inputs for t in tallies)
    lines += ["", f"{total_inputs} inputs in {sum(t.examples for t in tallies)} examples (shrinking runs included).", ""]
    n = 0
    for t in tallies:
        for f in t.found.values():
            n += 1
            entry = known.explain(f.signature)
            status = f"known (issue #26): {entry.test}" if entry else "NEW: not in issue #26's list"
            lines += [f"## {n}. {f.signature}", "", f"- seen in {t.seen[f.signature]} case(s); {status}", "", "```",
                      f.violation[:3000], "```", "", "minimal example:", "", "```", _cut(f.example), "```", ""]
        for err in t.errors:
            n += 1
            lines += [f"## {n}. the fuzzer itself failed on {t.prop.name}", "", "```", err, "```", ""]
    if n == 0:
        lines.append("No failures.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cases", type=int, default=2_000, help="inputs to check in all, shared out by PROPERTIES' shares")
    p.add_argument("--out", type=Path, default=Path("build/fuzz"))
    p.add_argument("--only", help="comma-separated property names")
    p.add_argument("--shrink-seconds", type=float, default=90.0, help="time to shrink each failure (0: no shrinking)")
    args = p.parse_args(argv)
    props = [q for q in PROPERTIES if not args.only or q.name in args.only.split(",")]
    share = sum(q.share for q in props)
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    tallies = []
    for i, prop in enumerate(props):
        budget = max(1, round(args.cases * prop.share / share))
        print(f"[fuzz] {prop.name}: {budget} inputs ...", file=sys.stderr, flush=True)
        tallies.append(run_property(prop, budget, args.seed * 100 + i, args.shrink_seconds))
        t = tallies[-1]
        print(f"[fuzz] {prop.name}: {t.examples} examples, {t.inputs} inputs, {len(t.found)} failure class(es), "
              f"{t.seconds:.0f} s", file=sys.stderr, flush=True)
    replay_failures(tallies, args.out.resolve())
    text = summary(tallies, args.seed, args.cases, time.monotonic() - t0)
    (args.out / "summary.md").write_text(text, encoding="utf-8")
    (args.out / "summary.json").write_text(json.dumps([
        {"property": t.prop.name, "examples": t.examples, "inputs": t.inputs, "seconds": round(t.seconds, 1),
         "failures": [{"signature": f.signature, "count": t.seen[f.signature], "known": bool(known.explain(f.signature)),
                       "violation": f.violation, "example": f.example} for f in t.found.values()],
         "fuzzer_errors": t.errors} for t in tallies], indent=1), encoding="utf-8")
    sys.stdout.write(text)
    return 1 if any(t.found or t.errors for t in tallies) else 0
