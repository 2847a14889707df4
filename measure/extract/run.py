"""The experiment: select sessions, build prompts, send or reuse, parse, compare, write the tables."""

from __future__ import annotations

import io
import itertools
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from measure import paths
from measure.akm.prefilter import DEFAULT_MAX_EVENT_TEXT_LENGTH, DEFAULT_MAX_TOTAL_CHARS
from measure.akm.prompt import Prompt, load_template
from measure.akm.read import read_session
from measure.extract import compare
from measure.extract.clients import DEFAULT_MODELS, CallFailed, Client, make_client
from measure.extract.parse import BadReply, Contract, candidate_text, contract_from_template, parse_candidates
from measure.extract.select import SELECT_RULE, select_sessions
from measure.extract.store import ReplyStore, reply_key, write_atomic
from measure.measurements import tasks  # noqa: F401  (registers the "tasks" line collector)
from measure.measurements.lines import SessionLines
from measure.measurements.pairs import word_set
from measure.measurements.strategies import STRATEGIES, Params, SessionContext, check_names
from measure.numbers import percent, rounded
from measure.runner import progress
from measure.runner.job import RunParams
from measure.runner.outputs import check_out_dir
from measure.runner.redact import redact, redact_path, redact_row
from measure.runner.run import run_measurement
from measure.runner.tables import frame
from measure.schema import EXTRACTION_AB, EXTRACTION_CALLS, EXTRACTION_UNIQUE

CHARS_PER_TOKEN = 4
"""Dry-run estimate of input tokens: prompt chars / 4 (a common rule of thumb for English and code)."""


@dataclass(frozen=True)
class ExtractParams:
    """What an extraction run sends and how; recorded in `<out>/extract.json`."""

    strategies: tuple[str, ...] = ("fold", "hybrid")
    sessions: tuple[str, ...] = ()
    max_sessions: int = 10
    select: str = "most_delegated"
    client: str = "anthropic"
    model: str | None = None
    base_url: str | None = None
    command: str | None = None
    template_path: str | None = None
    temperature: float | None = None  # None: the server's default (not sent)
    max_tokens: int = 4096
    samples: int = 1
    budget: int = DEFAULT_MAX_TOTAL_CHARS
    max_event_text_length: int = DEFAULT_MAX_EVENT_TEXT_LENGTH
    file_time_ms: float | None = None
    price_per_mtok: float = 3.0  # USD per million input tokens, for the dry-run estimate only
    max_retries: int = 2
    timeout: float = 600.0
    redact: bool = False  # names hashed in every output (runner.redact); no reply stored


@dataclass(frozen=True)
class PlannedCall:
    session_id: str
    session_path: str
    strategy: str
    call_index: int
    prompt: Prompt  # its text kept


@dataclass
class Plan:
    """Every call of the experiment, with each session's evidence for the comparison."""

    sessions: list[str]
    calls: list[PlannedCall]
    evidence: dict[str, compare.Evidence] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtractSummary:
    sessions: int
    calls: int
    sent: int
    reused: int
    errors: int


def _evidence(ctx: SessionContext) -> compare.Evidence:
    s = ctx.session
    parent_path = s.ref.path
    notes = {id(p.notification): p.notification for p in ctx.pairs}
    parent, sub = set(), set()
    for e in s.folded:
        if e.file != parent_path:
            sub |= word_set(e.text)
        elif "<task-notification>" in e.text:
            notes.setdefault(id(e), e)
        elif id(e) not in notes:
            parent |= word_set(e.text)
    return compare.Evidence(tuple(frozenset(word_set(r.text)) for r in s.refs),
                            tuple(frozenset(word_set(e.text)) for e in notes.values()),
                            frozenset(parent), frozenset(sub))


def plan(root: str | os.PathLike, p: ExtractParams, jobs: int | None = 1) -> Plan:
    """Select the sessions (a measurement of the root, without the cache) and build every prompt to send."""
    root = os.path.abspath(os.fspath(root))
    check_names(p.strategies)
    run = RunParams.from_options(max_total_chars=p.budget, max_event_chars=p.max_event_text_length,
                                 template=p.template_path, sessions=p.sessions, strategies=("link", "fold"),
                                 file_time_ms=p.file_time_ms)
    with tempfile.TemporaryDirectory(prefix="measure-extract-") as tmp:
        run_measurement(root, tmp, run, jobs=jobs, progress=progress.Progress())  # silent: the bar counts calls
        sessions_table = pl.read_parquet(Path(tmp) / "sessions.parquet")
    chosen = select_sessions(sessions_table, p.select, p.max_sessions, list(p.sessions))
    params = Params(template=load_template(p.template_path), budget=p.budget,
                    max_event_text_length=p.max_event_text_length, keep_prompts=True)
    out = Plan(sessions=chosen, calls=[])
    for session_path in chosen:
        lines = SessionLines()  # the task timelines: hybrid_undelivered reads how results reached the parent
        session, _ = read_session(os.path.join(root, session_path), root, file_time_ms=p.file_time_ms, observe=lines.observe)
        ctx = SessionContext(session, params, timelines=lines.get("tasks"))
        out.evidence[session_path] = _evidence(ctx)
        for name in p.strategies:
            out.calls += [PlannedCall(session.ref.session_id, session_path, name, i, c.prompt)
                          for i, c in enumerate(STRATEGIES[name](ctx).calls)]
    return out


def _shown(session_path: str, p: ExtractParams) -> str:
    """A session's path as a line on the terminal names it: hashed under --redact."""
    return redact_path(session_path) if p.redact else session_path


def dry_run_text(planned: Plan, p: ExtractParams) -> str:
    """What would be sent: one line per session and strategy, then totals and a cost estimate."""
    w = max([len(_shown(c.session_path, p)) for c in planned.calls] + [7]) + 2
    lines = [f"{'session':<{w}}{'strategy':<20}{'calls':>6}{'prompt chars':>14}{'~input tokens':>15}"]
    total_chars = 0
    for (path, strategy), group in itertools.groupby(planned.calls, key=lambda c: (c.session_path, c.strategy)):
        group = list(group)
        chars = sum(c.prompt.chars for c in group)
        total_chars += chars * p.samples
        lines.append(f"{_shown(path, p):<{w}}{strategy:<20}{len(group) * p.samples:>6}{chars * p.samples:>14}{chars * p.samples // CHARS_PER_TOKEN:>15}")
    tokens = total_chars // CHARS_PER_TOKEN
    cost = rounded(tokens * p.price_per_mtok / 1e6, 2)
    lines.append(f"{len(planned.sessions)} session(s), {len(planned.calls) * p.samples} call(s), "
                 f"{total_chars} prompt chars, ~{tokens} input tokens (chars/{CHARS_PER_TOKEN}), "
                 f"~${cost:.2f} input at ${p.price_per_mtok:g}/Mtok; nothing sent (--dry-run)")
    return "\n".join(lines) + "\n"


def execute(planned: Plan, p: ExtractParams, out_dir: str | os.PathLike, client: Client | None, contract: Contract,
            log=None) -> tuple[list[dict], dict, int, int]:
    """Send (or reuse) every call; returns call rows, candidates per (session, strategy, sample), sent, reused.
    `client=None` is offline: only the store answers, a missing reply is a `not_in_store` row. Raises
    ClientUnavailable when no call can succeed (replies stored so far are kept)."""
    store = ReplyStore(out_dir)
    client_name = client.name if client else p.client
    model = client.model if client else (p.model or DEFAULT_MODELS.get(p.client, p.client))
    rows: list[dict] = []
    cands: dict[tuple[str, str, int], list[dict] | None] = {}
    sent = reused = 0
    bar = progress.current()  # a bar on a terminal when `measure extract` made one active
    bar.start(len(planned.calls) * p.samples, sum(c.prompt.chars for c in planned.calls) * p.samples)
    for c, sample in itertools.product(planned.calls, range(p.samples)):
        # everything that decides a reply: its store key
        ident = {"client": client_name, "model": model, "prompt_sha256": c.prompt.sha256, "sample": sample,
                 "params": {"temperature": p.temperature, "max_tokens": p.max_tokens}}
        key = reply_key(**ident)
        # the columns a row lacks (tokens, latency, error, candidates) are null in the table
        row = {"session_id": c.session_id, "session_path": c.session_path, "strategy": c.strategy, "call_index": c.call_index,
               "sample": sample, "client": client_name, "model": model, "prompt_sha256": c.prompt.sha256,
               "prompt_chars": c.prompt.chars, "reply_key": key, "status": "ok"}
        record = store.get(key)
        if record is not None:
            reused += 1
        elif client is None:
            row.update(status="not_in_store", error="no stored reply and no client (offline rebuild)")
        else:
            started = time.perf_counter()
            try:
                reply = client.complete(c.prompt.text, temperature=p.temperature, max_tokens=p.max_tokens)
            except CallFailed as exc:
                row.update(status="call_failed", error=str(exc))
            else:
                ms = round((time.perf_counter() - started) * 1000)  # the call's wall time
                record = {**ident, "reply": reply.text, "input_tokens": reply.input_tokens,
                          "output_tokens": reply.output_tokens, "latency_ms": ms}
                if not p.redact:  # a reply describes its transcript: under --redact none is kept, a rerun sends again
                    store.put(key, record)
                sent += 1
                if log:
                    log(f"sent {_shown(c.session_path, p)} {c.strategy} #{c.call_index} sample {sample}: {ms} ms")
        found = None
        if record is not None:
            row.update(input_tokens=record.get("input_tokens"), output_tokens=record.get("output_tokens"),
                       latency_ms=record.get("latency_ms"))
            try:
                found = parse_candidates(record.get("reply", ""), contract)
                row["candidates"] = len(found)
            except BadReply as exc:
                row.update(status="invalid_reply", error=str(exc))
        slot = (c.session_path, c.strategy, sample)
        # an arm with a failed call is incomplete: not compared
        if found is None or cands.get(slot, []) is None:
            cands[slot] = None
        else:
            cands.setdefault(slot, []).extend(found)
        rows.append(row)
        bar.advance(c.prompt.chars)  # prompt chars stand in for bytes: the bar's MB/s is prompt text sent
    bar.stop()
    return rows, cands, sent, reused


def _unmatched_pct(a: list[dict], b: list[dict]) -> float:
    m = compare.match([candidate_text(x) for x in a], [candidate_text(x) for x in b])
    return percent(len(m.unique_a) + len(m.unique_b), len(a) + len(b))


def _mean_unmatched_pct(pairs) -> float | None:
    """The mean of _unmatched_pct over pairs of candidate lists, one decimal, a pair with an incomplete side left
    out; None without pairs."""
    pcts = [_unmatched_pct(a, b) for a, b in pairs if a is not None and b is not None]
    return rounded(sum(pcts) / len(pcts), 1) if pcts else None


def ab_rows(planned: Plan, p: ExtractParams, cands: dict) -> tuple[list[dict], list[dict]]:
    """Rows of extraction_ab (one per session x strategy pair: sample 0 matched/unique with sources, noise over
    samples) and of extraction_unique (the unmatched candidates themselves)."""
    ids = {c.session_path: c.session_id for c in planned.calls}
    rows, unique = [], []
    for path in planned.sessions:
        ev = planned.evidence[path]
        for sa, sb in itertools.combinations(p.strategies, 2):
            samples_a, samples_b = ([cands.get((path, s, k)) for k in range(p.samples)] for s in (sa, sb))
            a, b = samples_a[0], samples_b[0]
            complete = a is not None and b is not None
            row = {"session_id": ids.get(path), "session_path": path, "strategy_a": sa, "strategy_b": sb,
                   "samples": p.samples, "complete": complete}
            if complete:
                m = compare.match([candidate_text(x) for x in a], [candidate_text(x) for x in b])
                row.update(candidates_a=len(a), candidates_b=len(b), matched=len(m.pairs), unique_a=len(m.unique_a), unique_b=len(m.unique_b))
                for arm, s, items, idx in (("a", sa, a, m.unique_a), ("b", sb, b, m.unique_b)):
                    kinds = [compare.classify(candidate_text(items[i]), ev) for i in idx]
                    row.update({f"unique_{arm}_{k}": kinds.count(k) for k in compare.SOURCES})
                    unique += [{**{k: row[k] for k in ("session_id", "session_path", "strategy_a", "strategy_b")}, "arm": arm,
                                "strategy": s, "candidate": i, "title": str(items[i].get("title") or candidate_text(items[i]))}
                               for i in idx]
                row["unmatched_pct"] = _mean_unmatched_pct(zip(samples_a, samples_b))  # sample i vs sample i
            row["noise_a_unmatched_pct"] = _mean_unmatched_pct(itertools.combinations(samples_a, 2))
            row["noise_b_unmatched_pct"] = _mean_unmatched_pct(itertools.combinations(samples_b, 2))
            rows.append(row)
    return rows, unique


def write_outputs(out_dir: Path, root: str, p: ExtractParams, planned: Plan, calls: list[dict], ab: list[dict],
                  unique: list[dict], contract: Contract) -> None:
    selected, named = list(planned.sessions), list(p.sessions)
    if p.redact:
        for row in (*calls, *ab, *unique):
            redact_row(row)
        selected = [redact_path(s) for s in selected]
        named = [redact(s) for s in named]
    for table, rows in ((EXTRACTION_CALLS, calls), (EXTRACTION_AB, ab), (EXTRACTION_UNIQUE, unique)):
        df, parquet = frame(table, rows), io.BytesIO()
        df.write_parquet(parquet, compression="zstd", statistics=False)
        write_atomic(out_dir / f"{table.name}.csv", df.write_csv(float_precision=None))
        write_atomic(out_dir / f"{table.name}.parquet", parquet.getvalue())
    meta = {
        "sessions_root": redact(paths.portable(root)) if p.redact else paths.portable(root),
        "params": {k: v for k, v in asdict(p).items() if k not in ("max_retries", "timeout")}
        | {"strategies": list(p.strategies), "sessions": named,
           "template_path": paths.portable(p.template_path) if p.template_path else None},
        "model": calls[0]["model"] if calls else p.model,
        "selection_rule": SELECT_RULE if not p.sessions and p.select == "most_delegated" else p.select,
        "selected_sessions": selected,
        "contract": {"list_key": contract.list_key, "fields": list(contract.fields)},
        "similarity": {"rule": "word-set Jaccard of title+body (#840 words)", "match_threshold": compare.MATCH_THRESHOLD,
                        "restates_threshold": compare.RESTATES_THRESHOLD},
    }
    write_atomic(out_dir / "extract.json", json.dumps(meta, indent=1, sort_keys=True) + "\n")


def run_extract(root: str | os.PathLike, out_dir: str | os.PathLike, p: ExtractParams, *, dry_run: bool = False,
                offline: bool = False, jobs: int | None = 1, log=None,
                store_dir: str | os.PathLike | None = None) -> ExtractSummary:
    """The whole experiment, its replies stored in (and reused from) `store_dir`, by default `out_dir`. Raises
    OutputError before any work when `out_dir` is inside, equal to or holds the sessions root, and
    ClientUnavailable (one-line reason) before or during sending."""
    check_out_dir(out_dir, root)
    planned = plan(root, p, jobs)
    contract = contract_from_template(load_template(p.template_path))
    if dry_run:
        sys.stdout.write(dry_run_text(planned, p))
        return ExtractSummary(len(planned.sessions), len(planned.calls) * p.samples, 0, 0, 0)
    client = (make_client(p.client, p.model, p.base_url, p.command, p.max_retries, p.timeout)
              if not offline and planned.calls else None)
    calls, cands, sent, reused = execute(planned, p, store_dir or out_dir, client, contract, log)
    write_outputs(Path(out_dir), os.fspath(root), p, planned, calls, *ab_rows(planned, p, cands), contract)
    errors = sum(1 for r in calls if r["status"] != "ok")
    return ExtractSummary(len(planned.sessions), len(calls), sent, reused, errors)


def rebuild(out_dir: str | os.PathLike, sessions_root: str | os.PathLike | None = None, target: str | os.PathLike | None = None) -> Path:
    """Recompute an extraction run's tables from its store (in `out_dir`) and extract.json, with no network,
    into `target` (default: `out_dir` itself)."""
    src = Path(out_dir)
    meta = json.loads((src / "extract.json").read_text(encoding="utf-8"))
    given = meta["params"]
    template = given.get("template_path")
    p = ExtractParams(**{**given, "strategies": tuple(given["strategies"]), "sessions": tuple(given["sessions"]),
                         "template_path": os.fspath(paths.resolve(template)) if template else template,
                         "model": meta.get("model") or given.get("model")})
    out = Path(target) if target else src
    run_extract(paths.resolve(sessions_root or meta["sessions_root"]), out, p, offline=True, store_dir=src)
    return out

