"""Where outputs may go, and writing them so they appear whole or not at all.

Every command that writes a folder (`measure run --out`, `measure report --out`, any later
`extract`) calls `check_out_dir` before doing any work, and writes through `StagedDir`:

- an output folder inside, equal to or containing the sessions root is refused (the root is
  the analyst's only copy of their history); a cache folder is checked by `cache.check_cache_dir`;
- an existing output folder is replaced only if it is empty or holds exactly what an earlier
  `measure` output wrote there (listed in its manifest, MANIFEST); anything else is refused,
  naming the first file `measure` did not write;
- the new output is written into a temporary sibling folder and renamed into place once
  complete, so a killed run or a full disk leaves the previous complete output (or nothing).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path, PurePosixPath

import psutil

MANIFEST = ".measure-output.json"
"""The file an output folder's writer owns: what wrote the folder and every file it wrote."""

_STAGING = ".measure-staging-"
_RETIRED = ".measure-retired-"

STAGING_MARKER = ".measure-staging.json"
"""The file inside a staging folder saying which process is writing it (removed at commit):
a later run into the same --out removes a staging folder only if it holds this marker and
the process it names is gone (SIGKILLed, or the machine restarted)."""


class OutputError(ValueError):
    """An output folder `measure` must not write to; the message is one line saying why."""


def real_path(path: str | os.PathLike) -> Path:
    """`path` absolute, `~` expanded, every symlink resolved."""
    return Path(os.path.realpath(os.path.abspath(os.path.expanduser(os.fspath(path)))))


def within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_out_dir(out: str | os.PathLike, root: str | os.PathLike, *, option: str = "--out") -> Path:
    """Refuse an output folder that is inside, equal to, or contains the sessions root.

    Symlinks are resolved on both sides. Returns the resolved output folder; raises
    OutputError with one line naming the option and the reason.
    """
    o, r = real_path(out), real_path(root)
    if o == r:
        raise OutputError(f"{option} {out} is the sessions root itself; choose a folder outside it")
    if within(o, r):
        raise OutputError(f"{option} {out} is inside the sessions root {root}; choose a folder outside it")
    if within(r, o):
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


def check_replaceable(out: str | os.PathLike, kind: str) -> None:
    """Refuse to replace `out` unless it is absent, an empty folder, or an earlier `kind` output
    holding nothing but the files its manifest lists."""
    p = Path(out)
    if not os.path.lexists(p):
        return
    if p.is_symlink() or not p.is_dir():
        raise OutputError(f"--out {out} exists and is not a folder; choose another")
    try:
        present = listing(p)
    except OSError as exc:
        raise OutputError(f"--out {out} cannot be listed ({exc.strerror or exc}); choose another") from exc
    if not present:
        return
    try:
        with open(p / MANIFEST, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise OutputError(
            f"--out {out} is a non-empty folder that measure did not write (no {MANIFEST}); "
            "choose an empty or new folder"
        )
    if manifest.get("kind") != kind:
        raise OutputError(f"--out {out} holds a measure {manifest.get('kind')!r} output, not a {kind}; choose another")
    owned = set(manifest["files"]) | {MANIFEST}
    owned |= {f"{d}/" for f in owned for d in PurePosixPath(f).parents if d.name}  # the folders they are in
    foreign = [f for f in present if f not in owned]
    if foreign:
        raise OutputError(
            f"--out {out} holds {len(foreign)} file(s) measure did not write (first: {foreign[0]}); "
            "move them away or choose another folder"
        )


class StagedDir:
    """An output folder written in a temporary sibling and renamed into place when complete.

    Creating it checks everything before any work: `out` is outside the sessions `root`,
    replaceable (see `check_replaceable`) and its parent is writable (the staging folder is
    made there at once). Use as a context manager: on success the staged folder gets its
    manifest and replaces `out`; on any exception it is removed and `out` is left as it was.
    """

    def __init__(self, out: str | os.PathLike, kind: str, root: str | os.PathLike | None = None):
        self.out = Path(os.path.abspath(os.fspath(out)))
        self.kind = kind
        if root is not None:
            check_out_dir(self.out, root)
        check_replaceable(self.out, kind)
        parent = self.out.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            # Not mkdtemp: its folder would be 0700, the output's mode is the umask's.
            self.path = parent / f"{_STAGING}{self.out.name}-{os.getpid()}-{secrets.token_hex(4)}"
            self.path.mkdir()
            with open(self.path / STAGING_MARKER, "w", encoding="utf-8") as f:
                json.dump(_owner(os.getpid()), f)
        except OSError as exc:
            raise OutputError(f"--out {out} is not writable: {exc.strerror or exc}") from exc
        remove_stale_staging(self.out)

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                self.commit()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()
        return False

    def abort(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def commit(self) -> Path:
        """Write the manifest, then swap the staged folder in for `out`."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path / STAGING_MARKER)
        files = [f for f in listing(self.path) if not f.endswith("/") and f != MANIFEST]
        with open(self.path / MANIFEST, "w", encoding="utf-8") as f:
            json.dump({"kind": self.kind, "files": files}, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        check_replaceable(self.out, self.kind)  # nothing foreign arrived while we worked
        retired = None
        if os.path.lexists(self.out):
            retired = Path(tempfile.mkdtemp(prefix=_RETIRED + self.out.name + "-", dir=self.out.parent))
            os.rename(self.out, retired / "old")
        try:
            os.rename(self.path, self.out)
        except BaseException:
            if retired is not None:
                os.rename(retired / "old", self.out)
                shutil.rmtree(retired, ignore_errors=True)
            raise
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)
        return self.out


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


def remove_stale_staging(out: Path) -> None:
    """Remove the staging folders of `out` that a killed `measure` left beside it.

    Only a real folder named `.measure-staging-<out name>-*` holding a STAGING_MARKER that names
    a process no longer running is removed; anything else (no marker, a marker that does not
    parse, a live writer, a link) is left alone.
    """
    try:
        entries = list(os.scandir(out.parent))
    except OSError:
        return
    for e in entries:
        if not e.name.startswith(_STAGING + out.name + "-") or not e.is_dir(follow_symlinks=False):
            continue
        try:
            with open(Path(e.path) / STAGING_MARKER, encoding="utf-8") as f:
                owner = json.load(f)
            if not (isinstance(owner, dict) and owner.get("writer") == "measure" and type(owner.get("pid")) is int
                    and type(owner.get("started")) is float):
                continue
        except (OSError, ValueError):
            continue
        if not _alive(owner):
            shutil.rmtree(e.path, ignore_errors=True)

