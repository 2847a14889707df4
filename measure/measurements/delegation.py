"""The `delegation` table: per subagent transcript and strategy, what delegated work reaches a prompt.

fold's loss (parent content evicted) is measured by `eviction`; this module measures the other
side: a delegated result that never reaches link's or hybrid's prompt because the parent never
received it, and subagent-only content (tool calls, tool output, reasoning) that only a prompt
reading subagent transcripts can carry. How the result reached the parent comes from the task
timeline (`tasks` collector, claude-code-format.md §8–9) and the one classifier (`subagents.classify`:
kind, launch), never from a second parse. A replay's opening events are parent text, never its own.

"Copy" is defined once, here: text B is a copy of text A when the #840 word-set Jaccard of the two
(`pairs.word_set`, after JSON escapes are undone) is at least `COPY_JACCARD`. Only two events of a
subagent can copy what its parent holds, its prompt and its report, so only those are compared (with
the parent events naming or launching the agent); cost stays linear in events.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from measure.akm.jscompat import utf16_len
from measure.akm.read import provenance
from measure.akm.records import Event, Session
from measure.measurements.pairs import set_jaccard, stem, word_set
from measure.measurements.subagents import DELEGATED_KINDS, Subagent
from measure.measurements.tasks import Timeline

if TYPE_CHECKING:  # strategies reads the deliveries (hybrid_undelivered): at run time the import goes that way
    from measure.measurements.strategies import SessionContext, StrategyResult

COPY_JACCARD = 0.5
"""Word-set Jaccard at or above which one text counts as a copy of another (see `is_copy`)."""

# A tool result rendered by JSON.stringify carries `\n`, `\t`, `\"` as two characters; undone so
# the first word of each line is the same word in both copies.
_ESCAPES = re.compile(r'\\[nrt"\\]')
_NAMES = re.compile(r"<(?:task-id|agent-id)>\s*([^<\s]+)\s*</(?:task-id|agent-id)>|agentId: ([^\s(]+)")
_LAUNCH_TOOLS = ("[tool:Task]", "[tool:Agent]", "[tool:Skill]")


def copy_words(text: str) -> frozenset[str]:
    """The word set a copy is judged on: #840's `word_set` of the text with JSON escapes undone."""
    return frozenset(word_set(_ESCAPES.sub(" ", text)))


def is_copy(a: frozenset[str], b: frozenset[str]) -> bool:
    """One text is a copy of the other: word-set Jaccard >= COPY_JACCARD (symmetric)."""
    return set_jaccard(a, b) >= COPY_JACCARD


def final_report(events: tuple[Event, ...]) -> Event | None:
    """A subagent's result: its last assistant event in time order (as #840 takes the final event)."""
    return next((e for e in reversed(events) if e.role == "assistant"), None)


def notified_ids(timeline: Timeline) -> set[str]:
    """The task ids whose notification the parent consumed as a turn (format §9.1)."""
    return {t.notification.task_id for t in timeline.turns if t.notification is not None}


def delivery(sub: Subagent, notified: bool) -> str:
    """How a subagent's result reached the parent (the values: schema.DELEGATION's `delivery`)."""
    if sub.launch in ("rejected", "interrupted"):
        return "rejected"
    if sub.launch == "sync" and sub.acknowledged:
        return "tool_result"
    if notified:
        return "notification"
    return "launch_ack_only" if sub.acknowledged else "none"


def delegation_rows(ctx: SessionContext, results: dict[str, StrategyResult]) -> list[dict]:
    """One row per subagent transcript x strategy (see the `delegation` table in schema.py)."""
    s: Session = ctx.session
    if not s.subagents:
        return []
    timelines, subagents, parent_tl = ctx.timelines, ctx.subagents, ctx.parent_timeline
    words = cache(copy_words)  # by text: a parent event is compared with each agent naming it
    notified = notified_ids(parent_tl)

    # One pass over the parent: the events naming each agent id, and Task/Agent calls by time.
    naming: dict[str, list[Event]] = {}
    calls_at: dict[float, list[Event]] = {}
    for e in s.parent.events:
        text = e.text
        if "task-id>" in text or "agent-id>" in text or "agentId: " in text:
            for a, b in _NAMES.findall(text):
                lst = naming.setdefault(a or b, [])
                if not lst or lst[-1] is not e:
                    lst.append(e)
        if e.role == "assistant" and any(t in text for t in _LAUNCH_TOOLS):
            calls_at.setdefault(e.ts, []).append(e)
    call_ts = {l.tool_use_id: l.ts for l in parent_tl.launches}

    # Per subagent file: its result, the parent events that copy it, and the parent content it may copy.
    agents = []
    result_copy_of: dict[int, list[int]] = {}  # id(parent event) -> agents whose result it copies
    for i, tf in enumerate(s.subagents):
        agent_id = stem(tf.path)
        bare = agent_id.removeprefix("agent-")
        sub = subagents[tf.path]
        alone = tf.alone()
        final = final_report(alone)
        result_words = words(final.text) if final is not None else frozenset()
        parent_refs = list(naming.get(bare, ()))
        # the parent events calling the agent's launch (an event's ts is never None: an unknown call finds none)
        calls = calls_at.get(call_ts.get(sub.tool_use_id), ())
        parent_refs += [e for e in calls if all(e is not p for p in parent_refs)]
        for e in naming.get(bare, ()):
            if result_words and is_copy(words(e.text), result_words):
                result_copy_of.setdefault(id(e), []).append(i)
        parent_words = [words(e.text) for e in parent_refs]
        # Only a subagent's prompt (its first event) and its report (the final) can copy what the
        # parent holds; every other event (tool calls, tool output, reasoning) is its own.
        keys = []
        if final is not None:
            keys.append((final, True, not any(is_copy(result_words, w) for w in parent_words)))
        first = next((e for e in alone if e is not final), None)
        if first is not None:
            keys.append((first, False, not (parent_words and any(is_copy(words(first.text), w) for w in parent_words))))
        end = timelines[tf.path].last_ts if tf.path in timelines else None
        after = None if end is None or parent_tl.last_ts is None else end > parent_tl.last_ts
        prefix = provenance(tf.sidecar) + "\n" if tf.sidecar is not None else "\0"
        row = {  # the columns every strategy's row of this agent shares
            "subagent_path": tf.path, "agent_id": agent_id, "kind": sub.kind, "delegated": sub.kind in DELEGATED_KINDS,
            "launch": sub.launch, "launch_source": sub.launch_source,
            "result_chars": final.chars if final is not None else 0, "delivery": delivery(sub, bare in notified),
            "completed_after_parent": after,
        }
        agents.append({"row": row, "keys": keys, "prefix": prefix, "prefix_chars": utf16_len(prefix),
                       "replayed": {(e.role, e.text) for e in tf.events[: sub.replayed]}})

    by_file = {tf.path: i for i, tf in enumerate(s.subagents)}
    # Kept events that the pre-filter truncated are new objects; the shared memo names their source.
    source = {id(v[1]): v[3] for v in ctx.memo.verdicts.values() if v[1] is not None and v[1] is not v[3]}
    rows = []
    for name, r in results.items():
        in_prompt, result_kept, kept_chars, unique = ([0] * len(agents) for _ in range(4))
        for call in r.calls:
            for e in call.kept.events:
                src = source.get(id(e), e)
                if e.file == s.ref.path:
                    for i in result_copy_of.get(id(src), ()):
                        in_prompt[i] = 1
                        result_kept[i] += e.chars
                    continue
                i = by_file.get(e.file)
                if i is None:
                    continue
                a = agents[i]
                # the fold stamps a provenance line on each subagent event: akm's, not subagent content
                prefix = a["prefix"]
                skip = len(prefix) if src.text.startswith(prefix) else 0
                chars = max(0, e.chars - a["prefix_chars"]) if skip and e.text.startswith(prefix) else e.chars
                kept_chars[i] += chars
                # a replay's opening events are the parent's own: never subagent-only content
                own = not (a["replayed"] and (src.role, src.text[skip:]) in a["replayed"])
                for k, is_result, k_unique in a["keys"]:
                    if k.role == src.role and len(src.text) - skip == len(k.text) and src.text.endswith(k.text):
                        if is_result:
                            in_prompt[i] = 1
                            result_kept[i] += chars
                        own = own and k_unique
                        break
                if own:
                    unique[i] += chars
        for i, a in enumerate(agents):
            rows.append({
                **a["row"], "strategy": name, "budget": r.budget, "result_in_prompt": bool(in_prompt[i]),
                "result_chars_in_prompt": result_kept[i], "subagent_chars_in_prompt": kept_chars[i],
                "unique_chars_in_prompt": unique[i],
            })
    return rows


#: The `sessions` columns that sum one session's delegation rows (per strategy).
TOTALS = ("delegated_transcripts", "delegated_results", "delegated_results_in_prompt", "subagent_unique_chars_in_prompt",
          "rejected_launches", "unknown_transcripts")


def delegation_totals(rows: list[dict]) -> dict[str, dict]:
    """Per strategy, the `sessions` columns (TOTALS) summing the delegation rows of one session."""
    out: dict[str, dict] = {}
    for r in rows:
        t = out.setdefault(r["strategy"], dict.fromkeys(TOTALS, 0))
        t["unknown_transcripts"] += r["kind"] == "unknown"
        if not r["delegated"]:
            continue
        t["delegated_transcripts"] += 1
        t["delegated_results"] += r["result_chars"] > 0
        t["delegated_results_in_prompt"] += r["result_in_prompt"]
        t["subagent_unique_chars_in_prompt"] += r["unique_chars_in_prompt"]
        t["rejected_launches"] += r["delivery"] == "rejected"
    return out
