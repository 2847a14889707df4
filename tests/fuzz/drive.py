"""The one place the fuzzer and the hostile-input tests touch `measure`: CLI runs and thin library calls.

Everything else drives `measure` through here, so a renamed internal is one edit. The command
line (`python -m measure ...`) is the stable surface and runs as a subprocess with a timeout (a
hang guard, not a speed assertion), optionally as an unprivileged user so that `chmod 000`
bites when the tests run as root. Where a whole-CLI run is far too dear for what it checks,
`run_in_process` calls `run_measurement` and `read_one` calls `read_session` directly.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
NOBODY = 65534
HANG_GUARD_S = 60.0
"""How long one command may run before it counts as hung (generous: a shared 2-core machine)."""
IN_PROCESS_GUARD_S = 20.0
"""The same for one in-process run (of at most a few dozen small sessions: well under a second)."""
MEMORY_GUARD_BYTES = 4 * 2**30
"""The address space one command may take (RLIMIT_AS): a run that reads `/dev/zero` or walks
the whole filesystem ends in a MemoryError on its own instead of taking the shared machine's
memory before the hang guard fires. Ordinary runs here stay far below it."""


@dataclass(frozen=True)
class Result:
    """One finished (or killed) command: what it printed and how it ended."""

    argv: tuple[str, ...]
    returncode: int | None  # None: killed by the hang guard
    stdout: str
    stderr: str
    seconds: float
    cwd: str = ""
    outlived: tuple[str, ...] = ()  # processes of the run still holding its output after it ended (then killed)

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    def shown(self) -> str:
        """The command as one line a person can paste (paths quoted)."""
        import shlex

        return f"(cd {shlex.quote(self.cwd)} && " + " ".join(shlex.quote(a) for a in self.argv) + ")"

    def last_error_line(self) -> str:
        lines = [ln for ln in self.stderr.strip().splitlines() if ln.strip()]
        return lines[-1] if lines else ""


def _env(cwd: Path, extra: dict | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS"))}
    # A default cache must never land in the user's home: pin it under the case's folder.
    env.update({"XDG_CACHE_HOME": str(cwd / ".xdg-cache"), "TQDM_DISABLE": "1", "PYTHONHASHSEED": "0", "TZ": "UTC"})
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.update(extra or {})
    return env


def _as_user(uid: int | None) -> list[str]:
    """The argv prefix that runs a command as `uid`: setpriv, which resolves the interpreter's
    path before giving up root (here the interpreter lives under /root, closed to others; the
    child then finds the system's standard library of the same Python version instead of
    pyenv's). Empty for None."""
    if uid is None:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise OSError("setpriv not found")
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_GUARD_BYTES, MEMORY_GUARD_BYTES))


def start(args, cwd: Path, *, user: int | None = None, env: dict | None = None) -> subprocess.Popen:
    """`python -m measure ARGS` started in its own process group (signals reach only it), its
    memory bounded by MEMORY_GUARD_BYTES."""
    argv = [*_as_user(user), sys.executable, "-m", "measure", *map(os.fspath, args)]

    def setup() -> None:
        os.setpgrp()
        _limit_memory()

    return subprocess.Popen(
        argv, cwd=cwd, env=_env(Path(cwd), env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, preexec_fn=setup,
    )


OUTLIVE_GRACE_S = 5.0
"""How long a run's own processes may hold its stdout/stderr after its main process ended."""


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:].split()[0] == b"Z"
    except (OSError, ValueError):
        return False


def group_members(pgid: int) -> list[str]:
    """The command lines of the live processes in process group `pgid` (Linux /proc)."""
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] != b"Z":
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    found.append(f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:200])
        except (OSError, ValueError, IndexError):
            continue
    return found


def children(pid: int) -> list[int]:
    """The pids whose parent is `pid` (Linux /proc)."""
    found = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
                if int(stat[stat.rindex(b")") + 2:].split()[1]) == pid:
                    found.append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def finish(proc: subprocess.Popen, cwd: Path, timeout: float = HANG_GUARD_S, t0: float | None = None) -> Result:
    """Read `proc`'s output to its end, as a shell's `$(...)` does, then reap it.

    Past `timeout` the whole process group is killed and the result says it hung. The main
    process is not reaped before its output ends (a caller reading to EOF does not reap
    either), so a process of the run that outlives it and keeps the output open is seen: after
    OUTLIVE_GRACE_S it is named in `outlived` and killed."""
    t0 = time.monotonic() if t0 is None else t0
    code, outlived, dead_since = 0, (), None
    while True:
        try:
            out, err = proc.communicate(timeout=0.5)
            code = proc.returncode
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if _zombie(proc.pid):
            dead_since = dead_since or now
            if now - dead_since > OUTLIVE_GRACE_S:
                outlived = tuple(group_members(proc.pid))
                kill_group(proc)
                out, err = proc.communicate()
                code = proc.returncode
                break
        elif now - t0 > timeout:
            kill_group(proc)
            out, err = proc.communicate()
            code = None
            break
    return Result(tuple(map(os.fsdecode, proc.args)), code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                  time.monotonic() - t0, os.fspath(cwd), outlived)


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def measure(*args, cwd: Path, timeout: float = HANG_GUARD_S, user: int | None = None, env: dict | None = None) -> Result:
    """Run `python -m measure ARGS` in `cwd` and wait for it (at most `timeout` seconds)."""
    t0 = time.monotonic()
    return finish(start(args, cwd, user=user, env=env), cwd, timeout, t0)


@functools.cache
def unprivileged_uid() -> int | None:
    """A uid to run the CLI as so that permissions bite, or None when the machine cannot.

    Running as root, the child runs as `nobody` (through setpriv); that works only if `nobody`
    can start the interpreter and import this checkout (tried once, for real)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None  # already unprivileged: chmod 000 bites as it is, or we cannot switch
    try:
        r = subprocess.run([*_as_user(NOBODY), sys.executable, "-c", "import measure.cli, polars"], cwd=tempfile.gettempdir(),
                           capture_output=True, timeout=60, env=_env(Path(tempfile.gettempdir()), None))
    except (OSError, subprocess.SubprocessError):
        return None
    return NOBODY if r.returncode == 0 else None


def permissions_bite() -> bool:
    """Whether a `chmod 000` file is unreadable to the CLI as `measure_as` runs it."""
    return unprivileged_uid() is not None or (hasattr(os, "geteuid") and os.geteuid() != 0)


KEEP: list[Path] = []
"""While it holds a folder, `shared_folder` makes its folders there and keeps them (the campaign
re-runs each minimal failing case into its report so the printed commands can be pasted)."""


@contextlib.contextmanager
def shared_folder(prefix: str = "measure-fuzz-", uid: int | None = None):
    """A fresh folder another user can work in (pytest's tmp_path is private to root), removed
    after (unless KEEP names a folder to keep it in)."""
    keep = KEEP[-1] if KEEP else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        os.chmod(keep, 0o755)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=keep))
    if uid is not None:
        os.chown(path, uid, uid)
    try:
        yield path
    finally:
        if keep is None:
            remove_tree(path)


def hand_over(top: Path, uid: int) -> None:
    """Make `uid` the owner of everything under `top` (links themselves, not their targets)."""
    os.lchown(top, uid, uid)
    for dirpath, dirnames, filenames in os.walk(os.fsencode(top)):
        for name in dirnames + filenames:
            with contextlib.suppress(OSError):
                os.lchown(os.path.join(dirpath, name), uid, uid)


def remove_tree(top: Path) -> None:
    """Remove `top` whatever its modes (chmod 000 folders included); links are never followed."""
    top_b = os.fsencode(top)
    if not os.path.lexists(top_b):
        return
    for dirpath, dirnames, _ in os.walk(top_b):
        for name in dirnames:
            with contextlib.suppress(OSError):
                p = os.path.join(dirpath, name)
                if not os.path.islink(p):
                    os.chmod(p, 0o700)
    with contextlib.suppress(OSError):
        os.chmod(top_b, 0o700)
    shutil.rmtree(top_b, ignore_errors=True)


# --- what a run left behind -----------------------------------------------------------------


def snapshot(top: Path, skip: tuple[Path, ...] = ()) -> dict[bytes, tuple]:
    """Every entry under `top` (links not followed; folders in `skip` left out): type, mode,
    size, mtime and the bytes of regular files (a digest) or a link's target."""
    skipped = {os.fsencode(s) for s in skip}
    out: dict[bytes, tuple] = {}
    stack = [os.fsencode(top)]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError as exc:
            out[d + b"/"] = ("unlistable", exc.errno)
            continue
        for e in entries:
            if e.path in skipped:
                continue
            st = e.stat(follow_symlinks=False)
            digest = None
            if stat.S_ISREG(st.st_mode):
                try:
                    with open(e.path, "rb") as f:
                        digest = hashlib.sha256(f.read()).hexdigest()
                except OSError as exc:
                    digest = f"unreadable:{exc.errno}"
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(e.path)
            size = 0 if stat.S_ISDIR(st.st_mode) else st.st_size
            out[e.path] = (st.st_mode, size, st.st_mtime_ns, digest)
            if stat.S_ISDIR(st.st_mode):
                stack.append(e.path)
    return out


def snapshot_diff(before: dict, after: dict) -> list[str]:
    """What appeared, vanished or changed between two snapshots, as short lines."""
    lines = [f"vanished {os.fsdecode(p)}" for p in sorted(before.keys() - after.keys())]
    lines += [f"appeared {os.fsdecode(p)}" for p in sorted(after.keys() - before.keys())]
    lines += [f"changed {os.fsdecode(p)}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return lines


def output_files(out: Path) -> dict[str, bytes]:
    """The files of a `measure run --out` folder, by name (run.json included)."""
    if not out.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def errors_rows(out: Path) -> list[dict]:
    """The `errors` table of a run folder (Parquet: the exact values), or [] when there is none."""
    import polars as pl

    p = out / "errors.parquet"
    return pl.read_parquet(p).to_dicts() if p.exists() else []


def table_rows(out: Path, name: str) -> list[dict]:
    import polars as pl

    p = out / f"{name}.parquet"
    return pl.read_parquet(p).to_dicts() if p.exists() else []


def shown_path(rel: bytes | str) -> str:
    """A root-relative path as the tables show it: bytes that are not UTF-8 as `\\xNN`."""
    raw = rel if isinstance(rel, bytes) else os.fsencode(rel)
    return raw.decode("utf-8", "backslashreplace")


# --- in-process: the library's stable entry points ------------------------------------------


@dataclass
class InProcess:
    """What `run_in_process` saw: the summary, or the exception that lost the run."""

    out: Path
    summary: object = None
    exception: str | None = None  # "TypeName: message" of an exception that escaped
    trace: str = ""
    errors: list[dict] = field(default_factory=list)

    @property
    def lost(self) -> bool:
        return self.exception is not None


class Hang(BaseException):
    """Raised in the main thread when an in-process call runs past its guard (a BaseException,
    so that the run's own `except Exception`, which makes a surprise an errors row, lets it through)."""


@contextlib.contextmanager
def alarm(seconds: float):
    """Interrupt the block with Hang after `seconds` (main thread only; elsewhere no guard)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum, frame):
        raise Hang(f"still running after {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)  # and again every second, should it be swallowed
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_in_process(root: Path, out: Path, *, jobs: int = 1, cache_dir: Path | None = None,
                   timeout: float = IN_PROCESS_GUARD_S, **options) -> InProcess:
    """`run_measurement(root, out, RunParams.from_options(**options), jobs=, cache_dir=)`, an
    escaping exception caught and described instead of raised."""
    from measure.runner.job import RunParams
    from measure.runner.run import run_measurement

    result = InProcess(out)
    try:
        with alarm(timeout):
            result.summary = run_measurement(root, out, RunParams.from_options(**options), jobs=jobs, cache_dir=cache_dir)
    except (Exception, Hang) as exc:  # noqa: BLE001 - the point: any escape is a lost run
        result.exception = f"{type(exc).__name__}: {exc}"
        result.trace = traceback.format_exc()
    else:
        result.errors = errors_rows(out)
    return result


def read_one(parent: Path, root: Path) -> str | None:
    """`read_session` on one parent transcript: None when it returns or raises ReadError (akm's
    readSession throwing), else the exception that escaped."""
    from measure.akm.read import ReadError, read_session

    try:
        with alarm(IN_PROCESS_GUARD_S):
            read_session(os.fsdecode(parent), os.fsdecode(root))
    except ReadError:
        return None
    except (Exception, Hang) as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return None


def listed(root: Path) -> list[str]:
    """The parent transcripts akm's `listSessions` finds, root-relative as the tables show them."""
    from measure.akm.read import list_sessions

    root_s = os.fsdecode(root)
    return [shown_path(os.path.relpath(s.path, root_s)) for s in list_sessions(root_s)]
