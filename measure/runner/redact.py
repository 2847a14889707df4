"""`--redact`: hash names, ids and descriptions in every row before anything is written."""

from __future__ import annotations

import hashlib
import re

_STRUCTURAL = ("subagents", "workflows", "tool-results", "journal.jsonl", "journal")
_PREFIXES = ("agent-", "wf_")
_SUFFIXES = (".meta.json", ".jsonl")

#: Columns holding a root-relative path, and columns holding a name, id or transcript text
#: (task_id: the background task ids of the cost tables; project: a project folder's name).
PATH_COLUMNS = ("session_path", "subagent_path", "path")
TEXT_COLUMNS = ("session_id", "description", "agent_type", "tool_use_id", "task_id", "project", "title")


def redact(value: str | None) -> str | None:
    """A stable stand-in for text that should not leave the machine."""
    return None if value is None else "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def redact_name(part: str, structural: bool = True) -> str:
    """One file or folder name: structural names kept, `agent-`/`wf_` prefixes and `.jsonl`/
    `.meta.json` suffixes kept around a hash of the rest (the id), so layouts still read.
    `structural=False` (a project folder) hashes even a name such as `subagents`."""
    if structural and part in _STRUCTURAL:
        return part
    suffix = next((s for s in _SUFFIXES if part.endswith(s)), "")
    stem = part[: len(part) - len(suffix)]
    prefix = next((p for p in _PREFIXES if stem.startswith(p) and len(stem) > len(p)), "")
    return prefix + redact(stem[len(prefix) :]) + suffix


def redact_path(path: str | None) -> str | None:
    """Hash every segment that names something (project folders are cwd paths, session and
    agent ids are ids) and keep the structure (`subagents/`, `agent-`, `.jsonl`)."""
    if not path:
        return path
    return "/".join(redact_name(part, structural=i > 0) for i, part in enumerate(path.split("/")))


_LABELLED = re.compile(r"^(readSession failed: )(.+): ([^:]*)$", re.DOTALL)


def redact_reason(reason: str) -> str:
    """An errors row's reason without the names it carries: the file label inside a read
    failure is hashed like a path (an internal_error's reason never holds its message)."""
    m = _LABELLED.match(reason)
    return m[1] + redact_path(m[2]) + ": " + m[3] if m else reason


def _redacted(key: str, value):
    """`value` of column `key` as --redact writes it (unchanged when the column names nothing)."""
    if key in PATH_COLUMNS:
        return redact_path(value)
    if key in TEXT_COLUMNS:
        return redact(value)  # "" too: every value of a redacted column is a hash
    if key == "agent_id" and value is not None:
        return redact_name(value)  # an `agent-<id>` file stem: hashed as its file name is
    return value


def redact_row(row: dict) -> None:
    """--redact one row of any table, in place."""
    for key, value in row.items():
        row[key] = _redacted(key, value)
    if "reason" in row and "kind" in row:
        row["reason"] = redact_reason(row["reason"])
    if row.get("dimension") == "project" and row.get("value"):  # the breakdown table's project folder
        row["value"] = redact(row["value"])


#: Transcript-derived text columns: kept only with --show-excerpts, never from outside the root.
EXCERPT_COLUMNS = ("description",)
OUTSIDE_TEXT_COLUMNS = ("description", "agent_type", "tool_use_id")


def protect_outcome(outcome, redact_names: bool, show_excerpts: bool) -> None:
    """Apply the privacy rules to one session's rows in place, before they are cached or written: without
    `show_excerpts` EXCERPT_COLUMNS are dropped; OUTSIDE_TEXT_COLUMNS of a file read through a symlink
    leaving the root (an `outside_link` row) too; with `redact_names` every row and the session's path are
    redacted."""
    outside = {e["path"] for e in outcome.errors if e.get("kind") == "outside_link"}
    parent_outside = outcome.session_path in outside
    for table in outcome.tables.values():
        keys = table.keys() & {*OUTSIDE_TEXT_COLUMNS, *EXCERPT_COLUMNS}
        if not keys:
            continue
        subs = table.get("subagent_path") or [None] * len(table[min(keys)])
        drop = [parent_outside or bool(sub and (sub in outside or sub[: -len(".jsonl")] + ".meta.json" in outside)) for sub in subs]
        for key in keys:
            hide = key in EXCERPT_COLUMNS and not show_excerpts
            table[key] = [None if hide or dropped else v for v, dropped in zip(table[key], drop)]
    if redact_names:
        for table in outcome.tables.values():
            for key, values in table.items():
                table[key] = [_redacted(key, v) for v in values]
        for row in outcome.errors:
            redact_row(row)
        outcome.session_path = redact_path(outcome.session_path)
