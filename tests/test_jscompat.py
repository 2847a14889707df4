"""JS semantics, each checked against values a JS engine gives (noted beside each case)."""

import math

import pytest

from measure.akm import jscompat as js


@pytest.mark.parametrize(
    ("s", "n"),
    [
        ("abc", 3),
        ("é", 1),  # "é".length === 1
        ("😀", 2),  # "😀".length === 2
        ("a😀b", 4),
        ("\ud83d", 1),  # a lone surrogate is one unit
        ("中文", 2),
    ],
)
def test_utf16_len(s, n):
    assert js.utf16_len(s) == n


def test_slice_can_split_a_surrogate_pair():
    # "a😀b".slice(0, 2) === "a\ud83d"
    assert js.utf16_slice("a😀b", 0, 2) == "a\ud83d"
    assert js.utf16_slice("a😀b", 2) == "\ude00b"
    assert js.utf16_slice("😀x😀", 0, 1) == "\ud83d" and js.utf16_slice("😀x😀", 4) == "\ude00"


@pytest.mark.parametrize("s", ["plain ascii", "a😀b😀c", "é😀", "😀😀😀"])
def test_ends_are_the_two_slices_of_one_encoding(s):
    n = js.utf16_len(s)
    for head in range(n + 1):
        for tail_from in range(n + 1):
            assert js.utf16_ends(s, head, tail_from) == (js.utf16_slice(s, 0, head), js.utf16_slice(s, tail_from))


def test_lone_surrogates_encode_as_replacement_character():
    # new TextEncoder().encode("a\ud83d") → 61 EF BF BD
    assert js.to_utf8("a\ud83d") == b"a\xef\xbf\xbd"
    # a pair that became adjacent again is one character
    assert js.to_utf8("\ud83d\ude00") == "😀".encode()


def test_trim_uses_the_js_whitespace_set():
    # "\ufeff x \u3000".trim() === "x"; "\x1c x".trim() keeps U+001C; "\x85x".trim() keeps U+0085
    assert js.js_trim("\ufeff x \u3000") == "x"
    assert js.js_trim("\x1c x") == "\x1c x"
    assert js.js_trim("\x85x") == "\x85x"


def test_regex_word_class_and_case_folding_are_ascii():
    r = js.js_regex(r"\bakm\s+(\w+)")
    assert r.search("akm\u00a0show").group(1) == "show"  # \s matches NBSP in JS
    assert r.search("akm\x1cshow") is None  # ...but not U+001C
    assert r.search("akm éa") is None  # \w is ASCII
    i = js.js_regex("s", flags=__import__("re").I)
    assert i.search("ſ") is None  # /s/i.test("ſ") === false
    dot = js.js_regex("a.b")
    assert dot.search("a\u2028b") is None and dot.search("a\x85b")


@pytest.mark.parametrize(
    ("value", "out"),
    [
        ({"b": 1, "2": 2, "a": 3, "1": 4}, '{"1":4,"2":2,"b":1,"a":3}'),  # integer-like keys first
        ({"01": 1, "1": 2}, '{"1":2,"01":1}'),  # "01" is not an array index
        (1.0, "1"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (123456789012345680000.0, "123456789012345680000"),
        (0.000001, "0.000001"),
        (2**60, "1152921504606847000"),  # beyond 2^53: shortest digits, zero-padded
        (2**64, "18446744073709552000"),
        (5.0, "5"),
        (1e16, "10000000000000000"),
        (9007199254740994.0, "9007199254740994"),  # an integral double past 2^53 written with ".0" in the input
        (-9.999999999999998e15, "-9999999999999998"),
        (-1.5, "-1.5"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (1.5e300, "1.5e+300"),
        ("a\u2028\"\\\n\x01", '"a\u2028\\"\\\\\\n\\u0001"'),
        ("\ud800", '"\\ud800"'),  # well-formed JSON.stringify escapes lone surrogates
        ([None, True, "x"], '[null,true,"x"]'),
    ],
)
def test_stringify(value, out):
    assert js.js_stringify(value) == out


def test_json_parse_rejects_nan_and_infinity():
    with pytest.raises(ValueError):
        js.json_parse('{"a": NaN}')
    with pytest.raises(ValueError):
        js.json_parse("Infinity")
    assert js.json_parse('"\\ud83d"') == "\ud83d"


@pytest.mark.parametrize(
    ("s", "ms"),
    [
        ("2026-05-29T00:15:29.678Z", 1780013729678),
        ("2026-03-01T10:00:00Z", 1772359200000),
        ("2026-03-01T10:00:00.5+02:00", 1772352000500),
        ("2026-03-01T10:00:00.123456Z", 1772359200123),  # digits past ms are dropped
        ("2026-03-01", 1772323200000),  # date-only is UTC
        ("1970-01-01T00:00:00Z", 0),
        ("2026-02-30T00:00:00Z", math.nan),
        ("not a date", math.nan),
        ("2026-03-01T24:00:00Z", 1772409600000),
    ],
)
def test_date_parse(s, ms):
    got = js.date_parse(s)
    assert (math.isnan(got) and math.isnan(ms)) or got == ms


def test_to_iso_truncates_and_throws_out_of_range():
    assert js.to_iso(1780013729678.9) == "2026-05-29T00:15:29.678Z"
    assert js.to_iso(-1) == "1969-12-31T23:59:59.999Z"
    assert js.to_iso(0) == "1970-01-01T00:00:00.000Z"
    with pytest.raises(ValueError):
        js.to_iso(8.64e15 + 1)


@pytest.mark.parametrize(
    ("hay", "needle", "rep", "out", "changed"),
    [
        ("a{{X}}b{{X}}", "{{X}}", "1", "a1b{{X}}", False),  # first occurrence only
        ("a{{X}}b", "{{X}}", "$$", "a$b", True),
        ("a{{X}}b", "{{X}}", "[$&]", "a[{{X}}]b", True),
        ("a{{X}}b", "{{X}}", "$`", "aab", True),
        ("a{{X}}b", "{{X}}", "$'", "abb", True),
        ("a{{X}}b", "{{X}}", "$1$<x>$", "a$1$<x>$b", False),  # stay literal
        ("ab", "{{X}}", "$$", "ab", False),
    ],
)
def test_replace(hay, needle, rep, out, changed):
    assert js.js_replace(hay, needle, rep) == (out, changed)


def test_dates_at_the_edges_of_the_js_range():
    # new Date(±8.64e15).toISOString()
    assert js.to_iso(8.64e15) == "+275760-09-13T00:00:00.000Z"
    assert js.to_iso(-8.64e15) == "-271821-04-20T00:00:00.000Z"
    assert js.date_parse("-271821-04-20T00:00:00Z") == -8.64e15
    assert js.to_iso(-62135596800001) == "0000-12-31T23:59:59.999Z"
    assert js.date_parse("2024-02-29T23:59:59.999Z") == 1709251199999


def test_fast_stringify_path_agrees_with_the_reference_path():
    """js_stringify hands plain values to orjson; it must print exactly what the slow path prints."""
    import random

    r = random.Random(7)
    alphabet = [chr(c) for c in [*range(0, 0x80), 0x85, 0xA0, 0x2028, 0x2029, 0xFEFF, 0xE9, 0x4E2D, 0x1F600, 0xD800]]

    def value(depth=0):
        kind = r.randrange(8 if depth < 3 else 5)
        if kind == 0:
            return "".join(r.choice(alphabet) for _ in range(r.randrange(10)))
        if kind == 1:
            return r.choice([None, True, False])
        if kind == 2:
            return r.choice([r.randint(-(2**60), 2**60), r.randint(-1000, 1000)])
        if kind == 3:
            return r.choice([0.5, 1.0, -0.0, 1e21, 1e-7, 3.14159])
        if kind == 4:
            return "plain"
        if kind == 5:
            return [value(depth + 1) for _ in range(r.randrange(4))]
        keys = ["a", "b", "1", "01", "command", "x\u2028"]
        return {r.choice(keys): value(depth + 1) for _ in range(r.randrange(4))}

    for _ in range(3000):
        v = value()
        assert js.js_stringify(v) == js._stringify(v), v


def test_json_parse_deep_agrees_with_json_parse():
    import json
    import random

    r = random.Random(17)
    atoms = ['"a"', '"\\ud83d"', '"\\u00e9x"', "0", "-0", "1.5e3", "12345678901234567890123", "true", "false", "null", '""']

    def value(depth=0):
        k = r.random()
        if depth > 4 or k < 0.4:
            return r.choice(atoms)
        if k < 0.7:
            return "[" + r.choice(["", " "]) + ",".join(value(depth + 1) for _ in range(r.randint(0, 3))) + "]"
        return "{" + ", ".join(f'"k{r.randint(0, 3)}" : {value(depth + 1)}' for _ in range(r.randint(0, 3))) + "}"

    for _ in range(500):
        doc = value()
        if r.random() < 0.3:  # damage it: both must refuse the same documents
            i = r.randrange(len(doc) + 1)
            doc = doc[:i] + r.choice([",", "]", "}", ":", "x", "", " "]) + doc[i + 1 :]
        try:
            want = ("ok", json.dumps(js.json_parse(doc)))
        except ValueError:
            want = ("error",)
        try:
            got = ("ok", json.dumps(js.json_parse_deep(doc)))
        except ValueError:
            got = ("error",)
        assert got == want, doc
    assert js.json_parse_deep("[" * 100_000 + "]" * 100_000) is not None
    for bad in ("NaN", "[Infinity]", "\ufeff{}", "[1,]", '{"a":1,}', "", "[", '{"a"}', "{} x"):
        with pytest.raises(ValueError):
            js.json_parse_deep(bad)


def _nested(depth: int):
    """A value nested `depth` deep (lists and objects alternating) and its JSON.stringify text."""
    value, text = "leaf", '"leaf"'
    for i in range(depth):
        value, text = ({"k": value}, '{"k":' + text + "}") if i % 2 else ([value], "[" + text + "]")
    return value, text


@pytest.mark.parametrize("depth", [300, 2_000, 10_000, js.STRINGIFY_MAX_DEPTH])
def test_stringify_any_depth_without_the_recursion_limit(depth):
    """JSC's JSON.stringify (Bun) keeps open containers on its own stack: 10,000 levels render
    (node --stack-size=20000 gives the same text); Python's recursion limit is about 1,000."""
    value, text = _nested(depth)
    assert js.js_stringify(value) == text


def test_stringify_deeper_than_jsc_is_a_range_error():
    value, _ = _nested(js.STRINGIFY_MAX_DEPTH + 1)
    with pytest.raises(js.StringifyDepthError):
        js.js_stringify(value)
