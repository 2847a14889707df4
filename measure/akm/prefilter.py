"""akm's `preFilterSession`: drop rules, truncation, the recency budget and the #839 dedupe."""

from __future__ import annotations

import re
from collections import Counter

from measure.akm.jscompat import LT, WS, js_regex, js_trim, utf16_ends, utf16_len, utf16_units
from measure.akm.records import Event, Prefiltered, PrefilterStats

DEFAULT_MAX_TOTAL_CHARS = 80_000
DEFAULT_MAX_EVENT_TEXT_LENGTH = 2_000
#: The #843-era read-only op set (the Aug-7 set plus `metrics`).
READONLY_OPS = frozenset(
    "show search curate history info hints help list completions lessons graph db events config health metrics".split()
)

_AKM_OP = js_regex(r"\bakm\s+(\w[\w-]*)\b")
_SEARCH_UNKNOWN = re.compile(
    rf"(?:^|(?<=[{LT}]))(?:##[{WS}]+[0-9]+[^{LT}]*akm_search unknown[{WS}]*\n){{3,}}", re.I | re.A
)
_SYSTEM_WORDS = re.compile(r"caveat|reminder", re.I | re.A)
# Reason keys are akm's: "noise-pattern-" + the first 24 characters of each regex source.
_KEY_CAVEAT = "noise-pattern-<local-command-caveat>"
_KEY_ANALYSIS = "noise-pattern-<analysis>[\\s\\S]{200,}<\\"
_KEY_SUMMARY = "noise-pattern-<summary>[\\s\\S]{200,}<\\/"
_KEY_REMINDER = "noise-pattern-<system-reminder>"
_KEY_SEARCH = "noise-pattern-^(##\\s+\\d+.*akm_search u"


_OPEN = {t: re.compile(f"<{t}>", re.I | re.A) for t in ("analysis", "summary")}
_CLOSE = {t: re.compile(f"</{t}>", re.I | re.A) for t in ("analysis", "summary")}


def _spans_tag(text: str, low: str, tag: str) -> bool:
    """JS `/<tag>[\\s\\S]{200,}<\\/tag>/i`: 200+ UTF-16 units between some open and close tag.

    A match exists exactly when the last close tag starts 200+ units after the first open
    tag ends, so no regex backtracking is needed. `low` is `text.lower()`.
    """
    start = low.find(f"<{tag}>")
    if start < 0:
        return False
    if text.isascii():
        return low.rfind(f"</{tag}>") - (start + len(tag) + 2) >= 200
    # lower() can change the length of non-ASCII text: find the positions on the text itself.
    m = _OPEN[tag].search(text)
    if not m:
        return False
    end = -1
    for c in _CLOSE[tag].finditer(text, m.end()):
        end = c.start()
    return end >= m.end() and utf16_len(text[m.end() : end]) >= 200


def classify(text: str, role: str, ops: frozenset[str]) -> str | None:
    """The drop reason akm gives this event, or None when it is kept."""
    t = js_trim(text)
    if len(t) < 10 and utf16_len(t) < 10:  # UTF-16 length >= code points: most texts need no count
        return "too-short"
    if "akm" in text:
        m = _AKM_OP.search(text)
        if m:
            op = m.group(1).lower()
            if op in ops:
                return f"akm-readonly-{op}"
    low = None
    if "<" in text:
        # One lower() and plain finds instead of four /i regexes. No non-ASCII character
        # lowercases into these ASCII tags, so containment agrees with JS's ASCII-only /i.
        low = text.lower()
        if "<local-command-caveat>" in low:
            return _KEY_CAVEAT
        if _spans_tag(text, low, "analysis"):
            return _KEY_ANALYSIS
        if _spans_tag(text, low, "summary"):
            return _KEY_SUMMARY
        if "<system-reminder>" in low:
            return _KEY_REMINDER
    if "##" in text and "akm_search unknown" in (low or text.lower()) and _SEARCH_UNKNOWN.search(text):
        return _KEY_SEARCH
    if role == "system" and (utf16_len(text) < 200 or _SYSTEM_WORDS.search(text)):
        return "system-boilerplate"
    return None


def truncate(text: str, chars: int, max_len: int) -> tuple[str, int]:
    """Head/tail truncation in UTF-16 units; returns the text and its new length."""
    head = int(max_len * 0.7)
    tail = max_len - head - 32
    # JS `slice(-tail)`: -0 is the whole string, a negative tail counts from the start.
    h, t = utf16_ends(text, head, chars - tail if tail > 0 else -tail)
    out = f"{h}\n... [truncated {chars - head - tail} chars] ...\n{t}"
    return out, utf16_len(out)


def prefilter(events: tuple[Event, ...] | list[Event], max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS,
              max_event_text_length: int = DEFAULT_MAX_EVENT_TEXT_LENGTH, readonly_ops: frozenset[str] = READONLY_OPS,
              dedupe: bool = False, memo: dict | None = None) -> Prefiltered:
    """akm's `preFilterSession` over `events` (input events are never mutated).

    `memo` (keyed by event identity) lets several calls over the same Event objects share
    the per-event rules, which do not depend on the budget: each entry is (drop reason or None,
    the event kept (truncated: a new one) or None, truncated?, the event). Holding its event,
    an entry keeps the id from being reused while the memo lives; the rule parameters must
    stay fixed.
    """
    dropped: Counter[str] = Counter()
    candidates: list[tuple[Event, bool]] = []
    memo = {} if memo is None else memo
    for e in events:
        verdict = memo.get(id(e))
        if verdict is None or verdict[3] is not e:
            reason = classify(e.text, e.role, readonly_ops)
            if reason is not None:
                verdict = (reason, None, False, e)
            elif e.chars > max_event_text_length:
                text, chars = truncate(e.text, e.chars, max_event_text_length)
                verdict = (None, Event(e.role, e.ts, text, e.file, chars), True, e)
            else:
                verdict = (None, e, False, e)
            memo[id(e)] = verdict
        reason, kept_event, cut, _ = verdict
        if reason is not None:
            dropped[reason] += 1
        else:
            candidates.append((kept_event, cut))

    # Recency budget: newest first, skip what does not fit and keep trying older events.
    accepted: list[tuple[Event, bool]] = []
    running = 0
    budget_dropped = 0
    for item in reversed(candidates):
        c = item[0].chars
        if running + c > max_total_chars and accepted:
            budget_dropped += 1
            continue
        accepted.append(item)
        running += c
    accepted.reverse()
    kept = [e for e, _ in accepted]
    stubbed = saved = 0
    if dedupe:
        kept, stubbed, saved = dedupe_notifications(kept)
    stats = PrefilterStats(inputCount=len(events), outputCount=len(kept), droppedByRule=dict(dropped),
                           truncatedCount=sum(1 for _, t in accepted if t), totalChars=sum(e.chars for e in kept),
                           budgetDroppedCount=budget_dropped)
    return Prefiltered(tuple(kept), stats, stubbed, saved)


# --- #839/#842 scoped dedupe post-pass ------------------------------------------------------

_AGENT_FILE = re.compile(r"agent-([^/\\]+?)\.jsonl$")
_TASK_ID = re.compile(r"<task-id>([^<]+)</task-id>")
_SUMMARY = re.compile(r"<summary>([^<]*)</summary>")
_AGENT_FINISHED = js_regex(r'^Agent "(.*)" finished$')
_PROVENANCE = re.compile(r"^\[subagent:[^\]]*\][^\n]*\n")
DICE_THRESHOLD = 0.9


def decode_entities(s: str) -> str:
    """The XML unescape Claude Code's `<result>` needs (`&amp;` last)."""
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&#39;", "'").replace("&amp;", "&")


def _bigrams(s: str) -> Counter:
    u = utf16_units(s)
    return Counter(zip(u, u[1:]))


def dice(a: str, b: str, grams: dict[str, Counter] | None = None) -> float:
    """Sørensen–Dice over multisets of adjacent UTF-16 bigrams (akm's similarity); `grams` holds
    bigrams already counted, by text."""
    if a == b:
        return 1.0
    la, lb = utf16_len(a), utf16_len(b)
    if la < 2 or lb < 2:
        return 0.0
    grams = {} if grams is None else grams
    ca, cb = (grams[t] if t in grams else grams.setdefault(t, _bigrams(t)) for t in (a, b))
    if len(ca) > len(cb):
        ca, cb = cb, ca
    inter = sum(min(n, cb[k]) for k, n in ca.items() if k in cb)
    return 2 * inter / ((la - 1) + (lb - 1))


def near_copy(a: str, b: str, grams: dict[str, Counter]) -> bool:
    """dice(a, b) >= DICE_THRESHOLD. Most pairs differ in length too much to reach it (the shared bigrams
    are at most the shorter text's), and those are ruled out without counting a bigram."""
    na, nb = utf16_len(a) - 1, utf16_len(b) - 1
    if na > 0 and nb > 0 and 2 * min(na, nb) / (na + nb) < DICE_THRESHOLD:
        return False
    return dice(a, b, grams) >= DICE_THRESHOLD


def stub_description(text: str) -> str:
    """The description of a shipped #842 stub: the `<summary>`, unwrapped from `Agent "…" finished`."""
    m = _SUMMARY.search(text)
    x = js_trim(m.group(1)) if m else ""
    f = _AGENT_FINISHED.match(x)
    if f:
        x = f.group(1)
    return x or "completed"


def dedupe_notifications(kept: list[Event]) -> tuple[list[Event], int, int]:
    """Stub a parent notification when a near-copy of the subagent it names is also kept.

    Returns the events, how many were stubbed and the chars the stubs saved.
    """
    by_agent: dict[str, list[Event]] = {}
    for e in kept:
        m = _AGENT_FILE.search(e.file)
        if m:
            by_agent.setdefault(m.group(1), []).append(e)
    if not by_agent:
        return kept, 0, 0
    out = []
    stubbed = saved = 0
    grams: dict[str, Counter] = {}  # a notification meets every copy of its agent, a copy every notification naming it
    for e in kept:
        out.append(e)
        if e.role != "user":
            continue
        text = e.text
        open_at = text.find("<task-notification>")
        if open_at < 0 or text.find("</task-notification>", open_at + 19) < 0:
            continue
        tid = _TASK_ID.search(text)
        r_open, r_close = text.find("<result>"), text.rfind("</result>")
        if not tid or r_open < 0 or r_close <= r_open + 8:
            continue  # greedy <result>…</result> needs a non-empty body
        task_id = tid.group(1)
        copies = by_agent.get(task_id)
        if not copies:
            continue
        result = decode_entities(text[r_open + 8 : r_close])
        if any(near_copy(_PROVENANCE.sub("", c.text, count=1), result, grams) for c in copies):
            text = f"[subagent {task_id} completed: {stub_description(e.text)}]"
            out[-1] = Event(e.role, e.ts, text, e.file, utf16_len(text))
            stubbed += 1
            saved += e.chars - out[-1].chars
    return out, stubbed, saved
