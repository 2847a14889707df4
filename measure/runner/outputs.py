"""Where outputs may go, and writing them so they appear whole or not at all.

Every command that writes a folder calls `check_out_dir` before any work and writes through
`StagedDir`: an output inside, equal to or containing the sessions root (the analyst's only copy
of their history) is refused; an existing one is replaced only when it holds nothing but what an
earlier `measure` output wrote (its MANIFEST); the new output is written into a sibling folder and
renamed into place once complete, and the next run finishes what a killed one left (`recover`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import tempfile
from pathlib import Path, PurePosixPath

import psutil

from measure.runner.inputs import write_atomically

MANIFEST = ".measure-output.json"
"""The file an output folder's writer owns: what wrote the folder and every file it wrote."""

_STAGING = ".measure-staging-"
_RETIRED = ".measure-retired-"

STAGING_MARKER = ".measure-staging.json"
"""The file inside a staging folder saying which process is writing it (removed at commit):
a later run into the same --out removes a staging folder only if it holds this marker and
the process it names is gone (SIGKILLed, or the machine restarted)."""

# A marker is written as `<marker>.<pid>.tmp` (write_atomically) and then renamed: a kill mid-write
# leaves a file whose name still says which process wrote it, never a marker that does not parse.
_CUT_MARKER = re.compile(re.escape(STAGING_MARKER) + r"\.([0-9]{1,10})\.tmp")


class OutputError(ValueError):
    """An output folder `measure` must not write to; the message is one line saying why."""


def real_path(path: str | os.PathLike) -> Path:
    """`path` absolute, `~` expanded, every symlink resolved."""
    return Path(os.path.realpath(os.path.abspath(os.path.expanduser(os.fspath(path)))))


def check_out_dir(out: str | os.PathLike, root: str | os.PathLike, *, option: str = "--out") -> Path:
    """The resolved output folder; OutputError when it is inside, equal to, or contains the sessions
    root (symlinks resolved on both sides)."""
    o, r = real_path(out), real_path(root)
    if o == r:
        raise OutputError(f"{option} {out} is the sessions root itself; choose a folder outside it")
    if o.is_relative_to(r):
        raise OutputError(f"{option} {out} is inside the sessions root {root}; choose a folder outside it")
    if r.is_relative_to(o):
        raise OutputError(f"{option} {out} contains the sessions root {root}; choose a folder beside it")
    return o


def listing(folder: str | os.PathLike) -> list[str]:
    """Every file and folder below `folder`, relative, `/`-separated (folders with a trailing `/`),
    sorted; raises OSError when `folder` or a folder below it cannot be listed (no recursion)."""
    top = os.fspath(folder)
    found, stack, start = [], [top], len(os.path.join(top, ""))
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                name = e.path[start:].replace(os.sep, "/")
                if e.is_dir(follow_symlinks=False):
                    found.append(name + "/")
                    stack.append(e.path)
                else:
                    found.append(name)
    return sorted(found)


def check_replaceable(out: str | os.PathLike, kind: str | None) -> list[str]:
    """Refuse to replace `out` unless it is absent, an empty folder, or an earlier `kind` output
    (None: of any kind) holding nothing but the files its manifest lists; returns those files."""
    p = Path(out)
    if not os.path.lexists(p):
        return []
    if p.is_symlink() or not p.is_dir():
        raise OutputError(f"--out {out} exists and is not a folder; choose another")
    try:
        present = listing(p)
    except OSError as exc:
        raise OutputError(f"--out {out} cannot be listed ({exc.strerror or exc}); choose another") from exc
    if not present:
        return []
    try:
        manifest = json.loads((p / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise OutputError(f"--out {out} is a non-empty folder that measure did not write (no {MANIFEST}); "
                          "choose an empty or new folder")
    if kind is not None and manifest.get("kind") != kind:
        raise OutputError(f"--out {out} holds a measure {manifest.get('kind')!r} output, not a {kind}; choose another")
    owned = set(manifest["files"]) | {MANIFEST}
    owned |= {f"{d}/" for f in owned for d in PurePosixPath(f).parents if d.name}  # the folders they are in
    foreign = [f for f in present if f not in owned]
    if foreign:
        raise OutputError(f"--out {out} holds {len(foreign)} file(s) measure did not write (first: {foreign[0]}); "
                          "move them away or choose another folder")
    return manifest["files"]


class StagedDir:
    """An output folder written in a temporary sibling and renamed into place when complete.

    Creating it checks, before any work, that `out` is outside the sessions `root`, replaceable and
    writable. As a context manager: on success the staged folder gets its manifest and replaces
    `out`; on any exception it is removed and `out` is left as it was.
    """

    def __init__(self, out: str | os.PathLike, kind: str, root: str | os.PathLike | None = None):
        self.out = Path(os.path.abspath(os.fspath(out)))
        self.kind = kind
        if root is not None:
            check_out_dir(self.out, root)
        recover(self.out)
        check_replaceable(self.out, kind)
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            # Not mkdtemp: its folder would be 0700, the output's mode is the umask's.
            self.path = self.out.parent / f"{_STAGING}{self.out.name}-{os.getpid()}-{secrets.token_hex(4)}"
            self.path.mkdir()
            _mark(self.path)
        except OSError as exc:
            raise OutputError(f"--out {out} is not writable: {exc.strerror or exc}") from exc

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, exc_type, *_) -> None:
        try:
            if exc_type is None:
                self.commit()
        finally:
            _discard(self.path)  # after a commit the staged folder is `out`: nothing is left to remove

    def commit(self) -> None:
        """Write the manifest, then swap the staged folder in for `out`: the old output is moved
        into a marked `.measure-retired-*` folder first (`recover` finishes a commit cut short)."""
        write_manifest(self.path, self.kind)
        check_replaceable(self.out, self.kind)  # nothing foreign arrived while we worked
        retired = None
        try:  # Ctrl-C or SIGTERM at any point here leaves `out` as it was and no folder of ours
            if os.path.lexists(self.out):
                retired = Path(tempfile.mkdtemp(prefix=_RETIRED + self.out.name + "-", dir=self.out.parent))
                _mark(retired)
                os.rename(self.out, retired / "old")
            os.unlink(self.path / STAGING_MARKER)  # the marker never reaches the output
            os.rename(self.path, self.out)
        except BaseException:
            if retired is not None and os.path.lexists(retired / "old"):
                os.rename(retired / "old", self.out)
            raise
        finally:
            if retired is not None:
                _discard(retired)


def write_manifest(folder: Path, kind: str) -> None:
    """The MANIFEST of `folder`: its `kind` and every file in it, which `check_replaceable` then owns."""
    files = [f for f in listing(folder) if not f.endswith("/") and f not in (MANIFEST, STAGING_MARKER)]
    with open(folder / MANIFEST, "w", encoding="utf-8") as f:
        json.dump({"kind": kind, "files": files}, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def _mark(folder: Path) -> None:
    write_atomically(folder / STAGING_MARKER, lambda f: f.write(json.dumps(_owner(os.getpid())).encode()))


def _owner(pid: int) -> dict:
    return {"writer": "measure", "pid": pid, "started": psutil.Process(pid).create_time()}


def _alive(owner: dict) -> bool:
    """Whether the process a staging marker names is still running: a process holding its pid
    that started later (the pid was reused, or the machine restarted) is not it."""
    try:
        # A second of slack: create times are read from the system clock, which may be adjusted.
        return psutil.Process(owner["pid"]).create_time() <= owner["started"] + 1
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True  # cannot tell: keep the folder


_LEFT_BESIDE = r"\.measure-(?:staging|retired)-{}-(?:[^-]+|[0-9]+-[0-9a-f]{{8}})"
"""The folders a run into `<name>` makes beside it: `-<pid>-<hex>` (staging) or mkdtemp's suffix,
which holds no `-` (retired); so a run into `out` never takes those of `out-2` for its own."""


def recover(out: Path) -> None:
    """Clean up after a `measure` killed while it wrote `out`: an old output moved aside by a commit cut
    short is moved back when `out` is gone, and the folders (_LEFT_BESIDE) whose writer is gone are
    removed (see `_abandoned`); a live writer, a file measure did not write, a marker that does not
    parse or a link is left alone."""
    pattern = re.compile(_LEFT_BESIDE.format(re.escape(out.name)))
    try:
        found = sorted(e.path for e in os.scandir(out.parent) if pattern.fullmatch(e.name) and e.is_dir(follow_symlinks=False))
    except OSError:
        return
    for folder in map(Path, found):  # retired ones first (sorted): `out` is restored before staged copies go
        if not _abandoned(folder):
            continue
        old = folder / "old"
        files = _ours(old) if folder.name.startswith(_RETIRED) and not os.path.lexists(out) else None
        with contextlib.suppress(OSError):
            if files is not None and (old / MANIFEST).is_file() and all(os.path.lexists(old / f) for f in files):
                os.rename(old, out)  # a commit cut short between its renames: the previous output back
        _discard(folder)


def _abandoned(folder: Path) -> bool:
    """Whether `folder`'s writer is gone: its marker (or one cut short) names a process no longer
    running, or without one it holds only an output of ours (or nothing)."""
    try:
        owner = json.loads((folder / STAGING_MARKER).read_text(encoding="utf-8"))
    except FileNotFoundError:
        try:
            cut = [(int(m[1]), os.lstat(folder / m[0]).st_mtime) for m in map(_CUT_MARKER.fullmatch, os.listdir(folder)) if m]
            if cut and len(cut) == len(os.listdir(folder)):  # killed while marking it
                # Gone if no process holds its pid, or the one that does started after the file.
                return not any(_alive({"pid": pid, "started": written}) for pid, written in cut)
        except OSError:
            return False
        return _ours(folder) is not None or (os.listdir(folder) == ["old"] and _ours(folder / "old") is not None)
    except (OSError, ValueError):
        return False
    return (isinstance(owner, dict) and owner.get("writer") == "measure" and type(owner.get("pid")) is int
            and type(owner.get("started")) is float and not _alive(owner))


def _ours(folder: Path) -> list[str] | None:
    """The files a `measure` output holding nothing else lists ([] for an empty folder); None otherwise."""
    try:
        return check_replaceable(folder, None)
    except (OutputError, OSError):
        return None


def _discard(folder: Path) -> None:
    """Remove a folder of ours, what proves it ours (marker, manifest) last: a kill midway leaves
    one `recover` still knows."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name == MANIFEST or e.name.startswith(STAGING_MARKER))
    except OSError:
        return
    for e in entries:
        with contextlib.suppress(OSError):
            if e.is_dir(follow_symlinks=False):
                _discard(Path(e.path))
            else:
                os.unlink(e.path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)
