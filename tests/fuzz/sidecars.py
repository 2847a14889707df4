"""Strategies for `agent-<id>.meta.json` sidecars: valid, broken, wrong types, odd text, huge.

Each sidecar says what a run must report for it (`expects`): a sidecar that JSON.parse cannot
read as an object (not JSON, an array, a string, truncated) is a `broken_sidecar` row; JSON
`null` reads as akm's "null" state and is not broken; a readable object is never reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from .jsontext import Pairs, Raw, dumps, nested
from .mutations import BAD_UTF8, HUGE, SURROGATES, WRONG
from .records import NAME_CANARY, TEXT_CANARY, TOOL_IDS, flip, pick

AGENT_TYPES = ("general-purpose", "Explore", "codex:codex-rescue", "workflow-subagent", f"{NAME_CANARY}type")


@dataclass(frozen=True)
class Sidecar:
    """A sidecar's bytes, how it was made, and whether a run must call it broken."""

    data: bytes
    how: str
    broken: bool


def _valid(draw) -> dict:
    out = {"agentType": pick(draw, AGENT_TYPES)}
    if flip(draw):
        out["description"] = f"{TEXT_CANARY}desc " + draw(st.text(max_size=20))
    if flip(draw):
        out["toolUseId"] = pick(draw, TOOL_IDS)
    if flip(draw):
        out["spawnDepth"] = pick(draw, [1, 2, 0, -1, 2**63])
    if flip(draw):
        out["model"] = "haiku"
    return out


@st.composite
def sidecars(draw) -> Sidecar:
    kind = pick(draw, ["valid", "valid", "typed", "odd", "odd", "broken", "broken", "null", "huge", "deep"])
    meta = _valid(draw)
    if kind == "valid":
        return Sidecar(dumps(meta).encode(), "valid", False)
    if kind == "typed":  # an object still, fields of the wrong type
        field = pick(draw, ["agentType", "description", "toolUseId", "spawnDepth"])
        meta[field] = pick(draw, WRONG + HUGE)
        return Sidecar(dumps(meta).encode(), f"{field} = {meta[field]!r:.40}", False)
    if kind == "odd":  # an object, in text that is hard to read
        how = pick(draw, ["surrogate", "duplicate", "bom", "utf8", "whitespace"])
        if how == "surrogate":
            meta["description"] = f"{TEXT_CANARY}d" + pick(draw, SURROGATES)
            meta["agentType"] = "t" + pick(draw, SURROGATES)
            return Sidecar(dumps(meta).encode(), "lone surrogates in its strings", False)
        if how == "duplicate":
            pairs = Pairs((*meta.items(), ("agentType", pick(draw, WRONG))))
            return Sidecar(dumps(pairs).encode(), "agentType repeated", False)
        if how == "bom":  # JSON.parse refuses a BOM: broken
            return Sidecar(b"\xef\xbb\xbf" + dumps(meta).encode(), "UTF-8 BOM first", True)
        if how == "utf8":  # read with U+FFFD inside a string: still an object
            bad = pick(draw, BAD_UTF8)
            data = dumps({**meta, "description": f"{TEXT_CANARY}x"}).encode().replace(b"x\"", bad + b"\"", 1)
            return Sidecar(data, f"invalid UTF-8 {bad!r} inside a string", False)
        return Sidecar(b" \n\t" + dumps(meta).encode() + b"\n\n", "whitespace around it", False)
    if kind == "broken":
        text = dumps(meta).encode()
        data, how = draw(st.sampled_from([
            (b"", "empty"), (b"{", "one brace"), (text[: max(1, len(text) // 2)], "torn"), (b"[1,2]", "an array"),
            (b'"just a string"', "a string"), (b"42", "a number"), (b"true", "true"), (b"{not json}", "not JSON"),
            (text + b"{}", "two objects"), (b"\x00\x00", "NUL bytes"), (b"NaN", "NaN"),
        ]))
        return Sidecar(data, how, True)
    if kind == "null":
        return Sidecar(b"null", "JSON null", False)
    if kind == "huge":  # big but under the 16 MiB cap
        meta["description"] = f"{TEXT_CANARY}big " + "x" * pick(draw, [70_000, 1_000_000])
        meta["extra"] = Raw("9" * 400)
        return Sidecar(dumps(meta).encode(), "a long description and a 400-digit number", False)
    meta["extra"] = nested(pick(draw, [1_100, 3_000]), kind="mixed")
    return Sidecar(dumps(meta).encode(), "a value nested deep", False)
