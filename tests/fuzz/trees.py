"""Whole sessions roots: a drawn plan, built on disk, with what a run must report for each entry.

A plan holds sessions (project folder, file name, lines, subagents with sidecars) and hostile
entries: names that are not UTF-8 or that a spreadsheet would run, FIFOs, `/dev/zero`, links
inside the root, out of it and to its ancestors, `chmod 000` files and folders (only when the
CLI runs unprivileged, see `drive.permissions_bite`), orphan `subagents/` folders, files dated
before 1970. `build` writes it under a base folder (the root, an `outside/` folder that links
point at, a `bystander/` folder nothing may touch) and returns the expectations: the sessions a
run must measure (or report), and the errors rows it must write.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from .drive import shown_path
from .mutations import Line, expected_kinds, file_bytes, mutated_transcript
from .records import AGENT_IDS, NAME_CANARY, pick
from .sidecars import Sidecar, sidecars

T0_S = 1_780_000_000
NAME_BITS = (b"", b"", b"\xff\xfe", b" ", b"\n", b"=HYPERLINK(1)", b"'", b'"', b",", "é日".encode(), b"-", b"\\", b"%s")
UNREADABLE_RE = r"(?i)unreadable|permission|cannot (read|open|list)|could not be read"
SESSION_SPECIALS = ("fifo", "outside_link", "inside_link", "dangling", "empty", "pre_epoch", "legacy", "subagents_to_ancestor",
                    "subagents_to_root", "subagents_outside_dir")
PERM_SPECIALS = ("unreadable",)
SUB_SPECIALS = ("fifo", "devzero", "outside_link", "fifo_sidecar", "outside_sidecar")
SUB_PERM_SPECIALS = ("unreadable", "unreadable_sidecar")


@dataclass(frozen=True)
class Sub:
    """A subagent transcript under `<session>/subagents/` (`name` may hold folders)."""

    name: bytes
    body: tuple[Line, ...]
    sidecar: Sidecar | None = None
    special: str | None = None


@dataclass(frozen=True)
class SessionPlan:
    project: bytes
    name: bytes  # the file name without .jsonl
    body: tuple[Line, ...]
    subs: tuple[Sub, ...] = ()
    special: str | None = None


@dataclass(frozen=True)
class TreePlan:
    root_name: bytes
    sessions: tuple[SessionPlan, ...]
    orphans: tuple[tuple[bytes, bytes], ...] = ()  # (project, session name) with subagents/ but no parent
    unreadable_projects: tuple[bytes, ...] = ()  # project folders made chmod 000 (holding one session)

    @property
    def size(self) -> int:
        return len(self.sessions) + len(self.orphans) + len(self.unreadable_projects)


@dataclass(frozen=True)
class Row:
    """An errors row a run must write: its path, and what it must say."""

    path: str
    why: str
    kinds: tuple[str, ...] = ()  # empty: any kind
    reason: str | None = None  # a regex the reason must match (with `kinds`, either one suffices)
    exactly_one: bool = False
    unless_measured: bool = False  # a session the run may measure instead of reporting
    session: str | None = None  # the session whose reading finds it (moot if that session hit an internal_error)


@dataclass
class Built:
    base: Path
    root: Path
    outside: Path
    bystander: Path
    measured: dict[str, str] = field(default_factory=dict)  # shown session path -> what it is
    rows: list[Row] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)  # shown session path -> file, for later edits
    failing: set[str] = field(default_factory=set)  # sessions akm's readSession must throw on (a subagent nobody may read)
    loose: set[str] = field(default_factory=set)  # sessions whose own rows are moot (their subagents/ leads back into the root)


# --- strategies -------------------------------------------------------------------------------


_NAME_PARTS = st.tuples(st.sampled_from(NAME_BITS), st.sampled_from(NAME_BITS), st.integers(0, 99))
_PLAIN_PARTS = st.tuples(st.just(b""), st.just(b""), st.integers(0, 99))


def names(prefix: bytes, odd: bool = True) -> st.SearchStrategy[bytes]:
    """File and folder names with the name canary, and (when `odd`) bytes that are odd or not UTF-8."""
    return (_NAME_PARTS if odd else _PLAIN_PARTS).map(lambda t: prefix + t[0] + NAME_CANARY.encode() + t[1] + str(t[2]).encode())


@st.composite
def subagents(draw, perms: bool) -> Sub:
    agent = pick(draw, AGENT_IDS)
    where = pick(draw, [b"", b"", b"", b"workflows/wf1/", b"\xff\xfedir/", b"nested/deeper/"])
    name = where + b"agent-" + agent.encode() + pick(draw, [b"", b"x", b"\xff"]) + b".jsonl"
    specials = SUB_SPECIALS + (SUB_PERM_SPECIALS if perms else ())
    special = draw(st.one_of(st.none(), st.none(), st.none(), st.sampled_from(specials)))
    sidecar = draw(st.one_of(st.none(), sidecars()))
    return Sub(name, draw(mutated_transcript(1, 5, subagent=agent)), sidecar, special)


@st.composite
def sessions(draw, project: bytes, perms: bool, max_subs: int = 3, slash: bool = False, odd: bool = True) -> SessionPlan:
    specials = SESSION_SPECIALS + (PERM_SPECIALS if perms else ()) + (("subagents_to_slash",) if slash and draw(st.integers(0, 9)) == 0 else ())
    special = draw(st.one_of(st.none(), st.none(), st.none(), st.sampled_from(specials)))
    name = draw(names(b"agent-" if special == "legacy" else b"", odd))
    subs = tuple(draw(st.lists(subagents(perms), max_size=max_subs, unique_by=lambda s: s.name)))
    return SessionPlan(project, name, draw(mutated_transcript(1, 8)), subs, special)


@st.composite
def tree_plans(draw, perms: bool = False, max_projects: int = 3, max_sessions: int = 4, slash: bool = False,
               min_sessions: int = 1) -> TreePlan:
    """A root: projects of sessions (at least `min_sessions` in each), an orphan `subagents/`
    now and then, a locked project folder when permissions bite. One root in three has plain
    names only, so that what odd names break does not hide everything else."""
    odd = draw(st.integers(0, 2)) > 0
    projects = draw(st.lists(names(b"-home-", odd), min_size=1, max_size=max_projects, unique=True))
    planned = []
    for p in projects:
        planned += draw(st.lists(sessions(p, perms, slash=slash, odd=odd), min_size=min_sessions, max_size=max(min_sessions, max_sessions),
                                 unique_by=lambda s: s.name))
    orphans = tuple(draw(st.lists(st.tuples(st.sampled_from(projects), names(b"gone", odd)), max_size=1)))
    locked = tuple(draw(st.lists(names(b"-locked-", odd), max_size=1 if perms else 0)))
    return TreePlan(pick(draw, [b"projects", NAME_CANARY.encode() + b"root"]), tuple(planned), orphans, locked)


# --- building -------------------------------------------------------------------------------


def _write(path: bytes, data: bytes, mtime_s: int = T0_S) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.utime(path, (mtime_s, mtime_s))


def rel(built: Built, path: bytes) -> str:
    return shown_path(os.path.relpath(path, os.fsencode(built.root)))


def expect_lines(built: Built, path: bytes, body: tuple[Line, ...], session: str) -> None:
    for kind in sorted(expected_kinds(body)):
        built.rows.append(Row(rel(built, path), f"a line made {kind}", (kind,), session=session))


def build(plan: TreePlan, base: Path) -> Built:
    """Write `plan` under `base` (which must exist and be empty); returns what a run must report."""
    root = base / os.fsdecode(plan.root_name)
    built = Built(base, root, base / "outside", base / "bystander")
    for d in (root, built.outside, built.bystander):
        d.mkdir(parents=True)
    (built.bystander / "notes.txt").write_text("the analyst's own file\n")
    (built.outside / "agent-aout.jsonl").write_bytes(b'{"type":"user","message":{"role":"user","content":"outside"}}\n')
    (built.outside / "meta.json").write_bytes(b'{"agentType":"outsidetype","description":"outside"}')
    rb = os.fsencode(root)
    for i, s in enumerate(plan.sessions):
        _build_session(built, rb, s, i)
    for project, name in plan.orphans:
        sub = os.path.join(rb, project, name, b"subagents")
        _write(os.path.join(sub, b"agent-orphan.jsonl"), b'{"type":"user","message":{"role":"user","content":"o"}}\n')
        built.rows.append(Row(rel(built, sub), "a subagents folder whose parent is gone", ("orphan_subagents",)))
    for project in plan.unreadable_projects:
        d = os.path.join(rb, project)
        _write(os.path.join(d, b"hidden.jsonl"), b'{"type":"user","message":{"role":"user","content":"h"}}\n')
        os.chmod(d, 0)
        built.rows.append(Row(rel(built, d), "a project folder nobody may list", reason=UNREADABLE_RE))
    return built


def _build_session(built: Built, rb: bytes, s: SessionPlan, i: int) -> None:
    parent = os.path.join(rb, s.project, s.name + b".jsonl")
    shown = rel(built, parent)
    data = file_bytes(s.body)
    readable = True
    if s.special == "fifo":
        os.makedirs(os.path.dirname(parent), exist_ok=True)
        os.mkfifo(parent)
        built.rows.append(Row(shown, "a FIFO named like a session", ("not_a_file", "unreadable"), exactly_one=True))
        readable = False
    elif s.special == "outside_link":
        target = os.path.join(os.fsencode(built.outside), b"sess%d.jsonl" % i)
        _write(target, data)
        os.makedirs(os.path.dirname(parent), exist_ok=True)
        os.symlink(target, parent)
        built.rows.append(Row(shown, "a session linked from outside the root", ("outside_link",), session=shown))
    elif s.special == "inside_link":
        target = os.path.join(rb, s.project, b"target%d.jsonl" % i)
        _write(target, data)
        built.measured[rel(built, target)] = "the target of an inside link"
        os.symlink(os.path.basename(target), parent)
    elif s.special == "dangling":
        os.makedirs(os.path.dirname(parent), exist_ok=True)
        os.symlink(b"nowhere.jsonl", parent)
        built.rows.append(Row(shown, "a dangling link named like a session"))
        readable = False
    elif s.special == "empty":
        _write(parent, b"")
    elif s.special == "pre_epoch":
        _write(parent, data, mtime_s=-86_400 * 400)
        built.rows.append(Row(shown, "a session dated before 1970 (akm's listSessions skips mtime < sinceMs = 0)",
                              unless_measured=True))
        readable = False  # measured or reported: the row above is what is required
    elif s.special == "unreadable":
        _write(parent, data)
        os.chmod(parent, 0)
        built.rows.append(Row(shown, "a session nobody may read", ("unreadable",), UNREADABLE_RE))
        readable = False
    else:
        _write(parent, data)
    if readable:
        built.measured[shown] = s.special or "a session"
        if s.special not in ("outside_link", "inside_link"):  # a file of the root's own, safe to edit
            built.paths[shown] = Path(os.fsdecode(parent))
        if s.special != "empty":  # an empty file holds none of the body's lines
            expect_lines(built, parent, s.body, shown)
    sub_dir = os.path.join(rb, s.project, s.name, b"subagents")
    if s.special in ("subagents_to_ancestor", "subagents_to_root", "subagents_outside_dir", "subagents_to_slash"):
        target = {"subagents_to_ancestor": os.fsencode(built.base), "subagents_to_root": rb, "subagents_to_slash": b"/",
                  "subagents_outside_dir": os.fsencode(built.outside)}[s.special]
        os.makedirs(os.path.dirname(sub_dir), exist_ok=True)
        os.symlink(target, sub_dir)
        if s.special == "subagents_outside_dir":
            built.rows.append(Row(rel(built, os.path.join(sub_dir, b"agent-aout.jsonl")), "a subagent read through a link out of the root",
                                  ("outside_link",), session=shown))
        else:  # every file of the root is then a subagent of this session, FIFOs and all
            built.loose.add(shown)
            built.rows.append(Row(rel(built, sub_dir), "a subagents link to the root or an ancestor of it (a loop, or far too much)"))
        return
    for sub in s.subs:
        _build_sub(built, sub_dir, sub, shown if readable else None)


def _build_sub(built: Built, sub_dir: bytes, sub: Sub, parent_shown: str | None) -> None:
    path = os.path.join(sub_dir, sub.name)
    meta = path[: -len(b".jsonl")] + b".meta.json"
    shown, meta_shown = rel(built, path), rel(built, meta)
    data = file_bytes(sub.body)
    read = parent_shown is not None
    if sub.special == "fifo":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.mkfifo(path)
        read and built.rows.append(Row(shown, "a FIFO named like a subagent", ("not_a_file",), session=parent_shown))
    elif sub.special == "devzero":
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(b"/dev/zero", path)
        read and built.rows.append(Row(shown, "a link to /dev/zero named like a subagent", ("not_a_file",), session=parent_shown))
    elif sub.special == "outside_link":
        target = os.path.join(os.fsencode(built.outside), b"sub-" + re.sub(rb"[^a-zA-Z0-9]", b"_", path[-40:]))
        _write(target, data)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)
        read and built.rows.append(Row(shown, "a subagent linked from outside the root", ("outside_link",), session=parent_shown))
    elif sub.special == "unreadable":
        _write(path, data)
        os.chmod(path, 0)
        if read:  # akm's readSession throws: the session is reported, not measured
            built.measured.pop(parent_shown, None)
            built.failing.add(parent_shown)
            built.rows.append(Row(parent_shown, "a session whose subagent nobody may read", ("unreadable",), UNREADABLE_RE,
                                  session=parent_shown))
    else:
        _write(path, data)
        read and expect_lines(built, path, sub.body, parent_shown)
    if sub.special == "fifo_sidecar":
        os.mkfifo(meta)
        read and built.rows.append(Row(meta_shown, "a FIFO sidecar", ("not_a_file",), session=parent_shown))
    elif sub.special == "outside_sidecar":
        os.symlink(os.path.join(os.fsencode(built.outside), b"meta.json"), meta)
        read and built.rows.append(Row(meta_shown, "a sidecar linked from outside the root", ("outside_link",), session=parent_shown))
    elif sub.sidecar is not None:
        _write(meta, sub.sidecar.data)
        if sub.special == "unreadable_sidecar":
            os.chmod(meta, 0)
            read and built.rows.append(Row(meta_shown, "a sidecar nobody may read", ("unreadable",), UNREADABLE_RE, session=parent_shown))
        elif sub.sidecar.broken and sub.special not in ("fifo", "devzero"):
            read and built.rows.append(Row(meta_shown, f"a broken sidecar ({sub.sidecar.how})", ("broken_sidecar",),
                                           session=parent_shown))
