"""The `choice` table: the strategy an ordered list of priorities chooses, and what would flip it.

    PRIORITIES := ITEM ("," ITEM)*
    ITEM       := CONSTRAINT | CRITERION
    CONSTRAINT := NAME ("<=" | ">=") BOUND     BOUND := number | "cap" (the run's --session-cap)
    CRITERION  := NAME ["~" TOL]               TOL   := number ["%"] (absolute, or % of the best value)

NAME is a verdict criterion (`verdict.CRITERIA`, which gives its direction). Constraints apply
first, wherever written; then each criterion in the order written keeps the survivors within
its tolerance of the best survivor, and the first step that leaves one survivor decides. More
than one after every step is a tie, resolved to akm's incumbent when it is among them, else by
registry order. Everything is computed from the run's totals (`verdict.Summary`): a flip
analysis costs strategies x items x changes, never a pass over events.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction

from measure.measurements.verdict import CRITERIA, INCUMBENT, Summary

DEFAULT = "calls_per_run_max<=cap, parent_chars_evicted, inline_refs, prompt_chars~1%"
"""#840's reasoning, encoded: one call per session within maxSessionsPerRun (a run of `cap` sessions
costs at most `cap` calls); then no parent-origin eviction; then the same inline refs as fold; then
prompt size within 1% of the best. Delegated content is not in it: #840 called subagent tool detail
speculative (the flip analysis says what valuing it would change)."""

BETTER = dict(CRITERIA)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class PrioritiesError(ValueError):
    """A priorities text that does not follow the grammar; the message names the bad item."""


@dataclass(frozen=True)
class Item:
    """One item: a constraint (`op` set; `bound` None means the session cap) or a criterion with a tolerance."""

    name: str
    op: str | None = None
    bound: Fraction | None = None
    tol: Fraction = Fraction(0)
    relative: bool = False

    @property
    def text(self) -> str:
        if self.op:
            return f"{self.name}{self.op}{'cap' if self.bound is None else _num(self.bound)}"
        return f"{self.name}~{self.tolerance}" if self.tol or self.relative else self.name

    @property
    def tolerance(self) -> str | None:
        return None if self.op else _num(self.tol) + ("%" if self.relative else "")


def _num(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else format(Decimal(x.numerator) / Decimal(x.denominator), "f")


def parse(text: str) -> tuple[Item, ...]:
    """The items of a priorities text; raises PrioritiesError naming the first bad item."""
    items: list[Item] = []
    for k, raw in enumerate(text.split(","), 1):
        item = raw.strip()
        where = f"item {k} ({item!r})" if item else f"item {k}"
        if not item:
            raise PrioritiesError(f"{where} is empty in {text!r}")
        m = re.fullmatch(r"([^<>=~\s]+)\s*(?:(<=|>=)\s*(.*)|~\s*(.*))?", item)
        if m is None:
            raise PrioritiesError(f"{where}: write NAME, NAME~TOL, NAME<=BOUND or NAME>=BOUND")
        name, op, bound, tol = m.groups()
        if name not in BETTER:
            close = difflib.get_close_matches(name, list(BETTER), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; criteria: {', '.join(BETTER)}"
            raise PrioritiesError(f"{where}: unknown criterion {name!r}{hint}")
        if op:
            if bound != "cap" and not _NUMBER.fullmatch(bound):
                raise PrioritiesError(f"{where}: the bound {bound!r} is neither a number nor cap")
            items.append(Item(name, op, None if bound == "cap" else Fraction(bound)))
            continue
        if tol is not None and not _NUMBER.fullmatch(tol.removesuffix("%")):
            raise PrioritiesError(f"{where}: the tolerance {tol!r} is neither a number nor a percentage such as 1%")
        if any(i.name == name and not i.op for i in items):
            raise PrioritiesError(f"{where}: {name} is already a criterion")
        items.append(Item(name, tol=Fraction(tol.removesuffix("%")) if tol else Fraction(0), relative=bool(tol) and tol.endswith("%")))
    return tuple(items)


def canonical(text: str) -> str:
    """`text` as the tables write it (each item as Item.text, joined by ", "); raises PrioritiesError."""
    return ", ".join(i.text for i in parse(text))


@dataclass(frozen=True)
class Step:
    """One item applied: who entered, the best value among them, the limit survivors meet, who survived."""

    item: Item
    best: Fraction | None  # constraints: None
    limit: Fraction
    entering: tuple[str, ...]
    survivors: tuple[str, ...]


@dataclass(frozen=True)
class Walk:
    """The priorities applied to one run: the steps, and the strategy they choose."""

    items: tuple[Item, ...]
    steps: tuple[Step, ...]
    survivors: tuple[str, ...]

    @property
    def winner(self) -> str | None:
        return (INCUMBENT if INCUMBENT in self.survivors else self.survivors[0]) if self.survivors else None

    @property
    def decided(self) -> Step | None:
        """The step that left one survivor (None: a tie, or nothing feasible)."""
        return self.steps[-1] if len(self.survivors) == 1 and self.steps else None

    @property
    def rivals(self) -> tuple[str, ...]:
        """The strategies the choice was made among: those entering the deciding step (of a tie, the last step)."""
        among = self.steps[-1].entering if self.steps else self.survivors
        return tuple(n for n in among if n != self.winner)

    @property
    def text(self) -> str:
        return ", ".join(i.text for i in self.items)


def walk(items: tuple[Item, ...], summary: Summary, cap: int) -> Walk:
    """Constraints first, then the criteria in order, until one strategy is left (pure)."""
    value = {n: {c: Fraction(v) for c, v in t.items()} for n, t in summary.totals.items()}
    survivors = summary.names
    steps = []
    for it in sorted(items, key=lambda i: not i.op):  # stable: constraints first, each group as written
        vals = {n: value[n][it.name] for n in survivors}
        if it.op:
            best, limit, lower = None, Fraction(cap) if it.bound is None else it.bound, it.op == "<="
        else:
            lower = BETTER[it.name] == "lower"
            best = min(vals.values()) if lower else max(vals.values())
            margin = it.tol * abs(best) / 100 if it.relative else it.tol
            limit = best + margin if lower else best - margin
        keep = tuple(n for n in survivors if (vals[n] <= limit if lower else vals[n] >= limit))  # lower: at most the limit
        steps.append(Step(it, best, limit, survivors, keep))
        survivors = keep
        if len(survivors) <= 1:
            break
    return Walk(items, tuple(steps), survivors)


def flips(base: Walk, summary: Summary, cap: int) -> list[dict]:
    """The `choice` rows (at step 0) of the single changes that change the winner: smallest tolerance change
    per criterion and direction (smallest first), adjacent swaps, an insertion before the deciding criterion, drops."""
    items = base.items
    tolerances: list[tuple[Fraction, dict]] = []  # how far the tolerance moved (a share of the best), the row

    def changed(new_items) -> Walk | None:
        w = walk(tuple(new_items), summary, cap)
        return w if w.winner != base.winner else None

    def flip(kind: str, item: str, change: str, w: Walk, tolerance: str | None = None) -> dict:
        return _row(0, kind, w, item=item, tolerance=tolerance, change=change, note=_outcome(w))

    for step in base.steps:
        it = step.item
        if it.op or (it.relative and step.best == 0):  # no finite % of 0 reaches a non-zero gap
            continue
        # each entrant's distance from the best, in the item's unit (absolute, or % of the best)
        dists = {abs(Fraction(summary.totals[n][it.name]) - step.best) for n in step.entering}
        gaps = sorted({100 * d / abs(step.best) if it.relative else d for d in dists} - {Fraction(0)})
        unit = 100 if it.relative else 1  # tolerances move in whole units, or hundredths of a percent
        for up, candidates in ((True, [g for g in gaps if g > it.tol]), (False, [g for g in reversed(gaps) if g <= it.tol])):
            for g in candidates:  # a tolerance just at the gap (up: the gap is then within it) or just below it
                new = replace(it, tol=max(Fraction(0), Fraction(math.ceil(g * unit) - (not up), unit)))
                w = changed(new if i is it else i for i in items)
                if w is not None:
                    scale = Fraction(1, 100) if it.relative else 1 / max(abs(step.best), Fraction(1))
                    row = flip("flip_tolerance", it.text, f"{it.text}→{new.text}", w, new.tolerance)
                    tolerances.append((abs(new.tol - it.tol) * scale, row))
                    break
    out = [row for _, row in sorted(tolerances, key=lambda t: t[0])]
    criteria = [i for i in items if not i.op]
    at = {id(i): k for k, i in enumerate(items)}
    for a, b in zip(criteria, criteria[1:]):
        swapped = list(items)
        swapped[at[id(a)]], swapped[at[id(b)]] = b, a
        w = changed(swapped)
        if w is not None:
            out.append(flip("flip_swap", f"{a.text}, {b.text}", f"{a.text}, {b.text}→{b.text}, {a.text}", w))
    decider = base.decided.item if base.decided and not base.decided.item.op else None
    where = at[id(decider)] if decider else len(items)
    for name, _ in CRITERIA:
        if any(i.name == name for i in criteria):
            continue
        new = Item(name)
        w = changed([*items[:where], new, *items[where:]])
        if w is not None:
            change = f"{decider.text}→{new.text}, {decider.text}" if decider else f"→{new.text} (last)"
            out.append(flip("flip_insert", new.text, change, w))
    for i in items:
        if i.op:
            w = changed(j for j in items if j is not i)
            if w is not None:
                out.append(flip("flip_drop", i.text, f"{i.text}→(dropped)", w))
    return out


def _row(step: int, kind: str, w: Walk, **kw) -> dict:
    return {"step": step, "kind": kind, "item": None, "priorities": w.text, "tolerance": None, "best": None, "limit": None,
            "survivors": ",".join(w.survivors), "eliminated": None, "winner": w.winner, "change": None, "note": None} | kw


def _outcome(w: Walk) -> str:
    if w.winner is None:
        return "no strategy meets every constraint"
    if w.decided:
        return f"decided by {w.decided.item.text}"
    if w.winner == INCUMBENT:
        return f"a tie of {', '.join(w.survivors)}, resolved to {INCUMBENT}, akm's incumbent"
    return f"a tie of {', '.join(w.survivors)}, resolved by registry order"


def choice(summary: Summary | None, text: str, cap: int) -> tuple[Walk | None, list[dict]]:
    """The walk of `text` over the run and the `choice` table's rows (see schema.CHOICE)."""
    items = parse(text)
    if summary is None:
        return None, [_row(0, "none_feasible", Walk(items, (), ()), note="no sessions were measured")]
    base = walk(items, summary, cap)
    rows = [_row(k, "constraint" if st.item.op else "criterion", base, item=st.item.text, tolerance=st.item.tolerance,
                 best=None if st.best is None else float(st.best), limit=float(st.limit), winner=None,
                 survivors=",".join(st.survivors), eliminated=",".join(n for n in st.entering if n not in st.survivors))
            for k, st in enumerate(base.steps)]
    note = _outcome(base)
    if summary.delegated == 0:
        note += "; no delegated work under this root: the choice is about sessions without subagents"
    if base.winner is None:
        rows.append(_row(len(rows), "none_feasible", base, survivors="", note=note))
    else:
        if not base.decided:
            rows.append(_row(len(rows), "tie", base, note=_outcome(base)))
        rows.append(_row(len(rows), "chosen", base, item=base.decided.item.text if base.decided else None, note=note))
    return base, rows + [row | {"step": len(rows) + k} for k, row in enumerate(flips(base, summary, cap))]
