"""Match two candidate sets and say where each unmatched candidate's content comes from."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from measure.measurements.pairs import set_jaccard, word_set

MATCH_THRESHOLD = 0.5
"""Two candidates match when the word-set Jaccard of their title+body is at least this."""

RESTATES_THRESHOLD = 0.6
"""A candidate restates a source when at least this share of its words occur in that source."""

SOURCES = ("inline_ref", "notification", "subagent_only", "parent", "none")
"""Where an unmatched candidate's words come from, checked in this order (see `classify`)."""


@dataclass(frozen=True)
class Matching:
    """A one-to-one matching of candidate lists A and B: index pairs, then A's and B's leftovers."""

    pairs: tuple[tuple[int, int], ...]
    unique_a: tuple[int, ...]
    unique_b: tuple[int, ...]


def match(texts_a: list[str], texts_b: list[str], threshold: float = MATCH_THRESHOLD) -> Matching:
    """Greedy one-to-one matching by word-set Jaccard (#840's words: lowercase, over 3 chars): the pairs at or
    over `threshold`, best first (ties by index), each candidate used once; symmetric in counts."""
    wa, wb = [word_set(t) for t in texts_a], [word_set(t) for t in texts_b]
    scored = sorted((-set_jaccard(x, y), i, j) for i, x in enumerate(wa) for j, y in enumerate(wb))
    pairs: dict[int, int] = {}  # a's index -> b's
    taken_b: set[int] = set()
    for neg, i, j in scored:
        if -neg < threshold:
            break
        if i not in pairs and j not in taken_b:
            pairs[i] = j
            taken_b.add(j)
    return Matching(tuple(sorted(pairs.items())), tuple(i for i in range(len(wa)) if i not in pairs),
                    tuple(j for j in range(len(wb)) if j not in taken_b))


@dataclass(frozen=True)
class Evidence:
    """The word sets a session offers: inline refs, notifications, parent and subagent-origin events."""

    inline_refs: tuple[frozenset[str], ...]
    notifications: tuple[frozenset[str], ...]
    parent: frozenset[str]  # parent-origin events other than notifications
    subagent: frozenset[str]  # subagent-origin events

    @cached_property
    def parent_all(self) -> frozenset[str]:
        """Every word the parent holds, notifications included (one union per session, not per candidate)."""
        return self.parent.union(*self.notifications)


def coverage(words: set[str], source: frozenset[str]) -> float:
    return len(words & source) / len(words) if words else 0.0


def classify(text: str, ev: Evidence, threshold: float = RESTATES_THRESHOLD) -> str:
    """The seed's criterion for a candidate found in one arm only: the first of SOURCES that covers
    `threshold` of its words (one inline ref, one notification; subagent_only: not the parent's too)."""
    words = word_set(text)
    if any(coverage(words, r) >= threshold for r in ev.inline_refs):
        return "inline_ref"
    if any(coverage(words, n) >= threshold for n in ev.notifications):
        return "notification"
    in_parent = coverage(words, ev.parent_all) >= threshold
    if coverage(words, ev.subagent) >= threshold and not in_parent:
        return "subagent_only"
    return "parent" if in_parent else "none"
