"""Vendor akm's real-data parity vectors, replacing long texts by their length and sha256.

usage: python tests/parity/trim_vectors.py SRC_DIR DST_DIR

The real-data vectors hold whole transcripts and prompts (20 MB). Every string longer than
LIMIT characters becomes {"len": UTF-16 length, "sha256": hex of its UTF-8}; the parity test
compares such a stub with the same digest of the computed value.
"""

import hashlib
import json
import os
import sys

LIMIT = 300


def utf16_len(s):
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def stub(s):
    data = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")
    return {"len": utf16_len(s), "sha256": hashlib.sha256(data).hexdigest()}


def trim(v):
    if isinstance(v, str) and len(v) > LIMIT:
        return stub(v)
    if isinstance(v, list):
        return [trim(x) for x in v]
    if isinstance(v, dict):
        return {k: trim(x) for k, x in v.items()}
    return v


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name), encoding="utf-8") as f:
            data = json.load(f)
        with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
            json.dump(trim(data), f, ensure_ascii=False, indent=None, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
