"""Hostile command lines for `measure run` and `measure inspect`: odd values for every option.

An option set is a tuple of argv tokens; `{name}` in a token is a path of the case's work
folder (`setup` makes them): the root, the output, a FIFO, `/dev/zero`, a template that is
valid, lacks placeholders, is not UTF-8 or is a folder, a folder of the analyst's own files.
Integers run past 64 bits, into other scripts' digits, into floats; dates run off the
calendar; schedules ask for no moments or infinitely many; paths point into the root, into
`--out` or at special files. The Dask executor is left out (it starts a cluster).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from hypothesis import strategies as st

from .drive import REPO
from .jsontext import line

INTS = ("0", "-1", "1", "3", str(2**63), str(2**63 - 1), str(2**64), str(2**31), "9" * 400, "1e3", "0x10", " 5", "٣",
        "1_000", "+5", "", "nan", "inf", "-0", "080", str(2**63), str(2**64), "9" * 30)  # past 64 bits: twice as likely
DATES = ("2026-01-01", "0001-01-01", "9999-12-31", "20260101", "2026-02-30", "1970-01-01T00:00:00", "", "1969-12-31",
         "2026-1-1", "tomorrow")
SCHEDULES = ("turn_end", "final", "every:0", "every:-1", "every:1e400", "every:nan", "every:1e-300", "every:", "every:inf",
             "every:1", "every:5", "every:1e308", "sometimes")
SESSIONS = ("", "-", "nomatch", "../../etc/passwd", "/etc/passwd", "s", "-home-a", "-home-a/s1.jsonl", "s1", "*", "\udcff",
            "{root}/-home-a/s1.jsonl", "-home-a/s1/subagents/agent-a1.jsonl")
TEMPLATES = ("{tpl}", "{fifo}", "/dev/zero", "{folder}", "{nowhere}", "{plain}", "{no_placeholders}", "{not_utf8}",
             "{dollars_tpl}", "/dev/null")
CACHE_DIRS = ("{cache}", "{out}/c", "{out}", "{root}/c", "{root}", "{plain}", "/dev/null", "{foreign}", "{fifo}",
              "{cache}/a/b/c/d")
OUTS = ("{root}/out", "{root}", "{base}", "{plain}", "{foreign}", "/dev/null", "{out}/x/y/z",
        "{link_to_out}")


BENIGN = (("--jobs", "1"), ("--jobs", "2"), ("--quiet",), ("--redact",), ("--max-total-chars", "40000"), ("--replay",),
          ("--budgets", "1000,2000"), ("--no-cache",), ("--cache-dir", "{cache}"), ("--session-cap", "3"), ("--show-excerpts",),
          ("--walk-order", "fs"), ("--max-event-chars", "500"))
INSPECT_BENIGN = (("--json",), ("--show-prompt",), ("--strategy", "fold"), ("--max-total-chars", "40000"))


def _value_option(name: str, values) -> st.SearchStrategy[tuple[str, ...]]:
    return st.builds(lambda v, joined: (f"{name}={v}",) if joined else (name, v), st.sampled_from(values), st.booleans())


_HOSTILE_RUN = st.one_of(
    _value_option("--max-total-chars", INTS), _value_option("--max-event-chars", INTS),
    _value_option("--session-cap", INTS), _value_option("--jobs", INTS), _value_option("--pin-file-times", INTS),
    st.builds(lambda vs: ("--budgets", ",".join(vs)), st.lists(st.sampled_from(INTS), min_size=1, max_size=3)),
    st.builds(lambda vs: ("--budgets", *vs), st.lists(st.sampled_from(INTS), min_size=1, max_size=3)),
    _value_option("--since", DATES), st.builds(lambda v: ("--replay", f"--replay-at={v}"), st.sampled_from(SCHEDULES)),
    _value_option("--walk-order", ("fs", "name", "bogus")), _value_option("--session", SESSIONS),
    _value_option("--template", TEMPLATES), _value_option("--cache-dir", CACHE_DIRS), _value_option("--out", OUTS),
    st.sampled_from([("--scheduler", "tcp://127.0.0.1:1"), ("--bugets", "5"), ("--executor", "nowhere")]),
)
_HOSTILE_INSPECT = st.one_of(
    _value_option("--max-total-chars", INTS), _value_option("--max-event-chars", INTS),
    _value_option("--template", TEMPLATES), _value_option("--strategy", ("fold", "link", "nope", "")),
)


@st.composite
def run_options(draw) -> tuple[str, ...]:
    """`measure run --root {root} --out {out}`, one or two hostile options, a few ordinary ones."""
    argv = ["run", "--root", "{root}", "--out", "{out}"]
    for extra in draw(st.lists(_HOSTILE_RUN, min_size=1, max_size=2)) + draw(st.lists(st.sampled_from(BENIGN), max_size=2)):
        argv += extra
    return tuple(argv)


@st.composite
def inspect_options(draw) -> tuple[str, ...]:
    argv = ["inspect", draw(st.sampled_from(["{root}/-home-a/s1.jsonl", "{root}/-home-a/s1.jsonl", "{fifo}", "/dev/zero",
                                             "{folder}", "{nowhere}", "{plain}", "{root}/-home-a/s1/subagents/agent-a1.jsonl"]))]
    for extra in draw(st.lists(_HOSTILE_INSPECT, max_size=2)) + draw(st.lists(st.sampled_from(INSPECT_BENIGN), max_size=2)):
        argv += extra
    return tuple(argv)


def option_sets() -> st.SearchStrategy[tuple[str, ...]]:
    return st.one_of(run_options(), run_options(), run_options(), inspect_options())


def setup(base: Path) -> dict[str, str]:
    """Make the files the placeholders name, under `base`; returns the substitutions."""
    root = base / "root"
    s1 = root / "-home-a" / "s1.jsonl"
    sub = root / "-home-a" / "s1" / "subagents"
    sub.mkdir(parents=True)
    prompt = {"type": "user", "timestamp": "2026-05-01T10:00:01.000Z", "message": {"role": "user", "content": "please look at the build"}}
    answer = {"type": "assistant", "timestamp": "2026-05-01T10:00:02.000Z",
              "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 3}}}
    s1.write_bytes(line(prompt) + b"\n" + line(answer) + b"\n")
    (sub / "agent-a1.jsonl").write_bytes(line(prompt) + b"\n")
    (root / "-home-a" / "s2.jsonl").write_bytes(line(prompt) + b"\n")
    template = REPO / "measure" / "akm" / "templates" / "extract-session.md"
    shutil.copy(template, base / "tpl.md")
    (base / "dollars.md").write_text(template.read_text(encoding="utf-8") + "\n$& $' $` $$\n", encoding="utf-8")
    (base / "no-placeholders.md").write_text("nothing to substitute\n")
    (base / "not-utf8.md").write_bytes(template.read_bytes() + b"\xff\xfe\n")
    (base / "plain.txt").write_text("a file\n")
    (base / "folder").mkdir()
    (base / "foreign").mkdir()
    (base / "foreign" / "notes.txt").write_text("the analyst's own notes\n")
    os.mkfifo(base / "fifo")
    os.symlink(base / "out-real", base / "link-to-out")
    (base / "out-real").mkdir()
    return {"root": str(root), "out": str(base / "out"), "base": str(base), "fifo": str(base / "fifo"),
            "tpl": str(base / "tpl.md"), "dollars_tpl": str(base / "dollars.md"), "no_placeholders": str(base / "no-placeholders.md"),
            "not_utf8": str(base / "not-utf8.md"), "plain": str(base / "plain.txt"), "folder": str(base / "folder"),
            "nowhere": str(base / "nowhere" / "x.md"), "foreign": str(base / "foreign"), "cache": str(base / "cache"),
            "link_to_out": str(base / "link-to-out")}


def resolve(argv: tuple[str, ...], paths: dict[str, str]) -> list[str]:
    out = []
    for token in argv:
        for name, path in paths.items():
            token = token.replace("{" + name + "}", path)
        out.append(token)
    return out
