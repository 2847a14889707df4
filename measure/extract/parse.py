"""Read a reply with the template's output contract: the JSON object its Output section shows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n\s*```", re.S)


@dataclass(frozen=True)
class Contract:
    """The reply shape a template asks for: an object whose `list_key` holds candidate objects."""

    list_key: str
    fields: tuple[str, ...]


DEFAULT_CONTRACT = Contract("candidates", ("type", "title", "body", "evidence", "confidence"))


def contract_from_template(template: str) -> Contract:
    """The first key of a JSON object in a fenced block of the template whose value is a list of objects
    (the bundled template shows `{"candidates": [{"type", "title", "body", ...}]}`, akm's own is followed
    the same way); the bundled contract when the template shows no such example."""
    for block in _FENCE.findall(template):
        try:
            obj = json.loads(block)
        except ValueError:
            continue
        if isinstance(obj, dict):
            for key, value in obj.items():
                if isinstance(value, list) and value and isinstance(value[0], dict):
                    return Contract(key, tuple(value[0]))
    return DEFAULT_CONTRACT


class BadReply(ValueError):
    """The reply does not follow the contract; the message is the reason."""


def _json_text(reply: str) -> str:
    if fenced := _FENCE.search(reply):
        return fenced.group(1)
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end < start:
        raise BadReply("no JSON object in the reply")
    return reply[start : end + 1]


def parse_candidates(reply: str, contract: Contract = DEFAULT_CONTRACT) -> list[dict]:
    """The reply's candidates (dicts of the contract's fields; strings stripped), in reply order."""
    try:
        obj = json.loads(_json_text(reply))
    except ValueError as exc:
        raise BadReply(f"invalid JSON: {str(exc)[:120]}") from None
    if not isinstance(obj, dict) or contract.list_key not in obj:
        raise BadReply(f'reply has no "{contract.list_key}" key')
    items = obj[contract.list_key]
    if not isinstance(items, list):
        raise BadReply(f'"{contract.list_key}" is not a list')
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadReply(f'"{contract.list_key}"[{i}] is not an object')
    return [{k: (v.strip() if isinstance(v, str) else v) for k, v in item.items()} for item in items]


def candidate_text(candidate: dict) -> str:
    """What the similarity rule compares: title and body, else every string field in order."""
    parts = [candidate.get(k) for k in ("title", "body") if isinstance(candidate.get(k), str)]
    return " ".join(parts or [v for v in candidate.values() if isinstance(v, str)])
