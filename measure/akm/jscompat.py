"""JavaScript semantics that akm's output depends on, reproduced in Python.

akm runs on Bun; every length, slice, trim, regex, JSON rendering and date it computes follows
ECMAScript rules. Python differs on each of them, so the pipeline goes through this module
whenever a byte of the result could change.

Long: strings, JSON, regexes and dates in one place, since JSON and regexes are built on its UTF-16 helpers.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

import orjson

# --- strings: UTF-16 code units ----------------------------------------------------------

SURROGATE = re.compile("[\ud800-\udfff]")


def utf16_len(s: str) -> int:
    """JS `s.length`: UTF-16 code units (an astral character counts 2)."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) >> 1


def _units(s: str) -> bytes:
    return s.encode("utf-16-le", "surrogatepass")


def utf16_slice(s: str, start: int, end: int | None = None) -> str:
    """JS `s.slice(start, end)` for non-negative bounds, in UTF-16 units."""
    if s.isascii():
        return s[start:end]
    # surrogatepass keeps a surrogate pair cut in half as a lone surrogate, as JS does.
    return _units(s)[2 * start : None if end is None else 2 * end].decode("utf-16-le", "surrogatepass")


def utf16_ends(s: str, head: int, tail_from: int) -> tuple[str, str]:
    """JS `[s.slice(0, head), s.slice(tail_from)]` for non-negative bounds, encoding `s` once."""
    if s.isascii():
        return s[:head], s[tail_from:]
    b = _units(s)
    return b[: 2 * head].decode("utf-16-le", "surrogatepass"), b[2 * tail_from :].decode("utf-16-le", "surrogatepass")


def escape_lone_surrogates(text: str) -> str:
    """Each lone surrogate in `text` as its JSON escape (`\\ud83d`), as JS `JSON.stringify` writes it."""
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def utf16_units(s: str) -> bytes | memoryview:
    """The UTF-16 code units of `s`: a sequence of integers, whatever characters `s` holds."""
    if s.isascii():
        return s.encode("ascii")
    return memoryview(s.encode("utf-16", "surrogatepass")[2:]).cast("H")  # native order, the BOM dropped


def to_utf8(s: str) -> bytes:
    """UTF-8 bytes as JS encoders produce them: a lone surrogate becomes U+FFFD."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        # Re-pair surrogates that are adjacent (JS strings are unit sequences), then replace
        # the ones left alone.
        return _units(s).decode("utf-16-le", "replace").encode("utf-8")


# --- whitespace and regex classes -------------------------------------------------------

#: ECMAScript WhiteSpace + LineTerminator: what `trim()` strips and `\s` matches.
JS_WS_CHARS = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: Regex class body for JS `\s` (use inside `[...]`).
WS = r"\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: Regex class body for JS line terminators (what `.` does not match).
LT = r"\n\r\u2028\u2029"


def js_trim(s: str) -> str:
    """JS `String.prototype.trim`."""
    return s.strip(JS_WS_CHARS)


_JS_TOKEN = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\.", re.S)  # an escape, a whole [...] class, or `.`


def js_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile a pattern written with `\\s` and `.` meaning what they mean in JS.

    `\\w`, `\\d` and `\\b` become ASCII-only through re.ASCII, which also keeps `re.I` from
    folding non-ASCII letters onto ASCII ones (JS `/i` without `u`). `\\s` and `.` are
    rewritten to explicit JS classes.
    """

    def in_class(m: re.Match[str]) -> str:
        if m.group() == "\\S":
            raise ValueError("\\S inside a class is not supported")
        return WS if m.group() == "\\s" else m.group()

    def rewrite(m: re.Match[str]) -> str:
        t = m.group()
        if t[0] == "[":
            return re.sub(r"\\.", in_class, t, flags=re.S)
        return {".": f"[^{LT}]", "\\s": f"[{WS}]", "\\S": f"[^{WS}]"}.get(t, t)

    return re.compile(_JS_TOKEN.sub(rewrite, pattern), flags | re.ASCII)


# --- JSON ------------------------------------------------------------------------------

MAX_EXACT = 2**53
"""Every integer up to this is exactly a JS double (akm's numbers); beyond it JSON.parse rounds."""


def js_number(x: int | float) -> float:
    """A JSON number as JSON.parse gives it: a double (an integer past the largest double is Infinity)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _reject_constant(name: str) -> float:
    raise ValueError(f"JSON.parse rejects {name}")


def json_parse(text: str | bytes):
    """JS `JSON.parse`: the stdlib parser minus NaN/Infinity, which JS rejects."""
    return json.loads(text, parse_constant=_reject_constant)


_JSON_WS = re.compile(r"[ \t\n\r]*")


def json_parse_deep(text: str):
    """`json_parse` without recursion: for lines nested deeper than Python's recursion limit.

    JS's JSON.parse has no small depth limit; this parser accepts exactly what `json_parse`
    accepts (the stdlib's string and number rules, no NaN/Infinity) and builds the same values,
    keeping its open containers on an explicit stack.
    """
    from json.decoder import JSONDecodeError, scanstring  # noqa: PLC0415
    from json.scanner import NUMBER_RE  # noqa: PLC0415

    ws = _JSON_WS.match
    n = len(text)
    stack: list[list] = []  # [container, key] per open container (key None for arrays)

    def fail(msg: str, pos: int):
        raise JSONDecodeError(msg, text, pos)

    def key_at(i: int) -> tuple[str, int]:
        if i >= n or text[i] != '"':
            fail("Expecting property name enclosed in double quotes", i)
        key, i = scanstring(text, i + 1)
        i = ws(text, i).end()
        if i >= n or text[i] != ":":
            fail("Expecting ':' delimiter", i)
        return key, ws(text, i + 1).end()

    i = ws(text, 0).end()
    while True:
        if i >= n:
            fail("Expecting value", i)
        c = text[i]
        if c == "{":
            i = ws(text, i + 1).end()
            if i < n and text[i] == "}":
                value, i = {}, i + 1
            else:
                key, i = key_at(i)
                stack.append([{}, key])
                continue
        elif c == "[":
            i = ws(text, i + 1).end()
            if i < n and text[i] == "]":
                value, i = [], i + 1
            else:
                stack.append([[], None])
                continue
        elif c == '"':
            value, i = scanstring(text, i + 1)
        elif text.startswith("null", i):
            value, i = None, i + 4
        elif text.startswith("true", i):
            value, i = True, i + 4
        elif text.startswith("false", i):
            value, i = False, i + 5
        else:
            m = NUMBER_RE.match(text, i)
            if m is None:
                fail("Expecting value", i)
            integer, frac, exp = m.groups()
            value = float(integer + (frac or "") + (exp or "")) if frac or exp else int(integer)
            i = m.end()
        # Attach the finished value to its container; close containers as far as possible.
        while True:
            if not stack:
                i = ws(text, i).end()
                if i != n:
                    fail("Extra data", i)
                return value
            top = stack[-1]
            container = top[0]
            if top[1] is None:
                container.append(value)
            else:
                container[top[1]] = value
            i = ws(text, i).end()
            if i < n and text[i] == ",":
                i = ws(text, i + 1).end()
                if top[1] is not None:
                    top[1], i = key_at(i)
                break
            if i < n and text[i] == ("]" if top[1] is None else "}"):
                i += 1
                stack.pop()
                value = container
                continue
            fail("Expecting ',' delimiter", i)


def _number(x: int | float) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -MAX_EXACT <= x <= MAX_EXACT:
            return str(x)
        x = js_number(x)  # JS numbers are doubles: big integers lose precision
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    if x == int(x) and abs(x) <= MAX_EXACT:
        return str(int(x))
    r = repr(x)  # shortest round-trip digits, as JS Number::toString
    mantissa, _, exp = r.partition("e")
    if not exp:  # an integral double past 2^53 and below 1e16 is "d.0" in Python, "d" in JS
        return r.removesuffix(".0")
    e = int(exp)
    if -7 < e < 21:  # positional in JS, scientific in Python: the same digits, written out
        return format(Decimal(r), "f")
    m = mantissa[:-2] if mantissa.endswith(".0") else mantissa
    return f"{m}e{'+' if e > 0 else '-'}{abs(e)}"


def _string(s: str) -> str:
    # The stdlib's C encoder escapes exactly as JS does, except lone surrogates: it leaves them raw.
    out = _dumps(s)
    return out if s.isascii() else escape_lone_surrogates(out)


_dumps = json.JSONEncoder(ensure_ascii=False).encode


def _is_array_index(k: str) -> bool:
    return k.isdigit() and k.isascii() and (k == "0" or k[0] != "0") and int(k) < 2**32 - 1


def _plain(v) -> bool:
    """True when orjson renders `v` exactly as JSON.stringify does (no floats, no big ints,
    no integer-like keys). Strings are checked by orjson itself: it refuses lone surrogates."""
    if isinstance(v, str) or v is None or v is True or v is False:
        return True
    if isinstance(v, int):
        return -MAX_EXACT <= v <= MAX_EXACT
    if isinstance(v, list):
        return all(map(_plain, v))
    if isinstance(v, dict):
        return not any(_is_array_index(k) for k in v) and all(map(_plain, v.values()))
    return False


STRINGIFY_MAX_DEPTH = 40_000
"""Nesting JavaScriptCore's `JSON.stringify` (Bun, akm's runtime) renders at most: beyond it,
JSC throws a RangeError (its `maximumSideStackRecursion`). Its stringifier keeps open containers
on a stack of its own, not the call stack, and so does `_stringify`."""


class StringifyDepthError(ValueError):
    """`JSON.stringify` of a value nested deeper than STRINGIFY_MAX_DEPTH (JS: a RangeError)."""


def js_stringify(value) -> str:
    """JS `JSON.stringify(value)` (compact) for values that came out of `json_parse`.

    Any nesting Python's recursion limit allows goes through the fast paths; deeper values
    through the iterative `_stringify`, which renders them as JS does (to STRINGIFY_MAX_DEPTH).
    """
    try:
        if _plain(value):
            return orjson.dumps(value).decode()
    except (RecursionError, orjson.JSONEncodeError):
        pass  # past Python's or orjson's (255) depth limit, or a lone surrogate (JS escapes it, orjson refuses)
    return _stringify(value)


def _scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (int, float)):  # booleans included
        return _number(value)
    raise TypeError(f"cannot stringify {type(value).__name__}")


def _keys(value: dict) -> list[str]:
    # JS orders integer-like keys first, ascending, then the rest in insertion order (a stable sort).
    return sorted(value, key=lambda k: (0, int(k)) if _is_array_index(k) else (1, 0))


def _stringify(value) -> str:
    """JSON.stringify without recursion: open containers on an explicit stack, any depth."""
    out: list[str] = []
    # Each frame: [container, keys (None for lists), next index]
    stack: list[list] = []
    while True:
        if isinstance(value, (list, dict)):
            if len(stack) >= STRINGIFY_MAX_DEPTH:
                raise StringifyDepthError(f"JSON.stringify: nesting deeper than {STRINGIFY_MAX_DEPTH}")
            is_list = isinstance(value, list)
            out.append("[" if is_list else "{")
            stack.append([value, None if is_list else _keys(value), 0])
        else:
            out.append(_scalar(value))
        # Find the next value to render, closing finished containers.
        while stack:
            frame = stack[-1]
            container, keys, i = frame
            size = len(container) if keys is None else len(keys)
            if i < size:
                frame[2] = i + 1
                if i:
                    out.append(",")
                if keys is None:
                    value = container[i]
                else:
                    out.append(_string(keys[i]) + ":")
                    value = container[keys[i]]
                break
            out.append("]" if keys is None else "}")
            stack.pop()
        else:
            return "".join(out)


# --- dates -----------------------------------------------------------------------------

_ISO = re.compile(
    r"^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?$",
    re.ASCII,
)
_MAX_TIME = 8.64e15
_MINUTES: dict[str, float] = {}  # "YYYY-MM-DDTHH:MM:" -> its ms since epoch (NaN when invalid)
_MINUTE_STAMPS: dict[int, str] = {}  # minutes since epoch -> "YYYY-MM-DDTHH:MM:"
_LAST: tuple = (None, math.nan)  # the last string parsed and its value (one tuple: swapped atomically)


def date_parse(s: str) -> float:
    """JS `Date.parse` for the ISO 8601 shapes JS specifies; NaN for anything else.

    A date-time without an offset is local time in JS, so akm's result would depend on the
    machine's timezone; it is read as UTC here. Claude Code always writes `Z`.
    """
    global _LAST
    last = _LAST
    if s is last[0]:  # the same line's timestamp, parsed by a collector and then by the reader
        return last[1]
    v = math.nan
    n = len(s)
    # Fast path for what Claude Code writes, YYYY-MM-DDTHH:MM:SS.mmmZ (or without .mmm):
    # the minute is looked up (events come many to a minute), seconds and ms are added.
    if (n == 24 and s[19] == "." or n == 20) and s[-1] == "Z" and s[16] == ":":
        base = _MINUTES.get(s[:17])
        if base is None:
            if len(_MINUTES) > 1 << 17:
                _MINUTES.clear()
            base = _MINUTES[s[:17]] = _minute_ms(s[:17])
        rest = s[17:19] + (s[20:23] if n == 24 else "000")
        if base == base and rest.isdigit() and rest.isascii() and rest[0] < "6":  # seconds < 60
            v = base + int(rest[:2]) * 1000 + int(rest[2:])
    if v != v:
        v = _date_parse_full(s)
    _LAST = (s, v)
    return v


def _minute_ms(p: str) -> float:
    """ms since epoch of "YYYY-MM-DDTHH:MM:", or NaN when it is not a valid UTC minute."""
    digits = p[:4] + p[5:7] + p[8:10] + p[11:13] + p[14:16]
    if p[4] + p[7] + p[10] + p[13] != "--T:" or not (digits.isdigit() and digits.isascii()):
        return math.nan
    y, m, d, hh, mi = int(p[:4]), int(p[5:7]), int(p[8:10]), int(p[11:13]), int(p[14:16])
    if not (1 <= m <= 12 and 1 <= d <= _days_in_month(y, m) and hh <= 23 and mi <= 59):
        return math.nan  # 24:00 and the like take the full parser
    return float(_days_from_civil(y, m, d) * 86_400_000 + (hh * 60 + mi) * 60_000)


def _date_parse_full(s: str) -> float:
    m = _ISO.match(s)
    if not m or m[1] == "-000000":
        return math.nan
    year_s, mo, d, hh, mi, ss, frac, tz = m.groups()
    year, month, day = int(year_s), int(mo or 1), int(d or 1)
    hour, minute, second = int(hh or 0), int(mi or 0), int(ss or 0)
    ms = int((frac or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month) and minute <= 59 and second <= 59):
        return math.nan
    if hour > 24 or (hour == 24 and (minute or second or ms)):
        return math.nan
    t = ((_days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + ms
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        oh, om = int(tz[1:3]), int(tz[4:6])
        if oh > 23 or om > 59:
            return math.nan
        t -= sign * (oh * 60 + om) * 60_000
    if abs(t) > _MAX_TIME:
        return math.nan
    return float(t)


def _days_in_month(y: int, m: int) -> int:
    if m == 2:
        return 29 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 28
    return 30 if m in (4, 6, 9, 11) else 31


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400  # floor division: Hinnant's C version needs a bias for negative years
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def clear_caches() -> None:
    """Forget the date caches (the benchmark wants a fresh process's state)."""
    global _LAST
    _LAST = (None, math.nan)
    _MINUTES.clear()
    _MINUTE_STAMPS.clear()


def to_iso(ms: float) -> str:
    """JS `new Date(ms).toISOString()`; raises ValueError where JS throws RangeError."""
    if isinstance(ms, float) and (math.isnan(ms) or math.isinf(ms)):
        raise ValueError("Invalid time value")
    t = int(ms)  # TimeClip truncates toward zero
    if abs(t) > _MAX_TIME:
        raise ValueError("Invalid time value")
    minute, rest = divmod(t, 60_000)
    stamp = _MINUTE_STAMPS.get(minute)
    if stamp is None:
        if len(_MINUTE_STAMPS) > 1 << 16:
            _MINUTE_STAMPS.clear()
        stamp = _MINUTE_STAMPS[minute] = _iso_minute(minute)
    sec, milli = divmod(rest, 1000)
    return f"{stamp}{sec:02d}.{milli:03d}Z"


def _iso_minute(minute: int) -> str:
    """"YYYY-MM-DDTHH:MM:" of a minute since epoch, as toISOString prints it (years past 0..9999 as ±YYYYYY)."""
    day, rem = divmod(minute, 1440)
    z = day + 719468  # Hinnant's civil_from_days, the inverse of _days_from_civil
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (m <= 2)
    ys = f"{y:04d}" if 0 <= y <= 9999 else f"{'+' if y > 0 else '-'}{abs(y):06d}"
    return f"{ys}-{m:02d}-{d:02d}T{rem // 60:02d}:{rem % 60:02d}:"


# --- String.prototype.replace(string, string) ---------------------------------------------

_DOLLAR = re.compile(r"\$([$&`'])")


def js_replace(haystack: str, needle: str, replacement: str) -> tuple[str, bool]:
    """JS `haystack.replace(needle, replacement)` with a string pattern.

    Only the first occurrence is replaced and `$$ $& $\\` $'` in the replacement are
    expanded (GetSubstitution without captures). Returns the result and whether a `$`
    pattern changed it relative to a literal insertion.
    """
    pos = haystack.find(needle)
    if pos < 0:
        return haystack, False
    if "$" not in replacement:
        return haystack[:pos] + replacement + haystack[pos + len(needle) :], False
    before, after = haystack[:pos], haystack[pos + len(needle) :]
    table = {"$": "$", "&": needle, "`": before, "'": after}
    expanded = _DOLLAR.sub(lambda m: table[m.group(1)], replacement)
    return before + expanded + after, expanded != replacement
