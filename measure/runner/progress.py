"""Progress of a long command: a tqdm bar while it works (on a terminal only), then one summary line.

The command line makes one active (`shown`) and ends it with `finish`; the library reports to
`current()` (`start`, `advance`, `stop`), a silent one unless the command line made one active."""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager


class Progress:
    """Counts items and bytes; draws a tqdm bar when `bar`; `finish` prints the summary line when `summary`."""

    def __init__(self, what: str = "sessions", *, bar: bool = False, summary: bool = False, stream=None):
        self.what, self.bar, self.summary, self.stream = what, bar, summary, stream
        self.total = self.total_bytes = self.done = self.done_bytes = 0
        self._started = self._seconds = 0.0
        self._tqdm = None

    def start(self, total: int, total_bytes: int = 0, done: int = 0) -> None:
        """Begin counting `total` items, `done` of them already (cached), and `total_bytes` bytes to read."""
        self.total, self.total_bytes, self.done, self.done_bytes = total, total_bytes, done, 0
        self._started, self._seconds = time.perf_counter(), 0.0
        if self.bar and total:
            from tqdm import tqdm  # noqa: PLC0415 - only a terminal pays for it

            try:  # tqdm hides a bar that does not fit, and a fresh pseudo-terminal says it is 0 x 0
                columns, rows = os.get_terminal_size(self.stream.fileno())
                columns, rows = columns or 80, rows or 24
            except (AttributeError, OSError, ValueError):  # no terminal behind the stream (a test's)
                columns = rows = None
            # disable=False overrides TQDM_DISABLE, which the Makefile exports for the kernels.
            self._tqdm = tqdm(total=max(total_bytes, 1), desc=self._desc(), file=self.stream, disable=False, leave=False,
                              ncols=columns, nrows=rows, unit="B", unit_scale=True, unit_divisor=1000)

    def advance(self, n_bytes: int = 0) -> None:
        """One more item done, of `n_bytes` bytes."""
        self.done += 1
        self.done_bytes += n_bytes
        if self._tqdm is not None:
            self._tqdm.set_description_str(self._desc(), refresh=False)
            self._tqdm.update(n_bytes)

    def stop(self) -> None:
        """Remove the bar (the library calls this when its loop ends); the counts stay."""
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None
        if self._started and not self._seconds:
            self._seconds = max(time.perf_counter() - self._started, 1e-9)

    def finish(self, message: str) -> str:
        """Stop; print (when `summary`) and return the summary line: `message`, then MB read and MB/s."""
        self.stop()
        if self.total_bytes:  # 0: nothing was read (everything came from the cache, or there was nothing)
            mb = self.done_bytes / 1e6
            message += f" ({mb:,.1f} MB in {self._seconds:,.1f} s, {mb / self._seconds:,.1f} MB/s)"
        if self.summary:
            print(message, file=self.stream, flush=True)
        return message

    def _desc(self) -> str:
        return f"{self.done}/{self.total} {self.what}"


def for_terminal(*, quiet: bool = False, what: str = "sessions", stream=None) -> Progress:
    """The command line's progress on `stream` (stderr): a bar on a terminal, the summary line unless `quiet`."""
    stream = stream if stream is not None else sys.stderr
    return Progress(what, bar=not quiet and stream.isatty(), summary=not quiet, stream=stream)


_active: Progress | None = None


def current() -> Progress:
    """The progress the command line made active, or a silent one."""
    return _active if _active is not None else Progress()


@contextmanager
def shown(progress: Progress):
    """Make `progress` the one library calls report to, for the duration of the block (then stop it)."""
    global _active
    previous, _active = _active, progress
    try:
        yield progress
    finally:
        _active = previous
        progress.stop()
