"""The pre-filter's rules, budget pass and #839 dedupe, on hand-made events."""

from hypothesis import given
from hypothesis import strategies as st

from measure.akm.jscompat import utf16_len
from measure.akm.prefilter import (
    DICE_THRESHOLD,
    classify,
    dedupe_notifications,
    dice,
    near_copy,
    prefilter,
    stub_description,
    truncate,
)
from measure.akm.records import Event


def ev(text, ts=1.0, role="user", file="p/s.jsonl"):
    return Event(role, ts, text, file, utf16_len(text))


def test_rule_order_and_keys():
    ops = frozenset({"show", "search"})
    assert classify("   short   ", "user", ops) == "too-short"
    assert classify("run akm show foo now", "user", ops) == "akm-readonly-show"
    assert classify("run akm show-x foo now", "user", ops) is None  # captures show-x
    assert classify("run akm search- foo now", "user", ops) == "akm-readonly-search"  # backtracks
    assert classify('akm remember "x" && akm show y', "user", ops) is None  # first op only
    assert classify("see <LOCAL-COMMAND-CAVEAT> here", "user", ops) == "noise-pattern-<local-command-caveat>"
    assert classify("<analysis>" + "x" * 200 + "</analysis>", "user", ops) == "noise-pattern-<analysis>[\\s\\S]{200,}<\\"
    assert classify("<analysis>" + "x" * 199 + "</analysis>", "user", ops) is None
    assert classify("<summary>" + "😀" * 100 + "</summary>", "user", ops) == "noise-pattern-<summary>[\\s\\S]{200,}<\\/"
    rows = "".join(f"## {i} hit akm_search unknown\n" for i in range(3))
    assert classify(rows, "user", ops) == "noise-pattern-^(##\\s+\\d+.*akm_search u"
    assert classify(rows.replace("## 2", "#  2"), "user", ops) is None
    assert classify("a system line that is short", "system", ops) == "system-boilerplate"
    assert classify("x" * 300, "system", ops) is None


def test_truncation_keeps_head_and_tail_in_utf16_units():
    text = "a" * 1400 + "😀" + "b" * 3000
    out, n = truncate(text, utf16_len(text), 2000)
    assert out.startswith("a" * 1400 + "\n... [truncated 2434 chars] ...\n")
    assert out.endswith("b" * 568) and n == 2000


def test_budget_skips_and_keeps_trying_older_events():
    events = [ev("x" * 50, 1), ev("y" * 10 + " small one", 2), ev("z" * 90, 3)]
    kept = prefilter(events, max_total_chars=110, max_event_text_length=2000)
    assert [e.ts for e in kept.events] == [2, 3]  # 50 did not fit, the older 20 did
    assert kept.stats.budgetDroppedCount == 1 and kept.stats.totalChars == 110
    one = prefilter([ev("w" * 500)], max_total_chars=1)
    assert one.stats.outputCount == 1  # the newest event is always accepted


def test_inputs_are_never_mutated():
    events = (ev("q" * 5000),)
    prefilter(events)
    assert events[0].chars == 5000


def test_dice():
    assert dice("night", "nacht") == 0.25
    assert dice("a", "a") == 1.0 and dice("a", "b") == 0.0
    assert dice("😀😀", "😀😀") == 1.0


def test_dice_counts_bigrams_as_utf16_units_whether_or_not_a_text_is_ascii():
    # JS compares code units: "ab" shares the bigram (a, b) with "abé" (0x61, 0x62, 0xe9)
    assert dice("ab", "abé") == 2 * 1 / (1 + 2)
    assert dice("report ok", "report ok…") == 2 * 8 / (8 + 9)
    assert dice("😀x", "x😀") == 0.5  # (D83D, DE00) is shared; the pair's order is not
    grams = {}
    assert dice("report ok", "report ok…", grams) == dice("report ok", "report ok…") and set(grams) == {"report ok", "report ok…"}


@given(st.text(max_size=30), st.text(max_size=6), st.text(max_size=6), st.text(max_size=3))
def test_near_copy_is_dice_at_the_threshold_whatever_the_lengths(base, x, y, z):
    # texts that share most of their bigrams, with lengths that put the bound on either side of 0.9
    for a, b in ((base + x, base + y), (x + base, base + z), (base, base + x + y), (base, base)):
        assert near_copy(a, b, {}) == (dice(a, b) >= DICE_THRESHOLD), (a, b)


def test_dedupe_stubs_only_when_the_copy_is_kept():
    report = "The review found three issues in the sync module & fixed them all."
    note = ev(
        "<task-notification>\n<task-id>abc</task-id>\n<summary>Agent \"Review sync\" finished</summary>\n"
        "<result>The review found three issues in the sync module &amp; fixed them all.</result>\n</task-notification>",
        5,
    )
    copy = ev("[subagent:general-purpose] Review sync\n" + report, 4, "assistant", "p/s/subagents/agent-abc.jsonl")
    out, n, saved = dedupe_notifications([copy, note])
    assert n == 1 and out[1].text == "[subagent abc completed: Review sync]"
    assert saved == note.chars - out[1].chars
    out, n, saved = dedupe_notifications([note])
    assert n == 0 and out[0] is note and saved == 0
    assert stub_description("<summary>  </summary>") == "completed"
