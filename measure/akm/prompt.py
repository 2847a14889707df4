"""akm's `buildExtractPrompt`, with its `String.replace` quirks reproduced and counted."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from measure.akm.jscompat import js_replace, js_trim, to_iso, to_utf8, utf16_len, utf16_slice
from measure.akm.read import open_regular
from measure.akm.records import Event, InlineRef, SessionRef

DEFAULT_TEMPLATE = Path(__file__).with_name("templates") / "extract-session.md"
BEGIN = "=== BEGIN UNTRUSTED SESSION TRANSCRIPT ==="
END = "=== END UNTRUSTED SESSION TRANSCRIPT ==="
FENCE = "=== (fence) ==="
NO_REFS = "(none — the agent did not call `akm remember` or `akm feedback` during this session)"
NO_EVENTS = "(empty — pre-filter removed all events as noise)"
#: Substitution order of akm (not document order).
PLACEHOLDERS = (
    "HARNESS", "TITLE", "STARTED_AT", "ENDED_AT", "PROJECT_HINT", "ALREADY_PRESERVED", "STANDARDS", "TRANSCRIPT"
)


@dataclass(frozen=True, slots=True)
class Prompt:
    """A built prompt (its text only when kept) and how often akm's replace quirks fired."""

    text: str | None  # None when the caller measures without keeping prompt texts
    chars: int  # UTF-16 length, what akm's `.length` reports
    sha256: str  # of the UTF-8 bytes akm would send (lone surrogates as U+FFFD)
    dollar_patterns: int  # substitutions whose `$` patterns changed the inserted value
    placeholder_capture: bool  # a later placeholder landed inside an earlier value
    lone_surrogate: bool  # truncation split a surrogate pair: sent as U+FFFD


MAX_TEMPLATE_BYTES = 2**20
"""A larger prompt template is refused (akm's own is 5 KB; the file is read whole)."""


@lru_cache(maxsize=8)
def _read_template(path: str) -> str:
    with open_regular(path) as f:  # never a FIFO (it would block) or a device (/dev/zero never ends)
        data = f.read(MAX_TEMPLATE_BYTES + 1) or b""
    if len(data) > MAX_TEMPLATE_BYTES:
        raise ValueError(f"over {MAX_TEMPLATE_BYTES >> 20} MiB: not a prompt template")
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # text mode's newlines, as open() gave


def load_template(path: str | os.PathLike | None = None) -> str:
    """The template text: a file given by the analyst, else the package's own."""
    return _read_template(os.fspath(path or DEFAULT_TEMPLATE))


def format_ts(ms: float | None) -> str:
    return to_iso(ms) if ms else "unknown"


def format_refs(refs: tuple[InlineRef, ...] | list[InlineRef]) -> str:
    if not refs:
        return NO_REFS
    lines = []
    for r in refs:
        head = "- remember:" if r.kind == "remember" else f"- feedback {r.ref if r.ref is not None else '<ref>'}:"
        body = utf16_slice(js_trim(r.text), 0, 200)
        if utf16_len(r.text) > 200:
            body += "…"
        lines.append(f"{head} {body}")
    return "\n".join(lines)


def format_standards(standards: str | None) -> str:
    s = js_trim(standards or "")
    return f"\n## Standards to follow (the rulebook for this target)\n\n{s}\n" if s else ""


def format_transcript(events: tuple[Event, ...] | list[Event], lines: dict | None = None) -> str:
    """The fenced transcript. `lines` (keyed by event identity) shares rendered lines between
    calls, each with whether it holds a fence marker, found once per event instead of by
    scanning every prompt (a marker cannot span two lines: "\n\n" is between them)."""
    if not events:
        return f"{BEGIN}\n{NO_EVENTS}\n{END}"
    lines = {} if lines is None else lines
    parts = []
    fenced = False
    for e in events:
        hit = lines.get(id(e))
        if hit is None or hit[0] is not e:
            line = _line(e)
            hit = lines[id(e)] = (e, line, _MARKER in line)  # holding e keeps its id from being reused
        parts.append(hit[1])
        fenced = fenced or hit[2]
    body = "\n\n".join(parts)
    if fenced:
        body = body.replace(BEGIN, FENCE).replace(END, FENCE)
    return f"{BEGIN}\n{body}\n{END}"


_MARKER = " UNTRUSTED SESSION TRANSCRIPT ==="  # the common tail of BEGIN and END (a long needle: a fast scan)


def _line(e: Event) -> str:
    return f"[{e.role or 'unknown'} @ {to_iso(e.ts) if e.ts else 'unknown-ts'}] {e.text}"


def build_prompt(template: str, ref: SessionRef, events: tuple[Event, ...] | list[Event],
                 refs: tuple[InlineRef, ...] | list[InlineRef], standards: str | None = None, keep_text: bool = True,
                 lines: dict | None = None) -> Prompt:
    """akm's `buildExtractPrompt`: eight sequential first-occurrence `replace` calls.

    Raises ValueError where akm throws (a timestamp out of `Date` range).
    """
    values = (ref.harness, ref.title or "(no title)", format_ts(ref.started_at), format_ts(ref.ended_at),
              ref.project_hint or "(no project hint)", format_refs(refs), format_standards(standards),
              format_transcript(events, lines))  # in PLACEHOLDERS order
    out = template
    dollars = 0
    for name, value in zip(PLACEHOLDERS, values):
        out, changed = js_replace(out, "{{" + name + "}}", value)
        dollars += changed
    # Only a value replaced before another placeholder can capture it: the transcript is
    # replaced last, so braces in it never matter (and it need not be scanned for them).
    capture = any("{{" in v for v in values[:-1]) and _literal_sequential(template, values) != _intended(template, values)
    try:
        data, lone = out.encode("utf-8"), False
    except UnicodeEncodeError:  # only lone surrogates fail to encode
        data, lone = to_utf8(out), True
    return Prompt(out if keep_text else None, utf16_len(out), hashlib.sha256(data).hexdigest(), dollars, capture, lone)


def _literal_sequential(template: str, values: tuple[str, ...]) -> str:
    out = template
    for name, value in zip(PLACEHOLDERS, values):
        out = out.replace("{{" + name + "}}", value, 1)
    return out


def _intended(template: str, values: tuple[str, ...]) -> str:
    """Each placeholder's first occurrence in the template replaced, values never rescanned."""
    spots = []
    for name, value in zip(PLACEHOLDERS, values):
        ph = "{{" + name + "}}"
        at = template.find(ph)
        if at >= 0:
            spots.append((at, len(ph), value))
    out, last = [], 0
    for at, n, value in sorted(spots):
        out += [template[last:at], value]
        last = at + n
    out.append(template[last:])
    return "".join(out)
