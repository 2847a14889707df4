"""Generated text: templates fill in as written, unrelated events share few words as in real transcripts."""

from __future__ import annotations

import random

from synth_corpus import events_of, jsonl_files

from measure.measurements.pairs import jaccard
from measure.synth.text import fill_template

pytest_plugins = ["synth_fixtures"]


def test_unrelated_events_share_few_words(mixed_root):
    events = [(str(p), t) for p in jsonl_files(mixed_root) for _, t in events_of(p)]
    rng = random.Random(5)
    scores = []
    while len(scores) < 2000:
        (pa, a), (pb, b) = rng.sample(events, 2)
        if pa != pb:
            scores.append(jaccard(a, b))
    scores.sort()
    # fixtures/real measures a median of 0.024 and a p90 of 0.105
    assert scores[1000] < 0.06 and scores[1800] < 0.2


def test_templates_fill_slots_left_to_right_and_keep_literal_braces():
    # Literal braces are doubled, as in str.format; a slot is a name in single braces.
    seen = []

    def slot(key: str) -> str:
        seen.append(key)
        return f"<{key}>"

    assert fill_template("The {A} {N} in `{P}`.", slot) == "The <A> <N> in `<P>`."
    assert seen == ["A", "N", "P"]
    assert fill_template("type {T} struct {{", slot) == "type <T> struct {"
    assert fill_template("  if (!{v}) {{\n    throw new Error(`{w}: ${{{v}}}`);\n  }}", slot) == (
        "  if (!<v>) {\n    throw new Error(`<w>: ${<v>}`);\n  }")
    assert fill_template("no slots", slot) == "no slots"
