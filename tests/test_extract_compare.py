"""The similarity rule and the source of an unmatched candidate (measure.extract.compare)."""

from measure.extract.compare import Evidence, classify, match
from measure.measurements.pairs import word_set


def test_match_is_one_to_one_over_the_threshold():
    a = ["pytest needs the fixtures folder generated first", "retries come from the SDK client"]
    b = ["generate the fixtures folder first, pytest needs it", "completely different lesson about caching layers"]
    m = match(a, b)
    assert m.pairs == ((0, 0),)
    assert m.unique_a == (1,) and m.unique_b == (1,)


def test_match_below_threshold_is_unique_and_empty_sets_match_nothing():
    assert match(["alpha beta gamma delta"], ["alpha epsilon zeta theta"]).pairs == ()
    m = match([], ["anything here"])
    assert m.pairs == () and m.unique_b == (0,)


def test_match_takes_best_pairs_first():
    a = ["cache invalidation keys include template digest"]
    b = ["cache keys include template", "cache invalidation keys include template digest"]
    assert match(a, b).pairs == ((0, 1),)


def _ev(refs=(), notes=(), parent="", sub=""):
    return Evidence(
        tuple(frozenset(word_set(r)) for r in refs),
        tuple(frozenset(word_set(n)) for n in notes),
        frozenset(word_set(parent)),
        frozenset(word_set(sub)),
    )


def test_classify_in_rule_order():
    ev = _ev(
        refs=["remember: fixtures need pinned file times"],
        notes=["subagent found the parser drops surrogate pairs silently"],
        parent="the user asked for smaller commits every hour",
        sub="the benchmark corpus lives under bench-corpus generated nightly",
    )
    assert classify("fixtures need pinned file times", ev) == "inline_ref"
    assert classify("parser drops surrogate pairs silently", ev) == "notification"
    assert classify("benchmark corpus generated nightly", ev) == "subagent_only"
    assert classify("smaller commits every hour", ev) == "parent"
    assert classify("quantum chromodynamics lattice", ev) == "none"


def test_subagent_words_also_in_parent_are_not_subagent_only():
    ev = _ev(parent="benchmark corpus generated nightly", sub="benchmark corpus generated nightly")
    assert classify("benchmark corpus generated nightly", ev) == "parent"


def test_parent_words_include_its_notifications_together():
    # half the words in a notification, half in other parent events: neither alone restates the
    # candidate (0.5 < 0.6), the parent as a whole does, so it is not subagent-only
    ev = Evidence(inline_refs=(), notifications=(frozenset(word_set("alpha bravo")),),
                  parent=frozenset(word_set("charlie delta")), subagent=frozenset(word_set("alpha bravo charlie delta")))
    assert classify("alpha bravo charlie delta", ev) == "parent"
