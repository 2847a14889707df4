"""Whole roots through the command line: generated trees, and hostile option sets.

A tree is measured six times: without a cache by `--jobs 1` and `--jobs 2`, into a cold
cache, from the warm cache, then, after one session changed, from the cache again and without
it. Every run must complete; the errors table must hold every row the tree requires;
the tables must be byte-identical across jobs, cold/warm cache and the round trip; the root,
and everything outside the outputs and the cache, must be unchanged, and nothing the suite did
not write may vanish from a `--cache-dir`. Trees run as an unprivileged user where the machine
allows it, so `chmod 000` bites. An option set must be refused at parse time (exit 2, one
line) or run to completion, and neither may leave anything behind.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from . import checks, drive, options
from .jsontext import line
from .mutations import Line
from .records import TEXT_CANARY
from .sidecars import Sidecar
from .trees import SessionPlan, Sub, TreePlan, build, tree_plans
from .violations import Violation

FOREIGN_RUNS = 10  # the analyst's own folders under a --cache-dir's runs/ (the cache keeps 8 of its own)
CLI_GUARD_S = drive.HANG_GUARD_S
SLASH_GUARD_S = 30.0  # a walk of the whole filesystem: enough to tell a bounded walk from a hang
OPTION_GUARD_S = 20.0  # a run of the option property's two-session root takes about a second


# --- trees: whole roots through the CLI, --jobs 1/2, cold/warm/partial cache ------------------


@dataclass(frozen=True)
class TreeCase:
    plan: TreePlan
    unprivileged: bool
    foreign_cache: bool


def tree_cases(profile: str) -> st.SearchStrategy[TreeCase]:
    can_drop = drive.unprivileged_uid() is not None
    slash = profile == "campaign"

    @st.composite
    def case(draw):
        unprivileged = can_drop and draw(st.integers(0, 9)) < 6
        # The bounded profile has two trees: each with several sessions, so that --jobs 2 runs a
        # pool and the round trip reads sessions back from the cache.
        plan = draw(tree_plans(perms=unprivileged or drive.permissions_bite() and not can_drop, slash=slash,
                               min_sessions=3 if profile == "bounded" else 1))
        return TreeCase(plan, unprivileged, draw(st.integers(0, 3)) == 0)

    return case()


def _plain_line(kind: str, second: int) -> Line:
    value = {"type": kind, "timestamp": f"2026-05-01T10:00:{second:02d}.000Z",
             "message": {"role": kind, "content": f"{TEXT_CANARY} the build fails on main, look at it ({second})"}}
    return Line(line(value))


PLAIN_TREE = TreeCase(TreePlan(b"projects", tuple(
    SessionPlan(b"-home-me-app", b"s%d" % i, (_plain_line("user", 1), _plain_line("assistant", 2 + i)),
                (Sub(b"agent-a%d.jsonl" % i, (_plain_line("user", 3),), Sidecar(b'{"agentType":"Explore"}', "valid", False)),))
    for i in range(3))), unprivileged=False, foreign_cache=False)
"""An explicit case of the bounded profile: plain names, so that --jobs 1/2 and every cache
comparison run even while odd names still lose the cached runs of generated trees."""


def split_tree(case: TreeCase) -> list[TreeCase]:
    """The tree as trees of one session each (orphans and locked folders go with the first)."""
    return [dataclasses.replace(case, plan=dataclasses.replace(case.plan, sessions=(s,), orphans=case.plan.orphans if i == 0 else (),
                                                               unreadable_projects=case.plan.unreadable_projects if i == 0 else ()))
            for i, s in enumerate(case.plan.sessions)]


def _foreign_cache(cache: Path) -> None:
    """A folder of the analyst's own that they pointed --cache-dir at: old `.tmp` files, `runs/`."""
    (cache / "runs").mkdir(parents=True)
    (cache / "sub").mkdir()
    for i in range(FOREIGN_RUNS):
        (cache / "runs" / f"photos-{i}").mkdir()
        (cache / "runs" / f"photos-{i}" / "img.jpg").write_bytes(b"\xff\xd8 a photo")
    for p in (cache / "draft.tmp", cache / "sub" / "notes.tmp"):
        p.write_text("the analyst's own file\n")
        os.utime(p, (time.time() - 7200,) * 2)
    (cache / "build.tmp").mkdir()
    os.utime(cache / "build.tmp", (time.time() - 7200,) * 2)


def _ours(path: bytes) -> bool:
    return any(part.startswith((b".measure-staging-", b".measure-retired-")) for part in path.split(b"/"))


def outside_changes(prop: str, base: Path, before: dict, skip: tuple[Path, ...], command: str) -> list[Violation]:
    """Nothing under `base` but `skip` (the outputs and caches) changed; our own staging and
    retired folders are left to `checks.leftovers`."""
    after = {p: v for p, v in drive.snapshot(base, skip).items() if not _ours(p)}
    before = {p: v for p, v in before.items() if not _ours(p)}
    return checks.unchanged(prop, before, after, "outside --out/--cache-dir changed", command)


def check_tree(case: TreeCase, work: Path) -> list[Violation]:
    prop = "trees"
    uid = drive.unprivileged_uid() if case.unprivileged else None
    found: list[Violation] = []
    with drive.shared_folder("measure-fuzz-tree-", uid) as base:
        built = build(case.plan, base)
        cache = base / "cache"
        if case.foreign_cache:
            _foreign_cache(cache)
        if uid is not None:
            drive.hand_over(base, uid)
        outs = {k: base / f"out-{k}" for k in "abcdef"}
        # the root has a check of its own (and one edit of ours); a refused foreign cache is moved aside below
        skip = (*outs.values(), cache, base / "foreign-cache", built.root)
        foreign_before = drive.snapshot(cache) if case.foreign_cache else {}
        root_before = drive.snapshot(built.root)
        base_before = drive.snapshot(base, skip)
        slash = any(s.special == "subagents_to_slash" for s in case.plan.sessions)
        guard = SLASH_GUARD_S if slash else CLI_GUARD_S

        def run(key: str, *args: str) -> drive.Result:
            return drive.measure("run", "--root", built.root, "--out", outs[key], *args, cwd=base, user=uid, timeout=guard)

        a = run("a", "--no-cache", "--jobs", "1")
        found += checks.completed(prop, a)
        if a.timed_out:
            return found  # a hang: every later run would hang the same way
        if a.returncode == 0:
            found += checks.reported(prop, built, outs["a"], a.shown())
        b = run("b", "--no-cache", "--jobs", "2")
        c = run("c", "--cache-dir", str(cache), "--jobs", "2")
        if case.foreign_cache and c.returncode == 2:
            found += checks.refused_or_completed(prop, c)  # refusing a foreign cache folder is right
            shutil.move(cache, base / "foreign-cache")
            foreign_before = {}
            c = run("c", "--cache-dir", str(cache), "--jobs", "2")
        d = run("d", "--cache-dir", str(cache), "--jobs", "1")
        for r in (b, c, d):
            found += checks.completed(prop, r)
        found += checks.same_outputs(prop, outs["a"], outs["b"], "--jobs 1 vs --jobs 2", b.shown())
        found += checks.same_outputs(prop, outs["a"], outs["c"], "no cache vs cold cache", c.shown())
        found += checks.same_outputs(prop, outs["a"], outs["d"], "no cache vs warm cache", d.shown())
        found += checks.unchanged(prop, root_before, drive.snapshot(built.root), "the sessions root changed", d.shown())
        if built.paths:  # a cache round trip: one session changes, the others come from the cache
            target = sorted(built.paths)[0]
            with open(built.paths[target], "ab") as f:
                f.write(line({"type": "user", "timestamp": "2026-05-01T11:00:00.000Z", "message": {"role": "user", "content": "one more"}}) + b"\n")
            root_before = drive.snapshot(built.root)
            e = run("e", "--cache-dir", str(cache), "--jobs", "2")
            f_ = run("f", "--no-cache", "--jobs", "1")
            for r in (e, f_):
                found += checks.completed(prop, r)
            found += checks.same_outputs(prop, outs["f"], outs["e"], "cache round trip (one session changed)", e.shown())
            found += checks.unchanged(prop, root_before, drive.snapshot(built.root), "the sessions root changed", f_.shown())
        if foreign_before:
            after = drive.snapshot(cache)
            lost = {p: v for p, v in foreign_before.items() if after.get(p) != v}
            if lost:
                found.append(Violation(prop, "a file in --cache-dir that measure did not write was deleted or changed",
                                       "; ".join(sorted(os.fsdecode(p) for p in lost))[:1500], c.shown()))
        found += outside_changes(prop, base, base_before, skip, a.shown())
        found += checks.leftovers(prop, base, a.shown())
    return found


# --- hostile option sets ---------------------------------------------------------------------


@dataclass(frozen=True)
class OptionCase:
    argv: tuple[str, ...]
    earlier_output: bool  # --out already holds an earlier run's output


def option_cases(profile: str) -> st.SearchStrategy[OptionCase]:
    return st.builds(OptionCase, options.option_sets(), st.booleans())


def _paths_given(argv: list[str]) -> dict[str, str]:
    """The --out and --cache-dir the command line ends up with (the last of each, as argparse takes)."""
    given, i = {}, 0
    while i < len(argv):
        flag, _, value = argv[i].partition("=")
        if flag in ("--out", "--cache-dir"):
            if not value and i + 1 < len(argv):
                value, i = argv[i + 1], i + 1
            given[flag] = value
        i += 1
    return given


def check_options(case: OptionCase, work: Path) -> list[Violation]:
    prop = "options"
    found: list[Violation] = []
    with drive.shared_folder("measure-fuzz-opt-") as base:
        paths = options.setup(base)
        root, out = Path(paths["root"]), Path(paths["out"])
        if case.earlier_output:
            first = drive.measure("run", "--root", root, "--out", out, "--no-cache", "--quiet", cwd=base)
            found += checks.completed(prop + " (earlier run)", first)
        argv = options.resolve(case.argv, paths)
        given = _paths_given(argv)
        written = tuple(Path(p) for p in given.values()) + (base / ".xdg-cache",)
        foreign = drive.snapshot(Path(paths["foreign"]))
        root_before, base_before, out_before = drive.snapshot(root), drive.snapshot(base, written + (out,)), drive.snapshot(out) if out.exists() else None
        r = drive.measure(*argv, cwd=base, timeout=OPTION_GUARD_S)
        flags = " ".join(sorted({t.split("=", 1)[0] for t in argv[1:] if t.startswith("--") and not t.startswith(("--root", "--out"))}))
        found += checks.refused_or_completed(prop, r, flags)
        found += checks.unchanged(prop, root_before, drive.snapshot(root), "the sessions root changed", r.shown())
        after = drive.snapshot(Path(paths["foreign"]))
        lost = [p for p, v in foreign.items() if after.get(p) != v]
        if lost:
            found.append(Violation(prop, "a file of the analyst's own was deleted or changed", os.fsdecode(lost[0]), r.shown()))
        if r.returncode == 2 and out_before is not None and argv[0] == "run" and given.get("--out") == str(out):
            found += checks.unchanged(prop, out_before, drive.snapshot(out), "a refused run changed --out", r.shown())
        if r.returncode == 0 and argv[0] == "run":
            target = Path(given.get("--out", str(out)))
            found += checks.internal_errors(prop, drive.errors_rows(target), r.shown())
        found += checks.leftovers(prop, base, r.shown())
        targets = [base / p for p in given.values()]  # relative ones as the run (in `base`) reads them
        for folder in {t.parent for t in targets if t.parent.is_dir()} - {base}:
            # outside ours (`--out {base}` writes beside it, in the machine's /tmp): only what this run names
            names = () if base in folder.parents else tuple(t.name for t in targets if t.parent == folder)
            found += checks.leftovers(prop, folder, r.shown(), names)
        if r.returncode == 2 and given.get("--out") == str(out) and out.exists():  # refused: later runs into --out must work
            later = drive.measure("run", "--root", root, "--out", out, "--no-cache", "--quiet", cwd=base)
            if later.returncode != 0:
                found.append(Violation(prop, "a refused run blocks later runs into --out", later.stderr[-500:], r.shown()))
        found += outside_changes(prop, base, base_before, written + (out,), r.shown())
    return found


