"""The incremental cache: a session's key (files, parameters, code) and its stored outcome."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from dataclasses import asdict
from pathlib import Path

from measure.akm.read import open_regular, rel, subagents_dir, walk_files
from measure.runner.job import RunParams, SessionOutcome, _error, measure_session

CACHE_VERSION = 1


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


def _file_key(path: str, with_mtime: bool = True) -> list:
    """Size, mtime and a content fingerprint (first and last 64 KiB) of one file."""
    st = os.stat(path)
    h = hashlib.blake2b(digest_size=16)
    with open_regular(path) as f:  # never block on a FIFO or read a device (issue #17)
        h.update(f.read(65536))
        if st.st_size > 131072:
            f.seek(-65536, os.SEEK_END)
            h.update(f.read(65536))
    return [st.st_size, st.st_mtime_ns if with_mtime else 0, h.hexdigest()]


def session_key(root: str, path: str, params: RunParams, template: str) -> str | None:
    """A key that changes with the parent, any file under its subagents/, or the params."""
    parts: list = [CACHE_VERSION, _CODE, asdict(params), hashlib.sha256(template.encode()).hexdigest(), rel(path, root)]
    try:
        parts.append(_file_key(path))
        parts += [[rel(p, root), _file_key(p)] for p in _subagent_files(path)]
    except OSError:
        return None  # unreadable now: measure it and let the reader report why
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


_CODE = _code_digest()


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "measure"


def _cached_measure(job: tuple) -> SessionOutcome:
    root, path, params, template, cache_dir = job
    key = session_key(root, path, params, template) if cache_dir else None
    if key:
        entry = Path(cache_dir) / key[:2] / f"{key}.pickle"
        try:
            with open(entry, "rb") as f:
                return pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError):
            pass
    try:
        outcome = measure_session(root, path, params, template)
    except Exception as exc:  # noqa: BLE001 - one session's surprise must not end the run
        outcome = SessionOutcome(rel(path, root))
        outcome.errors.append(
            _error(rel(path, root), rel(path, root), "internal_error", f"{type(exc).__name__}: {exc}")
        )
        return outcome  # not cached: a fixed measure should try again
    if key:
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = entry.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                pickle.dump(outcome, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, entry)
        except OSError:
            pass  # a cache that cannot be written only costs time
    return outcome


def _subagent_files(path: str) -> list[str]:
    return list(walk_files(subagents_dir(path)))  # no recursion: folders nested 1,200 deep (issue #17)
