"""`--redact`: hash names, ids and descriptions in every row before anything is written."""

from __future__ import annotations

import hashlib

_STRUCTURAL = ("subagents", "workflows", "tool-results", "journal.jsonl")


def redact(value: str | None) -> str | None:
    """A stable stand-in for text that should not leave the machine."""
    if value is None:
        return None
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def redact_path(path: str | None) -> str | None:
    """Hash the segments that name things (project folders are cwd paths, session ids are
    ids) and keep the structure (`subagents/`, `agent-<id>`), so paths still read as layouts."""
    if not path:
        return path
    out = []
    for i, part in enumerate(path.split("/")):
        if i and (part in _STRUCTURAL or part.startswith(("agent-", "wf_"))):
            out.append(part)
        elif part.endswith(".jsonl"):
            out.append(redact(part[: -len(".jsonl")]) + ".jsonl")
        else:
            out.append(redact(part))
    return "/".join(out)


def _redact_rows(rows: dict[str, list[dict]]) -> None:
    """--redact: one pass over every table, so no row escapes it (errors included)."""
    for table_rows in rows.values():
        for row in table_rows:
            for key in ("session_path", "subagent_path", "path"):
                if row.get(key):
                    row[key] = redact_path(row[key])
            for key in ("session_id", "description", "task_id"):  # task_id: wakeups, repeat_reads (#12)
                if row.get(key) is not None:  # "" too: every value of a redacted column is a hash
                    row[key] = redact(row[key])
            # Project folders are cwd paths: hashed as redact_path hashes session_path's first part.
            if row.get("project"):
                row["project"] = redact(row["project"])
            if row.get("dimension") == "project" and row.get("value"):
                row["value"] = redact(row["value"])
