"""The content-addressed reply store: (client, model, parameters, prompt sha256, sample) -> reply."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from measure.runner.inputs import write_atomically


def reply_key(client: str, model: str, params: dict, prompt_sha256: str, sample: int) -> str:
    """sha256 of the canonical JSON of everything that decides a reply."""
    ident = {"client": client, "model": model, "params": params, "prompt_sha256": prompt_sha256, "sample": sample}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to `path` atomically (`write_atomically`); raises its OSError."""
    write_atomically(path, lambda f: f.write(data.encode("utf-8") if isinstance(data, str) else data))


class ReplyStore:
    """`<out>/store/<key[:2]>/<key>.json`: one successful reply each. Failed calls are not stored,
    so a rerun tries them again."""

    def __init__(self, out_dir: str | os.PathLike):
        self.dir = Path(out_dir) / "store"

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent, or damaged: sent again

    def put(self, key: str, record: dict) -> None:
        write_atomic(self._path(key), json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
