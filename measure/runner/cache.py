"""The incremental cache: a session's key (files, parameters, code) and its stored outcome.

Entries are JSON behind a version header (a format that cannot execute code when loaded), a whole
run's files one zip, each written to a temporary file and renamed into place. An entry that fails
to load for any reason is a miss: logged, measured again and replaced.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import math
import os
import re
import time
import zipfile
from dataclasses import asdict
from pathlib import Path

import orjson
import psutil

from measure.akm.read import rel
from measure.runner.inputs import INDEX_NAME, FileState, dump_json, load_json, write_atomically
from measure.runner.job import RunParams, SessionOutcome
from measure.runner.merge import SESSION_COLUMNS
from measure.runner.outputs import OutputError, listing, real_path

log = logging.getLogger(__name__)

CACHE_VERSION = 5
ENTRY_HEADER = f"measure-cache {CACHE_VERSION}\n".encode()
RUN_SUMMARY = "summary.json"  # the last member of a whole run's zip: its RunSummary counts
KEEP_RUNS = 8  # whole runs kept (the most recent); each is a copy of one run's tables
STALE_TMP_S = 3600  # a `.tmp` file older than this, or whose writer is gone, is a leftover (a full disk, a kill)


#: The code that decides a session's rows (the port, the measurements, the runner, the schema):
#: a change to any file of these must not reuse old results.
MEASURING_CODE = ("akm", "measurements", "runner", "schema.py")


def _digest(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _code_digest() -> str:
    h = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for part in MEASURING_CODE:
        top = package / part
        for path in sorted(top.rglob("*.py")) if top.is_dir() else [top]:
            h.update(path.relative_to(package).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()


_CODE = _code_digest()


def measuring_key(params: RunParams, template: str) -> str:
    """What every session's key of a run shares: cache version, measuring code, parameters and template."""
    return _digest([CACHE_VERSION, _CODE, asdict(params), hashlib.sha256(template.encode()).hexdigest()])


def session_key(root: str, path: str, states: list[FileState], measuring: str) -> str:
    """A key that changes with the parent, any file under its subagents/, or `measuring` (measuring_key).

    Each file enters with its size, mtime, ctime and content digest: akm reads the parent's
    mtime (events without a timestamp) and ctime (sessions without events), so a chmod or a
    copied root (new ctimes) must not reuse an entry.
    """
    files = [[rel(s.path, root), s.size, s.mtime_ns, s.ctime_ns, s.digest] for s in states]
    return _digest([measuring, rel(path, root), files])


def run_key(session_keys: list[str], listed: list[str], errors: list[dict], root: str, versions: dict) -> str:
    """A key for a whole run: every session's key, the listing, its error rows, the root and
    the versions that shape the written files (the parameters are inside the session keys)."""
    return _digest([CACHE_VERSION, "run", _CODE, session_keys, listed, errors, root, versions])


OWN_FILES = re.compile(rf"({re.escape(INDEX_NAME)}|[0-9a-f]{{2}}/[0-9a-f]{{64}}\.json|runs/[0-9a-f]{{64}}\.zip)(\.[0-9]+\.tmp)?"
                       r"|([0-9a-f]{2}|runs)/"
                       r"|runs/[0-9a-f]{64}(\.[0-9]+\.tmp)?/([a-z_]+\.(csv|parquet)|run\.json|run-entry\.json)?")
"""Every name the cache writes, relative to its folder (a folder's with a trailing `/`). The last
line is cache version 2's run folders (a run's tables and `run-entry.json`): an upgrade must not
make the default cache folder refuse itself; this cache reads and prunes only zips, so it never
touches them."""


def check_cache_dir(cache_dir: str | os.PathLike, root: str | os.PathLike, out: str | os.PathLike | None = None) -> None:
    """Refuse a cache folder inside the sessions root, inside `out` or holding it, or holding any file
    the cache does not write: the cache replaces and prunes its files, so every file there must be its own."""
    c = real_path(cache_dir)
    if c.is_relative_to(real_path(root)):
        raise OutputError(f"--cache-dir {cache_dir} is inside the sessions root {root}; choose one outside it")
    if out is not None and (c.is_relative_to(real_path(out)) or real_path(out).is_relative_to(c)):
        raise OutputError(f"--cache-dir {cache_dir} and --out {out} would hold one another; choose a cache folder beside --out")
    if not os.path.lexists(c):
        return
    try:
        foreign = [f for f in listing(c) if not OWN_FILES.fullmatch(f)]
    except OSError as exc:
        raise OutputError(f"--cache-dir {cache_dir} is not a folder that can be listed ({exc.strerror or exc}); choose another") from exc
    if foreign:
        raise OutputError(f"--cache-dir {cache_dir} holds {len(foreign)} file(s) the cache did not write (first: {foreign[0]}); "
                          "choose an empty or new folder")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "measure"


class Cache:
    """Session outcomes by key under one directory (`<key[:2]>/<key>.json`), whole runs under `runs/`."""

    def __init__(self, directory: str | os.PathLike):
        self.dir = Path(directory)

    def entry(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def load(self, key: str) -> SessionOutcome | None:
        """The stored outcome, or None (a miss) when absent or not loadable."""
        path = self.entry(key)
        try:
            return decode(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            return _damaged(path, exc)

    # --- whole runs: when every session and the listing are unchanged, the written tables are too

    def load_run(self, run_key: str, out: Path) -> dict | None:
        """Copy a stored run's files into `out` and return its summary, or None (a miss)."""
        path = self.dir / "runs" / f"{run_key}.zip"
        try:
            with zipfile.ZipFile(path) as z:
                *names, last = z.namelist()
                if last != RUN_SUMMARY or any(os.path.basename(n) != n or n.startswith(".") for n in names):
                    raise ValueError("not a measure run entry of this version")
                damaged = z.testzip()  # every member against its CRC
                if damaged is not None:
                    raise ValueError(f"{damaged} does not match its checksum")
                summary = orjson.loads(z.read(RUN_SUMMARY))
                if not (isinstance(summary, dict) and all(type(summary.get(k)) is int for k in ("measured", "errors"))):
                    raise ValueError("wrong shape: summary")
                for name in names:  # in the order a fresh run wrote them (run.json last)
                    (out / name).write_bytes(z.read(name))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            return _damaged(path, exc)
        return summary

    def store_run(self, run_key: str, out: Path, names: list[str], summary: dict) -> None:
        """Keep a copy of a finished run's files, then only the KEEP_RUNS most recent runs."""
        def write(f) -> None:
            with zipfile.ZipFile(f, "w") as z:  # stored, not compressed: Parquet is compressed already
                for name in names:
                    z.write(out / name, name)
                z.writestr(RUN_SUMMARY, orjson.dumps(summary))

        if _write(self.dir / "runs" / f"{run_key}.zip", write):
            with contextlib.suppress(OSError):  # another run pruning at the same time
                runs = sorted((self.dir / "runs").glob("*.zip"), key=lambda p: p.stat().st_mtime, reverse=True)
                for old in runs[KEEP_RUNS:]:
                    old.unlink()

    def clean_tmp(self) -> None:
        """Remove the `.tmp` files a crashed or starved writer left behind: its process is gone, or they are stale."""
        now = time.time()
        try:
            folders = [self.dir, *(Path(d.path) for d in os.scandir(self.dir) if d.is_dir(follow_symlinks=False))]
        except OSError:
            return
        for tmp in (tmp for folder in folders for tmp in folder.glob("*.tmp")):
            pid = tmp.name.rsplit(".", 2)[-2]  # <name>.<pid>.tmp
            with contextlib.suppress(OSError):
                if (pid.isdigit() and int(pid) != os.getpid() and not psutil.pid_exists(int(pid))
                        or now - tmp.lstat().st_mtime > STALE_TMP_S):
                    tmp.unlink()


def store_entry(path: Path, outcome: SessionOutcome) -> bool:
    """Write a session's entry at `path` atomically; False when it was not written (a cache only costs time)."""
    data = encode(outcome)
    return data is not None and _write(path, lambda f: f.write(data))


def _write(path: Path, write) -> bool:
    """`write(file)` into `path` atomically; False when that failed (logged when the disk is full)."""
    try:
        write_atomically(path, write)
        return True
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            log.warning("measure: cache %s is full; results are not cached", path.parent.parent)
        return False


def _damaged(path: Path, exc: Exception) -> None:
    why = f"unreadable: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
    log.warning("measure: cache entry %s ignored (%s); measuring the session again", path.name, why)


def encode(outcome: SessionOutcome) -> bytes | None:
    """The entry's bytes, or None when a value would not come back unchanged (NaN, inf, a type JSON lacks)."""
    for values in (*(v for table in outcome.tables.values() for v in table.values()), *(r.values() for r in outcome.errors)):
        if any(type(v) is float and not math.isfinite(v) for v in values):
            return None
    try:
        return ENTRY_HEADER + dump_json({"session_path": outcome.session_path, "tables": outcome.tables, "errors": outcome.errors})
    except TypeError:
        return None


_TYPES = {"String": (str,), "Int64": (int,), "Float64": (float, int), "Boolean": (bool,)}


def decode(data: bytes) -> SessionOutcome:
    """An outcome from an entry's bytes; ValueError if they are not a valid entry: every table a
    schema table whose columns are its own, of one length, each value of the column's type or null."""
    if not data.startswith(ENTRY_HEADER):
        raise ValueError("not a measure cache entry of this version")
    try:
        doc = load_json(data[len(ENTRY_HEADER) :])
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("session_path"), str):
        raise ValueError("wrong shape: no session_path")
    tables, errors = doc.get("tables"), doc.get("errors")
    if not isinstance(tables, dict) or not isinstance(errors, list) or not all(isinstance(e, dict) for e in errors):
        raise ValueError("wrong shape: tables/errors")
    from measure.schema import TABLES  # polars: only once an entry is decoded

    for name, table in (*tables.items(), ("errors", {k: [e.get(k) for e in errors] for e in errors for k in e})):
        schema = TABLES[name].polars_schema if name in TABLES else None
        if schema is None or not isinstance(table, dict) or len({len(v) if isinstance(v, list) else -1 for v in table.values()}) > 1:
            raise ValueError(f"{name}: not a table of this version")
        for column, values in table.items():
            allowed = _TYPES.get(str(schema.get(column)))
            if allowed is None or not isinstance(values, list) or any(v is not None and type(v) not in allowed for v in values):
                raise ValueError(f"{name}.{column}: not a column of this table, or a value of the wrong type")
            if name != "errors" and column in SESSION_COLUMNS and len(set(values)) > 1:
                raise ValueError(f"{name}.{column}: one session's rows name two sessions")
    return SessionOutcome(doc["session_path"], tables, errors)
