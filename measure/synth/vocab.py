"""Word pools and sentence/code templates that all generated text is assembled from."""

# Text is assembled from these pools so that unrelated events share few words (the #840
# duplicate study measures word-set Jaccard; real unrelated pairs sit near 0.03).

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
