"""Interrupted runs: signals mid-run, and files changed while a run reads them.

After SIGINT, SIGTERM or SIGKILL at any moment, `--out` holds the old output or the complete
new one (never nothing, never a mix), SIGINT prints one line and no traceback, and a re-run
completes, reproduces the output and leaves no staging or retired folder. A run whose files
are appended to, truncated, replaced by a FIFO or `/dev/zero`, deleted, added or renamed while
it reads them completes and writes nothing into the root, and the cache it fills must give
the same tables as no cache afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from . import checks, drive
from .jsontext import line
from .roots import CLI_GUARD_S
from .trees import TreePlan, build, tree_plans
from .violations import Violation


# --- signals mid-run --------------------------------------------------------------------------


SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
_SYNTH: dict[int, Path] = {}


@dataclass(frozen=True)
class SignalCase:
    seed: int
    steps: tuple[tuple[str, int], ...]  # (signal, milliseconds after the start)
    jobs: int
    cache: bool


def signal_cases(profile: str) -> st.SearchStrategy[SignalCase]:
    step = st.tuples(st.sampled_from(sorted(SIGNALS)), st.integers(0, 2500))
    return st.builds(SignalCase, st.integers(0, 3 if profile == "bounded" else 50), st.lists(step, min_size=1, max_size=3).map(tuple),
                     st.sampled_from([1, 2]), st.booleans())


def _synth_root(seed: int, into: Path) -> Path:
    """A realistic root of ~6 MB (`measure synth`, the same bytes for a seed), copied to `into`."""
    if seed not in _SYNTH:
        folder = Path(tempfile.mkdtemp(prefix="measure-fuzz-synth-"))
        r = drive.measure("synth", "--out", folder / "root", "--seed", str(seed), "--size-mb", "6", "--shape", "mixed", cwd=folder)
        if r.returncode != 0:
            raise RuntimeError(f"measure synth failed: {r.stderr[-500:]}")
        _SYNTH[seed] = folder / "root"
    shutil.copytree(_SYNTH[seed], into, symlinks=True)
    return into


def check_signals(case: SignalCase, work: Path) -> list[Violation]:
    prop = "signals"
    found: list[Violation] = []
    with drive.shared_folder("measure-fuzz-sig-") as base:
        root = _synth_root(case.seed, base / "root")
        opts = {"a": ("--budgets", "20000,40000"), "b": ("--budgets", "10000")}
        common = ("--jobs", str(case.jobs), *(("--cache-dir", str(base / "cache")) if case.cache else ("--no-cache",)))
        out = base / "out"
        refs = {}
        for k, extra in opts.items():
            r = drive.measure("run", "--root", root, "--out", base / f"ref-{k}", "--no-cache", *extra, cwd=base)
            found += checks.completed(prop + " (reference run)", r)
            refs[k] = drive.output_files(base / f"ref-{k}")
        first = drive.measure("run", "--root", root, "--out", out, *common, *opts["a"], cwd=base)
        found += checks.completed(prop, first)
        current = "a"
        for name, delay_ms in case.steps:
            other = "b" if current == "a" else "a"
            argv = ("run", "--root", root, "--out", out, *common, *opts[other])
            t0 = time.monotonic()
            proc = drive.start(argv, base)
            time.sleep(delay_ms / 1000)
            target = -proc.pid if name == "SIGINT" else proc.pid  # Ctrl-C reaches the whole group
            try:
                os.kill(target, SIGNALS[name])
            except ProcessLookupError:
                pass
            r = drive.finish(proc, base, CLI_GUARD_S, t0)
            command = f"{r.shown()}  # {name} after {delay_ms} ms"
            if r.timed_out:
                found.append(Violation(prop, f"hang after {name}", command=command))
            if r.outlived:
                found.append(Violation(prop, f"a process of the run outlives it after {name}, holding its stdout/stderr",
                                       "; ".join(r.outlived), command))
            now = drive.output_files(out)
            if now not in (refs[current], refs[other]):
                state = "missing" if not now else "neither the old nor the new output"
                found.append(Violation(prop, f"after {name} mid-run, --out is {state}", ", ".join(sorted(now))[:300], command))
            if name == "SIGINT" and r.returncode not in (0, None) and not before_measure_ran(r.stderr):
                lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
                if r.traceback or len(lines) > 1:
                    found.append(Violation(prop, "SIGINT prints a traceback (or more than one line)", r.stderr[-600:], command))
            again = drive.measure(*argv, cwd=base)
            found += checks.completed(prop + " (re-run after a signal)", again)
            if again.returncode == 0 and drive.output_files(out) != refs[other]:
                found.append(Violation(prop, "a re-run after a signal does not reproduce the output", command=command))
            found += checks.leftovers(prop + " (re-run after a signal)", base, command)
            current = other
    return found


# --- files changed during a run ---------------------------------------------------------------


CHANGES = ("append", "truncate", "fifo", "delete", "add", "devzero", "rename", "touch", "grow")
FILLER_LINES = 2_500  # two sessions of ~2.5 MB: the run lasts long enough to be changed under


@dataclass(frozen=True)
class ChangeCase:
    plan: TreePlan
    changes: tuple[tuple[str, int], ...]  # (what, which file: an index into the sessions, wrapped)
    delay_ms: int
    jobs: int


def change_cases(profile: str) -> st.SearchStrategy[ChangeCase]:
    change = st.tuples(st.sampled_from(CHANGES), st.integers(0, 20))
    return st.builds(ChangeCase, tree_plans(max_projects=2, max_sessions=3), st.lists(change, min_size=1, max_size=4).map(tuple),
                     st.integers(0, 1500), st.sampled_from([1, 2]))


def before_measure_ran(stderr: str) -> bool:
    """Whether a KeyboardInterrupt landed before `measure/__main__.py` ran its first line: while
    CPython starts (its frozen modules, `runpy`) or imports the package's `__init__`. CPython
    answers that interrupt itself; no program can shape that output (`__main__` turns one during
    its own imports into one line)."""
    if "KeyboardInterrupt" not in stderr:
        return False
    package = os.path.join(os.fspath(drive.REPO), "measure") + os.sep
    ours = [f for f in re.findall(r'^\s*File "([^"]*)"', stderr, re.M) if f.startswith(package)]
    return all(f == package + "__init__.py" for f in ours)


def _filler(root: Path) -> list[Path]:
    big = []
    text = "the build log says " * 50
    for i in range(2):
        p = root / "-home-filler" / f"big{i}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb") as f:
            for n in range(FILLER_LINES):
                f.write(line({"type": "user" if n % 2 == 0 else "assistant", "timestamp": f"2026-05-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                              "message": {"role": "user" if n % 2 == 0 else "assistant", "content": text}}) + b"\n")
        big.append(p)
    return big


def _change(what: str, path: Path, n: int) -> None:
    """One change to one session file (it may already be gone, or an earlier change made it a
    FIFO or a link: then a change that writes to it does nothing, and never blocks)."""
    new_line = line({"type": "user", "timestamp": "2026-05-01T12:00:00.000Z", "message": {"role": "user", "content": "later"}}) + b"\n"
    try:
        if what in ("append", "truncate", "grow", "touch") and not stat.S_ISREG(os.lstat(path).st_mode):
            return
        if what == "append":
            with open(path, "ab") as f:
                f.write(new_line)
        elif what == "truncate":
            os.truncate(path, path.stat().st_size // 2)
        elif what == "fifo":
            path.unlink()
            os.mkfifo(path)
        elif what == "delete":
            path.unlink()
        elif what == "add":
            (path.parent / f"added{n}.jsonl").write_bytes(new_line)
        elif what == "devzero":
            path.unlink()
            os.symlink("/dev/zero", path)
        elif what == "rename":
            path.rename(path.with_name(f"renamed{n}-" + path.name))
        elif what == "touch":
            os.utime(path)
        elif what == "grow":
            with open(path, "ab") as f:
                f.write(new_line * 20_000)
    except OSError:
        pass


def check_changes(case: ChangeCase, work: Path) -> list[Violation]:
    prop = "changes"
    found: list[Violation] = []
    with drive.shared_folder("measure-fuzz-chg-") as base:
        built = build(case.plan, base)
        targets = _filler(built.root) + [built.paths[k] for k in sorted(built.paths)]
        cache = base / "cache"
        argv = ("run", "--root", built.root, "--out", base / "out-1", "--cache-dir", cache, "--jobs", str(case.jobs))
        t0 = time.monotonic()
        proc = drive.start(argv, base)
        time.sleep(case.delay_ms / 1000)
        for i, (what, which) in enumerate(case.changes):
            _change(what, targets[which % len(targets)], i)
        changed = drive.snapshot(built.root)
        r = drive.finish(proc, base, CLI_GUARD_S, t0)
        command = f"{r.shown()}  # changed after {case.delay_ms} ms: {case.changes}"
        found += checks.completed(prop, r)
        if r.returncode == 0:
            found += checks.internal_errors(prop, drive.errors_rows(base / "out-1"), command)
        found += checks.unchanged(prop, changed, drive.snapshot(built.root), "the sessions root changed", command)
        warm = drive.measure("run", "--root", built.root, "--out", base / "out-2", "--cache-dir", cache, cwd=base)
        cold = drive.measure("run", "--root", built.root, "--out", base / "out-3", "--no-cache", cwd=base)
        for again in (warm, cold):
            found += checks.completed(prop + " (after the changes)", again)
        found += checks.same_outputs(prop, base / "out-3", base / "out-2", "cache filled during changes vs no cache", warm.shown())
        found += checks.leftovers(prop, base, command)
    return found
