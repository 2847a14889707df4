"""Which sessions the extraction experiment sends: the ones with the most delegated work."""

from __future__ import annotations

import random

import polars as pl

from measure.runner.select import matches

SELECT_RULE = (
    "sessions ranked by the fold prompt's subagent-origin kept chars (sessions.subagent_kept_chars), "
    "then subagent transcripts (subagent_files), then subagent-origin raw chars (fold raw_chars - link "
    "raw_chars), then session_path; sessions without delegated work come last and fill the list as controls"
)
"""The documented `most_delegated` rule (also recorded in extract.json)."""


def rank_sessions(sessions: pl.DataFrame) -> list[str]:
    """Session paths of a `sessions` table, most delegated work first (SELECT_RULE)."""
    link = sessions.filter(pl.col("strategy") == "link").select("session_path", link_raw="raw_chars")
    fold = sessions.filter(pl.col("strategy") == "fold").join(link, on="session_path", how="left")
    ranked = fold.with_columns(subagent_raw=pl.col("raw_chars") - pl.col("link_raw").fill_null(0)).sort(
        "subagent_kept_chars", "subagent_files", "subagent_raw", "session_path", descending=[True, True, True, False])
    return ranked["session_path"].to_list()


def select_sessions(sessions: pl.DataFrame, rule: str = "most_delegated", limit: int = 10, wanted: list[str] | None = None) -> list[str]:
    """The session paths to send: those `wanted` names (ids, paths or id prefixes) if given, else `limit` by `rule`.

    `rule` is `most_delegated` or `random:<seed>` (a seeded sample of the whole root, in path order).
    """
    ranked = rank_sessions(sessions)
    if wanted:  # as `measure run --session` matches them: ids, paths, id prefixes
        ids = dict(sessions.select("session_path", "session_id").iter_rows())
        return [p for p in ranked if any(matches(w, ids[p], p) for w in wanted)][:limit]
    if rule == "most_delegated":
        return ranked[:limit]
    if rule.startswith("random:"):
        try:
            seed = int(rule.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"--select random:<seed> needs an integer seed, got {rule!r}") from None
        ordered = sorted(ranked)
        return sorted(random.Random(seed).sample(ordered, min(limit, len(ordered))))
    raise ValueError(f"unknown selection {rule!r}; use most_delegated or random:<seed>")
