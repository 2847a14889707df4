"""What each strategy would send for one session, for a person or as JSON."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict

from measure.akm.prefilter import DEFAULT_MAX_EVENT_TEXT_LENGTH, DEFAULT_MAX_TOTAL_CHARS
from measure.akm.hashing import content_hash
from measure.akm.jscompat import escape_lone_surrogates
from measure.akm.prompt import load_template
from measure.akm.read import read_session
from measure.measurements import tasks  # noqa: F401  (registers the "tasks" line collector)
from measure.measurements.lines import SessionLines
from measure.measurements.strategies import STRATEGIES, Params, SessionContext, apply_min_content_gate, check_names


def inspect_session(path: str, strategies: list[str] | None = None, budget: int = DEFAULT_MAX_TOTAL_CHARS,
                    max_event_text_length: int = DEFAULT_MAX_EVENT_TEXT_LENGTH, template_path: str | None = None,
                    show_prompt: bool = False) -> dict:
    """Read one parent transcript and run the chosen strategies on it."""
    path = os.path.abspath(path)
    if not path.endswith(".jsonl") or not os.path.isfile(path):
        raise ValueError(f"not a session transcript: {path}")
    check_names(strategies or ())
    # Paths are shown relative to the folder that holds the project folder, as in the tables.
    root = os.path.dirname(os.path.dirname(path))
    lines = SessionLines(("tasks",))  # which tool results are sync Task results (fold_dedupe_sync)
    session, problems = read_session(path, root, observe=lines.observe)
    ctx = SessionContext(
        session, Params(template=load_template(template_path), budget=budget, max_event_text_length=max_event_text_length),
        timelines=lines.get("tasks"),
    )
    report: dict = {
        "session": session.ref.path,
        "session_id": session.ref.session_id,
        "content_hash": content_hash(session.folded),
        "raw_events": {"parent": len(session.parent.events), "folded": len(session.folded)},
        "subagent_files": [t.path for t in session.subagents],
        "inline_refs": {"parent": len(session.parent.refs), "folded": len(session.refs)},
        "problems": [{"path": p, "kind": k, "reason": r} for p, k, r in problems],
        "strategies": {},
    }
    for name in strategies or list(STRATEGIES):
        r = apply_min_content_gate(ctx, {name: STRATEGIES[name](ctx)})[name]
        pe, pc, se, sc = r.kept_by_origin
        by_origin = Counter(e.file for c in r.calls for e in c.kept.events)
        entry = {
            "llm_calls": len(r.calls),
            "skipped": r.skipped or None,
            "prompt_chars": r.prompt_chars,
            "prompt_sha256": r.prompt_sha256,
            "kept": {"parent_events": pe, "parent_chars": pc, "subagent_events": se, "subagent_chars": sc},
            "kept_events_by_file": dict(sorted(by_origin.items())),
            "stats": [
                {"source": c.source, **asdict(c.kept.stats), "droppedByRule": dict(sorted(c.kept.stats.droppedByRule.items())),
                 "stubbed": c.kept.stubbed, "stub_saved_chars": c.kept.stub_saved_chars}
                for c in r.calls
            ],
            "inline_refs": r.inline_refs,
        }
        if show_prompt:
            entry["prompts"] = [c.prompt.text for c in r.calls]
        report["strategies"][name] = entry
    return report


def render_json(report: dict) -> str:
    """The report as indented JSON, text as JS `JSON.stringify` writes it: non-ASCII as is, a lone
    surrogate (an emoji cut by truncation) as its escape (`\\ud83d`), so the output encodes as UTF-8."""
    text = json.dumps(report, indent=1, ensure_ascii=False)
    return escape_lone_surrogates(text) + "\n"


def render_text(report: dict) -> str:
    """A compact, human-readable rendering of `inspect_session`'s report."""
    lines = [
        f"session   {report['session']}",
        f"events    parent {report['raw_events']['parent']}, folded {report['raw_events']['folded']} "
        f"({len(report['subagent_files'])} subagent file(s))",
        f"refs      parent {report['inline_refs']['parent']}, folded {report['inline_refs']['folded']}",
        f"hash      {report['content_hash']}",
    ]
    lines += [f"problem   {p['kind']}: {p['path']}: {p['reason']}" for p in report["problems"]]
    lines += ["", f"{'strategy':<20}{'calls':>6}{'prompt':>10}{'parent kept':>18}{'subagent kept':>18}  prompt sha256"]
    for name, s in report["strategies"].items():
        k = s["kept"]
        lines.append(
            f"{name:<20}{s['llm_calls']:>6}{s['prompt_chars']:>10}"
            f"{k['parent_events']:>7} ev {k['parent_chars']:>7}{k['subagent_events']:>7} ev {k['subagent_chars']:>7}"
            f"  {s['prompt_sha256'][:16]}"
            + (f"  skipped: {s['skipped']} (akm's minContentChars gate)" if s.get("skipped") else "")
        )
    for name, s in report["strategies"].items():
        for i, prompt in enumerate(s.get("prompts", ())):
            lines += ["", f"--- {name} prompt {i + 1} ---", prompt]
    return "\n".join(lines) + "\n"
