"""Views of 00-overview's decision: the choice under stated priorities, its flips, the verdict."""

from __future__ import annotations

import math
import os

import polars as pl

from measure.measurements.priorities import BETTER, parse
from measure.measurements.priorities import DEFAULT as DEFAULT_PRIORITIES
from measure.measurements.strategies import ORIGIN
from measure.numbers import ROUND_MODE
from measure.report.shaping import chosen_pairs
from measure.report.style import STRATEGY_LABELS, label, ordered_strategies, strategy_rank
from measure.report.views import extraction
from measure.report.views.common import Report, fmt_int, fmt_pct, markdown, plural
from measure.report.views.duplication import pair_totals


CANDIDATES = {k: v for k, v in STRATEGY_LABELS.items() if "(C" in v}
"""The strategies that were #840's candidates C1..C4, by the name a decision gives them."""

CRITERION_LABELS = {
    "parent_chars_evicted": "Parent-origin chars evicted (budget eviction)",
    "delegated_results_in_prompt": "Delegated results reaching the prompt",
    "subagent_unique_chars_in_prompt": "Subagent-only chars reaching the prompt", "inline_refs": "Inline refs listed",
    "llm_calls": "LLM calls", "calls_per_run_max": "Calls in the most expensive akm run", "prompt_chars": "Prompt chars",
}


def verdict_matrix(r: Report) -> pl.DataFrame:
    """The verdict table wide: one row per criterion, one column per strategy, the best and the identities."""
    v = r["verdict"].filter(pl.col("criterion") != "decision")
    if v.height == 0:
        return pl.DataFrame({"criterion": []}, schema={"criterion": pl.String})
    names = ordered_strategies(v["strategy"].unique().to_list())
    order = {c: i for i, c in enumerate(CRITERION_LABELS)}
    matrix = v.pivot(on="strategy", index=["criterion", "better"], values="value").select("criterion", "better", *names)
    best = v.filter(pl.col("best")).group_by("criterion").agg(
        pl.col("strategy").sort_by(strategy_rank(names)).str.join(", ").alias("best"))
    out = matrix.join(best, on="criterion", how="left").sort(pl.col("criterion").replace_strict(order, return_dtype=pl.Int64))
    return out.with_columns(  # every criterion counts chars, calls, refs or results: whole numbers
        pl.col("criterion").replace_strict(CRITERION_LABELS, return_dtype=pl.String),
        pl.col(names).round(0, mode=ROUND_MODE).cast(pl.Int64),
    )


ADVANTAGES = {
    "parent_chars_evicted": "evicts {d} fewer parent-origin chars (budget eviction: {a} vs {b}{where})",
    "delegated_results_in_prompt": "gets {d} more delegated results into the prompt ({a} vs {b})",
    "subagent_unique_chars_in_prompt": "sends {d} more chars of subagent-only content ({a} vs {b})",
    "inline_refs": "lists {d} more inline refs ({a} vs {b})",
    "llm_calls": "makes {d} fewer LLM calls ({a} vs {b})",
    "calls_per_run_max": "makes {d} fewer calls in its most expensive run{under} ({a} vs {b})",
    "prompt_chars": "sends {d} fewer prompt chars ({a} vs {b})",
}
"""What the better value of each criterion gains over the other, in words."""


def _advantage(c: str, a: float, b: float, loser: str, k: int | None, cap: int | None) -> str:
    """What the better value `a` gains over `b` (`loser`'s) on criterion `c`, in words."""
    return ADVANTAGES[c].format(d=fmt_int(abs(a - b)), a=fmt_int(a), b=fmt_int(b),
                                where=f", {loser} evicting in {k} session(s)" if k else "",
                                under=f" under akm's cap of {cap} sessions per run" if cap else "")


def _trade(v: pl.DataFrame, a: str, b: str, cap: int | None) -> str:
    """One sentence: what `a` gives that `b` does not, and at what cost."""
    cell = {(x["criterion"], x["strategy"]): x for x in v.iter_rows(named=True) if x["criterion"] != "decision"}
    gains, losses = [], []
    for c in CRITERION_LABELS:
        x, y = cell.get((c, a)), cell.get((c, b))
        if x is None or y is None or x["value"] == y["value"]:
            continue
        if (x["value"] < y["value"]) == (x["better"] == "lower"):
            gains.append(_advantage(c, x["value"], y["value"], b, y["sessions"], cap))
        else:
            losses.append(_advantage(c, y["value"], x["value"], a, x["sessions"], cap))
    return f"- **{a} or {b}.** {a} " + "; ".join(gains) + (f" — while {b} " + "; ".join(losses) + "." if losses else ".")


def verdict(r: Report, out_dir: str | os.PathLike | None = None):
    """Markdown: the decision of the `verdict` table (a Pareto analysis), its trade-offs and criteria, then
    what a model extracted when there are extraction results (see extraction.verdict_section for `out_dir`)."""
    s, v = r["sessions"], r["verdict"]
    decision_row = v.filter(pl.col("criterion") == "decision").row(0, named=True)
    decision = decision_row["decision"]
    if decision == "no_sessions":
        errs = r["errors"].height
        return markdown(f"**No sessions were measured under `{r.sessions_root}`**, so there is nothing to compare."
                        + (f" The errors table below says why {errs} file(s) could not be read." if errs else
                           " No file under it could be read as a session, and none failed: the root holds no session "
                           "transcripts."))
    n = s["session_id"].n_unique()
    cost = r["run_cost"]
    cap = int(cost["session_cap"][0]) if cost.height else None
    front = [g.split("=") for g in (decision_row["strategy"] or "").split(",") if g]
    lines: list[str] = []
    if decision == "no_delegated_work":
        head = (f"**No delegated work under this root** ({n} session(s)): no task or workflow agent transcripts, so "
                "there is no subagent-only content for any strategy to send or lose, and nothing here can favour one way "
                "of delivering delegated work over another.")
        bg = r.tables.get("background")
        if bg is not None and bg.height:
            # Background tasks without transcripts still deliver results, but only through the parent's own
            # events, which every single-call strategy reads alike (see 04-background).
            turns = bg.filter(pl.col("delivery") == "turn").height
            head += (f" The parents did launch {fmt_int(bg.height)} background task(s) ({fmt_int(turns)} result(s) "
                     "reached them as a turn, see 04-background); those results are parent events, the same for every "
                     "strategy.")
        sent = {x["strategy"]: x["value"] for x in v.filter(pl.col("criterion") == "prompt_chars").iter_rows(named=True)}
        if all(x in sent for x in ("link", "fold", "hybrid")):  # the verdict's totals over the run's sessions
            head += (f" The single-call strategies send {fmt_int(sent['link'])} (link), {fmt_int(sent['fold'])} (fold) "
                     f"and {fmt_int(sent['hybrid'])} (hybrid) prompt chars in all.")
    elif decision == "trade_off":
        head = (f"**No strategy dominates on this root: the data shows a trade-off** (measured over {n} session(s)). "
                "On the Pareto front, where no other strategy is at least as good on every criterion below and better on "
                f"one: {', '.join(' = '.join(g) for g in front)}. What each gives up:")
        reps = [g[0] if "hybrid" not in g else "hybrid" for g in front]
        ref = "hybrid" if "hybrid" in reps else reps[0]
        lines += [_trade(v, a, ref, cap) for a in reps if a != ref]
    else:
        ties = [x for x in next((g for g in front if decision in g), [decision]) if x != decision]
        head = (f"**The data supports {CANDIDATES.get(decision, decision)}** (measured over {n} session(s)): on every "
                "criterion below it is at least as good as every other strategy, and better than each on at least one.")
        if ties:
            head += (f" {', '.join(ties)} {plural(len(ties), 'ties', 'tie')} with it on every criterion; a tie goes to "
                     "hybrid, the path akm ships (#843).")
    dominated = v.filter((pl.col("criterion") == "prompt_chars") & (pl.col("dominated_by") != ""))
    if decision != "no_delegated_work" and dominated.height:
        lines.append("- **Dominated.** " + "; ".join(f"{x['strategy']} (by {x['dominated_by'].replace(',', ', ')})"
                                                     for x in dominated.iter_rows(named=True)) + ".")
    lines += ["", "The criteria, summed over the run (an *identity* holds by construction and is not a finding):", ""]
    for c, label in CRITERION_LABELS.items():
        rows = v.filter(pl.col("criterion") == c)
        if not rows.height:
            continue
        cells = [f"{x['strategy']} {fmt_int(x['value'])}"
                 + (f" in {x['sessions']} session(s)" if c == "parent_chars_evicted" and x["sessions"] else "")
                 + (f" *(identity: {x['identity']})*" if x["identity"] else "")
                 for x in rows.sort(strategy_rank(rows["strategy"])).iter_rows(named=True)]
        lines.append(f"- **{label}** ({rows['better'][0]} is better): " + "; ".join(cells) + ".")
    saved = r.tables["eviction"].group_by("strategy").agg(pl.col("stub_saved_chars").sum()).filter(pl.col("stub_saved_chars") > 0)
    if saved.height:
        lines.append("- **Stub savings are not eviction.** Parent chars a notification stub shortened on purpose: "
                     + "; ".join(f"{x['strategy']} {fmt_int(x['stub_saved_chars'])}"
                                 for x in saved.sort("strategy").iter_rows(named=True)) + ".")
    # Totals per pairing method, never summed: only sidecar pairs are #840's definition.
    per = [f"`{x['pairing']}`: {x['pairs']} pairs, {x['both in prompt']} with both copies in the fold prompt, "
           f"{fmt_int(x['a stub would save (chars)'])} raw chars a stub would save" for x in pair_totals(r).iter_rows(named=True)]
    if per:
        lines.append("- **Duplication** (per pairing method, never summed across methods). " + "; ".join(per) + ".")
    section = extraction.verdict_section(r, out_dir)
    return markdown(head + "\n\n" + "\n".join(lines) + ("\n\n" + section if section else ""))


def _names(csv: str | None) -> str:
    return ", ".join(label(n) for n in (csv or "").split(",") if n) or "none"


def _step(x: dict, value: dict) -> str:
    """One step of the priority walk, in words, with the values that decided it."""
    item = parse(x["item"])[0]
    if item.op:
        head = f"Constraint `{x['item']}` ({'at most' if item.op == '<=' else 'at least'} {fmt_int(x['limit'])})"
    else:
        lower = BETTER[item.name] == "lower"
        within = f"within {x['tolerance']} of the best" if x["tolerance"] != "0" else "equal to the best"
        limit = math.floor(x["limit"]) if lower else math.ceil(x["limit"])
        head = (f"`{x['item']}` ({'lower' if lower else 'higher'} is better; {within}: best {fmt_int(x['best'])}, "
                f"{'at most' if lower else 'at least'} {fmt_int(limit)})")
    out = [n for n in (x["eliminated"] or "").split(",") if n]
    lost = ", ".join(f"{label(n)} at {fmt_int(value[item.name, n])}" for n in out) or "none"
    return f"- {head}: keeps {_names(x['survivors'])}; excludes {lost}"


FLIP_WORDS = {
    "flip_tolerance": (lambda x: f"the tolerance `{x['change'].replace('→', '` → `')}`", "no change of one tolerance"),
    "flip_swap": (lambda x: f"swapping `{x['item'].replace(', ', '` and `')}`", "no swap of two adjacent criteria"),
    "flip_insert": (lambda x: f"valuing `{x['item']}` " + (f"just before `{x['change'].split('→')[0]}`"
                                                          if "(last)" not in x["change"] else "after every listed criterion"),
                    "no criterion added {added}"),
    "flip_drop": (lambda x: f"dropping the constraint `{x['item']}`", "no dropped constraint"),
}
"""How each kind of flip row of the choice table is said, and how the absence of any row of that kind is."""


def choice(r: Report):
    """Markdown: the strategy the stated priorities choose, step by step, what would flip it, whether a
    suite proposal dominates #840's four, and the robustness caveats."""
    rows = r["choice"].sort("step").to_dicts()
    if not rows or rows[0]["note"] == "no sessions were measured":
        return markdown("_No sessions were measured, so no priorities can choose among the strategies._")
    v = r["verdict"].filter(pl.col("criterion") != "decision")
    value = {(x["criterion"], x["strategy"]): x["value"] for x in v.iter_rows(named=True)}
    text = rows[0]["priorities"]
    end = next(x for x in rows if x["kind"] in ("chosen", "none_feasible"))
    intro = "the default, #840's reasoning encoded" if text == DEFAULT_PRIORITIES else "stated for this run, not the default"
    lines = []
    if "no delegated work" in end["note"]:
        lines.append("**No delegated work under this root**: the choice below is about sessions without subagents.\n")
    if end["kind"] == "none_feasible":
        head = "**No strategy meets every constraint of the stated priorities.**"
    else:
        w = end["winner"]
        origin = " (a suite proposal, not akm's code)" if ORIGIN.get(w) == "suite proposal" else ""
        if end["item"]:
            how = f"decided by `{end['item']}`"
        else:
            tied = [label(n) for n in end["survivors"].split(",")]
            how = (f"by a tie: {', '.join(tied[:-1])} and {tied[-1]} remain after every item, and the tie goes to "
                   + (f"{w}, akm's incumbent (#843)" if "incumbent" in end["note"] else f"{label(w)}, first in registry order"))
        head = f"**Under the stated priorities, the choice is {label(w)}**{origin}, {how}."
    lines += [f"{head} Priorities: `{text}` ({intro}). Constraints apply first, then each criterion in order keeps "
              "the strategies within its tolerance of the best; the first step that leaves one strategy decides.", ""]
    walk = [x for x in rows if x["kind"] in ("constraint", "criterion")]
    decided = end["note"].startswith("decided by")
    lines += [_step(x, value) + (" — **this decides**." if decided and x is walk[-1] else ".") for x in walk]
    flips = [x for x in rows if x["kind"].startswith("flip_")]
    lines.append("")
    if flips:
        lines += ["**What would change the choice** (each a single change; the smallest tolerance change first):", ""]
        lines += [f"- {FLIP_WORDS[x['kind']][0](x)} chooses {label(x['winner']) if x['winner'] else 'nothing (none feasible)'}"
                  f" ({x['note']})." for x in flips]
    added = "just before the deciding one" if end["item"] and walk and not parse(end["item"])[0].op else "after the listed ones"
    none = [words.format(added=added) for kind, (_, words) in FLIP_WORDS.items() if not any(x["kind"] == kind for x in flips)]
    if none:
        said = ", ".join(none[:-1]) + " and " + none[-1] if len(none) > 1 else none[0]
        lines.append(("- " if flips else "") + f"{said.capitalize()} changes the choice.")
    lines += ["", _proposals(r)]
    if caveats := _caveats(r, {parse(x["item"])[0].name for x in walk}):
        lines += ["", caveats]
    return markdown("\n".join(lines))


def _proposals(r: Report) -> str:
    """Whether any suite proposal dominates every one of #840's four candidates (the verdict's dominated_by)."""
    v = r["verdict"].filter(pl.col("criterion") == "prompt_chars")
    four = sorted((x for x in v.iter_rows(named=True) if x["strategy"] in CANDIDATES), key=lambda x: list(CANDIDATES).index(x["strategy"]))
    proposals = [x["strategy"] for x in v.iter_rows(named=True) if x["origin"] == "suite proposal"]
    if not proposals or not four:
        return "_No suite proposal was measured beside #840's candidates._"
    if v["pareto_front"].null_count() == v.height:
        return ("**Suite proposals:** without delegated work the verdict makes no dominance analysis, so no suite proposal "
                "is said to dominate #840's candidates here.")
    beats = {p: [x["strategy"] for x in four if p in (x["dominated_by"] or "").split(",")] for p in proposals}
    whole = [p for p, b in beats.items() if len(b) == len(four)]
    names = ", ".join(label(x["strategy"]) for x in four)
    if whole:
        verb = plural(len(whole), "dominates", "dominate")
        head = f"**{', '.join(map(label, whole))} {verb} all of #840's candidates** ({names})"
    else:
        head = f"**No suite proposal dominates all of #840's candidates** ({names}) on this root"
    parts = [f"{label(p)} dominates {_names(','.join(b))}" for p, b in beats.items()]
    return f"{head}: " + "; ".join(parts) + " (at least as good on every criterion, better on one)."


def _caveats(r: Report, criteria: set[str]) -> str:
    """The robustness caveats of the chosen strategy against each other front member and rival on the priorities'
    criteria (one session carrying a difference, totals against most sessions), then the count over every criterion."""
    pairs = chosen_pairs(r["robustness"])
    if pairs.height == 0:
        return ""
    a = label(pairs["strategy_a"][0])
    lines = [f"**How general the differences are.** {a} against each other front member and rival, on the criteria "
             "of the priorities:", ""]
    named = pairs.filter(pl.col("criterion").is_in(sorted(criteria)))
    for flag, words in (("rests_on_one_session", "**rests on one session**, `{largest_session_path}` carrying {share} of it "
                                                 "({a_better} session(s) favour {a}, {b_better} {b})."),
                        ("majority_disagrees", "favours one side, but **most sessions favour the other** ({a_better} favour "
                                               "{a}, {b_better} {b}).")):
        for x in named.filter(pl.col(flag)).iter_rows(named=True):
            b = label(x["strategy_b"])
            lines.append(f"- vs {b} on `{x['criterion']}`: the total difference ({a} − {b}) {x['total_difference']:+,.0f} "
                         + words.format(**x, a=a, b=b, share=fmt_pct(100 * x["largest_share"])))
    if len(lines) == 2:
        lines.append("- No difference rests on one session, and no total runs against most sessions.")
    one, against = pairs["rests_on_one_session"].sum(), pairs["majority_disagrees"].sum()
    lines += ["", f"Over every criterion, {one} of the {pairs.height} comparisons rest on one session and {against} run "
              "against most sessions; the table gives sessions won, tied and lost and a bootstrap 95% interval of each total."]
    return "\n".join(lines)


def robustness_table(r: Report) -> pl.DataFrame:
    """The chosen strategy against each other front member and rival, per criterion where some session differs."""
    return chosen_pairs(r["robustness"], differing=True).select(
        pl.col("strategy_b").alias("against"), "criterion", "better", pl.col("a_better").alias("chosen better"),
        "ties", pl.col("b_better").alias("other better"), pl.col("total_difference").alias("total (chosen − other)"),
        pl.col("ci_low").alias("95% low"), pl.col("ci_high").alias("95% high"),
        (100 * pl.col("largest_share")).round(1, mode=ROUND_MODE).alias("largest session %"),
        pl.col("rests_on_one_session").alias("rests on one session"), pl.col("majority_disagrees").alias("most sessions disagree"),
    )
