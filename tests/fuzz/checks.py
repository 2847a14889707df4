"""The assertions the properties share, each returning violations instead of raising.

A run completed (exit 0, no traceback, not hung); its errors table holds every row a built tree
requires and no `internal_error`; every session it must measure is measured or reported; two
runs wrote the same bytes; nothing outside `--out`/`--cache-dir` changed; no staging or retired
folder of ours is left; no canary reached an output or a stream.
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

from .drive import OUTLIVE_GRACE_S, InProcess, Result, errors_rows, output_files, snapshot_diff, table_rows
from .trees import Built
from .violations import Violation, normalize, stderr_tail

#: Files of a run folder that may differ between two runs of the same input: none. run.json
#: holds parameters, versions and the input's fingerprint, all the same for the same input.
LEFTOVER_PREFIXES = (".measure-staging-", ".measure-retired-")


def completed(prop: str, r: Result, label: str = "") -> list[Violation]:
    """The command ended by itself with exit 0 and printed no traceback (`label`, e.g. the
    options given, becomes part of the failure's class)."""
    found = _completed(prop, r)
    return [Violation(v.prop, f"{v.what} [{label}]", v.detail, v.command) for v in found] if label else found


def _completed(prop: str, r: Result) -> list[Violation]:
    if r.timed_out:
        return [Violation(prop, f"hang: measure {r.argv[3] if len(r.argv) > 3 else ''} still running after "
                                f"{r.seconds:.0f} s (killed)", command=r.shown())]
    if r.outlived:
        return [Violation(prop, "a process of the run outlives it and keeps its stdout/stderr open",
                          f"{len(r.outlived)} left {OUTLIVE_GRACE_S:.0f} s after the run ended: {r.outlived}", r.shown())]
    if r.returncode != 0 or r.traceback:
        what = f"exit {r.returncode}" + (f" ({normalize(stderr_tail(r.stderr))})" if r.stderr.strip() else "")
        return [Violation(prop, what, r.stderr[-1200:], r.shown())]
    return []


def refused_or_completed(prop: str, r: Result, label: str = "") -> list[Violation]:
    """Exit 0, or exit 2 with one line of error (argparse's usage lines before it allowed); never
    a traceback, exit 1 or a hang."""
    if r.timed_out or r.traceback or r.returncode not in (0, 2) or r.outlived:
        return completed(prop, r, label)
    if r.returncode == 2:
        message = [ln for ln in r.stderr.splitlines() if ln.strip() and not usage_line(ln)]
        if len(message) != 1:
            what = f"exit 2 with {'no' if not message else len(message)} error line(s)" + (f" [{label}]" if label else "")
            return [Violation(prop, what, r.stderr[-1200:], r.shown())]
    return []


def usage_line(line: str) -> bool:
    """A line of the usage text a parse error prints around its one error line: argparse's
    (`usage: ...` and its continuation) or click's (`Usage: ...`, `Try '... --help' for help.`)."""
    return line.startswith(("usage: ", "Usage: ", "Try '", "       ")) or line.startswith(" " * 10)


def lost_in_process(prop: str, run: InProcess, command: str) -> list[Violation]:
    if run.lost:
        return [Violation(prop, f"run lost: {normalize(run.exception)}", run.trace[-1500:], command)]
    return []


def internal_errors(prop: str, rows: list[dict], command: str) -> list[Violation]:
    return [Violation(prop, f"internal_error row: {normalize(str(e.get('reason')))}", f"{e.get('path')}: {e.get('reason')}", command)
            for e in rows if e.get("kind") == "internal_error"]


def reported(prop: str, built: Built, out: Path, command: str) -> list[Violation]:
    """Every row the tree requires is there, and every session it must measure is measured or
    has an errors row of its own (a reason akm's pipeline gives, such as a prompt it cannot build)."""
    rows = errors_rows(out)
    found: list[Violation] = internal_errors(prop, rows, command)
    by_path: dict[str, list[dict]] = {}
    for e in rows:
        by_path.setdefault(e["path"], []).append(e)
    measured = {r["session_path"] for r in table_rows(out, "sessions")}
    # Rows found while reading a session are moot when the whole session failed: by surprise (an
    # internal_error, reported on its own), as akm's readSession must (a subagent nobody may
    # read: only the session's own row is required), or when its subagents/ leads back into the root.
    crashed = {e["session_path"] for e in rows if e.get("kind") == "internal_error"} | built.loose
    for req in built.rows:
        if req.unless_measured and req.path in measured or req.session in crashed:
            continue
        if req.session in built.failing and "unreadable" not in req.kinds:  # its own lines' rows too: the read threw
            continue
        mine = by_path.get(req.path, [])
        good = [e for e in mine if (not req.kinds and not req.reason) or e["kind"] in req.kinds
                or (req.reason and re.search(req.reason, str(e["reason"])))]
        if not good:
            seen = "; ".join(f"{e['kind']}: {e['reason']}" for e in mine) or "no row"
            found.append(Violation(prop, f"no errors row for {req.why} (wanted {'/'.join(req.kinds) or 'any kind'}; "
                                         f"got {normalize(seen, 80)})", f"{req.path!r}: {seen}", command))
        elif req.exactly_one and len(mine) > 1:
            found.append(Violation(prop, f"{len(mine)} errors rows for {req.why}, one expected",
                                   f"{req.path!r}: " + "; ".join(f"{e['kind']}: {e['reason']}" for e in mine), command))
    reported_sessions = {e["session_path"] for e in rows if e.get("session_path")} | set(by_path)
    for path, what in built.measured.items():
        if path not in measured and path not in reported_sessions:
            found.append(Violation(prop, f"{what} neither measured nor reported", repr(path), command))
    return found


def same_outputs(prop: str, a: Path, b: Path, how: str, command: str) -> list[Violation]:
    """Two run folders hold byte-identical files (tables and run.json)."""
    fa, fb = output_files(a), output_files(b)
    if not fa or not fb:
        return []  # a run that did not complete is reported on its own
    differ = sorted(n for n in fa.keys() | fb.keys() if fa.get(n) != fb.get(n) and not n.startswith(".measure-output"))
    if differ:
        tables = sorted({n.rsplit(".", 1)[0] for n in differ})
        return [Violation(prop, f"{how}: {', '.join(tables)} differ", f"{a} vs {b}: {differ}", command)]
    return []


def unchanged(prop: str, before: dict, after: dict, what: str, command: str) -> list[Violation]:
    diff = snapshot_diff(before, after)
    if diff:
        kinds = sorted({d.split(" ", 1)[0] for d in diff})
        return [Violation(prop, f"{what}: {'/'.join(kinds)}", "; ".join(diff[:20]), command)]
    return []


def leftovers(prop: str, folder: Path, command: str, outputs: tuple[str, ...] = ()) -> list[Violation]:
    """No `.measure-staging-*` / `.measure-retired-*` folder of a finished run remains in `folder`
    (`outputs`: only those made beside the outputs of these names, in a folder others write to)."""
    prefixes = tuple(f"{p}{name}-" for p in LEFTOVER_PREFIXES for name in outputs) or LEFTOVER_PREFIXES
    left = sorted(n for n in os.listdir(folder) if n.startswith(prefixes))
    if left:
        kinds = sorted({n.split("-", 2)[1] for n in left})
        return [Violation(prop, f"leftover {'/'.join(kinds)} folder after the run", ", ".join(left), command)]
    return []


def canaries(prop: str, canaries_: tuple[str, ...], places: dict[str, bytes], command: str) -> list[Violation]:
    """No canary (case-insensitive) in any of `places` (file contents, file names, streams). A
    Parquet file whose CSV twin is among the places is left to the CSV (the same rows, and the
    CSV line tells which row it is)."""
    found = []
    for where, data in places.items():
        if where.endswith(".parquet") and where[: -len(".parquet")] + ".csv" in places:
            continue
        low = data.lower()
        for c in canaries_:
            at = low.find(c.lower().encode())
            if at >= 0:
                context = data[max(0, at - 60): at + 60].decode("utf-8", "replace")
                found.append(Violation(prop, f"{c} in {_place_class(where, data, at)}", f"{where}: …{context}…", command))
                break
    return found


def _place_class(where: str, data: bytes, at: int) -> str:
    """`stderr of run`, `errors (internal_error row)`, `the cache`...: what names the class of a place."""
    if where.startswith(("stderr", "stdout", "name ")):
        return where.split(" /", 1)[0] if where.startswith("name ") else where
    if "/cache/" in where:
        return "the cache"
    table = re.sub(r"\.(csv|parquet|json)$", "", os.path.basename(where)) or where
    if where.endswith("errors.csv"):  # which kind of row holds it (cells may hold newlines: parse it whole)
        needle = data[at: at + 7].decode("utf-8", "replace").lower()
        rows = csv.reader(io.StringIO(data.decode("utf-8", "replace"), newline=""))
        kind = next((row[2] for row in rows if len(row) > 2 and needle in ",".join(row).lower()), "?")
        return f"{table} ({kind} row)"
    return table


def folder_contents(top: Path) -> dict[str, bytes]:
    """Every file's bytes under `top`, and every name as a place of its own."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for n in dirnames + filenames:
            out[f"name {os.path.join(dirpath, n)}"] = os.fsencode(n)
        for n in filenames:
            p = os.path.join(dirpath, n)
            try:
                with open(p, "rb") as f:
                    out[p] = f.read()
            except OSError:
                pass
    return out
