"""Deterministic generator of realistic Claude Code sessions roots (`~/.claude/projects`), plus corpus statistics."""

from __future__ import annotations

import argparse
import heapq
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import orjson

# ============================================================================================
# Word pools. Text is assembled from these so that unrelated events share few words (the
# #840 duplicate study measures word-set Jaccard; real unrelated pairs sit near 0.03).
# ============================================================================================

NOUNS = tuple(
    """
    cache session transcript parser registry handler worker queue scheduler index snapshot
    checkpoint migration schema router endpoint middleware token budget window chunk buffer
    stream socket payload manifest fixture harness pipeline reducer adapter provider resolver
    encoder decoder iterator cursor ledger journal bucket shard replica lease mutex semaphore
    channel watcher poller daemon plugin hook sidecar artifact bundle crate package module
    namespace context config setting flag option profile credential secret permission policy
    quota limit timeout retry backoff deadline heartbeat metric counter histogram gauge trace
    span event signal callback promise future thread fiber goroutine process container image
    volume mount cluster node edge graph vertex tree heap stack tuple record struct enum variant
    trait interface protocol contract invariant assertion benchmark flamegraph regression
    coverage mutation entry header footer prefix suffix offset length column field attribute
    property selector template layout component fragment renderer viewport canvas palette theme
    locale timezone timestamp duration interval epoch calendar cron job task batch backlog
    milestone release changelog version tag branch commit diff patch hunk conflict rebase merge
    remote upstream origin fork clone worktree submodule vendor lockfile dependency toolchain
    compiler linker loader bytecode opcode register allocator collector finalizer destructor
    constructor factory builder visitor observer emitter subscriber publisher broker topic
    partition consumer producer offsetter watermark tombstone compaction eviction retention
    expiry ttl lru shardmap bloomfilter digest checksum signature nonce salt cipher keypair
    certificate handshake session_id cookie header_map query mutation resolver_map loader_fn
    request response status payload_size latency throughput saturation backpressure fanout
    fanin debounce throttle jitter ratelimit circuit breaker bulkhead fallback sentinel
    canary rollout rollback feature toggle experiment cohort segment funnel dashboard alert
    incident postmortem runbook oncall pager escalation ticket epic story subtask reviewer
    approver maintainer contributor owner auditor tenant workspace organization project
    repository monorepo crate_graph workspace_root sandbox jail seccomp capability namespace_id
    cgroup inode descriptor pipe fifo signal_mask syscall ioctl mmap page frame slab arena
    allocator_pool refcount borrow lifetime closure generator coroutine continuation thunk
    macro annotation decorator pragma directive preprocessor linter formatter typechecker
    transpiler bundler minifier sourcemap polyfill shim wrapper facade proxy gateway ingress
    egress firewall subnet vpc loadbalancer dns resolver_cache nameserver certificate_chain
    """.split()
)

VERBS = tuple(
    """
    check update refactor extract inline rename split merge validate parse render serialize
    flush compact rotate prune evict dedupe fold link chunk hash sign verify retry throttle
    batch stream spawn join await cancel restore migrate seed mock stub patch bump pin vendor
    lint format bisect revert rebase squash tag release deploy rollback provision teardown
    bootstrap initialize register unregister subscribe publish enqueue dequeue schedule
    reschedule debounce memoize cache invalidate hydrate dehydrate normalize denormalize
    sanitize escape unescape encode decode compress decompress encrypt decrypt authenticate
    authorize audit trace instrument profile benchmark measure sample aggregate summarize
    annotate tokenize lex scan index reindex backfill replay reconcile diff apply commit
    stage unstage checkout cherrypick clone fetch pull push prefetch preload warm drain
    quiesce pause resume snapshot restore archive unarchive export import upload download
    """.split()
)

PAST = tuple(
    """
    checked updated refactored extracted inlined renamed split merged validated parsed
    rendered serialized flushed compacted rotated pruned evicted deduped folded linked
    chunked hashed signed verified retried throttled batched streamed spawned joined awaited
    cancelled restored migrated seeded mocked stubbed patched bumped pinned vendored linted
    formatted reverted rebased squashed tagged released deployed provisioned bootstrapped
    initialized registered subscribed published enqueued scheduled memoized invalidated
    hydrated normalized sanitized escaped encoded decoded compressed authenticated authorized
    audited traced instrumented profiled measured sampled aggregated summarized annotated
    tokenized scanned indexed backfilled replayed reconciled applied committed staged fetched
    pushed preloaded drained paused resumed archived exported imported uploaded downloaded
    """.split()
)

ADJS = tuple(
    """
    stale flaky redundant missing nested orphaned truncated deterministic idempotent
    concurrent lazy eager recursive incremental atomic partial verbose noisy brittle robust
    unbounded bounded transient persistent ephemeral durable volatile immutable mutable
    synchronous asynchronous blocking nonblocking reentrant threadsafe racy leaky expensive
    cheap quadratic linear constant amortized sparse dense sorted unsorted stable unstable
    deprecated experimental internal external public private implicit explicit optional
    required malformed canonical legacy modern upstream downstream primary secondary cold
    warm hot dirty clean pending failed succeeded skipped ignored duplicated unique shared
    exclusive global local scoped unscoped generic concrete abstract virtual physical logical
    encrypted plaintext signed unsigned compressed raw cached uncached fresh outdated
    """.split()
)

GLUE = tuple(
    """
    the the the the a a a an and and and or but so then also only still already instead
    because since while when where which that this these those with without within across
    into onto from after before during until unless though although whether every each
    some most many several few more less both either neither other another same different
    here there now later again once twice usually rarely never always sometimes probably
    """.split()
)

# Phrases a coding agent repeats across sessions (real transcripts share these too).
OPENERS = (
    "Let me check",
    "Let me look at",
    "Now let me read",
    "I'll start by reading",
    "Let me run",
    "Now I'll update",
    "Good, now let me verify",
    "Let me search for",
    "I need to understand",
    "Next, I'll fix",
    "Let me look more closely at",
    "Now I have enough context to change",
    "First, I'll inspect",
    "Let me re-run",
    "Let me find where",
)

HEADINGS = (
    "Summary", "Findings", "Critical Issues", "Important", "Minor", "Suggestions",
    "Architecture", "Data Flow", "Error Handling", "Test Coverage", "Performance",
    "Security", "Concurrency", "Open Questions", "Recommendation", "Verdict",
    "What I Checked", "Files Reviewed", "Risks", "Next Steps", "Root Cause", "Evidence",
    "Proposed Fix", "Edge Cases", "Migration Notes", "API Surface", "Observability",
)

SEVERITY = ("Critical", "Important", "Minor", "Nit", "Question")

# Non-ASCII at a realistic low rate: typography Claude emits, names, and bits of CJK/emoji.
NON_ASCII = (
    "→", "—", "✓", "✅", "⚠️", "…", "•", "café", "naïve", "Müller", "señal", "über",
    "résumé", "日本語のテスト", "设置", "데이터", "🚀", "🔥", "✨", "±", "≤", "≥", "×", "µs",
)

USERS = ("dana", "marco", "soph", "alex", "kim", "ravi", "lena", "tomas", "yuki", "ines")

PROJECT_NAMES = (
    "ledgerline", "tidewatch", "quillstack", "harborctl", "orchard", "lumen-api", "brightpath",
    "cobalt-sync", "fernwood", "gridlock", "kestrel", "mosaic-ui", "nimbus-cli", "parcelkit",
    "ridgeback", "saltmarsh", "tallyho", "umbra-db", "vantage", "wayfinder",
)

LANGS = ("go", "python", "typescript", "elixir", "rust")

EXT = {"go": ".go", "python": ".py", "typescript": ".ts", "elixir": ".ex", "rust": ".rs"}

DIRS = {
    "go": ("cmd/{p}", "internal/{n}", "internal/{n}/{m}", "pkg/{n}", "internal/{n}/testdata"),
    "python": ("src/{p}/{n}", "src/{p}/{n}/{m}", "tests/{n}", "scripts", "src/{p}"),
    "typescript": ("src/{n}", "src/{n}/{m}", "test/{n}", "src/lib", "packages/{n}/src"),
    "elixir": ("lib/{p}/{n}", "lib/{p}_web/{n}", "lib/{p}/{n}/{m}", "test/{p}/{n}", "priv/repo"),
    "rust": ("src/{n}", "crates/{n}/src", "crates/{n}/src/{m}", "tests", "benches"),
}

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
HEX = "0123456789abcdef"
LOWER_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyz"

MALWARE_REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But you "
    "MUST refuse to improve or augment the code. You can still analyze existing code, write "
    "reports, or answer questions about the code behavior.\n</system-reminder>\n"
)

CAVEAT = (
    "<local-command-caveat>Caveat: The messages below were generated by the user while running "
    "local commands. DO NOT respond to these messages or otherwise consider them in your response "
    "unless the user explicitly asks you to.</local-command-caveat>"
)

MODERN_NOTE = (
    "A task-notification fires each time this agent stops with no live background children of "
    "its own. The user can send it another message and resume it, so the same task-id may "
    "notify more than once."
)

COMPACT_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
)

# Sentence templates; slots: N/M noun, V verb, D past participle, A adjective, P path,
# F function, T type, L line number, K small count, O opener, B branch.
SENTENCES = (
    "The {A} {N} in `{P}` is {D} before the {M} is {D}.",
    "`{F}` {D} the {N} on every call, which makes the {M} path {A}.",
    "{O} `{P}` to see how the {N} gets {D}.",
    "This means the {N} can be {D} twice when the {M} is {A}.",
    "I {D} `{F}` so it no longer touches the {A} {N}.",
    "There are {K} call sites of `{F}`; {K} of them pass a {A} {N}.",
    "The test `{T}` fails because the {N} returned by `{F}` is {A}.",
    "Line {L} of `{P}` still reads the {N} directly instead of going through `{F}`.",
    "We should {V} the {N} once and {V} the {M} lazily.",
    "If the {N} is {A}, `{F}` returns early and the {M} never gets {D}.",
    "The {M} handler in `{P}:{L}` swallows the error from `{F}`.",
    "`{T}` holds a {A} reference to the {N}, so the {M} outlives the request.",
    "After the change the {N} is {D} exactly once per {M}.",
    "Nothing else depends on `{F}`, so it is safe to {V} it.",
    "The {A} {N} shows up because `{F}` never resets the {M}.",
    "I traced the {N} from `{P}` through `{F}` to the {M}.",
    "Running the suite again: {K} passed, {K} failed, all in `{P}`.",
    "The {N} config lives in `{P}`; the {M} default is {A}.",
    "Moving the {N} behind `{T}` keeps the {M} {A}.",
    "`{F}` and `{F}` both {V} the {N}; only one of them should.",
    "The {A} case is when the {N} is empty and the {M} is {D}.",
    "This is the only place the {N} is {D} outside `{P}`.",
    "I'd keep `{F}` but {V} its {N} argument.",
    "On branch `{B}` the {N} is already {D}, so this is a {A} {M}.",
    "The {M} retries {K} times with a {A} {N} between attempts.",
    "`{P}` imports `{T}` only for the {N}; that import can go.",
    "The benchmark shows the {N} dominating, about {K}x slower than the {M}.",
    "Both call paths end in `{F}`, which assumes a {A} {N}.",
    "The {N} is {D} under a lock, but the {M} is read without one.",
    "I could not reproduce the {A} {N} locally; CI shows it {K} times in {K} runs.",
    "Renaming `{F}` touches {K} files, mostly under `{P}`.",
    "The {N} schema changed in `{P}`, so the {M} migration must run first.",
    "That {N} was {D} by the previous commit, which is why the {M} is {A} now.",
    "It looks {A}: the {N} and the {M} disagree after a restart.",
    "The docs for `{T}` say the {N} is {A}, the code says otherwise.",
)

HUMAN_PROMPTS = (
    "can you {V} the {N} in {P}?",
    "the {N} tests are failing again, can you look",
    "why does `{F}` {V} the {M} twice?",
    "review the {N} changes on this branch before I open the PR",
    "implement the {A} {N} we discussed, start with {P}",
    "{V} the {N} and then run the tests",
    "ok that works. now {V} the {M} too",
    "there's a {A} {N} somewhere in {P}, find it",
    "commit this",
    "looks good, push it",
    "can we make the {N} {A}? it is {A} right now",
    "what happens to the {M} when the {N} is {A}?",
    "use subagents to review {N}, {M} and the tests in parallel",
    "continue",
    "the {N} in prod is {A} again, here is the log",
    "add tests for `{F}`",
    "undo the last change to {P}",
    "explain how the {N} gets from `{F}` to the {M}",
    "split {P} into smaller modules",
    "run the linter and fix what it finds",
)

DESCRIPTIONS = (
    "Review {N} {M} changes", "Explore {N} code", "Audit {A} {N} handling", "Find {N} callers",
    "Review {N} for over-engineering", "Security review of {N}", "Check {M} test coverage",
    "Trace {N} through {M}", "Map {N} dependencies", "Investigate {A} {N}",
    "Review {M} error handling", "Altitude review of {N}", "Summarize {N} design",
    "Benchmark {N} {M}", "Review sync {N} machinery", "Verify {N} fix",
)

# Code is emitted as blocks: an opening line, a few body lines, a closing line.
CODE_TEMPLATES = {
    "go": {
        "open": ("func ({r} *{T}) {F}(ctx context.Context, {v} {t}) ({t}, error) {{", "func {F}({v} {t}) error {{",
                 "type {T} struct {{", "func Test{T}(t *testing.T) {{"),
        "body": ("\tif err := {r}.{f}(ctx, {v}); err != nil {{\n\t\treturn nil, fmt.Errorf(\"{w} {w}: %w\", err)\n\t}}",
                 "\t{v} := make(map[string]{t}, len({v}))", "\tfor _, {v} := range {v} {{\n\t\t{v} = append({v}, {v})\n\t}}",
                 "\t// {c}", "\t{r}.mu.Lock()\n\tdefer {r}.mu.Unlock()", "\t{V} {t} `json:\"{w}\"`",
                 "\tif len({v}) > {n} {{\n\t\treturn {v}, nil\n\t}}", "\t{v}, err := {f}(ctx, {v})"),
        "close": ("\treturn {v}, nil\n}}", "}}", "\treturn nil\n}}"),
    },
    "python": {
        "open": ("def {f}(self, {v}: {t}) -> {t}:", "def {f}({v}: {t}, *, {v}: {t} = None) -> {t}:", "class {T}:",
                 "def test_{f}({v}):"),
        "body": ("    \"\"\"{c}\"\"\"", "    if {v} is None:\n        raise ValueError(\"{w} {w} missing\")",
                 "    {v} = self._{f}({v})", "    for {v} in {v}:\n        {v}.append({v})", "    # {c}",
                 "    with self._lock:\n        self.{v}[{v}] = {n}", "    logger.debug(\"{w} %s\", {v})",
                 "    assert {f}({v}) == {n}"),
        "close": ("    return {v}", "    return None", "    raise NotImplementedError"),
    },
    "typescript": {
        "open": ("export async function {f}({v}: {T}): Promise<{T}> {{", "export function {f}({v}: {t}): {t} {{",
                 "interface {T} {{", "describe(\"{f}\", () => {{"),
        "body": ("  const {v} = await {f}({v});", "  if (!{v}) {{\n    throw new Error(`{w} {w}: ${{{v}}}`);\n  }}",
                 "  // {c}", "  for (const {v} of {v}) {{\n    {v}.push({v});\n  }}", "  {v}: {t};",
                 "  {v}?: {t} | undefined;", "  if ({v}.length > {n}) return {v};", "  expect({f}({v})).toBe({n});"),
        "close": ("  return {{ ...{v}, {v} }};\n}}", "}}", "}});"),
    },
    "elixir": {
        "open": ("  def {f}(%{T}{{}} = {v}, {v}) do", "  defp {f}({v}) when is_binary({v}) do",
                 "defmodule {P2}.{T} do", "  test \"{f} {w}\" do"),
        "body": ("    {v}\n    |> Enum.map(&{f}/1)\n    |> Enum.reject(&is_nil/1)", "    # {c}",
                 "    case {T}.{f}({v}) do\n      {{:ok, {v}}} -> {{:ok, {v}}}\n      {{:error, reason}} -> Logger.warning(\"{w} {w}: #{{inspect(reason)}}\")\n    end",
                 "    Repo.transaction(fn -> {f}({v}) end)", "  @spec {f}({t}) :: {t}", "  alias {P2}.{T}",
                 "    assert {f}({v}) == {n}"),
        "close": ("  end", "  end", "end"),
    },
    "rust": {
        "open": ("pub fn {f}(&mut self, {v}: &{T}) -> Result<{T}, Error> {{", "fn {f}({v}: {t}) -> {t} {{",
                 "pub struct {T} {{", "#[test]\nfn {f}() {{"),
        "body": ("    let {v} = self.{f}({v})?;", "    if {v}.len() > {n} {{\n        return Err(Error::{T});\n    }}",
                 "    // {c}", "    for {v} in {v}.iter() {{\n        {v}.insert({v}.clone());\n    }}", "    {v}: {t},",
                 "    let {v}: Vec<{T}> = {v}.into_iter().collect();", "    assert_eq!({f}({v}), {n});"),
        "close": ("    Ok({v})\n}}", "}}", "    {v}\n}}"),
    },
}

TYPE_NAMES = {
    "go": ("string", "int", "[]byte", "error", "time.Duration", "*Config", "map[string]any"),
    "python": ("str", "int", "bytes", "Path", "dict[str, Any]", "list[str]", "float"),
    "typescript": ("string", "number", "boolean", "Buffer", "Record<string, unknown>", "Date"),
    "elixir": ("String.t()", "integer()", "map()", "list()", "keyword()", "atom()"),
    "rust": ("String", "u64", "usize", "Vec<u8>", "PathBuf", "Duration", "Option<String>"),
}

_SLOT = re.compile(r"\{([A-Za-z0-9]+)\}")


def _compile(template: str) -> tuple:
    """Split a template into literal/slot pieces once, so filling is a tight loop."""
    parts = []
    pos = 0
    for m in _SLOT.finditer(template):
        parts.append(template[pos:m.start()])
        parts.append(m.group(1))
        pos = m.end()
    parts.append(template[pos:])
    return tuple(parts)


def _compile_code(template: str) -> tuple:
    """Code templates use `{{`/`}}` for literal braces, as str.format does."""
    pieces = []
    out = []
    i = 0
    while i < len(template):
        ch = template[i]
        if template.startswith("{{", i):
            out.append("{")
            i += 2
        elif template.startswith("}}", i):
            out.append("}")
            i += 2
        elif ch == "{":
            j = template.index("}", i)
            pieces.append("".join(out))
            pieces.append(template[i + 1:j])
            out = []
            i = j + 1
        else:
            out.append(ch)
            i += 1
    pieces.append("".join(out))
    return tuple(pieces)


_SENTENCES = tuple(_compile(s) for s in SENTENCES)
_HUMAN = tuple(_compile(s) for s in HUMAN_PROMPTS)
_DESCRIPTIONS = tuple(_compile(s) for s in DESCRIPTIONS)
_CODE = {lang: {part: tuple(_compile_code(t) for t in ts) for part, ts in parts.items()} for lang, parts in CODE_TEMPLATES.items()}


def _snake(rng: random.Random, k: int) -> str:
    return "_".join(rng.choice(VERBS if i == 0 else NOUNS) for i in range(k))


def _camel(rng: random.Random, k: int) -> str:
    return "".join(rng.choice(NOUNS).replace("_", " ").title().replace(" ", "") for _ in range(k))


@dataclass(frozen=True)
class Project:
    """One fictional repository a session works in."""

    name: str
    language: str
    user: str
    cwd: str
    slug: str
    branches: tuple[str, ...]
    files: tuple[str, ...]
    functions: tuple[str, ...]
    types: tuple[str, ...]
    variables: tuple[str, ...]
    tests: tuple[str, ...]
    module: str


def slug_of(cwd: str) -> str:
    """Claude Code's project directory name: every non-alphanumeric character becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def make_project(rng: random.Random, name: str | None = None, language: str | None = None,
                 user: str | None = None, cwd: str | None = None) -> Project:
    name = name or rng.choice(PROJECT_NAMES)
    language = language or rng.choice(LANGS)
    user = user or rng.choice(USERS)
    if cwd is None:
        cwd = rng.choice((f"/Users/{user}/src/{name}", f"/home/{user}/projects/{name}",
                          f"/Users/{user}/work/{name}"))
    pkg = name.replace("-", "_")
    # Identifiers are drawn per project so two projects rarely share vocabulary.
    functions = tuple(sorted({_snake(rng, rng.choice((2, 2, 3))) for _ in range(260)}))
    if language in ("typescript", "go"):
        functions = tuple(f.split("_")[0] + "".join(p.title() for p in f.split("_")[1:]) for f in functions)
    types = tuple(sorted({_camel(rng, rng.choice((1, 2, 2, 3))) for _ in range(140)}))
    variables = tuple(sorted({rng.choice(NOUNS).split("_")[0] + rng.choice(("", "s", "_id", "_map", "_ref", "_count"))
                              for _ in range(120)}))
    files = set()
    ext = EXT[language]
    while len(files) < 90:
        d = rng.choice(DIRS[language]).format(p=pkg, n=rng.choice(NOUNS).split("_")[0], m=rng.choice(NOUNS).split("_")[0])
        stem = _snake(rng, rng.choice((1, 2))) if language != "typescript" else _snake(rng, 2).replace("_", "-")
        if "test" in d:
            stem = {"go": stem + "_test", "python": "test_" + stem, "typescript": stem + ".test",
                    "elixir": stem + "_test", "rust": stem}[language]
            e = ".exs" if language == "elixir" else ext
        else:
            e = ext
        files.add(f"{d}/{stem}{e}")
    files.update({"README.md", "Makefile", ".github/workflows/ci.yml", "CLAUDE.md",
                  {"go": "go.mod", "python": "pyproject.toml", "typescript": "package.json",
                   "elixir": "mix.exs", "rust": "Cargo.toml"}[language]})
    tests = tuple(sorted({"Test" + _camel(rng, 2) if language == "go" else "test_" + _snake(rng, 2)
                          for _ in range(40)}))
    branches = ("main",) + tuple(sorted({f"{rng.choice(USERS)}/{_snake(rng, 2).replace('_', '-')}" for _ in range(6)}))
    return Project(name=name, language=language, user=user, cwd=cwd, slug=slug_of(cwd),
                   branches=branches, files=tuple(sorted(files)), functions=functions,
                   types=types, variables=variables, tests=tests, module=pkg)


class TextForge:
    """Builds coding-agent text (prose, reports, code, shell output) for one project."""

    def __init__(self, rng: random.Random, project: Project, non_ascii_rate: float = 0.02, body_scale: float = 1.0):
        self.rng = rng
        self.body_scale = body_scale
        self.p = project
        self.non_ascii_rate = non_ascii_rate
        self.code = _CODE[project.language]
        self.type_names = TYPE_NAMES[project.language]
        # File bodies are generated once per path: re-reading a file returns the same text,
        # as in a real session (and Edit results quote the original file).
        self.file_cache: dict[str, list[str]] = {}

    # -- slots --------------------------------------------------------------------------
    def _slot(self, key: str) -> str:
        r = self.rng
        if key == "N" or key == "M":
            return r.choice(NOUNS).replace("_", " ")
        if key == "V":
            return r.choice(VERBS)
        if key == "D":
            return r.choice(PAST)
        if key == "A":
            return r.choice(ADJS)
        if key == "P":
            return r.choice(self.p.files)
        if key == "F":
            return r.choice(self.p.functions)
        if key == "T":
            return r.choice(self.p.tests) if r.random() < 0.3 else r.choice(self.p.types)
        if key == "L":
            return str(r.randint(3, 900))
        if key == "K":
            return str(r.randint(2, 40))
        if key == "O":
            return r.choice(OPENERS)
        if key == "B":
            return r.choice(self.p.branches)
        return key

    def fill(self, parts: tuple) -> str:
        out = []
        for i, piece in enumerate(parts):
            out.append(self._slot(piece) if i & 1 else piece)
        return "".join(out)

    def sentence(self) -> str:
        s = self.fill(self.rng.choice(_SENTENCES))
        if self.rng.random() < self.non_ascii_rate:
            s = s[:-1] + " " + self.rng.choice(NON_ASCII) + s[-1]
        return s

    def prose(self, target: int) -> str:
        """Paragraphs of sentences until about `target` characters."""
        r = self.rng
        paras = []
        size = 0
        while size < target:
            n = r.randint(1, 4)
            para = " ".join(self.sentence() for _ in range(n))
            paras.append(para)
            size += len(para) + 2
        return "\n\n".join(paras)

    def short(self) -> str:
        """One or two sentences: the typical assistant line between tool calls."""
        r = self.rng
        if r.random() < 0.55:
            return f"{r.choice(OPENERS)} `{r.choice(self.p.files if r.random() < 0.6 else self.p.functions)}`" + r.choice((".", ":", " first."))
        return " ".join(self.sentence() for _ in range(r.randint(1, 2)))

    def human(self) -> str:
        r = self.rng
        s = self.fill(r.choice(_HUMAN))
        if r.random() < 0.25:
            s += "\n\n" + self.prose(r.choice((80, 200, 400)))
        if r.random() < 0.05:
            s += "\n\n```\n" + self.shell(r.randint(300, 1500)) + "\n```"
        return s

    def description(self) -> str:
        d = self.fill(self.rng.choice(_DESCRIPTIONS))
        return d[0].upper() + d[1:]

    # -- structured text ----------------------------------------------------------------
    def report(self, target: int, title: str) -> str:
        """A markdown review/exploration report, the typical subagent final answer."""
        r = self.rng
        out = [r.choice(("", "Based on my review, here is the summary.\n\n", "I have finished the analysis.\n\n")) + f"## {title}\n"]
        size = len(out[0])
        headings = list(HEADINGS)
        r.shuffle(headings)
        i = 0
        while size < target:
            h = headings[i % len(headings)]
            i += 1
            block = [f"\n### {h}\n"]
            kind = r.random()
            if kind < 0.45:
                for _ in range(r.randint(2, 6)):
                    block.append(f"- **{r.choice(SEVERITY)}** `{r.choice(self.p.files)}:{r.randint(3, 900)}` — {self.sentence()}")
            elif kind < 0.7:
                block.append(self.prose(r.randint(200, 700)))
            elif kind < 0.85:
                block.append(self.sentence())
                block.append("```" + {"typescript": "ts", "python": "python", "go": "go", "elixir": "elixir", "rust": "rust"}[self.p.language])
                block.extend(self.code_lines(r.randint(4, 14)))
                block.append("```")
            else:
                block.append("| File | Issue | Severity |\n|---|---|---|")
                for _ in range(r.randint(2, 6)):
                    block.append(f"| `{r.choice(self.p.files)}` | {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} | {r.choice(SEVERITY)} |")
            text = "\n".join(block)
            out.append(text)
            size += len(text)
        return "\n".join(out)

    def _code_line(self, parts: tuple) -> str:
        r = self.rng
        p = self.p
        buf = []
        for i, piece in enumerate(parts):
            if not i & 1:
                buf.append(piece)
            elif piece == "f" or piece == "F":
                buf.append(r.choice(p.functions))
            elif piece == "T":
                buf.append(r.choice(p.types))
            elif piece == "t":
                buf.append(r.choice(self.type_names))
            elif piece == "v" or piece == "V":
                buf.append(r.choice(p.variables))
            elif piece == "r":
                buf.append(p.types[0][0].lower() if p.types else "s")
            elif piece == "w":
                buf.append(r.choice(NOUNS).replace("_", " "))
            elif piece == "n":
                buf.append(str(r.randint(1, 512)))
            elif piece == "c":
                buf.append(self.sentence())
            elif piece == "P2":
                buf.append(p.module.title().replace("_", ""))
            else:
                buf.append(piece)
        return "".join(buf)

    def code_lines(self, n: int) -> list[str]:
        """About `n` lines of code in the project's language, as whole blocks."""
        r = self.rng
        code = self.code
        lines: list[str] = []
        while len(lines) < n:
            lines.extend(self._code_line(r.choice(code["open"])).split("\n"))
            for _ in range(r.randint(1, 6)):
                lines.extend(self._code_line(r.choice(code["body"])).split("\n"))
            lines.extend(self._code_line(r.choice(code["close"])).split("\n"))
            lines.append("")
        return lines[:n] if n > 3 else lines[:max(1, n)]

    def file_body(self, path: str) -> list[str]:
        body = self.file_cache.get(path)
        if body is None:
            n = int(self.rng.lognormvariate(4.2, 0.8) * self.body_scale)  # median ~65 lines, long tail
            body = self.code_lines(max(8, min(n, 1400)))
            if len(self.file_cache) < 400:  # bound memory on huge sessions
                self.file_cache[path] = body
        return body

    def numbered(self, lines: list[str], start: int = 1) -> str:
        """Read-tool rendering: right-aligned line number, an arrow, the line."""
        return "\n".join(f"{i:>6}→{line}" for i, line in enumerate(lines, start))

    def shell(self, target: int, kind: str = "") -> str:
        """Shell output of a plausible command (tests, git, diff, grep, build, ls, wc, gh)."""
        r = self.rng
        p = self.p
        out = []
        size = 0
        if kind == "ls":
            while size < target:
                line = (f"{r.choice(('-rw-r--r--', '-rw-r--r--', 'drwxr-xr-x', '-rwxr-xr-x'))}  1 {p.user}  staff  {r.randint(64, 90_000):>6} "
                        f"{r.choice(('Jan', 'Feb', 'Mar', 'Aug'))} {r.randint(1, 28):>2} {r.randint(0, 23):02d}:{r.randint(0, 59):02d} "
                        f"{r.choice(p.files).rsplit('/', 1)[-1]}")
                out.append(line)
                size += len(line) + 1
            return "\n".join(out)
        if kind == "wc":
            files = [r.choice(p.files) for _ in range(r.randint(1, 4))]
            counts = [r.randint(10, 1500) for _ in files]
            return "\n".join(f"{c:>8} {f}" for c, f in zip(counts, files)) + (f"\n{sum(counts):>8} total" if len(files) > 1 else "")
        if kind == "pr":
            return (f"{{\"title\":\"{self.description()}\",\"body\":\"{self.sentence()}\",\"files\":["
                    + ",".join(f"{{\"path\":\"{r.choice(p.files)}\",\"additions\":{r.randint(0, 300)},\"deletions\":{r.randint(0, 200)}}}"
                               for _ in range(r.randint(1, 8))) + "]}")
        pick = {"test": 0.1, "gitlog": 0.4, "diff": 0.5, "grep": 0.7, "build": 0.9}.get(kind, r.random())
        kind = pick
        if kind < 0.3:  # test runner
            while size < target:
                if p.language == "go":
                    line = (f"ok  \tgithub.com/{p.user}/{p.name}/{r.choice(p.files).rsplit('/', 1)[0]}\t{r.random():.3f}s"
                            if r.random() < 0.8 else f"--- FAIL: {r.choice(p.tests)} ({r.random():.2f}s)\n    {r.choice(p.files)}:{r.randint(3, 400)}: {self.sentence()}")
                elif p.language == "python":
                    line = (f"{r.choice(p.files)} {''.join(r.choice('....F.s') for _ in range(r.randint(3, 30)))} [{r.randint(1, 100):>3}%]"
                            if r.random() < 0.85 else f"FAILED {r.choice(p.files)}::{r.choice(p.tests)} - AssertionError: {self.sentence()}")
                elif p.language == "elixir":
                    line = (f"  {r.randint(1, 40)}) test {r.choice(VERBS)} {r.choice(NOUNS)} ({p.module.title()}.{r.choice(p.types)}Test)\n     {r.choice(p.files)}:{r.randint(3, 400)}\n     {self.sentence()}"
                            if r.random() < 0.3 else "." * r.randint(10, 80))
                else:
                    line = (f" {'✓' if r.random() < 0.85 else '✗'} {r.choice(p.files)} > {r.choice(VERBS)} {r.choice(NOUNS)} {r.choice(ADJS)} [{r.randint(1, 900)}ms]")
                out.append(line)
                size += len(line) + 1
            out.append(f"\n{r.randint(20, 900)} passed, {r.randint(0, 4)} failed in {r.random() * 30:.2f}s")
        elif kind < 0.45:  # git log / status
            while size < target:
                line = (f"{''.join(r.choice(HEX) for _ in range(7))} {r.choice(VERBS).title()} {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} in {r.choice(p.files).rsplit('/', 1)[-1]}"
                        if r.random() < 0.6 else f"\tmodified:   {r.choice(p.files)}")
                out.append(line)
                size += len(line) + 1
        elif kind < 0.6:  # diff
            while size < target:
                path = r.choice(p.files)
                out.append(f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{r.randint(1, 400)},{r.randint(3, 12)} +{r.randint(1, 400)},{r.randint(3, 12)} @@")
                for line in self.code_lines(r.randint(3, 12)):
                    out.append(r.choice(" +-  ") + line)
                size += sum(len(x) for x in out[-6:])
        elif kind < 0.8:  # grep -n
            while size < target:
                line = f"{r.choice(p.files)}:{r.randint(1, 900)}:{self.code_lines(1)[0].strip()}"
                out.append(line)
                size += len(line) + 1
        else:  # build / lint / log
            while size < target:
                line = r.choice((
                    f"warning: {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} in `{r.choice(p.functions)}`\n  --> {r.choice(p.files)}:{r.randint(1, 900)}:{r.randint(1, 80)}",
                    f"[{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999):03d}] {r.choice(('info', 'debug', 'warn', 'error'))} {r.choice(p.functions)}: {self.sentence()}",
                    f"Compiling {r.randint(1, 60)} files ({EXT[p.language]})",
                    f"error: {self.sentence()}\n   │\n {r.randint(1, 900)} │ {self.code_lines(1)[0].strip()}\n   │ {'^' * r.randint(3, 20)}",
                ))
                out.append(line)
                size += len(line) + 1
        return "\n".join(out)


# ============================================================================================
# Claude Code versions ("eras"): layout, key order and notification shape differ per era.
# ============================================================================================


@dataclass(frozen=True)
class Era:
    """What one Claude Code version range writes to disk (claude-code-format.md §1-§10)."""

    key: str
    versions: tuple[str, ...]
    layout: str  # "inline" (sidechain lines in the parent), "sibling" (<project>/agent-*.jsonl), "nested"
    modern: bool  # 2.1.2xx envelope: promptId/entrypoint, envelope fields at the end
    task_tool: str  # "Task" until v2.1.63, then "Agent"
    notify: str  # "" | "agent" (<agent-notification>) | "2.1.17" | "2.1.37" | "modern"
    agent_id: str  # "hex8" | "hex7" | "a16"
    sidecars: bool  # agent-<id>.meta.json beside each subagent transcript
    agent_progress: bool  # sync subagent messages echoed into the parent as progress lines
    real_output_tokens: bool  # 2.1.x writes streaming placeholders (1-30) instead
    model: str
    fast_model: str
    tmp: str  # task output-file root


ERAS: dict[str, Era] = {
    "inline": Era("inline", ("1.0.98", "1.0.113"), "inline", False, "Task", "", "hex8", False, False, True,
                  "claude-sonnet-4-20250514", "claude-3-5-haiku-20241022", "/tmp/claude"),
    "sibling": Era("sibling", ("2.0.61", "2.0.76"), "sibling", False, "Task", "agent", "hex7", False, False, True,
                   "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001", "/tmp/claude"),
    "2.1.17": Era("2.1.17", ("2.1.17",), "nested", False, "Task", "2.1.17", "hex7", False, False, False,
                  "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001", "/private/tmp/claude"),
    "2.1.39": Era("2.1.39", ("2.1.37", "2.1.38", "2.1.39", "2.1.42"), "nested", False, "Task", "2.1.37", "hex7",
                  False, True, False, "claude-opus-4-6", "claude-haiku-4-5-20251001", "/tmp/claude-1000"),
    "modern": Era("modern", ("2.1.219", "2.1.226", "2.1.233", "2.1.238"), "nested", True, "Agent", "modern", "a16",
                  True, False, False, "claude-opus-5", "claude-haiku-4-5-20251001", "/private/tmp/claude-501"),
}


def iso(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as Claude Code writes `timestamp`."""
    s, frac = divmod(ms, 1000)
    t = time.gmtime(s)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (t[0], t[1], t[2], t[3], t[4], t[5], frac)


class Ids:
    """Identifier formats seen on disk, drawn from one rng."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def uuid(self) -> str:
        h = "%032x" % self.r.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def _b62(self, k: int) -> str:
        return "".join(self.r.choices(BASE62, k=k))

    def msg(self) -> str:
        return "msg_01" + self._b62(22)

    def req(self) -> str:
        return "req_011C" + self._b62(20)

    def toolu(self) -> str:
        return "toolu_01" + self._b62(22)

    def hexs(self, k: int) -> str:
        return "".join(self.r.choices(HEX, k=k))

    def agent(self, kind: str) -> str:
        if kind == "hex8":
            return self.hexs(8)
        if kind == "hex7":
            return "a" + self.hexs(6)
        return "a" + self.hexs(16)

    def bash_task(self, modern: bool) -> str:
        return "b" + ("".join(self.r.choices(LOWER_ALNUM[10:], k=8)) if modern else self.hexs(6))

    def workflow_task(self) -> str:
        return "w" + "".join(self.r.choices(LOWER_ALNUM, k=8))

    def signature(self, n: int) -> str:
        return "Es" + "".join(self.r.choices(BASE62 + "+/", k=n))


@dataclass
class Tally:
    """Running totals for SynthSummary."""

    files: int = 0
    bytes: int = 0
    lines: int = 0
    message_lines: int = 0
    subagent_files: dict = field(default_factory=dict)
    sessions: int = 0
    notifications: int = 0
    mtimes: dict = field(default_factory=dict)  # path -> ms


class Envelope:
    """Per-file constant fields and the key order of each record kind for one era."""

    def __init__(self, era: Era, session_id: str, cwd: str, version: str, branch: str,
                 agent_id: str | None = None, sidechain: bool = False, agent_type: str | None = None):
        self.era = era
        self.session_id = session_id
        self.cwd = cwd
        self.version = version
        self.branch = branch
        self.agent_id = agent_id
        self.sidechain = sidechain
        self.agent_type = agent_type
        self.slug: str | None = None
        self.prompt_id: str | None = None

    def _head(self, parent: str | None) -> dict:
        d = {"parentUuid": parent, "isSidechain": self.sidechain, "userType": "external", "cwd": self.cwd,
             "sessionId": self.session_id, "version": self.version, "gitBranch": self.branch}
        if self.agent_id is not None and self.era.layout != "inline":
            d["agentId"] = self.agent_id
        if self.slug is not None:
            d["slug"] = self.slug
        return d

    def _tail(self, d: dict, main_session_id: bool = True) -> dict:
        if main_session_id and not self.sidechain:
            d["session_id"] = self.session_id
        d["userType"] = "external"
        d["entrypoint"] = "cli"
        d["cwd"] = self.cwd
        d["sessionId"] = self.session_id
        d["version"] = self.version
        d["gitBranch"] = self.branch
        return d

    def user(self, uuid: str, parent: str | None, ts: int, content, *, meta: bool = False,
             tur=None, source: str | None = None, human: bool = False, compact: bool = False,
             origin: str | None = None, source_tool_use: str | None = None) -> dict:
        message = {"role": "user", "content": content}
        if self.era.modern:
            d = {"parentUuid": parent, "isSidechain": self.sidechain, "promptId": self.prompt_id}
            if self.agent_id is not None:
                d["agentId"] = self.agent_id
            d["type"] = "user"
            d["message"] = message
            if meta:
                d["isMeta"] = True
            if compact:
                d["isVisibleInTranscriptOnly"] = True
                d["isCompactSummary"] = True
            d["uuid"] = uuid
            d["timestamp"] = iso(ts)
            if tur is not None:
                d["toolUseResult"] = tur
                d["sourceToolAssistantUUID"] = source
            if origin is not None:
                d["origin"] = {"kind": origin}
                d["promptSource"] = "system"
            elif human:
                d["origin"] = {"kind": "human"}
                d["promptSource"] = "typed"
                d["permissionMode"] = "default"
            return self._tail(d)
        d = self._head(parent)
        d["type"] = "user"
        d["message"] = message
        if meta:
            d["isMeta"] = True
        if compact:
            d["isVisibleInTranscriptOnly"] = True
            d["isCompactSummary"] = True
        d["uuid"] = uuid
        d["timestamp"] = iso(ts)
        if source_tool_use is not None:
            d["sourceToolUseID"] = source_tool_use
        if tur is not None:
            d["toolUseResult"] = tur
            if self.era.key != "sibling" and self.era.key != "inline":
                d["sourceToolAssistantUUID"] = source
        elif human and not self.sidechain:
            d["thinkingMetadata"] = {"maxThinkingTokens": 31999}
            d["todos"] = []
            if self.era.key != "sibling":
                d["permissionMode"] = "bypassPermissions" if self.cwd.startswith("/home") else "default"
        return d

    def assistant(self, uuid: str, parent: str | None, ts: int, message: dict, request_id: str) -> dict:
        if self.era.modern:
            d = {"parentUuid": parent, "isSidechain": self.sidechain}
            if self.agent_id is not None:
                d["agentId"] = self.agent_id
            d["message"] = message
            d["requestId"] = request_id
            if self.agent_type is not None:
                d["attributionAgent"] = self.agent_type
            d["type"] = "assistant"
            d["uuid"] = uuid
            d["timestamp"] = iso(ts)
            if not self.sidechain:
                d["effort"] = "high"
            return self._tail(d)
        d = self._head(parent)
        d["message"] = message
        d["requestId"] = request_id
        d["type"] = "assistant"
        d["uuid"] = uuid
        d["timestamp"] = iso(ts)
        return d

    def progress(self, uuid: str, parent: str | None, ts: int, data: dict, tool_use_id: str,
                 parent_tool_use_id: str) -> dict:
        if self.era.modern:
            d = {"parentUuid": parent, "isSidechain": self.sidechain}
            if self.agent_id is not None:
                d["agentId"] = self.agent_id
            d.update(type="progress", data=data, toolUseID=tool_use_id, parentToolUseID=parent_tool_use_id,
                     uuid=uuid, timestamp=iso(ts))
            return self._tail(d, main_session_id=False)
        d = self._head(parent)
        d.update(type="progress", data=data, toolUseID=tool_use_id, parentToolUseID=parent_tool_use_id,
                 uuid=uuid, timestamp=iso(ts))
        return d

    def system(self, uuid: str, parent: str | None, ts: int, subtype: str, fields: dict,
               logical_parent: str | None = None, level: str | None = None, is_meta: bool | None = False) -> dict:
        if self.era.modern:
            d = {"parentUuid": parent}
            if logical_parent is not None:
                d["logicalParentUuid"] = logical_parent
            d["isSidechain"] = self.sidechain
            d["type"] = "system"
            d["subtype"] = subtype
            d.update(fields)
            if level:
                d["level"] = level
            d["timestamp"] = iso(ts)
            d["uuid"] = uuid
            return self._tail(d, main_session_id=False)
        head = self._head(parent)
        if logical_parent is not None:
            d = {"parentUuid": parent, "logicalParentUuid": logical_parent}
            d.update((k, v) for k, v in head.items() if k != "parentUuid")
        else:
            d = head
        d["type"] = "system"
        d["subtype"] = subtype
        if subtype == "compact_boundary":
            d["content"] = "Conversation compacted"
            d["isMeta"] = False
            d["timestamp"] = iso(ts)
            d["uuid"] = uuid
            d["level"] = "info"
            d.update(fields)
            return d
        d.update(fields)
        if level:
            d["level"] = level
        d["timestamp"] = iso(ts)
        d["uuid"] = uuid
        if is_meta is not None and subtype in ("turn_duration", "local_command"):
            d["isMeta"] = is_meta
        return d


def flat_text(entry) -> str:
    """The event text akm's reader derives from one parsed line (pipeline-spec §6.3), or ''."""
    if not isinstance(entry, dict):
        return ""
    message = entry.get("message")
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            parts.append(block["thinking"])
        elif kind == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else "tool"
            inp = block.get("input")
            if isinstance(inp, dict) and isinstance(inp.get("command"), str):
                text = inp["command"]
            elif isinstance(inp, (dict, list)):
                text = orjson.dumps(inp).decode()
            elif isinstance(inp, str):
                text = inp
            else:
                text = ""
            parts.append(f"[tool:{name}] {text}")
        elif kind == "tool_result":
            out = block.get("content")
            parts.append("[tool_result] " + (out if isinstance(out, str) else orjson.dumps(out if out is not None else "").decode()))
    return "\n".join(parts)


class Transcript:
    """One JSONL file being written; keeps the uuid chain, the clock high-water mark and faults."""

    def __init__(self, path: Path, env: Envelope, tally: Tally, layout: str, *, append: bool = False,
                 track_text: bool = False):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.env = env
        self.tally = tally
        self.fh = open(path, "ab" if append else "wb")
        if not append:
            tally.files += 1
            tally.subagent_files[layout] = tally.subagent_files.get(layout, 0) + 1
        self.max_ts = 0
        self.track_text = track_text
        self.text_chars = 0
        self.events = 0
        # Window counter mirrors the #840 chunking rule: a new 80,000-char window starts when
        # the current one would overflow and is not empty.
        self.windows = 0
        self.window_fill = 0
        self.corrupt_queue = 0  # lines still to mangle (well under 1% of lines)
        self.corrupt_rng: random.Random | None = None

    def write(self, obj: dict, ts: int | None = None, *, corruptible: bool = False) -> None:
        data = orjson.dumps(obj) + b"\n"
        if corruptible and self.corrupt_queue and self.corrupt_rng is not None and self.corrupt_rng.random() < 0.05:
            # A torn write from a crashed process: the line is cut short, the next one is whole.
            cut = self.corrupt_rng.randint(20, max(21, len(data) - 2))
            data = data[:cut] + b"\n"
            self.corrupt_queue -= 1
        elif self.track_text and obj.get("type") in ("user", "assistant"):
            n = len(flat_text(obj))
            if n:
                self.events += 1
                self.text_chars += n
                if self.windows == 0 or (self.window_fill + n > 80_000 and self.window_fill > 0):
                    self.windows += 1
                    self.window_fill = 0
                self.window_fill += n
        self.fh.write(data)
        self.tally.bytes += len(data)
        self.tally.lines += 1
        if obj.get("type") in ("user", "assistant"):
            self.tally.message_lines += 1
        if ts is not None and ts > self.max_ts:
            self.max_ts = ts

    def write_raw(self, data: bytes, ts: int | None = None) -> None:
        self.fh.write(data)
        self.tally.bytes += len(data)
        self.tally.lines += data.count(b"\n")
        if ts is not None and ts > self.max_ts:
            self.max_ts = ts

    def close(self, torn_tail: bytes | None = None) -> None:
        if torn_tail:
            self.fh.write(torn_tail)
            self.tally.bytes += len(torn_tail)
        self.fh.close()
        self.tally.mtimes[str(self.path)] = max(self.max_ts, self.tally.mtimes.get(str(self.path), 0)) + 137


def write_json_file(path: Path, obj, tally: Tally, ms: int, raw: bytes | None = None) -> None:
    """Sidecar/snapshot files: compact JSON like Claude Code, or raw bytes for broken cases."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = raw if raw is not None else orjson.dumps(obj)
    path.write_bytes(data)
    tally.files += 1
    tally.bytes += len(data)
    tally.mtimes[str(path)] = ms


def xml_escape(text: str) -> str:
    """Escape as Claude Code does inside `<result>` (akm #842 decodes exactly these)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


# ============================================================================================
# Plans: what a session or subagent should contain. Shapes produce these; the simulator
# turns them into files.
# ============================================================================================


@dataclass(frozen=True)
class AgentPlan:
    """One delegated unit of work spawned by a session (or by another subagent)."""

    at: float  # fraction of the parent's progress at which it is launched
    kind: str = "sync"  # "sync" | "async" | "workflow" | "bash"
    fate: str = "completed"  # "completed" | "killed" | "resumed"
    events: int = 40  # user/assistant lines in its transcript (akm events), approximately
    report_chars: int = 2500  # size of its final report
    agent_type: str = "general-purpose"
    sidecar: str = "full"  # "full" | "missing" | "broken" | "null" (modern era only)
    nested: int = 0  # depth-2 agents it spawns itself (flat in subagents/)
    remember: int = 0  # `akm remember "..."` calls inside it
    feedback: int = 0  # `akm feedback <ref> --note "..."` calls inside it
    readonly: int = 0  # `akm search/show` calls inside it
    workflow_agents: int = 0  # kind == "workflow": agents in the run
    group: int = 0  # plans sharing a nonzero group launch in one assistant message (fan-out)
    duration_s: int = 0  # wall time override (0: derived from its events)
    step_scale: float = 1.0  # size of tool outputs inside it


@dataclass(frozen=True)
class SessionRecipe:
    """Everything the simulator needs to write one main session and its subagents."""

    era: str
    project: int
    start_ms: int
    target_chars: int = 60_000  # parent raw text (akm event text) to write
    windows: int = 0  # if > 0: stop at this many 80,000-char parent windows instead
    scale: float = 1.0  # size multiplier for tool outputs and texts in the parent
    agents: tuple[AgentPlan, ...] = ()
    compactions: int = 0
    wait_at: float = 0.0  # at this progress the parent waits for every running agent (0: never)
    remember: int = 0
    feedback: int = 0
    readonly: int = 0
    hooks: int = 1  # 0 none, 1 light, 2 heavy hook_progress traffic
    session_id: str = ""
    title: str = ""  # "head" | "late" | "" (custom-title line placement)
    persisted_output: int = 0  # tool-results/<id>.txt sidecars
    caveats: int = 0  # local-command caveat sequences
    torn_tail: bool = False
    malformed: int = 0
    invalid_utf8: bool = False
    false_positive_refs: int = 0  # quoted akm commands inside prose
    target_bytes: int = 0  # if > 0: stop when the parent file reaches this size
    orphan: bool = False  # delete the parent afterwards: its subagents/ folder outlives it
    empty_subagent: bool = False  # an agent file created but never written (0 bytes)


@dataclass
class Running:
    """State of a launched subagent that the parent still has to hear from."""

    plan: AgentPlan
    agent_id: str
    tool_use_id: str
    description: str
    prompt: str
    t_end: int = 0
    final_text: str = ""
    total_tokens: int = 0
    tool_uses: int = 0
    duration_ms: int = 0
    status: str = "completed"
    actor: "Actor | None" = None
    notified: int = 0
    resume_due: bool = False
    task_kind: str = "agent"  # "agent" | "bash" | "workflow"
    usage: dict = field(default_factory=dict)  # the final call's usage, as the Task result reports it
    output: str = ""  # bash output / workflow JSON


class Meter:
    """Token usage per API call: context grows with every message, compaction resets it."""

    def __init__(self, rng: random.Random, era: Era, base: int):
        self.r = rng
        self.era = era
        self.context = base
        self.pending_chars = 0
        self.last: dict | None = None

    def add(self, chars: int) -> None:
        self.pending_chars += chars

    def call(self, out_chars: int) -> dict:
        r = self.r
        created = max(50, int(self.pending_chars / 3.7) + r.randint(0, 400))
        read = self.context
        out = max(1, out_chars // 4) if self.era.real_output_tokens else r.choice((1, 1, 2, 3, 4, 8, 11, 13, 27))
        self.context += created + max(1, out_chars // 4)
        self.pending_chars = 0
        inp = r.choice((1, 1, 3, 3, 4, 6, 10))
        one_h = r.random() < 0.5
        cc = {"ephemeral_5m_input_tokens": 0 if one_h else created, "ephemeral_1h_input_tokens": created if one_h else 0}
        key = self.era.key
        if key in ("inline", "sibling"):
            u = {"input_tokens": inp, "cache_creation_input_tokens": created, "cache_read_input_tokens": read,
                 "cache_creation": cc, "output_tokens": out, "service_tier": "standard"}
        elif key == "modern":
            u = {"input_tokens": inp, "cache_creation_input_tokens": created, "cache_read_input_tokens": read,
                 "output_tokens": out, "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                 "service_tier": "standard",
                 "cache_creation": {"ephemeral_1h_input_tokens": cc["ephemeral_1h_input_tokens"],
                                    "ephemeral_5m_input_tokens": cc["ephemeral_5m_input_tokens"]},
                 "inference_geo": "not_available",
                 "iterations": [{"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
                                 "cache_creation_input_tokens": created, "cache_creation": cc, "type": "message"}],
                 "speed": "standard"}
        elif key == "2.1.39" and r.random() < 0.25:
            u = {"input_tokens": inp, "cache_creation_input_tokens": created, "cache_read_input_tokens": read,
                 "output_tokens": max(out, out_chars // 4), "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                 "service_tier": "standard",
                 "cache_creation": {"ephemeral_1h_input_tokens": cc["ephemeral_1h_input_tokens"],
                                    "ephemeral_5m_input_tokens": cc["ephemeral_5m_input_tokens"]},
                 "inference_geo": "", "iterations": []}
        else:
            u = {"input_tokens": inp, "cache_creation_input_tokens": created, "cache_read_input_tokens": read,
                 "cache_creation": cc, "output_tokens": out, "service_tier": "standard",
                 "inference_geo": r.choice(("not_available", "global"))}
        self.last = u
        return u

    def final_usage(self, out_chars: int) -> dict:
        """The Task result's `usage`: the final call with its real output token count."""
        u = dict(self.last or self.call(out_chars))
        u["output_tokens"] = max(u.get("output_tokens", 1), out_chars // 4 + self.r.randint(5, 300))
        return u


def total_tokens(usage: dict) -> int:
    return (usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
            + usage.get("cache_read_input_tokens", 0) + usage.get("output_tokens", 0))


class Actor:
    """Writes one conversation thread (the main session or one subagent) into a transcript."""

    def __init__(self, sim: "SessionSim", tr: Transcript, env: Envelope, clock: int, model: str,
                 is_parent: bool, scale: float = 1.0):
        self.sim = sim
        self.r = sim.rng
        self.ids = sim.ids
        self.forge = sim.forge
        self.tr = tr
        self.env = env
        self.now = clock
        self.model = model
        self.is_parent = is_parent
        self.scale = scale
        self.last_uuid: str | None = None
        self.meter = Meter(sim.rng, env.era, 14_000 + sim.rng.randint(0, 9000))
        self.tool_uses = 0
        self.echo: list | None = None  # agent_progress copies (sync subagents, 2.1.3x)
        self.lines = 0
        self.msg_lines = 0
        self.first_ts = clock
        self.pace = 1.0  # stretches waits so a subagent can span a planned wall time
        self.tool_log: list[str] | None = None  # TaskOutput's "[Tool: X] {...}" lines (2.0.x)

    # -- plumbing ---------------------------------------------------------------------------
    def emit(self, obj: dict, ts: int, *, corruptible: bool = False, chain: bool = True) -> None:
        if self.is_parent:
            self.sim.flush_queue(ts)
        self.tr.write(obj, ts, corruptible=corruptible)
        self.lines += 1
        if obj.get("type") in ("user", "assistant"):
            self.msg_lines += 1
        if chain and "uuid" in obj:
            self.last_uuid = obj["uuid"]

    # -- assistant side ----------------------------------------------------------------------
    def api_call(self, blocks: list[dict]) -> list[str]:
        """One API response written as one line per content block, sharing id and usage."""
        era = self.env.era
        msg_id = self.ids.msg()
        req_id = self.ids.req()
        out_chars = 0
        for b in blocks:
            if b["type"] == "text":
                out_chars += len(b["text"])
            elif b["type"] == "thinking":
                out_chars += len(b["thinking"])
            else:
                out_chars += 80 + len(orjson.dumps(b["input"])) if b["type"] == "tool_use" else 0
        usage = self.meter.call(out_chars)
        self.now += int(self.r.randint(900, 6000 + out_chars // 3) * self.pace)
        has_tool = any(b["type"] == "tool_use" for b in blocks)
        uuids = []
        for i, b in enumerate(blocks):
            if era.modern:
                stop = "tool_use" if has_tool else "end_turn"
            elif era.key in ("inline", "sibling") and i == len(blocks) - 1:
                stop = "tool_use" if has_tool else "end_turn"
            else:
                stop = None
            message = {"model": self.model, "id": msg_id, "type": "message", "role": "assistant",
                       "content": [b], "stop_reason": stop, "stop_sequence": None}
            if era.modern:
                message["stop_details"] = None
            message["usage"] = usage
            if era.modern:
                message["diagnostics"] = None
            uuid = self.ids.uuid()
            obj = self.env.assistant(uuid, self.last_uuid, self.now, message, req_id)
            self.emit(obj, self.now)
            uuids.append(uuid)
            if self.echo is not None:
                self.echo.append((self.now, {"type": "assistant", "timestamp": iso(self.now), "message": message,
                                             "requestId": req_id, "uuid": uuid}))
            if b["type"] == "tool_use":
                self.tool_uses += 1
                if self.tool_log is not None:
                    self.tool_log.append(f"[Tool: {b['name']}] " + orjson.dumps(b["input"]).decode()[:300])
            self.now += self.r.randint(3, 400)
        return uuids

    def thinking(self, size: int) -> dict:
        text = self.forge.prose(size) if size > 120 else self.forge.short()
        return {"type": "thinking", "thinking": text, "signature": self.ids.signature(self.r.randint(180, 900))}

    def tool_use(self, name: str, inp: dict) -> dict:
        b = {"type": "tool_use", "id": self.ids.toolu(), "name": name, "input": inp}
        if self.env.era.key not in ("inline", "sibling", "2.1.17"):
            b["caller"] = {"type": "direct"}
        return b

    # -- user side ---------------------------------------------------------------------------
    def tool_result(self, block: dict, content, tur, source_uuid: str, *, is_error: bool = False,
                    wait_ms: int = 0, corruptible: bool = True) -> None:
        self.now += int((wait_ms + self.r.randint(20, 1500)) * self.pace)
        if is_error:
            res = {"type": "tool_result", "content": content, "is_error": True, "tool_use_id": block["id"]}
        else:
            res = {"tool_use_id": block["id"], "type": "tool_result", "content": content}
            if block["name"] == "Bash" and self.r.random() < 0.5:
                res["is_error"] = False
        self.meter.add(len(content) if isinstance(content, str) else sum(len(c.get("text", "")) for c in content))
        uuid = self.ids.uuid()
        obj = self.env.user(uuid, self.last_uuid, self.now, [res], tur=tur, source=source_uuid)
        self.emit(obj, self.now, corruptible=corruptible)
        if self.echo is not None:
            self.echo.append((self.now, {"type": "user", "message": {"role": "user", "content": [res]}, "uuid": uuid,
                                         "timestamp": iso(self.now)}))

    def user_text(self, text: str, *, human: bool = False, meta: bool = False, origin: str | None = None,
                  compact: bool = False) -> str:
        uuid = self.ids.uuid()
        if self.env.era.modern and (human or origin):
            self.env.prompt_id = self.ids.uuid()
        content = text
        obj = self.env.user(uuid, self.last_uuid, self.now, content,
                            human=human, meta=meta, origin=origin, compact=compact)
        self.meter.add(len(text))
        self.emit(obj, self.now)
        return uuid

    def hook(self, event: str, tool: str, tool_use_id: str, command: str) -> None:
        data = {"type": "hook_progress", "hookEvent": event, "hookName": f"{event}:{tool}" if tool else event,
                "command": command}
        uuid = self.ids.uuid()
        self.emit(self.env.progress(uuid, self.last_uuid, self.now, data, tool_use_id, tool_use_id), self.now,
                  corruptible=True)

    # -- tools -------------------------------------------------------------------------------
    def abs_path(self, rel: str) -> str:
        return f"{self.sim.project.cwd}/{rel}"

    def make_tool(self, name: str) -> tuple[dict, object, object, bool, int]:
        """Build (tool_use block, result content, toolUseResult, is_error, duration ms)."""
        r = self.r
        f = self.forge
        p = self.sim.project
        sc = self.scale
        if name == "Read":
            rel = r.choice(p.files)
            body = f.file_body(rel)
            start = 1
            lines = body
            inp = {"file_path": self.abs_path(rel)}
            if len(body) > 250 and r.random() < 0.4:
                start = r.randint(1, len(body) - 100)
                n = r.randint(40, 200)
                lines = body[start - 1:start - 1 + n]
                inp["offset"] = start
                inp["limit"] = n
            elif sc < 1 and len(body) > 60:
                lines = body[: max(20, int(len(body) * sc))]
            text = f.numbered(lines, start)
            if self.env.era.key in ("2.1.17", "2.1.39") and r.random() < 0.7:
                text += MALWARE_REMINDER
            tur = {"type": "text", "file": {"filePath": inp["file_path"], "content": "\n".join(lines),
                                            "numLines": len(lines), "startLine": start, "totalLines": len(body)}}
            return self.tool_use("Read", inp), text, tur, False, r.randint(5, 120)
        if name == "Edit":
            rel = r.choice(p.files)
            body = f.file_body(rel)
            at = r.randint(0, max(0, len(body) - 8))
            old = body[at:at + r.randint(1, 6)] or ["pass"]
            new = f.code_lines(r.randint(1, 8))
            path = self.abs_path(rel)
            inp = {"replace_all": False, "file_path": path, "old_string": "\n".join(old), "new_string": "\n".join(new)}
            if self.env.era.key in ("inline", "sibling", "2.1.17"):
                inp = {"file_path": path, "old_string": inp["old_string"], "new_string": inp["new_string"]}
            text = f"The file {path} has been updated successfully."
            tur = {"filePath": path, "oldString": inp["old_string"], "newString": inp["new_string"],
                   "originalFile": "\n".join(body),
                   "structuredPatch": [{"oldStart": at + 1, "oldLines": len(old), "newStart": at + 1,
                                        "newLines": len(new), "lines": ["-" + x for x in old] + ["+" + x for x in new]}],
                   "userModified": False, "replaceAll": False}
            if r.random() < 0.06:
                text = f"<tool_use_error>String to replace not found in file.\nString: {old[0]}</tool_use_error>"
                return self.tool_use("Edit", inp), text, "Error: String to replace not found in file.", True, 30
            return self.tool_use("Edit", inp), text, tur, False, r.randint(20, 400)
        if name == "Write":
            rel = r.choice(p.files)
            content = "\n".join(f.code_lines(int(r.randint(20, 160) * sc) + 5))
            path = self.abs_path(rel)
            inp = {"file_path": path, "content": content}
            tur = {"type": "create", "filePath": path, "content": content, "structuredPatch": [], "originalFile": None}
            return self.tool_use("Write", inp), f"File created successfully at: {path}", tur, False, r.randint(20, 300)
        if name == "Grep":
            ident = r.choice(p.functions)
            inp = {"pattern": ident, "path": self.abs_path(r.choice(p.files).rsplit("/", 1)[0]), "output_mode": "content"}
            if r.random() < 0.4:
                inp = {"pattern": ident, "output_mode": "files_with_matches"}
                files = sorted({r.choice(p.files) for _ in range(r.randint(1, 12))})
                return (self.tool_use("Grep", inp), f"Found {len(files)} files\n" + "\n".join(files),
                        {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}, False, 40)
            out = f.shell(int(r.randint(80, 1800) * sc), "grep")
            lines = out.count("\n") + 1
            tur = {"mode": "content", "numFiles": 0, "filenames": [], "content": out, "numLines": lines}
            return self.tool_use("Grep", inp), out, tur, False, r.randint(20, 300)
        if name == "Glob":
            ext = EXT[p.language]
            inp = {"pattern": f"**/*{ext}"}
            files = sorted({self.abs_path(r.choice(p.files)) for _ in range(r.randint(2, 40))})
            tur = {"filenames": files, "durationMs": r.randint(5, 400), "numFiles": len(files), "truncated": False}
            return self.tool_use("Glob", inp), "\n".join(files), tur, False, 30
        if name == "TodoWrite":
            todos = [{"content": f.description(), "status": r.choice(("pending", "in_progress", "completed")),
                      "activeForm": f.description()} for _ in range(r.randint(2, 7))]
            text = ("Todos have been modified successfully. Ensure that you continue to use the todo list to track "
                    "your progress. Please proceed with the current tasks if applicable")
            return self.tool_use("TodoWrite", {"todos": todos}), text, {"oldTodos": [], "newTodos": todos}, False, 10
        # Bash
        cmd, desc, kind = self.bash_command()
        out = f.shell(int(r.lognormvariate(5.8, 1.2) * sc), kind)
        inp = {"command": cmd, "description": desc}
        if r.random() < 0.08:
            err = f"Exit code {r.choice((1, 1, 2, 127))}\n{out}"
            return self.tool_use("Bash", inp), err, "Error: " + err, True, r.randint(200, 20_000)
        tur = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
        return self.tool_use("Bash", inp), out, tur, False, r.randint(100, 60_000)

    def bash_command(self) -> tuple[str, str, str]:
        r = self.r
        p = self.sim.project
        rel = r.choice(p.files)
        lang = p.language
        test = {"go": f"go test ./{rel.rsplit('/', 1)[0]}/... -run {r.choice(p.tests)}",
                "python": f"uv run pytest {rel} -q -k {r.choice(p.functions)}",
                "typescript": f"bun test {rel}", "elixir": f"mix test {rel}",
                "rust": f"cargo test -p {p.module} {r.choice(p.functions)}"}[lang]
        choices = (
            (test, "Run the affected tests", "test"),
            (test, "Run the affected tests", "test"),
            ("git status --short", "Show working tree status", "gitlog"),
            (f"git diff main...HEAD -- {rel}", "Show branch diff for the file", "diff"),
            ("git log --oneline -15", "Show recent commits", "gitlog"),
            (f"rg -n \"{r.choice(p.functions)}\" {rel.split('/', 1)[0]}", "Find usages", "grep"),
            (f"ls -la {rel.rsplit('/', 1)[0]}", "List directory", "ls"),
            ({"go": "go vet ./... && golangci-lint run", "python": "uv run ruff check . && uv run mypy src",
              "typescript": "bun run lint && bun run typecheck", "elixir": "mix format --check-formatted && mix credo",
              "rust": "cargo clippy --all-targets -- -D warnings"}[lang], "Lint", "build"),
            (f"gh pr view {r.randint(10, 900)} --json title,body,files", "Show PR details", "pr"),
            (f"wc -l {rel} {r.choice(p.files)}", "Count lines", "wc"),
        )
        return r.choice(choices)

    def akm_call(self, kind: str) -> tuple[dict, str, dict]:
        """A Bash call to akm: remember/feedback carry inline refs, search/show are read-only."""
        r = self.r
        f = self.forge
        ref = f"{r.choice(('memory', 'memory', 'skill', 'knowledge'))}:{_snake(r, 2).replace('_', '-')}"
        if kind == "remember":
            body = f.sentence().replace("`", "").replace('"', "'")
            if r.random() < 0.15:
                body += " " + f.sentence().replace("`", "").replace('"', "'")
            if r.random() < 0.12:
                cmd = "akm remember '" + body.replace("'", "") + "'"
            else:
                cmd = f'akm remember "{body}"'
            out = f"Saved {ref}-{self.ids.hexs(4)} ({len(body)} chars) to stash {self.sim.project.name}"
            desc = "Save learning to akm"
        elif kind == "feedback":
            note = f.sentence().replace("`", "").replace('"', "'")
            flag = r.choice(("", "", " --positive", " --negative"))
            cmd = f'akm feedback {ref}{flag} --note "{note}"'
            out = f"Recorded feedback for {ref}"
            desc = "Record akm feedback"
        elif kind == "search":
            q = f"{r.choice(NOUNS)} {r.choice(NOUNS)}".replace("_", " ")
            cmd = f'akm search "{q}"'
            rows = [f"## {i}  {r.choice(('memory', 'skill'))}:{_snake(r, 2).replace('_', '-')}  score {r.random():.2f}"
                    + ("  akm_search unknown" if r.random() < 0.3 else "") for i in range(1, r.randint(2, 8))]
            out = "\n".join(rows)
            desc = "Search akm for prior knowledge"
        else:
            cmd = f"akm show {ref}"
            out = f"# {ref}\n\n" + f.prose(r.randint(150, 700))
            desc = "Show akm entry"
        block = self.tool_use("Bash", {"command": cmd, "description": desc})
        tur = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
        return block, out, tur


PARENT_TOOLS = (("Bash", 34), ("Read", 26), ("Edit", 16), ("Grep", 8), ("Glob", 4), ("Write", 4), ("TodoWrite", 4))
EXPLORE_TOOLS = (("Read", 45), ("Grep", 25), ("Glob", 12), ("Bash", 18))
REVIEW_TOOLS = (("Bash", 34), ("Read", 40), ("Grep", 16), ("Glob", 10))
IMPLEMENT_TOOLS = (("Read", 30), ("Edit", 28), ("Bash", 30), ("Grep", 8), ("Write", 4))


def _weighted(rng: random.Random, table: tuple) -> str:
    total = sum(w for _, w in table)
    x = rng.random() * total
    for name, w in table:
        x -= w
        if x < 0:
            return name
    return table[-1][0]


class SessionSim:
    """Simulates one main session in time order and writes it, its subagents and sidecars."""

    def __init__(self, root: Path, recipe: SessionRecipe, project: Project, rng: random.Random, tally: Tally):
        self.root = root
        self.recipe = recipe
        self.era = ERAS[recipe.era]
        self.rng = rng
        self.ids = Ids(rng)
        self.project = project
        self.forge = TextForge(rng, project, body_scale=recipe.scale)
        self.tally = tally
        self.sid = recipe.session_id or self.ids.uuid()
        self.proj_dir = root / project.slug
        self.session_dir = self.proj_dir / self.sid
        self.version = rng.choice(self.era.versions)
        self.branch = rng.choice(project.branches)
        self.env = Envelope(self.era, self.sid, project.cwd, self.version, self.branch)
        self.tr = Transcript(self.proj_dir / f"{self.sid}.jsonl", self.env, tally, "parent", track_text=True)
        if recipe.malformed:
            self.tr.corrupt_queue = recipe.malformed
            self.tr.corrupt_rng = random.Random(rng.random())
        self.parent = Actor(self, self.tr, self.env, recipe.start_ms, self.era.model, True, scale=recipe.scale)
        self.heap: list = []
        self.ready: list[Running] = []
        self.awaiting_output: list[Running] = []  # 'agent' era: results fetched with TaskOutput
        self.resumable: list[Running] = []
        self.seq = 0
        self.plans = sorted(recipe.agents, key=lambda a: a.at)
        self.plan_i = 0
        akm = ["remember"] * recipe.remember + ["feedback"] * recipe.feedback + \
              [rng.choice(("search", "show")) for _ in range(recipe.readonly)]
        self.akm_due = sorted((rng.uniform(0.02, 0.97), k) for k in akm)
        self.compact_due = [(i + 1) / (recipe.compactions + 1) for i in range(recipe.compactions)]
        self.persist_due = sorted(rng.uniform(0.1, 0.9) for _ in range(recipe.persisted_output))
        self.caveat_due = sorted(rng.uniform(0.05, 0.95) for _ in range(recipe.caveats))
        self.fp_due = sorted(rng.uniform(0.05, 0.95) for _ in range(recipe.false_positive_refs))
        self.waited = False
        self.title_written = False
        self.invalid_done = not recipe.invalid_utf8
        self.notifications = 0
        self.slug_name = "-".join(rng.choice(ADJS) if i < 2 else rng.choice(USERS) for i in range(3))
        self.tmp = self._tmp_root()

    # -- time & progress ---------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.parent.now

    def progress(self) -> float:
        r = self.recipe
        if r.windows:
            if self.tr.windows == 0:
                return 0.0
            return (self.tr.windows - 1 + self.tr.window_fill / 80_000) / r.windows
        if r.target_bytes:
            return self.tr.fh.tell() / r.target_bytes
        return self.tr.text_chars / max(1, r.target_chars)

    def done(self) -> bool:
        r = self.recipe
        if r.windows:
            return self.tr.windows > r.windows or (self.tr.windows == r.windows and self.tr.window_fill >= 30_000)
        return self.progress() >= 1.0

    def _tmp_root(self) -> str:
        era = self.era
        if era.key == "2.1.17":
            return f"/private/tmp/claude/{self.project.slug}"
        uid = "claude-501" if self.project.cwd.startswith("/Users") else "claude-1000"
        base = ("/private/tmp/" if self.project.cwd.startswith("/Users") else "/tmp/") + uid
        if era.key in ("inline", "sibling"):
            base = "/tmp/claude"
        if era.modern:
            return f"{base}/{self.project.slug}/{self.sid}"
        return f"{base}/{self.project.slug}"

    # -- queue: background completions ------------------------------------------------------
    def push(self, run: Running) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (run.t_end, self.seq, run))

    def queue_line(self, op: str, ts: int, content: str | None = None) -> None:
        d = {"type": "queue-operation", "operation": op, "timestamp": iso(ts), "sessionId": self.sid}
        if content is not None:
            d["content"] = content
        self.tr.write(d, ts)

    def flush_queue(self, ts: int) -> None:
        """Write the `enqueue` of every background task that finished before `ts`."""
        while self.heap and self.heap[0][0] <= ts:
            t_end, _, run = heapq.heappop(self.heap)
            text = self.notification(run)
            self.queue_line("enqueue", t_end, text)
            self.notifications += 1
            self.tally.notifications += 1
            if run.status == "killed" or self.era.notify == "agent":
                # `remove` is not a delivery: killed agents and the 2.0.x era never get a user line.
                self.queue_line("remove", min(ts, t_end + self.rng.randint(2, 900)), text if self.era.notify != "agent" else None)
                if self.era.notify == "agent" and run.status != "killed":
                    run.notified += 1
            else:
                self.ready.append(run)

    def notification(self, run: Running) -> str:
        era = self.era
        out_file = f"{self.tmp}/tasks/{run.agent_id}.output"
        desc = run.description
        if run.task_kind == "bash":
            ok = run.status == "completed"
            summary = (f'Background command "{desc}" completed (exit code 0)' if ok
                       else f'Background command "{desc}" failed with exit code 1')
            tu = f"<tool-use-id>{run.tool_use_id}</tool-use-id>\n" if era.modern else ""
            return (f"<task-notification>\n<task-id>{run.agent_id}</task-id>\n{tu}<output-file>{out_file}</output-file>\n"
                    f"<status>{run.status}</status>\n<summary>{summary}</summary>\n</task-notification>\n"
                    f"Read the output file to retrieve the result: {out_file}")
        if era.notify == "agent":
            return (f"<agent-notification>\n<agent-id>{run.agent_id}</agent-id>\n<output-file>{out_file}</output-file>\n"
                    f"<status>{run.status}</status>\n<summary>Agent \"{desc}\" {'completed' if run.status == 'completed' else 'was stopped by user'}.</summary>\n"
                    "Read the output file to retrieve the full result.\n</agent-notification>")
        if era.notify == "modern":
            if run.task_kind == "workflow":
                return (f"<task-notification>\n<task-id>{run.agent_id}</task-id>\n<tool-use-id>{run.tool_use_id}</tool-use-id>\n"
                        f"<output-file>{out_file}</output-file>\n<status>completed</status>\n"
                        f"<summary>Dynamic workflow \"{desc}\" completed</summary>\n<result>{xml_escape(run.output)}</result>\n"
                        "</task-notification>")
            if run.status == "killed":
                return (f"<task-notification>\n<task-id>{run.agent_id}</task-id>\n<tool-use-id>{run.tool_use_id}</tool-use-id>\n"
                        f"<output-file>{out_file}</output-file>\n<status>killed</status>\n"
                        f"<summary>Agent \"{desc}\" was stopped by user</summary>\n</task-notification>")
            return (f"<task-notification>\n<task-id>{run.agent_id}</task-id>\n<tool-use-id>{run.tool_use_id}</tool-use-id>\n"
                    f"<output-file>{out_file}</output-file>\n<status>completed</status>\n"
                    f"<summary>Agent \"{desc}\" finished</summary>\n<note>{MODERN_NOTE}</note>\n"
                    f"<result>{xml_escape(run.final_text)}</result>\n"
                    f"<usage><subagent_tokens>{run.total_tokens}</subagent_tokens><tool_uses>{run.tool_uses}</tool_uses>"
                    f"<duration_ms>{run.duration_ms}</duration_ms></usage>\n</task-notification>")
        # 2.1.17 / 2.1.37: the result is copied verbatim (real files show unescaped quotes and '>')
        usage = (f"<usage>total_tokens: {run.total_tokens}\ntool_uses: {run.tool_uses}\nduration_ms: {run.duration_ms}</usage>\n"
                 if era.notify == "2.1.37" else "")
        if run.status == "killed":
            return (f"<task-notification>\n<task-id>{run.agent_id}</task-id>\n<status>killed</status>\n"
                    f"<summary>Agent \"{desc}\" was stopped by user</summary>\n</task-notification>")
        return (f"<task-notification>\n<task-id>{run.agent_id}</task-id>\n<status>completed</status>\n"
                f"<summary>Agent \"{desc}\" completed</summary>\n<result>{run.final_text}</result>\n{usage}"
                f"</task-notification>\nFull transcript available at: {out_file}")

    # -- main loop ---------------------------------------------------------------------------
    def run(self) -> None:
        self.head()
        guard = 0
        while not self.done():
            guard += 1
            if self.recipe.wait_at and not self.waited and self.progress() >= self.recipe.wait_at:
                self.wait_all()
                self.waited = True
            if self.compact_due and self.progress() >= self.compact_due[0]:
                self.compact_due.pop(0)
                self.compact()
            self.turn()
            if guard > 200_000:
                break
        self.finish()

    def head(self) -> None:
        r = self.rng
        if self.era.key in ("inline", "sibling"):
            for _ in range(r.randint(0, 2)):
                self.tr.write({"type": "summary", "summary": self.forge.description(), "leafUuid": self.ids.uuid()})
        if self.recipe.hooks and self.era.key not in ("inline", "sibling"):
            a = self.parent
            tid = self.ids.uuid()
            for cmd in ("~/.claude/hooks/notify.sh clear", "bd prime")[: self.recipe.hooks]:
                a.now += r.randint(5, 60)
                data = {"type": "hook_progress", "hookEvent": "SessionStart", "hookName": "SessionStart:startup", "command": cmd}
                a.emit(self.env.progress(self.ids.uuid(), a.last_uuid, a.now, data, tid, tid), a.now)

    def snapshot(self, message_id: str, update: bool = False) -> None:
        r = self.rng
        backups = {}
        if update or r.random() < 0.4:
            for _ in range(r.randint(1, 4)):
                backups[r.choice(self.project.files)] = {"backupFileName": f"{self.ids.hexs(16)}@v{r.randint(1, 5)}",
                                                         "version": r.randint(1, 5), "backupTime": iso(self.now)}
        d = {"type": "file-history-snapshot", "messageId": message_id,
             "snapshot": {"messageId": message_id, "trackedFileBackups": backups, "timestamp": iso(self.now)},
             "isSnapshotUpdate": update}
        self.tr.write(d, self.now, corruptible=True)

    def turn(self) -> None:
        r = self.rng
        a = self.parent
        era = self.era
        gap = int(min(7_200_000, r.lognormvariate(10.6, 1.3)))  # human think time, median ~40 s
        if self.heap and era.notify not in ("", "agent") and self.heap[0][0] <= a.now + gap:
            a.now = max(a.now, self.heap[0][0]) + r.randint(20, 2000)
        else:
            a.now += gap
        self.flush_queue(a.now)
        if self.ready:
            run = self.ready.pop(0)
            self.deliver(run)
            calls = r.choice((1, 1, 2, 3))
        else:
            if self.caveat_due and self.progress() >= self.caveat_due[0]:
                self.caveat_due.pop(0)
                self.caveat()
            uid_hint = self.ids.uuid()
            if era.key != "inline":
                self.snapshot(uid_hint)
            prompt = self.forge.human()
            if self.fp_due and self.progress() >= self.fp_due[0]:
                self.fp_due.pop(0)
                prompt += f'\n\nwhen you are done, run akm remember "{self.forge.sentence().replace(chr(96), "")}"'
            a.user_text(prompt, human=True)
            if era.modern and self.recipe.title and not self.title_written and (
                    self.recipe.title == "head" or self.progress() > 0.5):
                self.tr.write({"type": "custom-title", "customTitle": self.forge.description(), "sessionId": self.sid}, a.now)
                self.title_written = True
            if era.key == "2.1.39" and r.random() < 0.3:
                self.tr.write({"parentUuid": a.last_uuid, "isSidechain": False, "userType": "external",
                               "cwd": self.project.cwd, "sessionId": self.sid, "version": self.version,
                               "gitBranch": self.branch, "type": "progress",
                               "data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit",
                                        "hookName": "UserPromptSubmit", "command": "~/.claude/hooks/notify.sh clear"},
                               "parentToolUseID": self.ids.uuid(), "toolUseID": self.ids.uuid(),
                               "timestamp": iso(a.now), "uuid": self.ids.uuid()}, a.now, corruptible=True)
            calls = max(1, min(60, int(r.expovariate(1 / 11.0)) + 1))
        turn_start = a.now
        if self.env.slug is None and not era.modern and era.key != "inline" and a.lines > 3:
            self.env.slug = self.slug_name
        for c in range(calls):
            self.parent_call(last=(c == calls - 1))
            if self.done() and c < calls - 1 and r.random() < 0.5:
                self.parent_call(last=True)
                break
        self.turn_end(turn_start)

    def turn_end(self, turn_start: int) -> None:
        r = self.rng
        a = self.parent
        if self.era.key in ("inline", "sibling"):
            return
        if self.recipe.hooks and r.random() < 0.7:
            a.now += r.randint(100, 3000)
            fields = {"hookCount": self.recipe.hooks, "hookInfos": [{"command": "~/.claude/hooks/notify.sh mark"}] * self.recipe.hooks,
                      "hookErrors": [], "preventedContinuation": False, "stopReason": "", "hasOutput": True, "level": "suggestion"}
            obj = self.env.system(self.ids.uuid(), a.last_uuid, a.now, "stop_hook_summary", fields)
            obj["toolUseID"] = self.ids.uuid()
            a.emit(obj, a.now)
        if r.random() < 0.6:
            a.now += r.randint(5, 80)
            a.emit(self.env.system(self.ids.uuid(), a.last_uuid, a.now, "turn_duration",
                                   {"durationMs": a.now - turn_start}), a.now)

    def caveat(self) -> None:
        a = self.parent
        r = self.rng
        a.now += r.randint(1000, 60_000)
        a.user_text(CAVEAT, meta=True)
        cmd = r.choice(("model", "clear", "context", "cost", "mcp"))
        if self.era.key in ("inline", "sibling", "2.1.17"):
            a.user_text(f"<command-name>/{cmd}</command-name>\n            <command-message>{cmd}</command-message>\n            <command-args></command-args>")
            a.user_text(f"<local-command-stdout>{self.forge.sentence()}</local-command-stdout>")
        else:
            for content in (f"<command-name>/{cmd}</command-name>\n            <command-message>{cmd}</command-message>\n            <command-args></command-args>",
                            f"<local-command-stdout>{self.forge.sentence()}</local-command-stdout>"):
                a.emit(self.env.system(self.ids.uuid(), a.last_uuid, a.now, "local_command", {"content": content},
                                       level="info"), a.now)

    def deliver(self, run: Running) -> None:
        """A queued notification becomes the next turn: `dequeue`, then the same string as a user line."""
        a = self.parent
        text = self.notification(run)
        self.queue_line("dequeue", a.now)
        a.user_text(text, origin="task-notification")
        run.notified += 1
        if run.plan.fate == "resumed" and run.notified == 1 and run.actor is not None:
            run.resume_due = True
            self.resumable.append(run)
        # The model often restates parts of the report: partial duplication, as in real sessions.
        if run.final_text and self.rng.random() < 0.6:
            bullets = [ln for ln in run.final_text.splitlines() if ln.startswith("- ")][:4]
            if bullets:
                reply = f"The {run.description.lower()} agent is done. The points that matter:\n" + "\n".join(bullets)
                a.api_call([{"type": "text", "text": reply}])

    # -- one assistant call in the main thread ------------------------------------------------
    def parent_call(self, last: bool) -> None:
        r = self.rng
        a = self.parent
        era = self.era
        p = self.progress()
        if last:
            blocks = []
            if r.random() < 0.12:
                blocks.append(a.thinking(r.randint(60, 900)))
            size = int(r.choice((60, 120, 250, 600, 1400)) * self.recipe.scale)
            text = a.forge.short() if size < 200 else a.forge.prose(size)
            blocks.append({"type": "text", "text": text})
            a.api_call(blocks)
            return
        if self.plan_i < len(self.plans) and self.plans[self.plan_i].at <= p and not (self.recipe.wait_at and self.waited):
            self.spawn_due(p)
            return
        if self.akm_due and self.akm_due[0][0] <= p:
            _, kind = self.akm_due.pop(0)
            self.akm(kind)
            return
        if self.resumable and r.random() < 0.5:
            self.resume(self.resumable.pop(0))
            return
        if era.notify == "agent" and self.awaiting_output and r.random() < 0.35:
            self.task_output(self.awaiting_output[0], block=r.random() < 0.5)
            return
        if self.persist_due and self.persist_due[0] <= p:
            self.persist_due.pop(0)
            self.persisted_output()
            return
        if not self.invalid_done and p > 0.3:
            self.invalid_done = True
            self.binary_output()
            return
        self.work_call(a, PARENT_TOOLS)

    def work_call(self, a: Actor, tools: tuple, n_tools: int | None = None) -> None:
        r = self.rng
        blocks = []
        if r.random() < 0.24:
            blocks.append(a.thinking(int(r.choice((40, 60, 150, 400, 900)))))
        if r.random() < 0.45:
            blocks.append({"type": "text", "text": a.forge.short()})
        n = n_tools or (1 if r.random() < 0.74 else r.choice((2, 2, 3, 4)))
        made = [a.make_tool(_weighted(r, tools)) for _ in range(n)]
        blocks.extend(m[0] for m in made)
        uuids = a.api_call(blocks)
        for (block, content, tur, err, dur), uuid in zip(made, uuids[-n:]):
            self.run_tool(a, block, content, tur, err, dur, uuid)

    def run_tool(self, a: Actor, block: dict, content, tur, err: bool, dur: int, uuid: str) -> None:
        r = self.rng
        era = self.era
        hooks = self.recipe.hooks if era.key not in ("inline", "sibling") else 0
        name = block["name"]
        for i in range(hooks if r.random() < 0.8 else 0):
            a.hook("PreToolUse", name, block["id"], ("cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./guardian.ts", "~/.claude/hooks/pre-commit.sh")[i % 2])
        if name == "Bash" and dur > 6000 and era.key in ("2.1.17", "2.1.39", "modern"):
            out = content if isinstance(content, str) else ""
            for k in range(min(8, dur // 6000)):
                a.now += 1000 * r.randint(1, 5)
                cut = out[: max(0, (k + 1) * len(out) // 8)]
                data = {"type": "bash_progress", "output": cut[-400:], "fullOutput": cut[-3000:],
                        "elapsedTimeSeconds": (k + 1) * 3, "totalLines": cut.count("\n")}
                a.emit(a.env.progress(self.ids.uuid(), a.last_uuid, a.now, data, f"bash-progress-{k}", block["id"]),
                       a.now, corruptible=True)
        a.tool_result(block, content, tur, uuid, is_error=err, wait_ms=dur)
        for i in range(hooks if r.random() < 0.8 else 0):
            a.hook("PostToolUse", name, block["id"], "${CLAUDE_PLUGIN_ROOT}/scripts/post-tool-capture.sh")
        if a.is_parent and name in ("Edit", "Write") and era.key != "inline" and r.random() < 0.35:
            self.snapshot(self.ids.uuid(), update=True)
        if hooks and name in ("Edit", "Write") and r.random() < 0.1:
            a.now += r.randint(10, 200)
            note = f"<system-reminder>\nPostToolUse:{name} hook additional context: [COMPILE]\n{a.forge.shell(r.randint(100, 500))}\n</system-reminder>"
            uuid2 = self.ids.uuid()
            obj = a.env.user(uuid2, a.last_uuid, a.now, [{"type": "text", "text": note}], meta=True,
                             source_tool_use=block["id"] if not era.modern else None)
            a.emit(obj, a.now)

    # -- akm, persisted output, binary output ---------------------------------------------------
    def akm(self, kind: str, a: Actor | None = None) -> None:
        a = a or self.parent
        block, out, tur = a.akm_call(kind)
        blocks = [block]
        if self.rng.random() < 0.4:
            blocks.insert(0, {"type": "text", "text": a.forge.short()})
        uuids = a.api_call(blocks)
        self.run_tool(a, block, out, tur, False, self.rng.randint(200, 2500), uuids[-1])

    def persisted_output(self) -> None:
        a = self.parent
        r = self.rng
        cmd, desc, kind = a.bash_command()
        block = a.tool_use("Bash", {"command": cmd, "description": desc})
        uuids = a.api_call([block])
        full = a.forge.shell(r.randint(60_000, 180_000), "test")
        path = self.session_dir / "tool-results" / f"{block['id']}.txt"
        write_json_file(path, None, self.tally, a.now, raw=full.encode())
        self.tally.subagent_files["tool_results"] = self.tally.subagent_files.get("tool_results", 0) + 1
        content = (f"<persisted-output>\nOutput too large ({len(full) / 1024:.1f}KB). Full output saved to: {path.as_posix().replace(self.root.as_posix(), '~/.claude/projects')}\n\n"
                   f"Preview (first 2KB):\n{full[:2000]}\n...\n</persisted-output>")
        tur = {"stdout": full[:2000], "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
        self.run_tool(a, block, content, tur, False, r.randint(2000, 30_000), uuids[-1])

    def binary_output(self) -> None:
        """A tool result holding bytes that are not UTF-8 (cat of a binary file)."""
        a = self.parent
        block = a.tool_use("Bash", {"command": f"head -c 64 build/{self.project.module}.bin", "description": "Peek at the artifact"})
        uuids = a.api_call([block])
        a.now += 300
        res = {"tool_use_id": block["id"], "type": "tool_result", "content": "ELF@@BIN@@ .text .data @@BIN@@ ok"}
        uuid = self.ids.uuid()
        obj = a.env.user(uuid, a.last_uuid, a.now, [res], tur={"stdout": "ELF@@BIN@@", "stderr": "", "interrupted": False,
                                                               "isImage": False, "noOutputExpected": False}, source=uuids[-1])
        self.flush_queue(a.now)
        data = orjson.dumps(obj).replace(b"@@BIN@@", b"\x7f\xff\xfe\xc3\x28\xa0") + b"\n"
        self.tr.write_raw(data, a.now)
        a.last_uuid = uuid

    # -- spawning -------------------------------------------------------------------------------
    def agent_prompt(self, plan: AgentPlan, desc: str) -> str:
        f = self.forge
        r = self.rng
        where = "in the working tree" if self.branch == "main" else f"on branch `{self.branch}` compared to main"
        lines = [f"{desc} {where}.", "",
                 f"1. Run `git diff main...HEAD` and read `{r.choice(self.project.files)}`", "2. Focus on:"]
        for _ in range(r.randint(2, 6)):
            lines.append(f"   - {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} around `{r.choice(self.project.functions)}`")
        lines.append("")
        lines.append(f.prose(r.choice((80, 200, 400, 800))))
        lines.append("")
        lines.append(r.choice(("Be specific about file:line for every finding.", "Do research only, don't write any code.",
                               "Report back with a prioritized list.", "Keep the report under 800 words.")))
        return "\n".join(lines)

    def spawn_due(self, p: float) -> None:
        r = self.rng
        a = self.parent
        first = self.plans[self.plan_i]
        batch = [first]
        self.plan_i += 1
        if first.group:
            while self.plan_i < len(self.plans) and self.plans[self.plan_i].group == first.group:
                batch.append(self.plans[self.plan_i])
                self.plan_i += 1
        blocks = []
        if r.random() < 0.7:
            blocks.append({"type": "text", "text": (f"I'll launch {len(batch)} agents in parallel to cover this." if len(batch) > 1
                                                    else a.forge.short())})
        launches = []
        for plan in batch:
            desc = a.bash_command()[1] if plan.kind == "bash" else self.forge.description()
            launches.append((plan, self.launch_block(plan, desc), desc))
        blocks.extend(block for _, block, _ in launches)
        uuids = a.api_call(blocks)
        for (plan, block, desc), uuid in zip(launches, uuids[-len(launches):]):
            self.launch(plan, block, desc, uuid)

    def launch_block(self, plan: AgentPlan, desc: str) -> dict:
        a = self.parent
        era = self.era
        if plan.kind == "bash":
            cmd, _, _ = a.bash_command()
            return a.tool_use("Bash", {"command": cmd, "description": desc, "run_in_background": True})
        if plan.kind == "workflow":
            name = "-".join(desc.lower().split()[:3])
            return a.tool_use("Workflow", {"scriptPath": f"{self.project.cwd}/.claude/workflows/{name}.workflow.js",
                                           "args": {"target": self.rng.choice(self.project.files).split("/")[0] + "/",
                                                    "batches": plan.workflow_agents}})
        prompt = self.agent_prompt(plan, desc)
        if era.modern:
            inp = {"description": desc, "subagent_type": plan.agent_type}
            if plan.agent_type == "Explore":
                inp["model"] = "haiku"
            inp["prompt"] = prompt
        else:
            inp = {"description": desc, "prompt": prompt, "subagent_type": plan.agent_type}
        if plan.kind == "async":
            inp["run_in_background"] = True
        return a.tool_use(era.task_tool, inp)

    def launch(self, plan: AgentPlan, block: dict, desc: str, source_uuid: str) -> None:
        r = self.rng
        a = self.parent
        era = self.era
        if plan.kind == "bash":
            tid = self.ids.bash_task(era.modern)
            dur = plan.duration_s * 1000 if plan.duration_s > 0 else r.randint(20_000, 900_000)
            run = Running(plan, tid, block["id"], desc, "", t_end=a.now + dur, task_kind="bash",
                          status="completed" if r.random() < 0.8 else "failed")
            text = (f"Command running in background with ID: {tid}. Output is being written to: {self.tmp}/tasks/{tid}.output"
                    + (". You will be notified when it completes. To check interim output, use Read on that file path." if era.modern else ""))
            tur = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False,
                   "backgroundTaskId": tid}
            a.tool_result(block, text, tur, source_uuid, wait_ms=200)
            self.push(run)
            return
        if plan.kind == "workflow":
            self.run_workflow(plan, block, desc, source_uuid)
            return
        prompt = block["input"]["prompt"]
        start = a.now + r.randint(30, 400)
        duration = plan.duration_s * 1000 if plan.duration_s > 0 else 0
        if plan.duration_s < 0:
            # "Late" agents run alongside the parent's final stretch: stretch them over the
            # parent's expected remaining wall time (the rate so far times what is left).
            rate = (a.now - self.recipe.start_ms) / max(0.01, self.progress())
            duration = int(-plan.duration_s * rate * max(0.02, 1.0 - self.progress()))
        run = self.run_subagent(plan, tool_use_id=block["id"], description=desc, prompt=prompt, start=start,
                                duration_ms=duration)
        if plan.kind == "sync":
            if run.actor is not None and run.actor.echo:
                for ms, entry in run.actor.echo:
                    data = {"message": entry, "normalizedMessages": [], "type": "agent_progress", "prompt": prompt,
                            "agentId": run.agent_id}
                    t = a.now = max(a.now, ms)
                    a.emit(a.env.progress(self.ids.uuid(), a.last_uuid, t, data,
                                          "agent_msg_" + self.ids.msg()[4:], block["id"]), t, corruptible=True)
                run.actor.echo = None
            a.now = max(a.now, run.t_end) + r.randint(20, 900)
            self.sync_result(run, block, source_uuid)
            return
        # background launch
        out_file = f"{self.tmp}/tasks/{run.agent_id}.output"
        if era.notify == "agent":
            text = (f"Async agent launched successfully.\nagentId: {run.agent_id} (This is an internal ID for your use, do not mention it to the user. "
                    "Use this ID to retrieve results with TaskOutput when the agent finishes).\nThe agent is currently working in the background. "
                    "If you have other tasks you you should continue working on them now. Wait to call TaskOutput until either:\n"
                    "- If you want to check on the agent's progress - call TaskOutput with block=false to get an immediate update on the agent's status\n"
                    "- If you run out of things to do and the agent is still running - call TaskOutput with block=true to idle and wait for the "
                    "agent's result (do not use block=true unless you completely run out of things to do as it will waste time).")
            tur = {"isAsync": True, "status": "async_launched", "agentId": run.agent_id, "description": desc, "prompt": prompt,
                   "outputFile": out_file}
            self.awaiting_output.append(run)
        elif era.modern:
            text = (f"Async agent launched successfully. (This tool result is internal metadata — never quote or paste any part of it, "
                    f"including the agentId below, into a user-facing reply.)\nagentId: {run.agent_id} (internal ID - do not mention to user. "
                    f"Use SendMessage with to: '{run.agent_id}', summary: '<5-10 word recap>' to continue this agent.)\n"
                    "The agent is working in the background. You will be notified automatically when it completes. You know nothing about "
                    "its results until that notification arrives — do not report, assume, or predict them; continue other work or respond "
                    "to the user in the meantime.\nDo not duplicate this agent's work — avoid working with the same files or topics it is using.\n"
                    f"output_file: {out_file}\nDo NOT Read or tail this file via the shell tool — it is the full subagent JSONL transcript and "
                    "reading it will overflow your context. If the user asks for progress, say the agent is still running; you'll get a "
                    "completion notification.")
            tur = {"isAsync": True, "status": "async_launched", "agentId": run.agent_id, "description": desc,
                   "resolvedModel": era.fast_model if plan.agent_type == "Explore" else era.model, "prompt": prompt,
                   "outputFile": out_file, "canReadOutputFile": True}
        else:
            text = (f"Async agent launched successfully.\nagentId: {run.agent_id} (internal ID - do not mention to user. Use to resume later if needed.)\n"
                    f"output_file: {out_file}\nThe agent is working in the background. You will be notified when it completes—no need to check. "
                    "Continue with other tasks.\nTo check progress before completion (optional), use Read or Bash tail on the output file.")
            tur = {"isAsync": True, "status": "async_launched", "agentId": run.agent_id, "description": desc, "prompt": prompt,
                   "outputFile": out_file}
        a.tool_result(block, [{"type": "text", "text": text}], tur, source_uuid, wait_ms=100)
        self.push(run)

    def footer(self, run: Running) -> str:
        era = self.era
        usage = f"\n<usage>total_tokens: {run.total_tokens}\ntool_uses: {run.tool_uses}\nduration_ms: {run.duration_ms}</usage>"
        if era.modern:
            return f"agentId: {run.agent_id} (use SendMessage with to: '{run.agent_id}' to continue this agent){usage}"
        if era.key == "2.1.39":
            return f"agentId: {run.agent_id} (for resuming to continue this agent's work if needed){usage}"
        return f"agentId: {run.agent_id} (for resuming to continue this agent's work if needed)"

    def sync_result(self, run: Running, block: dict, source_uuid: str) -> None:
        era = self.era
        final = [{"type": "text", "text": run.final_text}]
        if era.layout == "inline":
            tur = {"content": final, "totalDurationMs": run.duration_ms, "totalTokens": run.total_tokens,
                   "totalToolUseCount": run.tool_uses, "usage": run.usage}
            self.parent.tool_result(block, final, tur, source_uuid)
            return
        tur = {"status": "completed", "prompt": run.prompt, "agentId": run.agent_id, "content": final,
               "totalDurationMs": run.duration_ms, "totalTokens": run.total_tokens, "totalToolUseCount": run.tool_uses,
               "usage": run.usage}
        self.parent.tool_result(block, final + [{"type": "text", "text": self.footer(run)}], tur, source_uuid)

    def write_meta(self, path: Path, plan: AgentPlan, desc: str, tool_use_id: str, depth: int,
                   parent_agent: str | None, workflow: bool) -> None:
        r = self.rng
        meta_path = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
        ms = self.now
        if workflow:
            meta = {"agentType": "workflow-subagent"}
            if r.random() < 0.5:
                meta["spawnDepth"] = 1
            if r.random() < 0.3:
                meta["model"] = r.choice(("sonnet", "haiku"))
            if r.random() < 0.3:
                meta["workflowPhase"] = r.choice(("Sweep", "Review", "Verify"))
            write_json_file(meta_path, meta, self.tally, ms)
            self._count("meta_workflow")
            return
        if plan.sidecar == "missing":
            self._count("meta_missing")
            return
        if plan.sidecar == "null":
            write_json_file(meta_path, None, self.tally, ms, raw=b"null")
            self._count("meta_null")
            return
        meta = {"agentType": plan.agent_type, "description": desc, "toolUseId": tool_use_id, "spawnDepth": depth}
        if plan.agent_type == "Explore":
            meta["model"] = "haiku"
        if parent_agent:
            meta["parentAgentId"] = parent_agent
        if plan.sidecar == "broken":
            data = orjson.dumps(meta)
            write_json_file(meta_path, None, self.tally, ms, raw=data[: len(data) // 2])  # write cut short
            self._count("meta_broken")
            return
        write_json_file(meta_path, meta, self.tally, ms)
        self._count("meta_full" if depth == 1 else "meta_depth2")

    def _count(self, key: str) -> None:
        self.tally.subagent_files[key] = self.tally.subagent_files.get(key, 0) + 1

    def run_subagent(self, plan: AgentPlan, *, tool_use_id: str, description: str, prompt: str, start: int,
                     duration_ms: int = 0, depth: int = 1, parent_agent: str | None = None,
                     wf_dir: Path | None = None, agent_type: str | None = None) -> Running:
        """Write one subagent transcript (and its sidecar) from `start`; return its outcome."""
        r = self.rng
        era = self.era
        agent_type = agent_type or plan.agent_type
        agent_id = self.ids.agent(era.agent_id)
        if era.layout == "inline":
            env = Envelope(era, self.sid, self.project.cwd, self.version, self.branch, agent_id=None, sidechain=True)
            tr = self.tr
            path = self.tr.path
        else:
            env = Envelope(era, self.sid, self.project.cwd, self.version, self.branch, agent_id=agent_id, sidechain=True,
                           agent_type=agent_type if era.modern else None)
            if era.layout == "sibling":
                path, layout = self.proj_dir / f"agent-{agent_id}.jsonl", "sibling"
            elif wf_dir is not None:
                path, layout = wf_dir / f"agent-{agent_id}.jsonl", "workflow"
            else:
                path, layout = self.session_dir / "subagents" / f"agent-{agent_id}.jsonl", ("subagents" if depth == 1 else "subagents_depth2")
            if not era.modern and era.key != "sibling":
                env.slug = self.slug_name
            tr = Transcript(path, env, self.tally, layout)
            if era.sidecars:
                self.write_meta(path, plan, description, tool_use_id, depth, parent_agent, wf_dir is not None)
        model = era.fast_model if agent_type == "Explore" else era.model
        actor = Actor(self, tr, env, start, model, False, scale=plan.step_scale)
        if era.agent_progress and plan.kind == "sync" and depth == 1:
            actor.echo = []
        if era.notify == "agent" and plan.kind == "async":
            actor.tool_log = []
        if duration_ms > 0:
            natural = max(1, plan.events // 3) * 11_000
            actor.pace = max(0.2, duration_ms / natural)
        if era.modern:
            env.prompt_id = self.ids.uuid()
        actor.user_text(prompt)
        if actor.echo is not None:
            actor.echo.append((actor.now, {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
                                           "uuid": actor.last_uuid, "timestamp": iso(actor.now)}))
        run = Running(plan, agent_id, tool_use_id, description, prompt, actor=actor)
        tools = (EXPLORE_TOOLS if agent_type == "Explore" else
                 REVIEW_TOOLS if any(w in description for w in ("Review", "Audit", "review", "Explore", "Find", "Map", "Trace"))
                 else IMPLEMENT_TOOLS)
        first_target = plan.events if plan.fate != "resumed" else max(4, plan.events // 3)
        self.agent_work(actor, plan, first_target, tools, depth, agent_id, plan_akm=True)
        if plan.fate == "killed":
            run.status = "killed"
            run.final_text = ""
        else:
            size = plan.report_chars if plan.fate != "resumed" else max(300, plan.report_chars // 4)
            title = description if plan.fate != "resumed" else f"Partial results: {description}"
            report = actor.forge.report(size, title)
            if plan.fate == "resumed":
                report = ("I could not finish: " + actor.forge.sentence() + "\n\n" + report)
            actor.api_call([{"type": "text", "text": report}])
            run.final_text = report
        self.close_agent(run)
        return run

    def close_agent(self, run: Running) -> None:
        actor = run.actor
        run.t_end = actor.now + self.rng.randint(50, 900)
        run.tool_uses = actor.tool_uses
        run.duration_ms = run.t_end - actor.first_ts
        run.usage = actor.meter.final_usage(len(run.final_text))
        run.total_tokens = total_tokens(run.usage)
        if actor.tr is not self.tr:
            actor.tr.close()

    def agent_work(self, actor: Actor, plan: AgentPlan, target: int, tools: tuple, depth: int, agent_id: str,
                   plan_akm: bool) -> None:
        r = self.rng
        special = []
        if plan_akm:
            special = (["remember"] * plan.remember + ["feedback"] * plan.feedback
                       + [r.choice(("search", "show")) for _ in range(plan.readonly)]
                       + ["nested"] * (plan.nested if depth == 1 else 0))
            r.shuffle(special)
        steps_est = max(1, (target - 2) // 3)
        slots = sorted(r.randint(0, steps_est) for _ in special)
        step = 0
        while actor.msg_lines < target - 1 or special:
            while special and slots and slots[0] <= step:
                slots.pop(0)
                kind = special.pop(0)
                if kind == "nested":
                    self.nested(actor, plan, agent_id)
                else:
                    self.akm(kind, actor)
            if actor.msg_lines >= target - 1 and not special:
                break
            if special and step > steps_est:
                slots = [step] * len(special)
                continue
            self.work_call(actor, tools)
            step += 1

    def nested(self, actor: Actor, plan: AgentPlan, parent_agent: str) -> None:
        """A subagent spawning its own subagent: the spawn lives in the parent agent's file."""
        r = self.rng
        era = self.era
        desc = self.forge.description()
        prompt = self.agent_prompt(plan, desc)
        inp = {"description": desc, "subagent_type": "Explore", "prompt": prompt} if era.modern else \
            {"description": desc, "prompt": prompt, "subagent_type": "Explore"}
        block = actor.tool_use(era.task_tool, inp)
        uuids = actor.api_call([block])
        sub_plan = AgentPlan(at=0, kind="sync", events=r.randint(8, 24), report_chars=r.randint(800, 2500), agent_type="Explore")
        run = self.run_subagent(sub_plan, tool_use_id=block["id"], description=desc, prompt=prompt, start=actor.now + 100,
                                depth=2, parent_agent=parent_agent)
        actor.now = run.t_end + r.randint(20, 500)
        final = [{"type": "text", "text": run.final_text}]
        tur = {"status": "completed", "prompt": prompt, "agentId": run.agent_id, "content": final,
               "totalDurationMs": run.duration_ms, "totalTokens": run.total_tokens, "totalToolUseCount": run.tool_uses,
               "usage": run.usage}
        actor.tool_result(block, final + [{"type": "text", "text": self.footer(run)}], tur, uuids[-1])

    def run_workflow(self, plan: AgentPlan, block: dict, desc: str, source_uuid: str) -> None:
        """A dynamic workflow: N agents under subagents/workflows/<runId>/, a journal and a run snapshot."""
        r = self.rng
        a = self.parent
        run_id = "wf_" + "".join(r.choices(LOWER_ALNUM, k=10))
        task_id = self.ids.workflow_task()
        wf_dir = self.session_dir / "subagents" / "workflows" / run_id
        name = block["input"]["scriptPath"].rsplit("/", 1)[-1].replace(".workflow.js", "")
        text = (f"Workflow launched in background. Task ID: {task_id}\nSummary: {desc}\n"
                f"Transcript dir: {self.sid}/subagents/workflows/{run_id}\nScript file: {block['input']['scriptPath']}")
        tur = {"isAsync": True, "status": "async_launched", "runId": run_id, "taskId": task_id,
               "transcriptDir": f"{self.sid}/subagents/workflows/{run_id}", "scriptPath": block["input"]["scriptPath"]}
        a.tool_result(block, text, tur, source_uuid, wait_ms=150)
        t0 = a.now
        duration = 0
        if plan.duration_s < 0:
            rate = (a.now - self.recipe.start_ms) / max(0.01, self.progress())
            duration = int(-plan.duration_s * rate * max(0.02, 1.0 - self.progress()))
        journal = []
        results = []
        ends = []
        total_tok = 0
        total_tools = 0
        for k in range(plan.workflow_agents):
            label = f"{r.choice(VERBS)}:{chr(97 + k % 26)}"
            wdesc = f"{label} {desc.lower()}"
            start = t0 + r.randint(200, 5000) + (k * r.randint(500, 20_000) if duration == 0 else int(duration * 0.3 * k / max(1, plan.workflow_agents)))
            sub_plan = AgentPlan(at=0, kind="async", events=max(4, int(plan.events * r.uniform(0.6, 1.4))),
                                 report_chars=r.randint(300, 1500), agent_type="workflow-subagent",
                                 remember=plan.remember if k == 0 else 0, feedback=plan.feedback if k == 0 else 0,
                                 step_scale=plan.step_scale)
            prompt = f"{desc}: batch {label}\n\n" + self.forge.prose(r.choice((100, 250, 500)))
            run = self.run_subagent(sub_plan, tool_use_id="", description=wdesc, prompt=prompt, start=start, wf_dir=wf_dir,
                                    duration_ms=int(duration * 0.7) if duration else 0, agent_type="workflow-subagent")
            key = f"v2:h{self.ids.hexs(6)}"
            journal.append((start, {"type": "started", "key": key, "agentId": run.agent_id}))
            journal.append((run.t_end, {"type": "result", "key": key, "agentId": run.agent_id, "result": run.final_text[:400]}))
            results.append({"label": label, "agentId": run.agent_id, "result": run.final_text[:300]})
            ends.append(run.t_end)
            total_tok += run.total_tokens
            total_tools += run.tool_uses
        t_end = (max(ends) if ends else t0) + r.randint(300, 4000)
        wf_dir.mkdir(parents=True, exist_ok=True)
        data = b"".join(orjson.dumps(obj) + b"\n" for _, obj in sorted(journal, key=lambda x: x[0]))
        write_json_file(wf_dir / "journal.jsonl", None, self.tally, t_end, raw=data)
        self._count("workflow_journal")
        snapshot = {"runId": run_id, "taskId": task_id, "status": "completed", "workflowName": name, "timestamp": iso(t0),
                    "durationMs": t_end - t0, "agentCount": plan.workflow_agents, "totalTokens": total_tok,
                    "totalToolCalls": total_tools, "defaultModel": self.era.model, "scriptPath": block["input"]["scriptPath"],
                    "args": block["input"]["args"], "summary": desc,
                    "workflowProgress": [{"type": "workflow_agent", "index": i, "label": res["label"], "agentId": res["agentId"],
                                          "state": "done", "resultPreview": res["result"][:80]} for i, res in enumerate(results)]}
        write_json_file(self.session_dir / "workflows" / f"{run_id}.json", snapshot, self.tally, t_end)
        output = orjson.dumps({"summary": desc, "results": results}).decode()
        self.push(Running(plan, task_id, block["id"], desc, "", t_end=t_end, task_kind="workflow", output=output,
                          final_text="", total_tokens=total_tok, tool_uses=total_tools))

    def resume(self, run: Running) -> None:
        """SendMessage to a finished background agent: it continues in the same file and notifies again."""
        r = self.rng
        a = self.parent
        msg = f"Please continue: {self.forge.sentence()}"
        inp = {"to": run.agent_id, "summary": self.forge.description(), "message": msg, "type": "message",
               "recipient": run.agent_id, "content": msg}
        block = a.tool_use("SendMessage", inp)
        uuids = a.api_call([block])
        pin = {"id": run.agent_id, "name": run.agent_id, "ref": self.ids.hexs(6)}
        tur = {"success": True, "message": f"Resuming agent {run.agent_id[:7]}", "resumedAgentId": run.agent_id, "pin": pin}
        a.tool_result(block, [{"type": "text", "text": orjson.dumps(tur).decode()}], tur, uuids[-1])
        actor = run.actor
        actor.tr = Transcript(actor.tr.path, actor.env, self.tally, "subagents", append=True)
        actor.now = a.now + r.randint(50, 500)
        actor.user_text(msg)
        tools = REVIEW_TOOLS
        self.agent_work(actor, run.plan, actor.msg_lines + run.plan.events - max(4, run.plan.events // 3), tools, 1,
                        run.agent_id, plan_akm=False)
        report = actor.forge.report(run.plan.report_chars, run.description)
        actor.api_call([{"type": "text", "text": report}])
        run.final_text = report
        self.close_agent(run)
        run.duration_ms = run.t_end - actor.first_ts
        self.push(run)

    def task_output(self, run: Running, block: bool) -> None:
        """2.0.x: the model polls a background agent with TaskOutput (no user-line delivery)."""
        a = self.parent
        inp = {"task_id": run.agent_id, "block": block, "timeout": 120000 if block else 30000}
        tu = a.tool_use("TaskOutput", inp)
        uuids = a.api_call([tu])
        if block:
            a.now = max(a.now, run.t_end + self.rng.randint(100, 3000))
        done = a.now >= run.t_end
        log = run.actor.tool_log or [] if run.actor else []
        shown = log if done else log[: max(1, len(log) // 2)]
        output = "\n".join(shown) + ("\n" + run.final_text if done else "") + "\n"
        status = "completed" if done else "running"
        retrieval = "success" if done else "not_ready"
        text = (f"<retrieval_status>{retrieval}</retrieval_status>\n\n<task_id>{run.agent_id}</task_id>\n\n<task_type>local_agent</task_type>\n\n"
                f"<status>{status}</status>\n\n<output>\n{output}</output>")
        tur = {"retrieval_status": retrieval, "task": {"task_id": run.agent_id, "task_type": "local_agent", "status": status,
                                                       "description": run.description, "output": output, "prompt": run.prompt}}
        a.tool_result(tu, text, tur, uuids[-1])
        if done and run in self.awaiting_output:
            self.awaiting_output.remove(run)

    # -- compaction, waiting, end -------------------------------------------------------------
    def compact(self) -> None:
        r = self.rng
        a = self.parent
        era = self.era
        pre = a.meter.context
        a.now += r.randint(20_000, 120_000)
        summary_analysis = self.forge.prose(int(r.randint(1500, 4000) * self.recipe.scale))
        summary_body = "\n".join(f"{i}. {h}:\n   {self.forge.prose(r.randint(150, 500))}" for i, h in
                                 enumerate(("Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections",
                                            "Errors and fixes", "Pending Tasks", "Current Work"), 1))
        if era.layout == "nested":
            cid = "acompact-" + self.ids.hexs(6)
            env = Envelope(era, self.sid, self.project.cwd, self.version, self.branch, agent_id=cid, sidechain=True)
            if not era.modern:
                env.slug = self.slug_name
            else:
                env.prompt_id = self.ids.uuid()
            tr = Transcript(self.session_dir / "subagents" / f"agent-{cid}.jsonl", env, self.tally, "acompact")
            c = Actor(self, tr, env, a.now - r.randint(15_000, 60_000), era.model, False)
            for _ in range(r.choice((0, 1, 1, 2, 3, 5))):
                c.user_text(f"<system-reminder>\nPostToolUse:Edit hook additional context: {self.forge.shell(r.randint(100, 700))}\n</system-reminder>", meta=True)
            c.user_text("Your task is to create a detailed summary of the conversation so far, paying close attention to the user's "
                        "explicit requests and your previous actions.\n" + self.forge.prose(r.randint(800, 2500)))
            c.api_call([{"type": "text", "text": f"\n\n<analysis>\n{summary_analysis}\n</analysis>\n\n<summary>\n{summary_body}\n</summary>"}])
            tr.close()
        if era.key == "inline":
            self.tr.write({"type": "summary", "summary": self.forge.description(), "leafUuid": a.last_uuid})
        else:
            boundary = self.env.system(self.ids.uuid(), None, a.now, "compact_boundary",
                                       {"compactMetadata": {"trigger": r.choice(("auto", "auto", "manual")), "preTokens": pre}},
                                       logical_parent=a.last_uuid)
            a.emit(boundary, a.now)
        a.now += r.randint(5, 50)
        a.user_text(COMPACT_PREFIX + "Analysis:\n" + summary_analysis + "\n\nSummary:\n" + summary_body, compact=True)
        a.meter.context = 16_000 + len(summary_analysis) // 4

    def wait_all(self) -> None:
        """The parent idles until every background task has reported (and reacts to each)."""
        a = self.parent
        r = self.rng
        while self.awaiting_output:
            self.task_output(self.awaiting_output[0], block=True)
        while self.heap or self.ready:
            if not self.ready:
                a.now = max(a.now, self.heap[0][0]) + r.randint(50, 3000)
                self.flush_queue(a.now)
                continue
            start = a.now
            self.deliver(self.ready.pop(0))
            self.parent_call(last=True)
            self.turn_end(start)

    def finish(self) -> None:
        r = self.rng
        a = self.parent
        while self.plan_i < len(self.plans):
            self.spawn_due(1.0)
        for _ in range(len(self.akm_due)):
            self.akm(self.akm_due.pop(0)[1])
        self.wait_all()
        while self.resumable:
            self.resume(self.resumable.pop(0))
            self.wait_all()
        if self.recipe.title and not self.title_written and self.era.modern:
            self.tr.write({"type": "custom-title", "customTitle": self.forge.description(), "sessionId": self.sid}, a.now)
        torn = None
        if self.recipe.torn_tail:
            # The process died mid-write: the last line has no end and no newline.
            a.now += r.randint(1000, 30_000)
            obj = a.env.assistant(self.ids.uuid(), a.last_uuid, a.now,
                                  {"model": a.model, "id": self.ids.msg(), "type": "message", "role": "assistant",
                                   "content": [{"type": "text", "text": self.forge.prose(400)}], "stop_reason": None,
                                   "stop_sequence": None, "usage": a.meter.call(400)}, self.ids.req())
            data = orjson.dumps(obj)
            torn = data[: r.randint(len(data) // 3, len(data) - 5)]
        self.tr.close(torn)



# ============================================================================================
# Shapes: named recipes for whole roots.
# ============================================================================================

ERA_EPOCH_MS = {  # first day of each era's sessions (UTC)
    "inline": 1_754_006_400_000,  # 2025-08-01
    "sibling": 1_767_571_200_000,  # 2026-01-05
    "2.1.17": 1_769_299_200_000,  # 2026-01-25
    "2.1.39": 1_770_681_600_000,  # 2026-02-10
    "modern": 1_786_320_000_000,  # 2026-08-10
}


@dataclass
class ShapeContext:
    """What a shape's planner sees: the seed, the requested size and the running tally."""

    seed: int
    sessions: int
    size_mb: float | None
    tally: Tally
    root: Path
    rng: random.Random
    projects: list = field(default_factory=list)


@dataclass(frozen=True)
class Shape:
    """A named generator of (recipe, project) pairs plus root-level extras."""

    name: str
    summary: str
    plan: Callable[[ShapeContext], Iterator[tuple[SessionRecipe, Project]]]
    extras: Callable[[ShapeContext, list], None] = lambda ctx, projects: None


def _start(rng: random.Random, era: str) -> int:
    return ERA_EPOCH_MS[era] + rng.randint(0, 20 * 86_400_000) + rng.randint(0, 86_399_999)


def _projects(rng: random.Random, n: int) -> list[Project]:
    names = rng.sample(PROJECT_NAMES, n)
    return [make_project(rng, name=names[i], language=LANGS[i % len(LANGS)]) for i in range(n)]


def _mixed_fixed(rng: random.Random) -> list[SessionRecipe]:
    """Twelve sessions that together cover every layout, version shape and error path."""
    A = AgentPlan
    R = SessionRecipe
    u = rng.uniform
    return [
        # 0: modern; parent near the 80k budget, big background reviewers running to its end (eviction)
        R("modern", 0, _start(rng, "modern"), target_chars=62_000, title="head", persisted_output=1, hooks=1,
          remember=1, feedback=1, readonly=2,
          agents=(A(0.15, "sync", events=20, report_chars=3000, agent_type="Explore"),
                  A(0.8, "async", events=75, report_chars=9000, group=1, duration_s=-1.3, remember=2, step_scale=0.6),
                  A(0.8, "async", events=58, report_chars=6000, group=1, duration_s=-1.2, step_scale=0.6),
                  A(0.8, "async", events=52, report_chars=4000, group=1, duration_s=-1.1, sidecar="missing", step_scale=0.6))),
        # 1: modern; fan-out with every sidecar variant, a resumed and a killed agent, a nested spawn
        R("modern", 1, _start(rng, "modern"), target_chars=35_000, title="late", compactions=1,
          agents=(A(0.2, "async", events=20, report_chars=int(u(2000, 5000)), group=2),
                  A(0.2, "async", events=16, report_chars=int(u(2000, 5000)), group=2, sidecar="missing"),
                  A(0.2, "async", events=13, report_chars=int(u(2000, 5000)), group=2, sidecar="null"),
                  A(0.35, "async", fate="resumed", events=23, report_chars=3500),
                  A(0.4, "bash"),
                  A(0.5, "async", fate="killed", events=9, sidecar="broken"),
                  A(0.6, "sync", events=17, report_chars=2500, nested=1, remember=3, feedback=1))),
        # 2: modern; dynamic workflows (journal, run snapshot, minimal sidecars)
        R("modern", 2, _start(rng, "modern"), target_chars=30_000, caveats=1, remember=1,
          agents=(A(0.25, "workflow", events=8, workflow_agents=4),
                  A(0.45, "async", events=18, report_chars=3000, agent_type="Explore"),
                  A(0.6, "workflow", events=6, workflow_agents=3, remember=1))),
        # 3: 2.1.39 (spotter-like): sync Tasks echoed as agent_progress, compaction, background Bash
        R("2.1.39", 3, _start(rng, "2.1.39"), target_chars=40_000, compactions=1, hooks=2, malformed=2, caveats=1,
          readonly=1,
          agents=(A(0.2, "sync", events=22, report_chars=3500, agent_type="Explore"),
                  A(0.3, "bash"),
                  A(0.55, "sync", events=18, report_chars=2500),
                  A(0.7, "bash"))),
        # 4: 2.1.37-era notifications with <usage>; pairs with no sidecars
        R("2.1.39", 4, _start(rng, "2.1.39"), target_chars=30_000, hooks=2,
          agents=(A(0.3, "async", events=22, report_chars=5500, group=3, remember=1),
                  A(0.3, "async", events=17, report_chars=3000, group=3),
                  A(0.3, "async", events=14, report_chars=4000, group=3),
                  A(0.7, "sync", events=13, report_chars=1800))),
        # 5: 2.1.17 four-agent fan-out, one killed
        R("2.1.17", 0, _start(rng, "2.1.17"), target_chars=28_000, hooks=1,
          agents=(A(0.25, "async", events=16, report_chars=4500, group=4),
                  A(0.25, "async", events=14, report_chars=3500, group=4),
                  A(0.25, "async", events=12, report_chars=6000, group=4),
                  A(0.25, "async", fate="killed", events=6, group=4))),
        # 6: 2.0.76: legacy sibling agent files, <agent-notification> enqueue+remove, TaskOutput polls
        R("sibling", 1, _start(rng, "sibling"), target_chars=30_000, compactions=1, hooks=0, false_positive_refs=1,
          agents=(A(0.3, "async", events=13, report_chars=3000, group=5),
                  A(0.3, "async", events=12, report_chars=2500, group=5),
                  A(0.3, "async", events=10, report_chars=2000, group=5),
                  A(0.6, "sync", events=10, report_chars=1500))),
        # 7: oldest: sidechain lines inline in the parent
        R("inline", 2, _start(rng, "inline"), target_chars=30_000, hooks=0,
          agents=(A(0.3, "sync", events=10, report_chars=1800),
                  A(0.6, "sync", events=8, report_chars=1500, agent_type="Explore"))),
        # 8: modern; the parent rotated off disk, its subagents/ folder survives
        R("modern", 3, _start(rng, "modern"), target_chars=25_000, orphan=True,
          agents=(A(0.2, "async", events=13, report_chars=2500),
                  A(0.4, "async", events=10, report_chars=2000),
                  A(0.6, "sync", events=9, report_chars=1500))),
        # 9: 2.1.39 tool-heavy, no agents; non-UTF-8 bytes and a torn final line
        R("2.1.39", 4, _start(rng, "2.1.39"), target_chars=25_000, hooks=2, invalid_utf8=True, torn_tail=True),
        # 10: modern; a subagent that is only its terminal turn (a delegated akm remember)
        R("modern", 0, _start(rng, "modern"), target_chars=20_000, malformed=1, empty_subagent=True,
          agents=(A(0.3, "async", events=3, report_chars=200, remember=1),
                  A(0.6, "sync", events=6, report_chars=1200))),
        # 11: a short 2.1.17 session
        R("2.1.17", 3, _start(rng, "2.1.17"), target_chars=6_000, hooks=0),
    ]


def _random_recipe(rng: random.Random, n_projects: int) -> SessionRecipe:
    era = rng.choice(("modern", "modern", "2.1.39", "2.1.39", "2.1.17", "sibling", "inline"))
    agents = []
    for _ in range(rng.choice((0, 0, 1, 2, 3, 5))):
        kind = "sync" if era == "inline" else rng.choice(("sync", "async", "async", "bash") + (("workflow",) if era == "modern" else ()))
        agents.append(AgentPlan(round(rng.uniform(0.1, 0.8), 3), kind, events=rng.randint(6, 40), report_chars=rng.randint(600, 6000),
                                workflow_agents=rng.randint(2, 4), remember=rng.choice((0, 0, 1)),
                                sidecar=rng.choice(("full", "full", "full", "missing"))))
    return SessionRecipe(era, rng.randrange(n_projects), _start(rng, era), target_chars=rng.randint(8_000, 70_000),
                         agents=tuple(agents), hooks=rng.choice((0, 1, 2)), remember=rng.choice((0, 0, 1, 2)),
                         readonly=rng.choice((0, 1)), compactions=rng.choice((0, 0, 1)))


def _mixed_plan(ctx: ShapeContext) -> Iterator[tuple[SessionRecipe, Project]]:
    projects = _projects(ctx.rng, 5)
    ctx.projects = projects
    fixed = _mixed_fixed(ctx.rng)
    target = int(ctx.size_mb * 1_000_000) if ctx.size_mb else 0
    k = 0
    # --size-mb overrides --sessions: keep adding sessions until the bytes are there.
    while (ctx.tally.bytes < target) if target else (k < ctx.sessions):
        recipe = fixed[k] if k < len(fixed) else _random_recipe(ctx.rng, len(projects))
        yield recipe, projects[recipe.project]
        k += 1


def _mixed_extras(ctx: ShapeContext, projects: list) -> None:
    """Root-level oddities: an empty session file and a directory that looks like one."""
    ids = Ids(ctx.rng)
    ms = ERA_EPOCH_MS["modern"] + 3 * 86_400_000
    empty = ctx.root / projects[0].slug / f"{ids.uuid()}.jsonl"
    write_json_file(empty, None, ctx.tally, ms, raw=b"")
    ctx.tally.subagent_files["empty_session"] = ctx.tally.subagent_files.get("empty_session", 0) + 1
    # git keeps no empty directories, so the directory holds a placeholder file.
    d = ctx.root / projects[1].slug / f"{ids.uuid()}.jsonl"
    write_json_file(d / ".keep", None, ctx.tally, ms, raw=b"")
    ctx.tally.subagent_files["directory_named_jsonl"] = 1


# -- s840: the four sessions of akm's #840 study (pipeline-spec §12.2) -----------------------

S840_SESSIONS = {
    "4f7f80f8": "4f7f80f8-f0bc-4709-9534-f8b6ea18b2f2",
    "578b2d47": "578b2d47-2382-4593-9423-950c7f4826f1",
    "f798f45f": "f798f45f-af76-4566-a0cb-5a0c52c76526",
    "393273fd": "393273fd-d81c-47cb-9132-99912f15a35c",
}


def _spread(rng: random.Random, n: int, lo: float, hi: float) -> list[float]:
    return sorted(round(rng.uniform(lo, hi), 4) for _ in range(n))


LATE_578 = 32
LATE_393 = 40


def _s840_plan(ctx: ShapeContext) -> Iterator[tuple[SessionRecipe, Project]]:
    rng = ctx.rng
    A = AgentPlan
    akm = make_project(rng, name="akm", language="typescript", user="dana", cwd="/Users/dana/src/akm")
    plugins = make_project(rng, name="akm-plugins", language="typescript", user="dana", cwd="/Users/dana/src/akm-plugins")
    ctx.projects = [akm, plugins]
    t0 = ERA_EPOCH_MS["modern"] + 10 * 86_400_000

    # 4f7f80f8: 28 top-level files (19 background + 5 sync + 1 killed + 1 nested + 2 compaction),
    # 22 workflow agents -> 50 chunks; 19 notification pairs; refs 2 parent / 160 subagent.
    # Every agent finishes before the parent's last quarter, so folding evicts nothing.
    agents = []
    for at in _spread(rng, 19, 0.04, 0.66):
        agents.append(A(at, "async", events=rng.randint(220, 320), report_chars=int(rng.lognormvariate(9.1, 0.6)),
                        remember=5, feedback=1, step_scale=0.45))
    for i, at in enumerate(_spread(rng, 5, 0.05, 0.65)):
        agents.append(A(at, "sync", events=rng.randint(180, 300), report_chars=rng.randint(2000, 6000), remember=6, feedback=2,
                        nested=1 if i == 2 else 0, step_scale=0.45, agent_type="Explore" if i % 2 else "general-purpose"))
    agents.append(A(0.5, "async", fate="killed", events=100, step_scale=0.45))
    agents.append(A(0.3, "workflow", events=270, workflow_agents=11, remember=3, step_scale=0.4))
    agents.append(A(0.6, "workflow", events=270, workflow_agents=11, remember=3, step_scale=0.4))
    yield SessionRecipe("modern", 0, t0, windows=17, scale=1.38, agents=tuple(agents), compactions=2, wait_at=0.72,
                        remember=1, feedback=1, hooks=0, title="head",
                        session_id=S840_SESSIONS["4f7f80f8"]), akm

    # 578b2d47: 4 top-level (3 background + 1 compaction), 28 workflow agents -> 32 chunks;
    # 3 pairs; refs 4 / 34. The last workflow and one reviewer overlap the parent's final stretch.
    agents = [A(0.2, "async", events=250, report_chars=rng.randint(8000, 12000), remember=5, feedback=1, step_scale=0.45),
              A(0.45, "async", events=250, report_chars=rng.randint(8000, 12000), remember=5, feedback=1, step_scale=0.45),
              A(0.3, "workflow", events=168, workflow_agents=14, remember=8, step_scale=0.4),
              A(0.62, "workflow", events=168, workflow_agents=14, remember=8, step_scale=0.4),
              A(0.955, "async", events=LATE_578, report_chars=rng.randint(8000, 12000), remember=5, feedback=1, duration_s=-1.05,
                step_scale=0.45)]
    yield SessionRecipe("modern", 0, t0 + 2 * 86_400_000, windows=15, scale=1.1, agents=tuple(agents), compactions=1,
                        remember=3, feedback=1, hooks=0, session_id=S840_SESSIONS["578b2d47"]), akm

    # f798f45f: one synchronous subagent early on, nothing else (1 chunk, 0 pairs, refs 1 / 0).
    yield SessionRecipe("modern", 1, t0 + 4 * 86_400_000, windows=8, scale=1.0,
                        agents=(A(0.3, "sync", events=60, report_chars=3000, step_scale=0.5),), remember=1, hooks=0,
                        title="head", session_id=S840_SESSIONS["f798f45f"]), plugins

    # 393273fd: 74 top-level (55 background incl. 8 resumed + 6 sync + 2 killed + 1 nested + 10
    # compaction), 55 workflow agents -> 129 chunks; 55 pairs (resumed ones overlap little);
    # refs 8 / 0. A few reviewers and one workflow overlap the end (eviction).
    agents = []
    fates = ["resumed"] * 8 + ["completed"] * 46
    rng.shuffle(fates)
    for at, fate in zip(_spread(rng, 54, 0.03, 0.9), fates):
        agents.append(A(at, "async", fate=fate, events=rng.randint(50, 110), report_chars=int(rng.lognormvariate(8.7, 0.5)),
                        step_scale=0.4))
    agents.append(A(0.988, "async", events=LATE_393, report_chars=rng.randint(4000, 9000), duration_s=-1.05, step_scale=0.4))
    for i, at in enumerate(_spread(rng, 6, 0.05, 0.85)):
        agents.append(A(at, "sync", events=rng.randint(40, 80), report_chars=rng.randint(1500, 4000), nested=1 if i == 0 else 0,
                        step_scale=0.4))
    agents.append(A(0.4, "async", fate="killed", events=30, step_scale=0.4))
    agents.append(A(0.7, "async", fate="killed", events=30, step_scale=0.4))
    for at in (0.15, 0.35, 0.55, 0.75):
        agents.append(A(at, "workflow", events=40, workflow_agents=11, step_scale=0.35))
    agents.append(A(0.9, "workflow", events=40, workflow_agents=11, step_scale=0.35))
    yield SessionRecipe("modern", 0, t0 + 6 * 86_400_000, windows=100, scale=0.95, agents=tuple(agents), compactions=10,
                        remember=6, feedback=2, hooks=0, session_id=S840_SESSIONS["393273fd"]), akm

    # 4a0d9e9b: #836's smallest session, whose parent later rotated off disk; 78 subagent files remain.
    agents = tuple(A(at, "async" if i % 9 else "sync", events=rng.randint(14, 44), report_chars=rng.randint(1500, 5000), step_scale=0.4)
                   for i, at in enumerate(_spread(rng, 78, 0.05, 0.95)))
    yield SessionRecipe("modern", 1, t0 - 6 * 86_400_000, target_chars=120_000, agents=agents, hooks=0, orphan=True,
                        session_id="4a0d9e9b-" + Ids(rng).uuid()[9:]), plugins


# -- bench: many large sessions --------------------------------------------------------------

def _bench_plan(ctx: ShapeContext) -> Iterator[tuple[SessionRecipe, Project]]:
    rng = ctx.rng
    projects = _projects(rng, 6)
    ctx.projects = projects
    target = int(ctx.size_mb * 1_000_000) if ctx.size_mb else 0
    k = 0
    big_done = False
    while True:
        if target:
            remaining = target - ctx.tally.bytes
            if remaining <= 0:
                return
        elif k >= ctx.sessions:
            return
        era = rng.choice(("modern", "modern", "modern", "2.1.39", "2.1.39", "2.1.17", "sibling", "inline"))
        if target and ctx.size_mb >= 300 and not big_done:
            parent_bytes = 78_000_000  # plus ~12 MB of subagents: one ~90 MB session, like ccusage's largest file
            era = "modern"  # its subagents must sit under <session>/subagents/ to count as one session
            big_done = True
        else:
            parent_bytes = int(min(25e6, max(3e5, rng.lognormvariate(15.0, 0.8))))
            if target:
                parent_bytes = max(200_000, min(parent_bytes, int((target - ctx.tally.bytes) * 0.8)))
        n_agents = 0 if era == "inline" and rng.random() < 0.5 else max(0, int(parent_bytes / 1.8e6 * rng.uniform(0.5, 1.5)))
        if parent_bytes >= 50_000_000:
            n_agents = 12  # about 12 MB of subagents on top of the parent
        agents = []
        for _ in range(min(n_agents, 60)):
            kind = "sync" if era == "inline" else rng.choice(("sync", "async", "async") + (("workflow",) if era == "modern" else ()))
            agents.append(AgentPlan(round(rng.uniform(0.05, 0.9), 4), kind, events=rng.randint(30, 220),
                                    report_chars=int(rng.lognormvariate(8.3, 0.6)), workflow_agents=rng.randint(2, 6),
                                    remember=rng.choice((0, 0, 1, 2)), step_scale=1.0))
        yield (SessionRecipe(era, rng.randrange(len(projects)), _start(rng, era), target_bytes=parent_bytes,
                             agents=tuple(agents), compactions=int(parent_bytes / 4e6), hooks=rng.choice((0, 1, 2)),
                             remember=rng.randint(0, 4), readonly=rng.randint(0, 3)), projects[k % len(projects)])
        k += 1


SHAPES: dict[str, Shape] = {
    "mixed": Shape("mixed", "varied sessions across every layout, version and error path (default)", _mixed_plan, _mixed_extras),
    "s840": Shape("s840", "the four sessions of akm's #840 study, plus #836's orphaned 4a0d9e9b subagents", _s840_plan),
    "bench": Shape("bench", "many large sessions for benchmarking; --size-mb sets the total", _bench_plan),
}


@dataclass(frozen=True)
class SynthSummary:
    """Counts describing one generated root."""

    shape: str
    seed: int
    sessions: int
    files: int
    bytes: int
    lines: int
    events: int  # user/assistant lines
    notifications: int
    layouts: tuple[tuple[str, int], ...]


def _mtime_base(seed: int) -> int:
    return 1_780_000_000_000 + (seed % 1_000_003) * 1000


def generate(out_dir: Path, seed: int, sessions: int = 12, size_mb: float | None = None,
             shape: str = "mixed") -> SynthSummary:
    """Write a sessions root into `out_dir` (new or empty). Same arguments, same bytes."""
    out_dir = Path(out_dir)
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} is not empty")
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = SHAPES[shape]
    tally = Tally()
    ctx = ShapeContext(seed, sessions, size_mb, tally, out_dir, random.Random(f"{seed}:{shape}:plan"))
    for k, (recipe, project) in enumerate(spec.plan(ctx)):
        # Each session draws from its own stream, so one session's content does not shift the next.
        rng = random.Random(f"{seed}:{shape}:session:{k}")
        sim = SessionSim(out_dir, recipe, project, rng, tally)
        if recipe.empty_subagent:
            write_json_file(sim.session_dir / "subagents" / f"agent-{sim.ids.agent(sim.era.agent_id)}.jsonl", None, tally,
                            recipe.start_ms + 60_000, raw=b"")
            tally.subagent_files["empty_subagent"] = tally.subagent_files.get("empty_subagent", 0) + 1
        sim.run()
        tally.sessions += 1
        if recipe.orphan:
            size = sim.tr.path.stat().st_size
            sim.tr.path.unlink()
            tally.files -= 1
            tally.bytes -= size
            tally.sessions -= 1
            tally.subagent_files["parent"] -= 1
            tally.subagent_files["orphan_session_dirs"] = tally.subagent_files.get("orphan_session_dirs", 0) + 1
            tally.mtimes.pop(str(sim.tr.path), None)
    spec.extras(ctx, ctx.projects)
    _set_mtimes(out_dir, tally, seed)
    return SynthSummary(shape=shape, seed=seed, sessions=tally.sessions, files=tally.files, bytes=tally.bytes,
                        lines=tally.lines, events=tally.message_lines, notifications=tally.notifications,
                        layouts=tuple(sorted(tally.subagent_files.items())))


# Real transcripts copied into fixtures/default next to the generated sessions (paths relative
# to fixtures/real): spotter's small samples, its real orphan subagents/ folder, and the newest
# (2.1.2xx) launch shapes from claudemux.
DEFAULT_REAL_SUBSET = (
    "spotter/short.jsonl",
    "spotter/subagent.jsonl",
    "spotter/tool_heavy.jsonl",
    "spotter/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl",
    "claudemux/launch-agent.jsonl",
    "claudemux/launch-agent-queued.jsonl",
    "claudemux/launch-agent-resume.jsonl",
    "claudemux/launch-monitor.jsonl",
    "claudemux/launch-shell.jsonl",
    "claudemux/launch-shell-timeout.jsonl",
    "claudemux/launch-skill-fork.jsonl",
)
REAL_MTIME_MS = 1_780_000_000_000  # the mtime shared/parity/assemble_real.py gives real files


def copy_real(real_root: Path, out_dir: Path, subset: tuple[str, ...] = DEFAULT_REAL_SUBSET) -> int:
    """Copy real transcripts byte for byte into a generated root; returns bytes copied."""
    total = 0
    for rel in subset:
        src = Path(real_root) / rel
        dst = Path(out_dir) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        dst.write_bytes(data)
        os.utime(dst, ns=(REAL_MTIME_MS * 1_000_000, REAL_MTIME_MS * 1_000_000))
        total += len(data)
    return total


def _set_mtimes(root: Path, tally: Tally, seed: int) -> None:
    """Every file gets a seed-derived mtime (its last timestamp when it has one): reproducible on disk."""
    base = _mtime_base(seed)
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            path = os.path.join(dirpath, name)
            ms = tally.mtimes.get(path, base)
            os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))
        os.utime(dirpath, ns=(base * 1_000_000, base * 1_000_000))


# ============================================================================================
# Corpus statistics (used by the tests and by fixtures/README.md).
# ============================================================================================

QUANTILES = (0.25, 0.5, 0.75, 0.9, 0.99)


def _layout_of(rel: tuple[str, ...]) -> str:
    """Classify a .jsonl path (relative to the root) by where Claude Code would have put it."""
    name = rel[-1]
    if "subagents" in rel[1:-1]:
        if name == "journal.jsonl":
            return "workflow_journal"
        if "workflows" in rel[rel.index("subagents") + 1:-1]:
            return "workflow_agent"
        return "subagent_compaction" if name.startswith("agent-acompact-") else "subagent"
    if len(rel) == 2 and name.startswith("agent-"):
        return "sibling_agent"
    if len(rel) == 2:
        return "session"
    return "other"


def corpus_stats(root: Path) -> dict:
    """Record-type mix, content-block mix, event text lengths and layout counts of a root."""
    root = Path(root)
    types: dict[str, int] = {}
    blocks: dict[str, int] = {}
    layouts: dict[str, int] = {}
    lengths: list[int] = []
    files = total_bytes = lines = bad_lines = invalid_utf8_files = sidechain_inline = 0
    sidecars = {"meta_json": 0, "meta_unparseable": 0, "meta_with_toolUseId": 0}
    notifications = {"task-notification user": 0, "agent-notification enqueue": 0, "task-notification enqueue": 0}
    sessions = set()
    session_dirs = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).parts
            if name.endswith(".meta.json"):
                sidecars["meta_json"] += 1
                try:
                    meta = orjson.loads(path.read_bytes())
                except orjson.JSONDecodeError:
                    meta = None
                if not isinstance(meta, dict):
                    sidecars["meta_unparseable"] += 1
                elif isinstance(meta.get("toolUseId"), str):
                    sidecars["meta_with_toolUseId"] += 1
                continue
            if not name.endswith(".jsonl"):
                continue
            layout = _layout_of(rel)
            layouts[layout] = layouts.get(layout, 0) + 1
            if layout == "session":
                sessions.add((rel[0], name[:-6]))
            if "subagents" in rel:
                session_dirs.add((rel[0], rel[rel.index("subagents") - 1]))
            files += 1
            data = path.read_bytes()
            total_bytes += len(data)
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                invalid_utf8_files += 1
            if layout == "workflow_journal":
                continue  # a run log, not a transcript
            for raw in data.split(b"\n"):
                if not raw:
                    continue
                lines += 1
                try:
                    entry = orjson.loads(raw.decode("utf-8", "replace"))
                except orjson.JSONDecodeError:
                    bad_lines += 1
                    continue
                if not isinstance(entry, dict):
                    continue
                kind = entry.get("type")
                kind = kind if isinstance(kind, str) else "?"
                types[kind] = types.get(kind, 0) + 1
                if kind == "queue-operation" and entry.get("operation") == "enqueue":
                    content = entry.get("content") or ""
                    if content.startswith("<agent-notification>"):
                        notifications["agent-notification enqueue"] += 1
                    elif content.startswith("<task-notification>"):
                        notifications["task-notification enqueue"] += 1
                if kind not in ("user", "assistant"):
                    continue
                if entry.get("isSidechain") is True and layout == "session":
                    sidechain_inline += 1
                content = (entry.get("message") or {}).get("content")
                if isinstance(content, str):
                    blocks["string"] = blocks.get("string", 0) + 1
                    if content.startswith("<task-notification>"):
                        notifications["task-notification user"] += 1
                elif isinstance(content, list):
                    for b in content:
                        if isinstance(b, dict):
                            t = b.get("type") if isinstance(b.get("type"), str) else "?"
                            blocks[t] = blocks.get(t, 0) + 1
                n = len(flat_text(entry))
                if n:
                    lengths.append(n)
    lengths.sort()
    n_types = sum(types.values()) or 1
    n_blocks = sum(blocks.values()) or 1

    def q(p: float) -> int:
        return lengths[min(len(lengths) - 1, int(p * (len(lengths) - 1) + 0.5))] if lengths else 0

    return {
        "files": files,
        "bytes": total_bytes,
        "lines": lines,
        "unparseable_lines": bad_lines,
        "invalid_utf8_files": invalid_utf8_files,
        "sessions": len(sessions),
        "orphan_session_dirs": len(session_dirs - sessions),
        "layouts": dict(sorted(layouts.items())),
        "sidecars": sidecars,
        "inline_sidechain_lines": sidechain_inline,
        "notifications": notifications,
        "record_types": {k: types[k] for k in sorted(types, key=lambda k: (-types[k], k))},
        "record_type_share": {k: round(types[k] / n_types, 4) for k in sorted(types, key=lambda k: (-types[k], k))},
        "block_types": {k: blocks[k] for k in sorted(blocks, key=lambda k: (-blocks[k], k))},
        "block_share": {k: round(blocks[k] / n_blocks, 4) for k in sorted(blocks, key=lambda k: (-blocks[k], k))},
        "events": len(lengths),
        "event_chars": sum(lengths),
        "event_len_quantiles": {f"p{int(p * 100)}": q(p) for p in QUANTILES},
        "event_len_mean": round(sum(lengths) / len(lengths), 1) if lengths else 0.0,
    }


def stats_markdown(named: list[tuple[str, dict]]) -> str:
    """Markdown tables comparing roots side by side (one column per root)."""
    names = [n for n, _ in named]
    out = ["| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]

    def row(label: str, values: list) -> None:
        out.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")

    for key in ("sessions", "orphan_session_dirs", "files", "bytes", "lines", "unparseable_lines", "invalid_utf8_files",
                "inline_sidechain_lines", "events", "event_chars", "event_len_mean"):
        row(key, [s[key] for _, s in named])
    for key in ("layouts", "sidecars", "notifications"):
        keys = sorted({k for _, s in named for k in s[key]})
        for k in keys:
            row(f"{key}: {k}", [s[key].get(k, 0) for _, s in named])
    for p in QUANTILES:
        k = f"p{int(p * 100)}"
        row(f"event length {k}", [s["event_len_quantiles"][k] for _, s in named])
    for key in ("record_type_share", "block_share"):
        keys = sorted({k for _, s in named for k in s[key]}, key=lambda k: -max(s[key].get(k, 0) for _, s in named))
        for k in keys:
            row(f"{key.replace('_share', '')} share: {k}", [f"{s[key].get(k, 0):.3f}" for _, s in named])
    return "\n".join(out) + "\n"


# ============================================================================================
# CLI: `measure synth ...` (wired by measure/cli.py) and `python -m measure.synth`.
# ============================================================================================


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, help="directory to create (must be new or empty)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same bytes)")
    parser.add_argument("--sessions", type=int, default=12, help="number of main sessions (mixed, bench; s840 is fixed)")
    parser.add_argument("--size-mb", type=float, default=None,
                        help="keep adding sessions until this many MB (10^6 bytes) are written; overrides --sessions")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="mixed", help="named shape of the root")
    parser.add_argument("--clean", action="store_true", help="delete --out first if it exists")
    parser.add_argument("--copy-real", type=Path, metavar="REAL_ROOT",
                        help="also copy the default subset of real transcripts from REAL_ROOT (fixtures/real)")
    parser.add_argument("--stats", nargs="+", type=Path, metavar="ROOT",
                        help="print a markdown statistics table for these roots instead of generating")


def run(args: argparse.Namespace) -> int:
    if args.stats:
        print(stats_markdown([(str(r), corpus_stats(r)) for r in args.stats]), end="")
        return 0
    if args.out is None:
        print("measure synth: --out is required (or --stats ROOT)", file=sys.stderr)
        return 2
    if args.clean and args.out.exists():
        import shutil
        shutil.rmtree(args.out)
    started = time.perf_counter()
    summary = generate(args.out, args.seed, sessions=args.sessions, size_mb=args.size_mb, shape=args.shape)
    if args.copy_real is not None:
        copied = copy_real(args.copy_real, args.out)
        print(f"copied {len(DEFAULT_REAL_SUBSET)} real transcripts ({copied / 1e6:.1f} MB) from {args.copy_real}", file=sys.stderr)
    print(f"{summary.shape} seed={summary.seed}: {summary.sessions} sessions, {summary.files} files, "
          f"{summary.bytes / 1e6:.1f} MB, {summary.lines} lines in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="measure synth", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
