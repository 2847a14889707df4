"""Mutations of transcript lines: what torn writes, other tools and hostile files put in them.

Value mutations act on one place of a line's value before it is written: numbers past 64 bits
or a double's range (`1e400`, a 400-digit integer, `-1e308`, 2^63), nesting deeper than the
recursion limit, a wrong type (an object where an id belongs, holding transcript text), a lone
surrogate, a repeated key, a missing key. Byte mutations act on the written line: torn, invalid
UTF-8, NUL, a BOM, a CR, two objects on one line, whitespace only.

Each mutated line says what a run must report for it (`expects`): `malformed_lines` for a
non-empty line JSON.parse rejects, `invalid_utf8` for bytes that are not UTF-8.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import strategies as st

from .jsontext import Pairs, Raw, line, nested
from .records import TEXT_CANARY, flip, pick, transcript

HUGE = (Raw("9" * 400), Raw("-" + "9" * 400), Raw("1e400"), Raw("-1e400"), Raw("-1e308"), Raw("1e308"), Raw("1E+400"),
        Raw("-0"), Raw("5e-400"), 2**63, 2**64, -(2**63) - 1, 2**53 + 1, 2**63 - 1, -1, 0.5)
DEPTHS = (1_100, 3_000)
WRONG = (None, True, False, 0, 1.5, "", "x", [], {}, [f"{TEXT_CANARY}w"], {"k": f"{TEXT_CANARY}w"}, Raw('"\\ud800"'))
SURROGATES = ("\ud800", "\udfff", "x\ud83d", "\udc00y")
BAD_UTF8 = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xe2\x82")


@dataclass(frozen=True)
class Line:
    """One written line (without its newline), how it was made, and the rows it must cause."""

    data: bytes
    how: str = "ordinary"
    expects: tuple[str, ...] = ()


def _places(value, path=()) -> list[tuple]:
    """Every place in `value` (a path of keys and indices), the value itself first; iterative."""
    out, stack = [], [(value, path)]
    while stack:
        v, p = stack.pop()
        out.append(p)
        if isinstance(v, dict):
            stack.extend((item, (*p, k)) for k, item in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((item, (*p, i)) for i, item in reversed(list(enumerate(v))))
    return out


def _get(value, path):
    for k in path:
        value = value[k]
    return value


def _replace(value, path, new):
    """A copy of `value` with the place at `path` replaced by `new` (copies only along the path)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


_DROP = object()


def _without(value, path):
    parent = _get(value, path[:-1])
    if isinstance(parent, dict):
        trimmed = {k: v for k, v in parent.items() if k != path[-1]}
    else:
        trimmed = [v for i, v in enumerate(parent) if i != path[-1]]
    return _replace(value, path[:-1], trimmed)


HOT = frozenset({"timestamp", "type", "role", "content", "id", "tool_use_id", "toolUseResult", "usage", "input_tokens",
                 "output_tokens", "cache_read_input_tokens", "version", "operation", "data", "agentId", "model", "input",
                 "status", "message", "name", "text", "subtype", "isSidechain"})
"""Keys the reader, the pairing and the tables look at: half of all mutations land on one."""


@st.composite
def mutated_value(draw, value) -> tuple[object, str]:
    """`value` with one place changed; returns the new value and what was done."""
    places = _places(value)
    hot = [p for p in places if p and p[-1] in HOT]
    if hot and flip(draw):
        places = hot
    path = places[draw(st.integers(0, len(places) - 1))]
    where = ".".join(map(str, path)) or "<line>"
    kind = pick(draw, ["huge", "huge", "deep", "wrong", "wrong", "surrogate", "duplicate", "drop"])
    if kind == "huge":
        new = pick(draw, HUGE)
    elif kind == "deep":
        new = nested(pick(draw, DEPTHS), kind=pick(draw, ["list", "object", "mixed"]))
    elif kind == "wrong":
        new = pick(draw, WRONG)
    elif kind == "surrogate":
        old = _get(value, path)
        base = old if isinstance(old, str) else "s"
        at = draw(st.integers(0, len(base)))
        new = base[:at] + pick(draw, SURROGATES) + base[at:]
    elif kind == "duplicate":
        target = _get(value, path)
        if not isinstance(target, dict) or not target:
            return _replace(value, path, Pairs((("k", 1), ("k", 2)))), f"duplicate keys at {where}"
        key = pick(draw, sorted(target))
        other = pick(draw, WRONG + HUGE[:3])
        items = tuple(target.items())
        items = ((key, other), *items) if flip(draw) else (*items, (key, other))
        return _replace(value, path, Pairs(items)), f"duplicate key {key!r} at {where}"
    else:
        if not path:
            return {}, "empty object"
        return _without(value, path), f"dropped {where}"
    return _replace(value, path, new), f"{kind} {new!r:.60} at {where}"


def _is_json(text: str) -> bool | None:
    """Whether JSON.parse reads `text` (NaN and Infinity are not JSON); None when Python's
    recursive parser cannot tell (nesting past the recursion limit)."""
    def refuse(name):
        raise ValueError(name)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    except RecursionError:
        return None
    return True


@st.composite
def mutated_bytes(draw, data: bytes) -> Line:
    """`data` (one written line) changed at the byte level."""
    kind = pick(draw, ["torn", "torn", "utf8", "utf8", "nul", "bom", "cr", "concat", "blank"])
    if kind == "torn":
        cut = draw(st.integers(1, max(1, len(data) - 1)))
        torn = data[:cut]
        text = torn.decode("utf-8", "replace").strip(" \t\r")
        expects = ("malformed_lines",) if text and _is_json(text) is False else ()
        return Line(torn, f"torn at byte {cut}", expects)
    if kind == "utf8":
        bad = pick(draw, BAD_UTF8)
        at = draw(st.integers(0, len(data)))
        out = data[:at] + bad + data[at:]
        return Line(out, f"invalid UTF-8 {bad!r} at byte {at}", ("invalid_utf8",))
    if kind == "nul":
        at = draw(st.integers(0, len(data)))
        return Line(data[:at] + b"\x00" + data[at:], f"NUL at byte {at}")
    if kind == "bom":
        return Line(b"\xef\xbb\xbf" + data, "UTF-8 BOM first")
    if kind == "cr":
        return Line(data + b"\r", "CR before the newline")
    if kind == "concat":
        return Line(data + data, "two objects on one line", ("malformed_lines",))
    return Line(pick(draw, [b"", b" ", b"\t", b"\r"]), "whitespace only")


@st.composite
def lines(draw, value) -> Line:
    """One line for `value`: usually as written, else value-mutated, byte-mutated or both."""
    how = pick(draw, ["plain", "plain", "value", "value", "bytes", "both"])
    notes = []
    if how in ("value", "both"):
        value, note = draw(mutated_value(value))
        notes.append(note)
    data = line(value)
    if how in ("bytes", "both"):
        mutated = draw(mutated_bytes(data))
        return Line(mutated.data, "; ".join([*notes, mutated.how]), mutated.expects)
    return Line(data, "; ".join(notes) or "ordinary")


@st.composite
def mutated_transcript(draw, min_lines: int = 1, max_lines: int = 8, subagent: str | None = None) -> tuple[Line, ...]:
    """A transcript whose lines may each be mutated."""
    values = draw(transcript(min_lines, max_lines, subagent))
    return tuple(draw(lines(v)) for v in values)


def file_bytes(body: tuple[Line, ...], ending: str = "\n") -> bytes:
    """The file a transcript's lines make (the last one may lack its newline)."""
    data = b"\n".join(ln.data for ln in body)
    return data + (b"\n" if ending == "\n" and body else b"")


def expected_kinds(body: tuple[Line, ...]) -> set[str]:
    return {k for ln in body for k in ln.expects}
