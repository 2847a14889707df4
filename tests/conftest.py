"""Shared fixtures: the parity inputs as a sessions root with the mtimes akm saw."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

PARITY = Path(__file__).parent / "parity"
REPO = Path(__file__).parent.parent
FIXED_MTIME_MS = 1_780_000_000_000


def set_mtime(path: Path, ms: int) -> None:
    ns = ms * 1_000_000
    os.utime(path, ns=(ns, ns))


def materialize(src: Path, dst: Path, mtimes: dict[str, int] | None = None) -> Path:
    """Copy a sessions root and pin every mtime (git does not keep them)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.md"))
    for p in dst.rglob("*"):
        if p.is_file():
            set_mtime(p, FIXED_MTIME_MS)
    for rel_path, ms in (mtimes or {}).items():
        set_mtime(dst.parent / rel_path, ms)
    return dst


@pytest.fixture(scope="session")
def parity_root(tmp_path_factory) -> Path:
    """The folder holding `projects/` (vector paths are relative to it)."""
    root = tmp_path_factory.mktemp("parity")
    mtimes = json.loads((PARITY / "inputs" / "mtimes.json").read_text())
    materialize(PARITY / "inputs" / "projects", root / "projects", mtimes)
    return root


@pytest.fixture(scope="session")
def real_root(tmp_path_factory) -> Path:
    """fixtures/real laid out as ../shared/parity/assemble_real.py does."""
    root = tmp_path_factory.mktemp("parity-real")
    materialize(REPO / "fixtures" / "real", root / "projects")
    return root
