"""The `verdict` table: which strategy, if any, dominates every other on the run's criteria (Pareto)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from measure.measurements.strategies import ORIGIN, registry_order

#: (criterion, better) in the order the overview states them.
CRITERIA: tuple[tuple[str, str], ...] = (
    ("parent_chars_evicted", "lower"),
    ("delegated_results_in_prompt", "higher"),
    ("subagent_unique_chars_in_prompt", "higher"),
    ("inline_refs", "higher"),
    ("llm_calls", "lower"),
    ("calls_per_run_max", "lower"),
    ("prompt_chars", "lower"),
)

#: akm's shipped path (#843): when strategies tie on every criterion, the incumbent is named.
INCUMBENT = "hybrid"

#: Values true by construction, each labelled only where it holds (a failure would be a finding):
#: (criterion, strategy) -> (the strategy whose value it equals, None: it is 0; the label).
IDENTITIES = {
    ("parent_chars_evicted", "link"): (None, "link is the reference (the parent read alone): 0 by definition"),
    ("parent_chars_evicted", "hybrid"): (None, "hybrid's prompt events are link's kept set: 0 by construction"),
    ("inline_refs", "hybrid"): ("fold", "hybrid lists the refs of every transcript, as fold does: equal to fold by construction"),
    ("inline_refs", "chunked"): (None, "chunked calls list no refs in this simulation: 0 by construction"),
    ("subagent_unique_chars_in_prompt", "link"): (None, "link's prompt holds parent events only: 0 by construction"),
    ("subagent_unique_chars_in_prompt", "hybrid"): (None, "hybrid's prompt holds parent events only: 0 by construction"),
    ("delegated_results_in_prompt", "hybrid"): ("link", "hybrid's prompt events are link's kept set: equal to link by construction"),
    ("prompt_chars", "fold_dedupe_sync"): ("fold", "no synchronous Task result has both copies in fold's kept set: fold's prompt, "
                                                   "equal to fold by construction"),
    ("parent_chars_evicted", "parent_first"): (None, "parent_first keeps link's kept set before any subagent event: 0 by construction"),
    ("inline_refs", "parent_first"): ("fold", "parent_first lists the refs of every transcript, as fold does: equal to fold by construction"),
    ("inline_refs", "hybrid_undelivered"): ("fold", "hybrid_undelivered lists the refs of every transcript, as fold does: "
                                                    "equal to fold by construction"),
}


def _identity(c: str, n: str, totals: dict[str, dict[str, float]]) -> str | None:
    """The identity stated for (criterion, strategy), when there is one and it holds on these totals."""
    other, label = IDENTITIES.get((c, n), (None, None))
    holds = totals[n][c] == 0 if other is None else other in totals and totals[n][c] == totals[other][c]
    return label if holds else None


@dataclass(frozen=True)
class Summary:
    """The run's criteria, once: per-session values, their totals per strategy, where they are non-zero."""

    names: tuple[str, ...]  # strategies measured, in registry order
    per: dict[str, dict[str, dict[str, float]]]  # criterion -> strategy -> session_path -> value (per-session criteria)
    totals: dict[str, dict[str, float]]  # strategy -> criterion -> the run's value
    nonzero: dict[tuple[str, str], int | None]  # (criterion, strategy) -> sessions with a non-zero value
    delegated: int  # delegated transcripts under the root (0: no delegated work)

    @property
    def sessions(self) -> list[str]:
        """Every measured session_path, sorted (the order robustness resamples in)."""
        return sorted({sp for by in self.per["prompt_chars"].values() for sp in by})


def per_session_values(sessions, eviction) -> dict[str, dict[str, dict[str, float]]]:
    """criterion -> strategy -> session_path -> value, for the per-session criteria."""
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    link_kept = {r["session_path"]: r["parent_kept_chars"] for r in sessions if r["strategy"] == "link"}
    for r in sessions:
        st, sp = r["strategy"], r["session_path"]
        for c in ("delegated_results_in_prompt", "subagent_unique_chars_in_prompt", "inline_refs", "llm_calls", "prompt_chars"):
            out[c][st][sp] = r.get(c) or 0
        if st == "link":
            out["parent_chars_evicted"][st][sp] = 0
        elif st == "chunked" and sp in link_kept:  # no eviction row: against the parent read alone
            out["parent_chars_evicted"][st][sp] = max(0, link_kept[sp] - (r.get("parent_kept_chars") or 0))
    for r in eviction:
        out["parent_chars_evicted"][r["strategy"]][r["session_path"]] = max(0, int(r["budget_evicted_chars"]))
    return out


def summarise(sessions, eviction, run_cost) -> Summary | None:
    """The run's criteria from its per-session rows and run_cost rows (None when no session was measured)."""
    if not len(sessions):
        return None
    per = per_session_values(sessions, eviction)
    names = tuple(sorted({r["strategy"] for r in sessions}, key=registry_order))
    cost = {r["strategy"]: r["calls_per_run_max"] for r in run_cost}
    run = "calls_per_run_max"  # the one criterion not summed over sessions
    totals = {n: {c: float(cost.get(n, 0) if c == run else sum(per[c][n].values())) for c, _ in CRITERIA}
              for n in names}
    nonzero = {(c, n): None if c == run else sum(1 for v in per[c][n].values() if v)
               for c, _ in CRITERIA for n in names}
    delegated = sum(r.get("delegated_transcripts") or 0 for r in sessions if r["strategy"] == names[0])
    return Summary(names, per, totals, nonzero, delegated)


def dominates(a: dict[str, float], b: dict[str, float]) -> bool:
    """a is at least as good as b on every criterion and better on one."""
    better = [(a[c] < b[c]) == (direction == "lower") for c, direction in CRITERIA if a[c] != b[c]]
    return bool(better) and all(better)


def decide(vectors: dict[str, dict[str, float]]) -> tuple[str, list[list[str]], dict[str, list[str]]]:
    """(decision, the Pareto front as groups of tied strategies, dominated-by per strategy)."""
    names = sorted(vectors, key=registry_order)
    dominated_by = {n: [m for m in names if m != n and dominates(vectors[m], vectors[n])] for n in names}
    tied: dict[tuple, list[str]] = {}  # undominated strategies grouped by equal vectors
    for n in names:
        if not dominated_by[n]:
            tied.setdefault(tuple(vectors[n][c] for c, _ in CRITERIA), []).append(n)
    front = list(tied.values())
    decision = "trade_off" if len(front) != 1 else INCUMBENT if INCUMBENT in front[0] else front[0][0]
    return decision, front, dominated_by


def verdict_rows(summary: Summary | None, chosen: str | None = None) -> list[dict]:
    """The `verdict` table from the run's criteria (pure); `chosen`: the strategy the priorities choose."""
    decision_row = {
        "criterion": "decision", "strategy": None, "better": None, "value": None, "sessions": None, "best": None,
        "pareto_front": None, "dominated_by": None, "identity": None, "decision": None, "origin": None, "chosen": None,
    }
    if summary is None:
        return [{**decision_row, "decision": "no_sessions"}]
    names, totals = summary.names, summary.totals
    if summary.delegated == 0:
        decision, front, dominated_by = "no_delegated_work", [], {n: [] for n in names}
    else:
        decision, front, dominated_by = decide(totals)
    front_names = {n for g in front for n in g}
    rows = []
    for c, better in CRITERIA:
        values = [totals[n][c] for n in names]
        best = min(values) if better == "lower" else max(values)
        for n in names:
            rows.append({
                "criterion": c, "strategy": n, "better": better, "value": totals[n][c],
                "sessions": summary.nonzero[c, n], "best": totals[n][c] == best,
                "pareto_front": n in front_names if front else None,
                "dominated_by": ",".join(dominated_by[n]), "identity": _identity(c, n, totals), "decision": None,
                "origin": ORIGIN.get(n, "suite proposal"), "chosen": n == chosen,
            })
    rows.append({**decision_row, "strategy": ",".join("=".join(g) for g in front) or None, "decision": decision})
    return rows
