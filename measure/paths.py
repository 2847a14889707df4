"""Repository-relative paths: notebooks get repo-relative parameters and resolve them here."""

from __future__ import annotations

import os
from pathlib import Path


def root() -> Path:
    """The nearest directory with pyproject.toml and measure/ above the current directory (papermill runs
    from the repository root, nbval from the notebook's), else above this package (an editable install)."""
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for directory in (start, *start.parents):
            if (directory / "pyproject.toml").is_file() and (directory / "measure" / "__init__.py").is_file():
                return directory
    raise FileNotFoundError("no pyproject.toml with a measure/ package above the current directory")


def resolve(path: str | os.PathLike) -> Path:
    """Return an absolute path for `path`: `~` is expanded, relative paths are taken from `root()`."""
    p = Path(os.path.expanduser(os.fspath(path)))
    return p if p.is_absolute() else root() / p


def portable(path: str | os.PathLike) -> str:
    """`path` (relative ones taken from `root()`) as a parameter or report shows it, with no machine-specific
    prefix: repo-relative (`fixtures/default`) or `~/...` when it can be, else absolute."""
    p = Path(os.path.normpath(resolve(path)))
    if p.is_relative_to(root()):
        return p.relative_to(root()).as_posix()
    if p.is_relative_to(Path.home()):
        rel = p.relative_to(Path.home()).as_posix()
        return "~" if rel == "." else f"~/{rel}"
    return p.as_posix()


def report_name(sessions_root: str | os.PathLike) -> str:
    """Return the report folder name for a sessions root: its last path component."""
    name = Path(os.path.normpath(os.path.expanduser(os.fspath(sessions_root)))).name
    return name or "root"


def is_fixture(path: str | os.PathLike) -> bool:
    """True when `path` (relative ones taken from `root()`) is inside the repository's bundled `fixtures/` folder."""
    return Path(os.path.normpath(resolve(path))).is_relative_to(root() / "fixtures")


FIXTURE_FILE_TIME_MS = 1_780_000_000_000
"""The `--pin-file-times` of roots under `fixtures/`: git keeps no file times, and akm falls back to
them (events without a timestamp, session order), so this gives the same numbers in every clone."""


def file_time_for(sessions_root: str | os.PathLike) -> int | None:
    """The `--pin-file-times` value for a root: FIXTURE_FILE_TIME_MS for bundled fixtures, else None."""
    return FIXTURE_FILE_TIME_MS if is_fixture(sessions_root) else None
