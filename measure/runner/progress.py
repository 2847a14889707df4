"""Progress of a long command on a terminal: items done of total, MB/s and ETA, then one summary line.

The library reports to whatever progress is active (`current()`); the command line decides what
that is::

    from measure.runner import progress

    bar = progress.for_terminal(quiet=args.quiet)
    with progress.shown(bar):
        summary = run_measurement(...)   # calls current().start(...), .advance(...), .stop()
    bar.finish(f"measured {summary.measured} sessions")

or, for a loop of one's own (e.g. `measure extract`)::

    bar = progress.for_terminal(quiet=args.quiet, what="sessions")
    bar.start(total=len(items), total_bytes=sum(sizes))
    for item, size in ...:
        ...
        bar.advance(size)
    bar.finish("extracted 12 sessions")  # one summary line, with MB and MB/s (unless quiet)

A bar is drawn only when the stream is a terminal (tqdm, to stderr); otherwise nothing is drawn
and only the summary line is printed. `quiet=True` prints nothing at all.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TextIO


class Progress:
    """Counts items and bytes; draws a tqdm bar when `bar` is True; `finish()` prints one summary line."""

    def __init__(self, *, what: str = "sessions", bar: bool = False, summary: bool = False, stream: TextIO | None = None):
        self.what = what
        self.bar = bar
        self.summary = summary
        self.stream = stream
        self.total = 0
        self.total_bytes = 0
        self.done = 0
        self.done_bytes = 0
        self._started = 0.0
        self._seconds = 0.0
        self._tqdm = None

    def start(self, total: int, total_bytes: int = 0) -> None:
        """Begin counting `total` items of `total_bytes` bytes in all."""
        self.total, self.total_bytes = int(total), int(total_bytes)
        self.done = self.done_bytes = 0
        self._started = time.perf_counter()
        self._seconds = 0.0
        if self.bar and self.total:
            from tqdm import tqdm  # noqa: PLC0415

            # disable=False overrides TQDM_DISABLE, which the Makefile exports for the kernels.
            self._tqdm = tqdm(
                total=max(self.total_bytes, 1),
                unit="B",
                unit_scale=True,
                unit_divisor=1000,
                desc=self._desc(),
                file=self._stream(),
                disable=False,
                leave=False,
                ncols=_columns(self._stream()),
                nrows=24,  # tqdm hides a bar at a row past the screen's; a fresh pseudo-terminal reports 0 rows
                bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]",
            )

    def advance(self, n_bytes: int = 0) -> None:
        """One more item done, of `n_bytes` bytes."""
        self.done += 1
        self.done_bytes += int(n_bytes)
        if self._tqdm is not None:
            self._tqdm.set_description_str(self._desc(), refresh=False)
            self._tqdm.update(int(n_bytes) if self.total_bytes else 0)

    def stop(self) -> None:
        """Remove the bar (the library calls this when its loop ends); counting stays."""
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None
        if self._started and not self._seconds:
            self._seconds = max(time.perf_counter() - self._started, 1e-9)

    def finish(self, message: str = "") -> str:
        """Stop; print (when `summary`) and return the one summary line: `message` and the rate."""
        self.stop()
        mb = self.done_bytes / 1e6
        rate = f"{mb:,.1f} MB in {self._seconds:,.1f} s"
        if self._seconds:
            rate += f", {mb / self._seconds:,.1f} MB/s"
        if not self.total_bytes:  # nothing was read (everything came from a cache, or there was nothing)
            rate = ""
        text = message or f"{self.done}/{self.total} {self.what}"
        line = f"{text} ({rate})" if rate else text
        if self.summary:
            print(line, file=self._stream(), flush=True)
        return line

    def _desc(self) -> str:
        return f"{self.done}/{self.total} {self.what}"

    def _stream(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stderr


class _Callback(Progress):
    """The older API: a `callback(done, total)` called after each item; draws nothing."""

    def __init__(self, callback, what: str = "sessions"):
        super().__init__(what=what)
        self.callback = callback

    def advance(self, n_bytes: int = 0) -> None:
        super().advance(n_bytes)
        self.callback(self.done, self.total)


def resolve(progress, what: str = "sessions") -> Progress:
    """A Progress for a library call's `progress` argument: itself, `current()` for None, or a
    `callback(done, total)` (the API before this module) wrapped."""
    if progress is None:
        return current(what)
    if isinstance(progress, Progress):
        return progress
    return _Callback(progress, what)


def silent(what: str = "sessions") -> Progress:
    """A progress that counts but shows nothing (the library's default)."""
    return Progress(what=what)


def for_terminal(*, quiet: bool = False, what: str = "sessions", stream: TextIO | None = None) -> Progress:
    """The command line's progress: a bar on a terminal, the summary line unless `quiet`."""
    out = stream if stream is not None else sys.stderr
    if quiet:
        return Progress(what=what, stream=out)
    return Progress(what=what, bar=_isatty(out), summary=True, stream=out)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _columns(stream: TextIO) -> int:
    """The terminal's width; 80 when it reports none (a fresh pseudo-terminal says 0)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        columns = 0
    return columns if columns >= 40 else 80


_ACTIVE: ContextVar[Progress | None] = ContextVar("measure_progress", default=None)


def current(what: str = "sessions") -> Progress:
    """The progress the command line made active, or a silent one."""
    active = _ACTIVE.get()
    return active if active is not None else silent(what)


@contextmanager
def shown(progress: Progress) -> Iterator[Progress]:
    """Make `progress` the one library calls report to, for the duration of the block."""
    token = _ACTIVE.set(progress)
    try:
        yield progress
    finally:
        _ACTIVE.reset(token)
