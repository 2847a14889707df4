"""Find and read Claude Code sessions exactly as akm's `listSessions`/`readSession` do.

Long: the listing, the walk, the line parser and the hostile-file guards (regular files only, no
recursion) are one reader, and the parity vectors check it whole.
"""

from __future__ import annotations

import functools
import math
import os
import stat as stat_mod
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import orjson

from measure.akm import jscompat
from measure.akm.jscompat import js_number, js_regex, utf16_len
from measure.akm.records import Event, InlineRef, Listing, Session, SessionRef, Sidecar, TranscriptFile, by_ts

HARNESS = "claude"
SUBAGENTS_DIR = "subagents"
PEEK_BYTES = 4096
#: akm's walker visits a directory's entries in the order the filesystem's `readdir` returns
#: them, which differs between filesystems and machines (one akm-produced vector lists a
#: session's subagents in an order neither ascending nor descending by name). That order
#: decides the order of "Already preserved" refs and of events with equal timestamps.
#: `measure` sorts entries by descending name by default ("name": the same on every machine,
#: and consistent with the parity vectors); "fs" takes this machine's `readdir` order, as akm
#: on this machine would.
WALK_ORDERS = ("name", "fs")


class ReadError(Exception):
    """Raised when akm's `readSession` would throw (missing parent, unreadable transcript)."""


class NotRegularFile(OSError):
    """A FIFO, device, socket or directory where a transcript or sidecar should be.

    akm would block on a FIFO or read a device until memory runs out; `measure` reads only
    regular files and reports every other kind instead.
    """


_KINDS = (
    (stat_mod.S_ISFIFO, "a FIFO"),
    (stat_mod.S_ISCHR, "a character device"),
    (stat_mod.S_ISBLK, "a block device"),
    (stat_mod.S_ISSOCK, "a socket"),
    (stat_mod.S_ISDIR, "a directory"),
)


def file_kind(mode: int) -> str:
    """What a non-regular st_mode is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str):
    """Open `path` for binary reading only if it is a regular file, without ever blocking.

    O_NONBLOCK makes opening a FIFO return at once, and the check is `fstat` on the opened
    descriptor, so a file swapped for a FIFO or device after it was listed is caught too.
    Raises NotRegularFile (an OSError) for every other kind.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{file_kind(st.st_mode)}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# --- sessions root -----------------------------------------------------------------------


def resolve_root(explicit: str | os.PathLike | None = None) -> Path:
    """The sessions root: explicit path, else `$CLAUDE_CONFIG_DIR/projects`, else ~/.claude/projects."""
    if explicit is not None:
        return Path(explicit).expanduser()
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    if config:
        return Path(config).expanduser() / "projects"
    return Path.home() / ".claude" / "projects"


def rel(path: str, root: str) -> str:
    """`path` relative to `root`, with `/` separators, as every output shows it: a byte of a name
    that is not UTF-8 as `\\xNN` (so the label is text that any encoder and the cache can hold)."""
    r = os.path.relpath(path, root).replace(os.sep, "/")
    return r if r.isascii() else os.fsencode(r).decode("utf-8", "backslashreplace")


# --- walking -----------------------------------------------------------------------------


def _sorted_entries(top: str, errors: list, order: str = "name"):
    try:
        with os.scandir(top) as it:
            entries = list(it) if order == "fs" else sorted(it, key=lambda e: os.fsencode(e.name), reverse=True)
    except OSError as exc:
        errors.append((top, "unreadable", f"cannot list directory: {exc.strerror or exc}"))
        return iter(())
    return iter(entries)


def walk_jsonl(top: str, errors: list | None = None, order: str = "name", limit: int | None = None):
    """Yield `.jsonl` paths below `top`: depth-first, pre-order, entries in `order` (WALK_ORDERS).

    Like akm's walker, a directory is entered only when its entry says directory (symlinked
    directories are not followed) and anything else ending in `.jsonl` is yielded. An explicit
    stack instead of recursion: folders nested deeper than Python's recursion limit are walked.
    With a `limit`, the walk stops after that many entries (a `link_limit` problem for `top`).
    """
    if order not in WALK_ORDERS:
        raise ValueError(f"unknown walk order {order!r} (expected one of {', '.join(WALK_ORDERS)})")
    errors = [] if errors is None else errors
    stack = [_sorted_entries(top, errors, order)]
    seen = 0
    while stack:
        for entry in stack[-1]:
            seen += 1
            if limit is not None and seen > limit:
                errors.append((top, "link_limit", f"a link out of the root to a folder of over {limit:,} entries: "
                                                  "the rest is not read (akm would walk it all)"))
                return
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                stack.append(_sorted_entries(entry.path, errors, order))
                break
            if entry.name.endswith(".jsonl"):
                yield entry.path
        else:
            stack.pop()


def is_session_candidate(path: str, root: str) -> bool:
    """akm's #830 rule: not `journal.jsonl`, and no `subagents` segment strictly inside."""
    if os.path.basename(path) == "journal.jsonl":
        return False
    parts = os.path.relpath(path, root).split(os.sep)
    return SUBAGENTS_DIR not in parts[1:-1]


# --- listing -----------------------------------------------------------------------------


def _peek_records(chunk: bytes) -> list:
    out = []
    for line in chunk.decode("utf-8", "replace").split("\n"):
        if line:  # an empty line would fail orjson and then the slower JSON.parse fallback too
            try:
                out.append(_loads(line))
            except ValueError:
                pass
    return out


def _peek_ts(obj) -> float | None:
    ts = obj.get("timestamp") if isinstance(obj, dict) else None
    v = jscompat.date_parse(ts) if isinstance(ts, str) else math.nan
    return None if math.isnan(v) else v  # 0 is accepted here, unlike in event parsing


def peek(path: str, size: int) -> tuple[float | None, float | None, str | None]:
    """akm's cheap metadata read: first/last timestamp and title from the head and tail."""
    title = None
    try:
        with open_regular(path) as f:
            head = f.read(min(size, PEEK_BYTES))
            tail = b""
            if size > PEEK_BYTES:
                f.seek(size - PEEK_BYTES)
                tail = f.read(PEEK_BYTES)
    except OSError:
        return None, None, None
    records = _peek_records(head)
    for obj in records:
        if isinstance(obj, dict) and obj.get("type") == "custom-title" and isinstance(obj.get("customTitle"), str):
            title = obj["customTitle"]
    stamps = [ts for ts in map(_peek_ts, records) if ts is not None]
    # the tail's last timestamp, parsing dates from the end only until one is found
    last = next((ts for ts in map(_peek_ts, reversed(_peek_records(tail))) if ts is not None), None)
    if last is None and stamps:
        last = stamps[-1]
    return (stamps[0] if stamps else None), last, title


def list_sessions(root: str | os.PathLike, since_ms: float = 0, errors: list | None = None,
                  file_time_ms: float | None = None, walk_order: str = "name") -> list[Listing]:
    """akm's `listSessions`: parent transcripts only, newest-ended first (stable ties).

    `file_time_ms`, when given, stands in for every file's mtime and ctime (see read_session);
    `walk_order` is the directory entry order (WALK_ORDERS).
    """
    root = os.fspath(root)
    errors = [] if errors is None else errors
    out = []
    for path in walk_jsonl(root, errors, walk_order):
        if not is_session_candidate(path, root):
            continue
        try:
            st = os.stat(path)
        except OSError as exc:
            errors.append((path, "unreadable", f"stat failed: {exc.strerror or exc}"))
            continue
        mtime = st.st_mtime_ns / 1e6 if file_time_ms is None else file_time_ms
        ctime = st.st_ctime_ns / 1e6 if file_time_ms is None else file_time_ms
        if mtime < since_ms:
            if not since_ms:  # skipped by akm's default, not by the analyst's --since
                errors.append((path, "not_listed", "file time before 1970: akm's listSessions skips it (sinceMs 0)"))
            continue
        first, last, title = peek(path, st.st_size)
        out.append(Listing(session_id=os.path.basename(path)[: -len(".jsonl")], path=path,
                           started_at=ctime if first is None else first, ended_at=mtime if last is None else last,
                           project_hint=os.path.basename(os.path.dirname(path)) or None, title=title or None,
                           mtime_ms=mtime))
    out.sort(key=lambda s: -(s.ended_at or 0))
    return out


# --- parsing -----------------------------------------------------------------------------


def _loads(line: str | bytes):
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        # orjson refuses what JS accepts: lone-surrogate escapes, integers over 64 bits,
        # nesting deeper than 1024. The stdlib parser (minus NaN/Infinity) agrees with
        # JSON.parse on those. Decode first: given bytes, json.loads would skip a UTF-8 BOM
        # that JSON.parse rejects.
        if isinstance(line, bytes):
            line = line.decode("utf-8")
        return _json_parse(line)


def _json_parse(text: str):
    """JS `JSON.parse`, which has no small depth limit: nesting deeper than Python's recursion
    limit is parsed by the (slower) iterative parser instead of failing."""
    try:
        return jscompat.json_parse(text)
    except RecursionError:
        return jscompat.json_parse_deep(text)


def _input_text(inp) -> str:
    if isinstance(inp, dict) and isinstance(inp.get("command"), str):
        return inp["command"]
    if isinstance(inp, str):
        return inp
    return jscompat.js_stringify(inp) if isinstance(inp, (dict, list)) else ""


def flatten_content(content) -> str:
    """`message.content` → text, block by block, as akm's `parseClaudeEvent` does."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for b in content:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text" or t == "thinking":  # the text is under the key the type names
            v = b.get(t)
            if isinstance(v, str):
                parts.append(v)
        elif t == "tool_use":
            name = b.get("name")
            parts.append(f"[tool:{name if isinstance(name, str) else 'tool'}] {_input_text(b.get('input'))}")
        elif t == "tool_result":
            c = b.get("content")
            parts.append("[tool_result] " + (c if isinstance(c, str) else jscompat.js_stringify("" if c is None else c)))
    return "\n".join(parts)


class _Falsy(str):
    """String(v) of a falsy non-string value (0, false): akm's `role || "unknown"` skips it."""

    def __bool__(self) -> bool:
        return False


class _Truthy(str):
    """String(v) of a truthy value that renders empty (`[]`): akm's `role || …` keeps it."""

    def __bool__(self) -> bool:
        return True


def js_role(v) -> str:
    """A non-string record `type` as a role: its JS String(), with its JS truthiness, since the
    hash uses String(role) while the prompt uses `role || "unknown"`."""
    text = js_string(v)
    if v is False or (isinstance(v, (int, float)) and v == 0):
        return _Falsy(text)
    return _Truthy(text) if not text else text


def js_string(v) -> str:
    """JS `String(v)` for JSON values (a non-string role is rendered this way)."""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return ",".join("" if x is None else js_string(x) for x in v)
    return "[object Object]" if isinstance(v, dict) else jscompat._scalar(v)


_REMEMBER = js_regex(r"""\bakm\s+remember\s+(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""")
_FEEDBACK = js_regex(
    r"""\bakm\s+feedback\s+(\S+)(?:\s+--[a-z-]+)*\s+(?:--note|-n)\s+(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')"""
)


def inline_refs(text: str, ts: float) -> list[InlineRef]:
    """akm's `extractInlineRefMentions`: remember calls first, then feedback calls."""
    if "akm" not in text or utf16_len(text) < 10:
        return []
    out = []
    for m in _REMEMBER.finditer(text):
        body = m.group(1) if m.group(1) is not None else m.group(2)
        if jscompat.js_trim(body):
            out.append(InlineRef("remember", body, ts))
    for m in _FEEDBACK.finditer(text):
        body = m.group(2) if m.group(2) is not None else m.group(3)
        out.append(InlineRef("feedback", body, ts, ref=m.group(1)))
    return out


def read_transcript(
    path: str, fallback_ts: float, label: str, observe: Callable[[dict, int], None] | None = None
) -> tuple[TranscriptFile, bool]:
    """Parse one `.jsonl` once, line by line. Returns the file and whether it was valid UTF-8.

    Each line becomes an event as akm's `parseClaudeEvent` makes one (pipeline-spec §6.3):
    no event for non-objects, custom titles or empty text; ts from a JSON number as-is, from
    a string through Date.parse (NaN or 0 → the parent's mtime), else the parent's mtime;
    role from `message.role` if a string, else the record's `type`, else "unknown".
    Raises OSError when the file cannot be read, as akm's unguarded read does.

    `observe(record, line_number)`, when given, sees every line that parsed to a JSON object, in
    file order, so the suite's own tables share this single read; it never changes what akm sees.
    """
    events: list[Event] = []
    refs: list[InlineRef] = []
    fallback: list[int] = []
    title = None
    bad = n = long = 0
    valid = True
    loads, date_parse, flatten, append = orjson.loads, jscompat.date_parse, flatten_content, events.append
    with open_regular(path) as f:
        # Streaming keeps memory at one line, and a line at MAX_LINE_BYTES: splitting bytes on
        # "\n" then decoding each piece with replacement equals akm's decode-then-split, since
        # "\n" never occurs inside a UTF-8 sequence.
        for raw in iter(functools.partial(f.readline, MAX_LINE_BYTES), b""):
            if raw == b"\n":
                continue
            n += 1
            try:
                obj = loads(raw)  # JSON whitespace includes the trailing newline
            except orjson.JSONDecodeError:
                if len(raw) == MAX_LINE_BYTES and raw[-1:] != b"\n" and _skip_rest_of_line(f):
                    long += 1  # a prefix of a longer line never parses as an object: only here
                    continue
                line = raw[:-1] if raw.endswith(b"\n") else raw
                try:
                    text_line = line.decode("utf-8")
                except UnicodeDecodeError:
                    valid = False
                    text_line = line.decode("utf-8", "replace")
                try:
                    obj = _loads(text_line)
                except ValueError:
                    bad += 1
                    continue
            if type(obj) is not dict:
                if len(raw) == MAX_LINE_BYTES and raw[-1:] != b"\n" and _skip_rest_of_line(f):
                    long += 1  # the first MAX_LINE_BYTES of a longer line that is a number
                continue  # null, numbers, strings, arrays: no event (arrays end with empty text)
            if observe is not None:
                observe(obj, n)
            if obj.get("type") == "custom-title" and type(obj.get("customTitle")) is str:
                title = obj["customTitle"]
                continue
            msg = obj.get("message")
            if type(msg) is not dict:
                continue
            content = msg.get("content")
            text = content if type(content) is str else flatten(content)  # a string, the common case, is its own text
            if not text:
                continue
            ts = obj.get("timestamp")
            kind = type(ts)
            ts = date_parse(ts) if kind is str else js_number(ts) if kind is float or kind is int else math.nan
            if ts != ts or (ts == 0 and kind is str):  # NaN, a string's 0 or no number: the parent's mtime
                ts = fallback_ts
                fallback.append(len(events))
            role = msg.get("role")
            if type(role) is not str:
                role = obj.get("type")
                role = "unknown" if role is None else js_role(role)
            append(Event(role, ts, text, label, len(text) if text.isascii() else utf16_len(text)))
            if "akm" in text:
                refs.extend(inline_refs(text, ts))
    tf = TranscriptFile(label, tuple(events), tuple(refs), title or None, lines=n, bad_lines=bad,
                        fallback=tuple(fallback), long_lines=long)
    return tf, valid


MAX_LINE_BYTES = 16 * 2**20
"""The longest line (and sidecar) read, in bytes: what one line may cost is bounded by it.

A longer line is skipped without being held (an `errors` row `long_line` counts them); akm
reads the whole file into one string and would parse it. No Claude Code line comes near
16 MiB (a pasted image is a few MB of base64), and one line costs a multiple of its length:
orjson's error on a malformed line alone takes about 12 times it (200 MB at the cap)."""


def _skip_rest_of_line(f) -> bool:
    """Read past the rest of a line whose first MAX_LINE_BYTES were read, 1 MiB at a time.
    Returns False when there was no rest (the line was exactly that long, at the end)."""
    rest = False
    while piece := f.readline(2**20):
        rest = True
        if piece[-1:] == b"\n":
            break
    return rest


BROKEN_SIDECAR = ("broken_sidecar", "sidecar is not a JSON object; provenance reads [subagent:unknown]")


def read_sidecar(jsonl_path: str) -> tuple[Sidecar, tuple[str, str] | None]:
    """The `.meta.json` beside a subagent transcript, and the (kind, reason) problem of one that
    reads as broken: not a regular file (FIFO, device, socket), unreadable, too long or not an object."""
    try:
        with open_regular(jsonl_path[: -len(".jsonl")] + ".meta.json") as f:
            raw = f.read(MAX_LINE_BYTES + 1)
    except FileNotFoundError:
        return Sidecar("missing"), None
    except NotRegularFile as exc:
        return Sidecar("broken"), ("not_a_file", f"sidecar is {exc}; not read (akm would block or never finish)")
    except OSError as exc:
        return Sidecar("broken"), ("unreadable", f"sidecar cannot be read: {exc.strerror or exc}; provenance reads "
                                                 "[subagent:unknown]")
    if len(raw) > MAX_LINE_BYTES:
        return Sidecar("broken"), ("long_line", f"sidecar is over {MAX_LINE_BYTES >> 20} MiB; not read "
                                                "(akm would read it)")
    try:
        meta = _json_parse(raw.decode("utf-8", "replace"))
    except ValueError:
        return Sidecar("broken"), BROKEN_SIDECAR
    if meta is None:
        return Sidecar("null"), None
    if not isinstance(meta, dict):
        return Sidecar("broken"), BROKEN_SIDECAR
    agent_type, description, tool_use_id = (
        v if isinstance(v := meta.get(key), str) else None for key in ("agentType", "description", "toolUseId")
    )
    return Sidecar("ok", agent_type, description, tool_use_id, meta), None


def provenance(sidecar: Sidecar) -> str:
    """The line akm stamps on every folded subagent event."""
    head = f"[subagent:{sidecar.agent_type or 'unknown'}]"
    return f"{head} {sidecar.description}" if sidecar.description else head


OUTSIDE_REASON = "symlink to a file outside the sessions root: measured as akm reads it; none of its text is copied to any output"


LOOP_REASON = ("subagents/ is a link to the sessions root or a folder holding it or the session: not followed "
               "(every session would be its own subagent; akm would follow it)")
LINK_MAX_ENTRIES = 10_000
"""Entries of a `subagents/` reached through a link out of the root that are walked: akm walks
whatever the link names (`/` is the whole machine); past this the walk stops, with a row."""
LINK_MAX_BYTES = 2**30
"""Bytes of subagent transcripts read through links out of the root, per session; past it a
file is skipped with a `link_limit` row (akm would read it)."""


def file_size(path: str) -> int:
    """The size of the file `path` names (0 when it cannot be stat'ed)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def subagents_dir(parent_path: str) -> str:
    return os.path.join(os.path.dirname(parent_path), os.path.basename(parent_path)[: -len(".jsonl")], SUBAGENTS_DIR)


def subagent_paths(parent_path: str, root: str, walk_order: str = "name", errors: list | None = None) -> list[str]:
    """The subagent transcripts akm's walk of `<session>/subagents/` finds, bounded: a link to
    the root or to a folder holding it or the session is not followed (LOOP_REASON), and one out
    of the root is walked for LINK_MAX_ENTRIES entries; `errors` gets (path, kind, reason) for each."""
    sub_dir = subagents_dir(parent_path)
    if not os.path.isdir(sub_dir):
        return []
    real, real_root = os.path.realpath(sub_dir), os.path.realpath(root)
    if _within(real_root, real) or _within(os.path.realpath(parent_path), real):
        if errors is not None:
            errors.append((sub_dir, "link_loop", LOOP_REASON))
        return []
    return list(walk_jsonl(sub_dir, errors, walk_order, None if _within(real, real_root) else LINK_MAX_ENTRIES))


def read_session(parent_path: str, root: str, file_time_ms: float | None = None,
                 observe: Callable[[str], Callable[[dict, int], None] | None] | None = None,
                 walk_order: str = "name") -> tuple[Session, list[tuple[str, str, str]]]:
    """akm's folding `readSession`, plus the per-file view `measure` needs.

    Returns the session and a list of (path, kind, reason) problems that akm passes over
    silently (malformed lines, invalid UTF-8, broken sidecars). Raises ReadError where akm's
    call throws: the parent is missing or a transcript cannot be read.

    akm falls back to file times (an event without a timestamp takes the parent's mtime; a
    session without events starts at its ctime). Git keeps neither, so bundled fixtures are
    read with `file_time_ms` standing in for both, which makes their results the same in
    every clone; analysts' own sessions are read with their real times.

    `observe(label)`, when given, is asked once per transcript (parent first, then subagents in
    walk order) for a per-line observer of that file (see `read_transcript`). `walk_order`
    orders the subagent walk (WALK_ORDERS).
    """
    problems: list[tuple[str, str, str]] = []
    try:
        st = os.stat(parent_path)
    except OSError as exc:
        raise ReadError(f"readSession failed: {exc.strerror or exc}") from exc
    if not stat_mod.S_ISREG(st.st_mode):  # a socket cannot even be opened; a FIFO would block
        raise ReadError(f"readSession failed: {file_kind(st.st_mode)}, not a regular file; not read") from NotRegularFile()
    mtime = st.st_mtime_ns / 1e6 if file_time_ms is None else file_time_ms
    ctime = st.st_ctime_ns / 1e6 if file_time_ms is None else file_time_ms
    parent_label = rel(parent_path, root)
    real_root = os.path.realpath(root)

    def note_outside(path: str, label: str) -> bool:
        """Whether `path` resolves (symlinks followed) to somewhere outside the real sessions root."""
        outside = not _within(os.path.realpath(path), real_root)
        if outside:
            problems.append((label, "outside_link", OUTSIDE_REASON))
        return outside

    def load(path: str, label: str) -> TranscriptFile:
        try:
            tf, valid = read_transcript(path, mtime, label, observe(label) if observe else None)
        except OSError as exc:
            raise ReadError(f"readSession failed: {label}: {exc.strerror or exc}") from exc
        except jscompat.StringifyDepthError as exc:  # JS: a RangeError out of parseClaudeEvent
            raise ReadError(f"readSession failed: {label}: {exc}") from exc
        if not valid:
            problems.append((label, "invalid_utf8", "invalid UTF-8 bytes read as U+FFFD"))
        if tf.bad_lines:
            problems.append((label, "malformed_lines", f"{tf.bad_lines} line(s) are not JSON and were skipped"))
        if tf.long_lines:
            problems.append((label, "long_line", f"{tf.long_lines} line(s) over {MAX_LINE_BYTES >> 20} MiB were skipped unread "
                                                 "(akm would read and parse them)"))
        return tf

    note_outside(parent_path, parent_label)
    parent = load(parent_path, parent_label)
    subs: list[TranscriptFile] = []
    walk_errors: list = []
    linked = 0  # bytes read through links out of the root
    for path in subagent_paths(parent_path, root, walk_order, walk_errors):
        label = rel(path, root)
        meta_label = label[: -len(".jsonl")] + ".meta.json"
        sidecar, problem = read_sidecar(path)
        if problem:
            problems.append((meta_label, *problem))
        if sidecar.state != "missing":
            note_outside(path[: -len(".jsonl")] + ".meta.json", meta_label)
        if note_outside(path, label):
            linked += file_size(path)
            if linked > LINK_MAX_BYTES:
                problems.append((label, "link_limit", f"read through a link out of the root past {LINK_MAX_BYTES >> 20} MiB "
                                                      "for this session: not read (akm would read it)"))
                continue
        try:
            tf = load(path, label)
        except ReadError as exc:
            if not isinstance(exc.__cause__, NotRegularFile):
                raise
            # akm would block here or read until memory runs out: skip the file, say so.
            problems.append((label, "not_a_file", f"subagent transcript is {exc.__cause__}; not read (akm would block or never finish)"))
            continue
        try:
            own_mtime = os.stat(path).st_mtime_ns / 1e6 if file_time_ms is None else file_time_ms
        except OSError:
            own_mtime = mtime
        subs.append(replace(tf, sidecar=sidecar, mtime_ms=own_mtime))
    problems.extend((rel(p, root), kind, reason) for p, kind, reason in walk_errors)

    folded = list(parent.events)
    refs = list(parent.refs)
    for tf in subs:
        prefix = provenance(tf.sidecar) + "\n"
        pchars = utf16_len(prefix)
        folded.extend(Event(e.role, e.ts, prefix + e.text, e.file, pchars + e.chars) for e in tf.events)
        refs.extend(tf.refs)
    folded.sort(key=by_ts)  # stable: ties keep parent first, then walk order
    ref = SessionRef(harness=HARNESS, session_id=os.path.basename(parent_path)[: -len(".jsonl")], path=parent_label,
                     started_at=folded[0].ts if folded else ctime, ended_at=folded[-1].ts if folded else mtime,
                     project_hint=os.path.basename(os.path.dirname(parent_path)) or None, title=parent.title)
    return Session(ref, parent, tuple(subs), tuple(folded), tuple(refs), mtime_ms=mtime, ctime_ms=ctime), problems

