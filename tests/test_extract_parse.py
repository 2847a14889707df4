"""Replies read with the template's output contract (measure.extract.parse)."""

import pytest

from measure.akm.prompt import load_template
from measure.extract.parse import (
    DEFAULT_CONTRACT,
    BadReply,
    Contract,
    candidate_text,
    contract_from_template,
    parse_candidates,
)


def test_bundled_template_contract():
    assert contract_from_template(load_template(None)) == DEFAULT_CONTRACT


def test_other_template_contract_is_followed():
    template = 'Reply:\n\n```json\n{"memories": [{"name": "...", "content": "..."}]}\n```\n'
    c = contract_from_template(template)
    assert c == Contract("memories", ("name", "content"))
    found = parse_candidates('{"memories": [{"name": "n", "content": "c"}]}', c)
    assert found == [{"name": "n", "content": "c"}]
    assert candidate_text(found[0]) == "n c"


def test_fenced_and_prose_wrapped_replies():
    assert parse_candidates('Sure.\n```json\n{"candidates": []}\n```\n') == []
    got = parse_candidates('Here: {"candidates": [{"title": " T ", "body": "B"}]} done')
    assert got == [{"title": "T", "body": "B"}] and candidate_text(got[0]) == "T B"


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("no json at all", "no JSON object"),
        ('{"candidates": [1,}', "invalid JSON"),
        ('{"items": []}', 'no "candidates" key'),
        ('{"candidates": {}}', "not a list"),
        ('{"candidates": ["x"]}', "not an object"),
    ],
)
def test_bad_replies_give_a_reason(reply, reason):
    with pytest.raises(BadReply, match=reason):
        parse_candidates(reply)
