"""What the synth tests share: the fixture roots' paths and readers of generated lines."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import orjson

from measure import synth

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "fixtures" / "real"
DEFAULT = ROOT / "fixtures" / "default"
DEFAULT_SEED = 20260826  # the seed fixtures/default was generated with (fixtures/README.md)
DEFAULT_SESSIONS = 16  # and its --sessions


def tree_digest(root: Path) -> str:
    """Hash of every path, its bytes and its mtime under root."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
            h.update(str(path.stat().st_mtime_ns).encode())
    return h.hexdigest()


def lines_of(path: Path) -> list[dict]:
    out = []
    for raw in path.read_bytes().split(b"\n"):
        if not raw:
            continue
        try:
            entry = orjson.loads(raw.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def events_of(path: Path) -> list[tuple[str, str]]:
    """(timestamp, text) of every line akm's reader turns into an event, sorted by time."""
    evs = [(e.get("timestamp", ""), synth.flat_text(e)) for e in lines_of(path)]
    return sorted((ts, t) for ts, t in evs if t)


def jsonl_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())
