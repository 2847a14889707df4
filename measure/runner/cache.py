"""The incremental cache: a session's key (files, parameters, code) and its stored outcome.

Entries are JSON behind a version header (a format that cannot execute code when loaded),
written to a temporary file and renamed into place. An entry that fails to load for any
reason is a miss: logged, measured again and replaced.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import math
import os
import shutil
import time
from dataclasses import asdict
from pathlib import Path

import orjson
import psutil

from measure.akm.read import rel
from measure.runner.inputs import FileState
from measure.runner.job import RunParams, SessionOutcome

log = logging.getLogger(__name__)

CACHE_VERSION = 2
ENTRY_HEADER = b"measure-cache 2\n"
RUN_HEADER = b"measure-cache-run 2\n"
RUN_META = "run-entry.json"
#: Whole runs kept (the most recent); each is a copy of one run's tables.
KEEP_RUNS = 8
#: A `.tmp` file older than this, or whose writer is gone, is a leftover (a full disk, a kill).
STALE_TMP_S = 3600


#: The code that decides a session's rows (the port, the measurements, the runner, the schema):
#: a change to any file of these must not reuse old results.
MEASURING_CODE = ("akm", "measurements", "runner", "schema.py")


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


def session_key(root: str, path: str, states: list[FileState], params: RunParams, template: str) -> str:
    """A key that changes with the parent, any file under its subagents/, the params or the code.

    Each file enters with its size, mtime, ctime and content digest: akm reads the parent's
    mtime (events without a timestamp) and ctime (sessions without events), so a chmod or a
    copied root (new ctimes) must not reuse an entry.
    """
    parts: list = [CACHE_VERSION, _CODE, asdict(params), hashlib.sha256(template.encode()).hexdigest(), rel(path, root)]
    parts += [[rel(s.path, root), s.size, s.mtime_ns, s.ctime_ns, s.digest] for s in states]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def run_key(session_keys: list[str], listed: list[str], errors: list[dict], root: str, versions: dict) -> str:
    """A key for a whole run: every session's key, the listing, its error rows, the root and
    the versions that shape the written files (the parameters are inside the session keys)."""
    parts = [CACHE_VERSION, "run", _CODE, session_keys, listed, errors, root, versions]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _decode_run_meta(data: bytes) -> dict:
    if not data.startswith(RUN_HEADER):
        raise ValueError("not a measure run entry of this version")
    try:
        meta = orjson.loads(data[len(RUN_HEADER) :])
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    files, summary = (meta.get("files"), meta.get("summary")) if isinstance(meta, dict) else (None, None)
    if not isinstance(files, dict) or not files or not isinstance(summary, dict):
        raise ValueError("wrong shape")
    for name, digest in files.items():
        if not isinstance(digest, str) or not isinstance(name, str) or os.path.basename(name) != name or name.startswith("."):
            raise ValueError(f"bad file name {name!r}")
    if not all(isinstance(summary.get(k), int) for k in ("measured", "errors")):
        raise ValueError("wrong shape: summary")
    return meta


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "measure"


class Cache:
    """Session outcomes by key under one directory (`<key[:2]>/<key>.json`)."""

    def __init__(self, directory: str | os.PathLike):
        self.dir = Path(directory)
        self.damaged = 0

    def entry(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def load(self, key: str) -> SessionOutcome | None:
        """The stored outcome, or None (a miss) when absent or not loadable."""
        path = self.entry(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._damaged(path, f"unreadable: {exc.strerror or exc}")
        try:
            return decode(data)
        except ValueError as exc:
            return self._damaged(path, str(exc))

    def _damaged(self, path: Path, why: str) -> None:
        self.damaged += 1
        log.warning("measure: cache entry %s ignored (%s); measuring the session again", path.name, why)
        return None

    def store(self, key: str, outcome: SessionOutcome) -> bool:
        """Write an entry atomically; False when it was not written (a cache only costs time)."""
        data = encode(outcome)
        if data is None:
            return False
        path = self.entry(key)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            return True
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                log.warning("measure: cache %s is full; results are not cached", self.dir)
            return False

    # --- whole runs: when every session and the listing are unchanged, the written tables are too

    def run_dir(self, run_key: str) -> Path:
        return self.dir / "runs" / run_key

    def load_run(self, run_key: str, out: Path) -> dict | None:
        """Copy a stored run's files into `out` and return its summary, or None (a miss)."""
        d = self.run_dir(run_key)
        try:
            data = (d / RUN_META).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._damaged(d, f"unreadable: {exc.strerror or exc}")
        try:
            meta = _decode_run_meta(data)
            blobs = {}
            for name, digest in meta["files"].items():
                blob = (d / name).read_bytes()
                if hashlib.sha256(blob).hexdigest() != digest:
                    raise ValueError(f"{name} does not match its digest")
                blobs[name] = blob
        except (ValueError, OSError) as exc:
            return self._damaged(d, str(exc))
        out.mkdir(parents=True, exist_ok=True)
        for name in sorted(blobs, key=lambda n: n == "run.json"):  # run.json last, as a fresh run writes it
            (out / name).write_bytes(blobs[name])
        return meta["summary"]

    def store_run(self, run_key: str, out: Path, names: list[str], summary: dict) -> None:
        """Keep a copy of a finished run's files (a failure only costs the next run time)."""
        d = self.run_dir(run_key)
        tmp = d.with_name(f"{run_key}.{os.getpid()}.tmp")
        try:
            tmp.mkdir(parents=True, exist_ok=True)
            files = {}
            for name in names:
                blob = (out / name).read_bytes()
                (tmp / name).write_bytes(blob)
                files[name] = hashlib.sha256(blob).hexdigest()
            (tmp / RUN_META).write_bytes(RUN_HEADER + orjson.dumps({"files": files, "summary": summary}))
            if d.exists():
                shutil.rmtree(d, ignore_errors=True)
            os.replace(tmp, d)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                log.warning("measure: cache %s is full; the run is not cached", self.dir)
            return
        self._prune_runs()

    def _prune_runs(self) -> None:
        try:
            runs = sorted((e for e in os.scandir(self.dir / "runs") if e.is_dir() and not e.name.endswith(".tmp")),
                          key=lambda e: e.stat().st_mtime, reverse=True)
        except OSError:
            return
        for e in runs[KEEP_RUNS:]:
            shutil.rmtree(e.path, ignore_errors=True)

    def clean_tmp(self, now: float | None = None) -> int:
        """Remove `.tmp` files a crashed or starved writer left behind; returns how many."""
        now = time.time() if now is None else now
        removed = 0
        try:
            subdirs = [d for d in os.scandir(self.dir) if d.is_dir(follow_symlinks=False)]
        except OSError:
            return 0
        for sub in [self.dir, *(Path(d.path) for d in subdirs)]:
            try:
                names = [e for e in os.scandir(sub) if e.name.endswith(".tmp")]
            except OSError:
                continue
            for e in names:
                if _tmp_is_stale(e, now):
                    try:
                        if e.is_dir(follow_symlinks=False):
                            shutil.rmtree(e.path)
                        else:
                            os.unlink(e.path)
                        removed += 1
                    except OSError:
                        pass
        return removed


def _tmp_is_stale(entry: os.DirEntry, now: float) -> bool:
    parts = entry.name.rsplit(".", 2)  # <name>.<pid>.tmp
    try:
        pid = int(parts[-2])
    except (ValueError, IndexError):
        pid = None
    if pid is not None and pid != os.getpid() and not psutil.pid_exists(pid):
        return True
    try:
        return now - entry.stat(follow_symlinks=False).st_mtime > STALE_TMP_S
    except OSError:
        return False


def encode(outcome: SessionOutcome) -> bytes | None:
    """The entry's bytes, or None when a value would not come back unchanged (NaN, inf)."""
    doc = {"session_path": outcome.session_path, "tables": outcome.tables, "errors": outcome.errors}
    for rows in (*outcome.tables.values(), outcome.errors):
        for row in rows:
            for v in row.values():
                if type(v) is float and not math.isfinite(v):
                    return None
                if not (v is None or type(v) in (str, int, float, bool)):
                    return None
    return ENTRY_HEADER + orjson.dumps(doc)


def decode(data: bytes) -> SessionOutcome:
    """An outcome from an entry's bytes; ValueError if they are not a valid entry."""
    if not data.startswith(ENTRY_HEADER):
        raise ValueError("not a measure cache entry of this version")
    try:
        doc = orjson.loads(data[len(ENTRY_HEADER) :])
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("session_path"), str):
        raise ValueError("wrong shape: no session_path")
    tables, errors = doc.get("tables"), doc.get("errors")
    if not isinstance(tables, dict) or not isinstance(errors, list):
        raise ValueError("wrong shape: tables/errors")
    from measure.schema import TABLES  # polars: only once an entry is decoded

    for name, rows in (*tables.items(), ("errors", errors)):
        table = TABLES.get(name)
        if table is None:
            raise ValueError(f"unknown table {name!r}")
        _check_rows(table, rows)
    return SessionOutcome(doc["session_path"], tables, errors)


_TYPES = {"String": (str,), "Int64": (int,), "Float64": (float, int), "Boolean": (bool,)}


def _check_rows(table, rows) -> None:
    """Every row an object whose known columns hold a value of the column's type (or null)."""
    if not isinstance(rows, list):
        raise ValueError(f"{table.name}: rows are not a list")
    types = {name: _TYPES.get(str(dtype), (object,)) for name, dtype in table.polars_schema.items()}
    for row in rows:
        if not isinstance(row, dict):
            raise ValueError(f"{table.name}: a row is not an object")
        for k, v in row.items():
            allowed = types.get(k)
            if allowed is None:
                raise ValueError(f"{table.name}: unknown column {k!r}")
            if v is not None and type(v) not in allowed:
                raise ValueError(f"{table.name}.{k}: {type(v).__name__} where {allowed[0].__name__} belongs")
