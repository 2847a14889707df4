"""JSON text as a hostile writer may produce it: verbatim fragments, repeated keys, lone surrogates.

Values are ordinary Python values plus `Raw` (JSON text written verbatim: a 400-digit integer,
`1e400`, nesting 3,000 deep) and `Pairs` (an object whose keys may repeat, which JSON.parse
reads as the last one wins). `dumps` writes them as one line; strings holding lone surrogates
are written as `\\udXXX` escapes, the one form JSON.parse accepts and UTF-8 cannot carry.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Raw:
    """JSON text written as it is (it may be valid JSON that Python's json would not write)."""

    text: str

    def __repr__(self) -> str:
        shown = self.text if len(self.text) <= 80 else f"{self.text[:40]}...{self.text[-20:]} ({len(self.text)} chars)"
        return f"Raw({shown!r})"


@dataclass(frozen=True)
class Pairs:
    """A JSON object written key by key, in order; a key may appear more than once."""

    items: tuple[tuple[str, object], ...]


_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(s: str) -> str:
    text = json.dumps(s, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True)
class _Lit:
    text: str


def dumps(value) -> str:
    """One line of JSON text for `value` (no newline inside: strings escape theirs)."""
    parts: list[str] = []
    stack = [value]
    while stack:  # iterative: values may nest deeper than Python's recursion limit
        v = stack.pop()
        if isinstance(v, (_Lit, Raw)):
            parts.append(v.text)
        elif isinstance(v, str):
            parts.append(_string(v))
        elif v is None or isinstance(v, (bool, int, float)):
            parts.append(json.dumps(v))
        elif isinstance(v, (dict, Pairs)):
            items = list(v.items) if isinstance(v, Pairs) else list(v.items())
            seq: list = [_Lit("{")]
            for i, (k, item) in enumerate(items):
                seq += [_Lit(("," if i else "") + _string(str(k)) + ":"), item]
            seq.append(_Lit("}"))
            stack.extend(reversed(seq))
        elif isinstance(v, (list, tuple)):
            seq = [_Lit("[")]
            for i, item in enumerate(v):
                if i:
                    seq.append(_Lit(","))
                seq.append(item)
            seq.append(_Lit("]"))
            stack.extend(reversed(seq))
        else:
            raise TypeError(f"cannot write {type(v).__name__} as JSON")
    return "".join(parts)



def line(value) -> bytes:
    """`value` as one JSONL line's bytes, without the newline."""
    return dumps(value).encode("utf-8")


def nested(depth: int, leaf: str = '"leaf"', kind: str = "list") -> Raw:
    """A value nested `depth` deep: lists, objects, or both alternating."""
    if kind == "list":
        return Raw("[" * depth + leaf + "]" * depth)
    if kind == "object":
        return Raw('{"k":' * depth + leaf + "}" * depth)
    opens = "".join('{"k":' if i % 2 else "[" for i in range(depth))
    closes = "".join("}" if i % 2 else "]" for i in reversed(range(depth)))
    return Raw(opens + leaf + closes)
