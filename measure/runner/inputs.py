"""What a session reads (its files) and a git-index-like stat cache that says which changed."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat as stat_mod
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from measure.akm.read import open_regular, rel, subagent_paths, subagents_dir

log = logging.getLogger(__name__)

INDEX_NAME = "stat-index.json"
INDEX_HEADER = b"measure-stat-index 1\n"
SAMPLE = 65536

#: How the input fingerprint is taken; run.json quotes it.
METHOD = (
    "per file (the parent and everything under its subagents/): path, size, mtime_ns, ctime_ns and inode "
    "are compared with the previous run's index, as git's index does; only a file whose stat changed "
    "(or changed within 50 ms, on whole-second filesystems 2 s, of being indexed: git's racy entries) is read again, for a blake2b-128 digest of its "
    "first and last 64 KiB. The fingerprint is sha256 over (root-relative path, size, digest) of every "
    "file, sessions in path order: times are left out so that two clones of the same files agree."
)

#: A file changed this close to the moment it was indexed may change again without its stat
#: changing (file times tick coarsely, a jiffy on Linux): such an entry is not trusted next
#: time (git's "racy clean"). Filesystems that keep whole seconds get a 2 s window.
RACY_NS = 50_000_000
RACY_COARSE_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class FileState:
    """One input file as the cache key and the fingerprint see it."""

    path: str
    size: int
    mtime_ns: int
    ctime_ns: int
    digest: str


def session_files(parent_path: str, root: str, walk_order: str = "name") -> list[str]:
    """What `read_session` reads: the parent, then each subagent transcript (the reader's own bounded
    walk) and the sidecar beside it, in a sorted top-down walk's order (a folder's files, then its folders)."""
    top = subagents_dir(parent_path)
    found = []
    for path in subagent_paths(parent_path, root, walk_order):
        meta = path[: -len(".jsonl")] + ".meta.json"
        found += [path, meta] if os.path.lexists(meta) else [path]

    def walk_position(path: str) -> list[tuple[int, str]]:
        *folders, name = os.path.relpath(path, top).split(os.sep)
        return [(1, f) for f in folders] + [(0, name)]

    return [parent_path, *sorted(found, key=walk_position)]


def content_digest(path: str, size: int) -> str:
    """blake2b-128 of the first and last 64 KiB of a regular file (`open_regular`: a file swapped
    for a FIFO or device since it was stat'ed raises NotRegularFile, an OSError)."""
    with open_regular(path) as f:
        h = hashlib.blake2b(digest_size=16)
        h.update(f.read(SAMPLE) or b"")  # None: a read that would block (/proc/kmsg is a "regular" file)
        if size > 2 * SAMPLE:
            f.seek(-SAMPLE, os.SEEK_END)
            h.update(f.read(SAMPLE) or b"")
    return h.hexdigest()


class StatIndex:
    """path -> (size, mtime_ns, ctime_ns, inode, digest, racy) of the previous run, kept in the cache dir;
    a missing or unreadable index is empty (every file is hashed)."""

    def __init__(self, cache_dir: str | os.PathLike | None, root: str):
        self.path = Path(cache_dir) / INDEX_NAME if cache_dir else None
        self.root = root
        self.entries: dict[str, list] = _load_index(self.path) if self.path else {}
        self.seen: dict[str, list] = {}
        self.hashed = 0
        self.reused = 0
        self.started_ns = time.time_ns()

    def state(self, path: str) -> FileState:
        """The file's current state; raises OSError when it cannot be stat'ed or read."""
        st = os.stat(path)
        stat = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        old = self.entries.get(path)
        if not stat_mod.S_ISREG(st.st_mode):
            digest = f"not-a-file:{stat_mod.S_IFMT(st.st_mode):o}"  # never opened: a FIFO would block
        elif old is not None and old[:4] == stat and old[5] == 0:
            digest = old[4]
            self.reused += 1
        else:
            digest = content_digest(path, st.st_size)
            self.hashed += 1
        window = RACY_COARSE_NS if st.st_mtime_ns % 1_000_000_000 == 0 == st.st_ctime_ns % 1_000_000_000 else RACY_NS
        racy = int(self.started_ns - max(st.st_mtime_ns, st.st_ctime_ns) < window)
        self.seen[path] = [*stat, digest, racy]
        return FileState(path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)

    def save(self) -> None:
        """Write the entries seen this run (atomically); a failure only costs the next run time."""
        if self.path is None:
            return
        # Other roots' entries stay; this root's are replaced, so deleted files drop out.
        prefix = os.path.join(self.root, "")
        kept = {p: v for p, v in self.entries.items() if not p.startswith(prefix)}
        try:
            write_atomically(self.path, lambda f: f.write(INDEX_HEADER + dump_json({**kept, **self.seen})))
        except OSError as exc:
            log.warning("measure: could not write the stat index %s: %s", self.path, exc)


def write_atomically(path: Path, write) -> None:
    """`write(file)` into `<path>.<pid>.tmp`, then renamed to `path`; on any failure the temporary file is removed."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _load_index(path: Path) -> dict[str, list]:
    try:
        data = path.read_bytes()
        if not data.startswith(INDEX_HEADER):
            raise ValueError("unknown header")
        entries = load_json(data[len(INDEX_HEADER) :])
        if not isinstance(entries, dict) or not all(
            isinstance(v, list) and len(v) == 6 and all(isinstance(x, int) for x in v[:4]) and isinstance(v[4], str)
            for v in entries.values()
        ):
            raise ValueError("unexpected shape")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.warning("measure: stat index %s unreadable (%s); hashing every file", path, exc)
        return {}
    except ValueError as exc:
        log.warning("measure: stat index %s is damaged (%s); hashing every file and rewriting it", path, exc)
        return {}
    return entries


def dump_json(value) -> bytes:
    """`value` as JSON: orjson's bytes, or the standard library's (`\\udcff` escapes) where orjson
    refuses text, a lone surrogate (a file name that is not UTF-8, a JSON `\\ud800` escape)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value).encode()


def load_json(data: bytes):
    """What `dump_json` wrote; ValueError when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # orjson refuses a lone surrogate's escape
        pass
    try:
        return json.loads(data)
    except RecursionError:  # damaged: nothing dump_json writes nests
        raise ValueError("nested too deep") from None


def fingerprint(root: str, sessions: dict[str, list[FileState]]) -> str:
    """sha256 over every measured file's root-relative path, size and content digest (sessions in path
    order). The line per file is fixed: run.json files of different versions compare equal only while it is."""
    h = hashlib.sha256()
    for parent in sorted(sessions):
        for s in sessions[parent]:
            h.update(f"{rel(s.path, root)}\0{[s.size, 0, s.digest]}\n".encode("utf-8", "surrogateescape"))  # names need not be UTF-8
    return h.hexdigest()
