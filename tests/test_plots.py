"""measure.report.plots: each figure from small hand-made tables, and PNG bytes that depend only on the data."""

from __future__ import annotations

import polars as pl
import pytest
from matplotlib.figure import Figure

from measure.report import plots, shaping, style
from measure.runner.tables import frame
from measure.schema import TABLES


def png(fig, path):
    """`fig` as the report writes it (nbsetup.png: as a kernel shows it), at `path`."""
    from measure.report import nbsetup

    path.write_bytes(nbsetup.png(fig))
    return path


S1 = ("11111111-aaaa-4000-8000-000000000001", "-home-dev-a/11111111-aaaa-4000-8000-000000000001.jsonl")
S2 = ("22222222-bbbb-4000-8000-000000000002", "-home-dev-b/22222222-bbbb-4000-8000-000000000002.jsonl")
STRATEGIES = ["link", "fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid", "chunked"]
BUDGETS = (20_000, 40_000, 80_000, 160_000)


def small_tables() -> dict:
    """Two sessions: S1 where fold evicts 25% of the parent at 80k (nothing from 160k), S2 with no eviction."""
    rows: dict[str, list[dict]] = {name: [] for name in TABLES}
    fold_evicted = {S1[0]: {20_000: 9_000, 40_000: 12_000, 80_000: 20_000, 160_000: 0}, S2[0]: dict.fromkeys(BUDGETS, 0)}
    for sid, sp in (S1, S2):
        calls = {"chunked": 12 if sid == S1[0] else 3}
        for st in STRATEGIES:
            n = calls.get(st, 1)
            evicts = st.startswith("fold")
            ev = fold_evicted[sid][80_000] if evicts else 0
            rows["sessions"].append(
                dict(session_id=sid, session_path=sp, strategy=st, budget=80_000, llm_calls=n,
                     prompt_chars=90_000 + (500 if st.startswith("fold") else 0), prompt_sha256="0" * 64,
                     kept_events=100, kept_chars=79_000, parent_kept_events=80, parent_kept_chars=80_000 - ev,
                     subagent_kept_events=20, subagent_kept_chars=ev, truncated=0, budget_dropped=3, stubbed=0,
                     inline_refs=5 if st != "link" else 1, content_hash="1" * 64, raw_events=900,
                     raw_chars=400_000, subagent_files=2)
            )
            rows["llm_calls"].append(
                dict(session_id=sid, session_path=sp, strategy=st, budget=80_000, llm_calls=n, multiplier=float(n),
                     parent_windows=n - 2 if st == "chunked" else None, subagent_chunks=2 if st == "chunked" else None,
                     prompt_chars_total=90_000 * n, parent_chars_in_prompts=(300_000 if st == "chunked" else 80_000 - ev))
            )
            if st in ("fold", "fold_dedupe_scoped", "fold_stub_raw", "hybrid"):
                rows["eviction"].append(
                    dict(session_id=sid, session_path=sp, strategy=st, budget=80_000, alone_parent_kept_chars=80_000,
                         parent_kept_chars=80_000 - ev, evicted_chars=ev, evicted_chars_pct=round(100 * ev / 80_000, 1),
                         stub_saved_chars=0, budget_evicted_chars=ev, budget_evicted_pct=round(100 * ev / 80_000, 1),
                         alone_parent_kept_events=80, parent_kept_events=80 - (10 if ev else 0),
                         evicted_events=10 if ev else 0, evicted_events_pct=12.5 if ev else 0.0)
                )
            for b in BUDGETS:
                e = fold_evicted[sid][b] if evicts else 0
                rows["budget_sweep"].append(
                    dict(session_id=sid, session_path=sp, strategy=st, budget=b, alone_parent_kept_chars=b,
                         parent_kept_chars=b - e, evicted_chars=e, evicted_chars_pct=round(100 * e / b, 1),
                         stub_saved_chars=0, budget_evicted_chars=e, budget_evicted_pct=round(100 * e / b, 1), kept_chars=b, prompt_chars=b + 10_000, llm_calls=n)
                )
    for i, (ov, both, pairing) in enumerate(
        [(0.92, False, "sidecar_tool_use_id"), (0.88, True, "sidecar_tool_use_id"), (0.31, False, "agent_id")]
    ):
        rows["duplicates"].append(
            dict(session_id=S1[0], session_path=S1[1], agent_id=f"agent-a{i:016x}",
                 subagent_path=f"-home-dev-a/{S1[0]}/subagents/agent-a{i:016x}.jsonl", tool_use_id=f"toolu_{i}",
                 pairing=pairing, description=f"Review step {i}", overlap=ov, notification_chars=1_000,
                 final_chars=950, notification_in_prompt=both, final_in_prompt=both, both_in_prompt=both,
                 stub_would_save_chars=960)
        )
    for st in STRATEGIES:
        n = 15 if st == "chunked" else 2
        rows["run_cost"].append(
            dict(strategy=st, session_cap=25, sessions=2, runs=1, llm_calls=n, calls_per_run_mean=float(n),
                 calls_per_run_max=n, cap_multiplier=n / 25)
        )
    _cost_rows(rows)
    return with_verdict({name: frame(TABLES[name], rows[name]) for name in TABLES})


def with_verdict(t: dict) -> dict:
    """`t` with the verdict, choice and robustness tables `measure run` derives from its sessions, eviction and
    run_cost tables."""
    from measure.runner.run import decision_rows

    rows = decision_rows(t["sessions"].to_dicts(), t["eviction"].to_dicts(), t["run_cost"].to_dicts())
    return {**t, **{name: frame(TABLES[name], r) for name, r in rows.items()}}


def _cost_rows(rows: dict[str, list[dict]]) -> None:
    """#12: S1 with a task agent, wake-ups (one batchable) and repeat reads; S2 parent only, nothing else."""
    def usage(calls, cr, naive=2):
        return dict(api_calls=calls, input_tokens=calls, cache_creation_tokens=10 * calls, cache_creation_5m_tokens=0,
                    cache_creation_1h_tokens=10 * calls, cache_read_tokens=cr, output_tokens=calls,
                    output_tokens_is_lower_bound=True, models="m", naive_lines=naive * calls,
                    naive_input_tokens=naive * calls, naive_cache_creation_tokens=naive * 10 * calls,
                    naive_cache_read_tokens=naive * cr, naive_output_tokens=naive * calls, progress_usage_lines=0)
    for (sid, sp), origins in ((S1, [("parent", 0, 10, 500_000), ("task_agent", 1, 6, 200_000), ("total", 5, 16, 700_000)]),
                               (S2, [("parent", 0, 4, 90_000), ("total", 5, 4, 90_000)])):
        for origin, order, calls, cr in origins:
            rows["tokens"].append(dict(session_id=sid, session_path=sp, origin=origin, origin_order=order, files=1,
                                       **usage(calls, cr)))
    zero = dict.fromkeys([c for c, _, _ in TABLES["cost_sessions"].columns[2:]], 0)
    rows["cost_sessions"].append({**zero, "session_id": S1[0], "session_path": S1[1], "parent_cache_read_tokens": 500_000,
                                  "notifications_enqueued": 3, "wakeup_turns": 3, "wakeup_calls": 4,
                                  "wakeup_cache_read_tokens": 150_000, "batchable_wakeups": 1, "batched_turns": 2,
                                  "batch_saved_calls": 1, "batch_saved_cache_read_tokens": 40_000, "background_reads": 2,
                                  "repeat_reads": 1, "read_chars": 10_000, "repeated_chars": 4_000, "repeat_fraction": 0.4})
    rows["cost_sessions"].append({**zero, "session_id": S2[0], "session_path": S2[1], "repeat_fraction": None})


@pytest.fixture(scope="module")
def tables():
    return small_tables()


def _legend(ax) -> list[str]:
    legend = ax.get_legend() or ax.figure.legends[0]
    return [t.get_text() for t in legend.get_texts()]


def test_registry_names_schema_tables():
    assert set(plots.FIGURES) == {"eviction_by_strategy", "budget_sweep", "overlap_distribution", "llm_calls", "run_cost",
                                  "background_stub_vs_run", "background_deliveries", "replay_re_extractions",
                                  "tokens_by_origin", "naive_overcount", "wakeup_cost", "repeat_reads", "breakdown",
                                  "tradeoff", "win_tie_loss"}
    for table, fn in plots.FIGURES.values():
        assert table in TABLES and callable(fn)


def test_every_strategy_has_a_color():
    assert set(style.STRATEGY_ORDER) <= set(style.COLORS)
    assert len(set(style.COLORS.values())) == len(style.COLORS)


def test_eviction_bars(tables):
    fig = plots.eviction_bars(tables["eviction"])
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "parent chars evicted (% of parent alone)"
    assert ax.get_xlabel() == "session"
    assert "maxTotalChars = 80,000" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["11111111", "22222222"]
    assert _legend(ax) == ["fold (C1)", "fold + scoped dedupe", "fold + raw stub", "hybrid (C3)"]
    heights = [round(p.get_height(), 1) for p in ax.patches]
    assert heights == [25.0, 0.0, 25.0, 0.0, 25.0, 0.0, 0.0, 0.0]  # fold family evicts in S1 only


def test_budget_sweep_marks_the_budget_where_fold_evicts_nothing(tables):
    fig = plots.budget_sweep_curve(tables["budget_sweep"])
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "maxTotalChars (budget)"
    assert "link (C2)" not in _legend(ax)  # the reference itself is not drawn
    assert _legend(ax)[0] == "fold (C1)"
    vlines = [line for line in ax.get_lines() if list(line.get_xdata()) == [160_000, 160_000]]
    assert len(vlines) == 1
    assert any("fold evicts nothing from 160k" in t.get_text() for t in ax.texts)
    assert shaping.fold_zero_budget(tables["budget_sweep"]) == 160_000


def test_overlap_histogram_one_panel_per_pairing(tables):
    fig = plots.overlap_histogram(tables["duplicates"])
    assert len(fig.axes) == 2
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["agent_id\n1 pairs, 0 both in prompt", "sidecar_tool_use_id\n2 pairs, 1 both in prompt"]
    assert fig.axes[0].get_xlabel() == "word-set Jaccard overlap"
    assert fig.axes[0].get_ylabel() == "pairs"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["at most one copy in the prompt", "both copies in the fold prompt"]
    highlighted = [p for p in fig.axes[1].patches if p.get_facecolor()[:3] == pytest.approx(
        tuple(int(style.BOTH_COLOR[i:i + 2], 16) / 255 for i in (1, 3, 5)))]
    assert sum(p.get_height() for p in highlighted) == 1


def test_llm_calls_bars_log_scale(tables):
    fig = plots.llm_calls_bars(tables["llm_calls"])
    (ax,) = fig.axes
    assert ax.get_yscale() == "log"
    assert ax.get_ylabel() == "calls (log scale)"
    assert _legend(ax) == [style.STRATEGY_LABELS[s] for s in STRATEGIES]
    assert max(p.get_height() for p in ax.patches) == 12


def test_run_cost_bars_show_the_cap(tables):
    fig = plots.run_cost_bars(tables["run_cost"])
    (ax,) = fig.axes
    assert "25 sessions per run" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == [style.STRATEGY_LABELS[s] for s in STRATEGIES]
    assert any(list(line.get_ydata()) == [25, 25] for line in ax.get_lines())
    assert [p.get_height() for p in ax.patches] == [2, 2, 2, 2, 2, 15]


@pytest.mark.parametrize("name", sorted(plots.FIGURES))
def test_empty_tables_still_give_a_figure(name):
    table, fn = plots.FIGURES[name]
    fig = fn(frame(TABLES[table], []))
    assert isinstance(fig, Figure) and fig.axes


@pytest.mark.parametrize("name", sorted(plots.FIGURES))
def test_png_bytes_are_identical_across_saves(name, tables, tmp_path):
    table, fn = plots.FIGURES[name]
    a = png(fn(tables[table]), tmp_path / "a.png").read_bytes()
    fig = fn(tables[table])
    b = png(fig, tmp_path / "b.png").read_bytes()
    c = png(fig, tmp_path / "c.png").read_bytes()
    assert a == b == c
    assert a.startswith(b"\x89PNG")
    assert b"Software" not in a and b"matplotlib" not in a.lower()


def test_figures_ignore_outside_rcparams(tables, tmp_path):
    import matplotlib as mpl

    base = png(plots.eviction_bars(tables["eviction"]), tmp_path / "a.png").read_bytes()
    with mpl.rc_context({"font.size": 20, "figure.dpi": 50, "axes.prop_cycle": mpl.cycler(color=["k"])}):
        other = png(plots.eviction_bars(tables["eviction"]), tmp_path / "b.png").read_bytes()
    assert base == other


def test_many_sessions_are_capped(tables):
    import polars as pl

    ev = tables["eviction"]
    many = pl.concat(
        [ev.with_columns(pl.lit(f"{i:08d}-x").alias("session_id"), pl.lit(f"p/{i:08d}-x.jsonl").alias("session_path"),
                         (pl.col("budget_evicted_pct") + i).alias("budget_evicted_pct")) for i in range(30)]
    )
    ax = plots.eviction_bars(many).axes[0]
    assert len(ax.get_xticklabels()) == plots.MAX_SESSIONS
    assert ax.get_xlabel().startswith(f"session ({plots.MAX_SESSIONS} of 30")


def _boxes(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    return fig.canvas.get_renderer()


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_overlap_panel_titles_do_not_overlap_and_counts_are_whole(tables):
    """#10 defect 9: three pairing methods' titles collided; pair counts had fractional ticks."""
    dup = tables["duplicates"]
    third = dup.head(1).with_columns(pl.lit("agent_id_notification").alias("pairing"), pl.lit("agent-zz").alias("agent_id"))
    fig = plots.overlap_histogram(pl.concat([dup, third]))
    renderer = _boxes(fig)
    titles = [ax.title.get_window_extent(renderer) for ax in fig.axes]
    assert len(titles) == 3
    for i in range(3):
        for j in range(i + 1, 3):
            assert not _overlap(titles[i], titles[j])
    ticks = [t for t in fig.axes[0].get_yticks() if 0 <= t <= fig.axes[0].get_ylim()[1]]
    assert all(float(t).is_integer() for t in ticks)


@pytest.mark.parametrize("budgets", [BUDGETS, (80_000, 160_000)])
def test_budget_sweep_note_covers_neither_legend_nor_data(tables, budgets):
    sweep = tables["budget_sweep"].filter(pl.col("budget").is_in(list(budgets)))
    fig = plots.budget_sweep_curve(sweep)
    renderer = _boxes(fig)
    (ax,) = fig.axes
    (note,) = [t for t in ax.texts if "evicts nothing" in t.get_text()]
    box = note.get_window_extent(renderer)
    legend = ax.get_legend() or fig.legends[0]
    assert not _overlap(box, legend.get_window_extent(renderer))
    for line in ax.get_lines():
        if line.get_label().startswith("_"):
            continue  # the marker line, not a strategy's curve
        pts = ax.transData.transform(line.get_xydata())
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):  # every segment, sampled
            for k in range(51):
                x, y = x0 + (x1 - x0) * k / 50, y0 + (y1 - y0) * k / 50
                assert not (box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1), line.get_label()


def test_run_cost_bar_labels_overlap_no_other_text(tables):
    fig = plots.run_cost_bars(tables["run_cost"])
    renderer = _boxes(fig)
    (ax,) = fig.axes
    labels = [t.get_window_extent(renderer) for t in ax.texts]
    others = [ax.get_legend().get_window_extent(renderer), ax.title.get_window_extent(renderer)]
    others += [t.get_window_extent(renderer) for t in ax.texts if "cap" in t.get_text()]
    labels = [b for b, t in zip(labels, ax.texts) if "cap" not in t.get_text()]
    for a in labels:
        for b in others:
            assert not _overlap(a, b)
    assert not any("cap:" in t.get_text() for t in ax.texts)  # the cap is named in the legend


def test_no_eviction_says_so_instead_of_drawing_zeros(tables):
    ev = tables["eviction"].with_columns(pl.lit(0).alias("budget_evicted_chars"), pl.lit(0.0).alias("budget_evicted_pct"))
    fig = plots.eviction_bars(ev)
    assert any("no strategy evicts parent content" in t.get_text() for t in fig.axes[0].texts)
def test_tokens_by_origin_stacks_origins_per_session(tables):
    ax = plots.tokens_by_origin_bars(tables["tokens"]).axes[0]
    assert _legend(ax) == ["parent", "task agents"]
    heights = sorted(round(p.get_height()) for p in ax.patches)
    assert heights == [0, 90_000 + 4 * 12, 200_000 + 6 * 12, 500_000 + 10 * 12]  # S2 has no task agents


def test_naive_overcount_shows_the_ratio_per_session(tables):
    ax = plots.naive_overcount_bars(tables["tokens"]).axes[0]
    assert [round(p.get_height(), 2) for p in ax.patches] == [2.0, 2.0]


def test_wakeup_cost_and_repeat_reads_draw_only_sessions_that_have_them(tables):
    ax = plots.wakeup_cost_bars(tables["cost_sessions"]).axes[0]
    assert [round(p.get_height()) for p in ax.patches] == [110_000, 40_000]
    ax = plots.repeat_reads_bars(tables["cost_sessions"]).axes[0]
    assert [round(p.get_height()) for p in ax.patches] == [6_000, 4_000]
    assert [t.get_text() for t in ax.texts] == ["40%"]
def _breakdown(n_projects: int = 3) -> pl.DataFrame:
    from measure.schema import TABLES as T

    rows = []
    for dim, values in (("project", [f"-home-dev-p{i:02d}" for i in range(n_projects)]), ("cc_version", ["2.1.9", "2.1.10", "unknown"]), ("month", ["2026-02", "2026-01"])):
        for k, v in enumerate(values):
            rows.append(dict(dimension=dim, value=v, sessions=k + 1, sessions_with_subagents=k, subagent_files=k,
                             subagent_chars_pct=10.0 * k, fold_evicted_chars=100 * k, fold_evicted_pct=5.0 * k,
                             hybrid_evicted_pct=0.0, llm_calls_link=k + 1, llm_calls_chunked=2 * (k + 1), chunked_multiplier=2.0))
    return frame(T["breakdown"], rows)


def test_breakdown_bars():
    fig = plots.breakdown_bars(_breakdown())
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["project", "Claude Code version", "month"]
    versions = [t.get_text() for t in axes[1].get_yticklabels()]
    assert versions == ["2.1.9 (1)", "2.1.10 (2)", "unknown (3)"]  # numeric version order, unknown last
    assert [t.get_text() for t in axes[2].get_yticklabels()] == ["2026-01 (2)", "2026-02 (1)"]
    assert _legend(axes[0]) == ["fold (C1) evicted %", "hybrid (C3) evicted %"]


def test_breakdown_bars_caps_groups_and_handles_no_rows():
    fig = plots.breakdown_bars(_breakdown(n_projects=15))
    assert fig.axes[0].get_title() == f"project (top {plots.MAX_GROUPS} of 15 by sessions)"
    assert len(fig.axes[0].get_yticklabels()) == plots.MAX_GROUPS
    empty = plots.breakdown_bars(_breakdown().clear())
    assert [ax.texts[0].get_text() for ax in empty.axes] == ["no sessions"] * 3


def _decided() -> dict:
    """Three sessions with delegated work: fold evicts and sends subagent content, chunked sends more in more calls,
    link lists fewer refs than hybrid (dominated), hybrid is chosen under the default priorities."""
    from measure.runner.run import decision_rows

    sessions, eviction = [], []
    for k in range(3):
        sp = f"-home-dev-a/{k}.jsonl"
        for st, unique, refs, calls, prompt in (("link", 0, 0, 1, 102), ("fold", 50 * k, 2, 1, 140),
                                                 ("hybrid", 0, 2, 1, 101), ("chunked", 80 * k, 0, 3, 300)):
            sessions.append(dict(session_id=str(k), session_path=sp, strategy=st, parent_kept_chars=100, delegated_transcripts=1,
                                 delegated_results_in_prompt=1, subagent_unique_chars_in_prompt=unique, inline_refs=refs,
                                 llm_calls=calls, prompt_chars=prompt))
        eviction += [dict(session_path=sp, strategy="fold", budget_evicted_chars=10 * k),
                     dict(session_path=sp, strategy="hybrid", budget_evicted_chars=0)]
    cost = [dict(strategy=st, calls_per_run_max=n) for st, n in (("link", 3), ("fold", 3), ("hybrid", 3), ("chunked", 9))]
    return {name: frame(TABLES[name], rows) for name, rows in decision_rows(sessions, eviction, cost).items()}


def test_tradeoff_marks_the_front_the_dominated_and_the_chosen():
    t = _decided()
    assert t["choice"].filter(pl.col("kind") == "chosen")["winner"].to_list() == ["hybrid"]
    fig = plots.tradeoff(t["verdict"])
    (ax,) = fig.axes
    markers = [c for c in ax.collections if len(c.get_offsets())]
    hollow = [c for c in markers if not c.get_facecolor().any() and c.get_edgecolor()[0][:3].tolist() != [0, 0, 0]]
    rings = [c for c in markers if not c.get_facecolor().any() and c.get_edgecolor()[0][:3].tolist() == [0, 0, 0]]
    assert len(markers) == 5 and len(hollow) == 1 and len(rings) == 1  # link dominated by hybrid; hybrid ringed
    assert tuple(hollow[0].get_offsets()[0]) == (0.0, 0.0) and tuple(rings[0].get_offsets()[0]) == (0.0, 0.0)
    notes = sorted(a.get_text() for a in ax.texts)
    assert notes == ["chunked", "fold", "link, hybrid\n(chosen: hybrid)"]
    assert ax.get_xlabel() == "parent-origin chars evicted, summed (verdict: parent_chars_evicted)"
    assert "subagent_unique_chars_in_prompt" in ax.get_ylabel()
    sizes = {tuple(c.get_offsets()[0]): c.get_sizes()[0] for c in markers if c.get_facecolor().any()}
    assert sizes[(0.0, 240.0)] > sizes[(30.0, 150.0)]  # chunked's 9 calls, fold's 3


def test_win_tie_loss_stacks_the_chosen_ones_sessions():
    t = _decided()
    fig = plots.win_tie_loss(t["robustness"])
    ax = fig.axes[0]
    labels = [x.get_text() for x in ax.get_yticklabels()]
    assert labels[0] == "vs link · inline_refs" and all(l.startswith("vs ") for l in labels)
    assert "vs link · prompt_chars" in labels and "vs link · llm_calls" not in labels  # every session ties there
    assert len(ax.patches) == 3 * len(labels)
    widths = [p.get_width() for p in ax.patches]
    n = len(labels)
    assert all(widths[i] + widths[n + i] + widths[2 * n + i] == 3 for i in range(n))  # each bar spans the 3 sessions
    assert "hybrid, the chosen strategy" in ax.get_title()
    empty = plots.win_tie_loss(t["robustness"].clear())
    assert [x.get_text() for x in empty.axes[0].texts] == ["no session differs between the chosen strategy and another"]
