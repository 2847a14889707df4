"""Hypothesis strategies for Claude Code transcript lines, in the shapes real files hold.

Shapes follow /work/shared/guides/claude-code-format.md and fixtures/real: user prompts, tool
results with their `toolUseResult` (sync Task results, async launches, background Bash, forked
skills, resumes), assistant lines with text / thinking / tool_use blocks and `usage`, system,
progress (agent_progress re-embedding a subagent's message), queue-operation lines and
`<task-notification>` deliveries, titles and the odd unknown type.

Ids come from small pools so that launches, results, notifications and subagent files find
each other. Every name and id carries `NAME_CANARY` and every transcript text `TEXT_CANARY`, so
a property can tell what leaked: names may appear in plain tables, texts never (without
`--show-excerpts`), and under `--redact` neither.
"""

from __future__ import annotations

from hypothesis import strategies as st

NAME_CANARY = "CANARYn"
TEXT_CANARY = "CANARYt"
CANARIES = (NAME_CANARY, TEXT_CANARY)

AGENT_IDS = tuple(f"a{NAME_CANARY}{i}" for i in range(4)) + ("acompact-1a2b3c",)
TOOL_IDS = tuple(f"toolu_{NAME_CANARY}{i}" for i in range(5))
BASH_IDS = tuple(f"b{NAME_CANARY}{i}" for i in range(2))
VERSIONS = ("2.0.76", "2.1.17", "2.1.37", "2.1.226", "2.1.283")
MODELS = ("claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "<synthetic>")
TOOLS = ("Task", "Agent", "Bash", "Read", "Edit", "TaskOutput", "BashOutput", "SendMessage", "Skill", "Monitor", "Grep")
WORDS = ("the", "build", "fails", "on", "main", "look", "at", "tests", "fix", "akm", "$'\\n'", "{{TRANSCRIPT}}",
         "$&", "é", "日本", "😀", "\t", "\r\n", "\\", '"', "<result>", "</task-notification>")


_INDEX: dict[int, st.SearchStrategy[int]] = {}


def pick(draw, options):
    """`pick(draw, options)`, without building a strategy per draw (the cost of a
    strategy's validation dominated generation); shrinks towards the first option."""
    n = len(options)
    if n not in _INDEX:
        _INDEX[n] = st.integers(0, n - 1)
    return options[draw(_INDEX[n])]


_BOOL = st.booleans()


def flip(draw) -> bool:
    return draw(_BOOL)


_WORD = st.sampled_from(WORDS) | st.text(max_size=8)
_TEXTS: dict[tuple[int, int], st.SearchStrategy[str]] = {}


def texts(min_words: int = 1, max_words: int = 12) -> st.SearchStrategy[str]:
    """Transcript text: words, odd characters, and the text canary (strategies built once: cheap draws)."""
    key = (min_words, max_words)
    if key not in _TEXTS:
        words = st.lists(_WORD, min_size=min_words, max_size=max_words)
        _TEXTS[key] = st.builds(lambda ws, n: f"{TEXT_CANARY}{n} " + " ".join(ws), words, st.integers(0, 9))
    return _TEXTS[key]


_ODD_TIMES = st.sampled_from(["2026-05-01", "2026-05-01T10:00:00Z", "2026-05-01T10:00:00+02:00", "not a time", "",
                              "2026-02-30T00:00:00.000Z", "+275760-09-13T00:00:00.000Z", "1970-01-01T00:00:00.000Z"])
_ODD_TIME = st.integers(0, 7)


def timestamps(second: int) -> st.SearchStrategy:
    """Mostly ordinary ISO times near each other; sometimes odd ones JS's Date.parse accepts or not."""
    iso = f"2026-05-01T10:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
    return st.tuples(_ODD_TIME, _ODD_TIMES).map(lambda t: t[1] if t[0] == 7 else iso)  # shrinks to the ordinary one


_COUNT = st.integers(0, 200_000)
_USAGE = st.fixed_dictionaries(
    {"input_tokens": _COUNT, "output_tokens": _COUNT, "cache_creation_input_tokens": _COUNT, "cache_read_input_tokens": _COUNT},
    optional={"cache_creation": st.fixed_dictionaries({"ephemeral_5m_input_tokens": _COUNT, "ephemeral_1h_input_tokens": _COUNT}),
              "service_tier": st.just("standard")},
)


def usages() -> st.SearchStrategy[dict]:
    return _USAGE


def _envelope(kind: str, second: int, draw, **fields) -> dict:
    out = {"type": kind, "timestamp": draw(timestamps(second)), "uuid": f"u{second}", "sessionId": f"s{NAME_CANARY}",
           "version": pick(draw, VERSIONS), "isSidechain": False, "cwd": f"/home/{NAME_CANARY}/app"}
    out.update(fields)
    return out


def notification(draw) -> str:
    task = pick(draw, AGENT_IDS + BASH_IDS + ("wflow1",))
    parts = ["<task-notification>", f"<task-id>{task}</task-id>"]
    if flip(draw):
        parts.append(f"<tool-use-id>{pick(draw, TOOL_IDS)}</tool-use-id>")
    parts.append(f"<status>{pick(draw, ['completed', 'failed', 'killed', 'stopped'])}</status>")
    parts.append(f'<summary>Agent "{draw(texts(1, 3))}" completed</summary>')
    if flip(draw):
        parts.append(f"<result>{draw(texts())}</result>")
    if flip(draw):
        parts.append("<usage>total_tokens: 1200\ntool_uses: 3\nduration_ms: 5000</usage>")
    parts.append("</task-notification>")
    return "\n".join(parts)


def tool_inputs(name: str, draw) -> dict:
    if name in ("Task", "Agent"):
        out = {"description": draw(texts(1, 4)), "prompt": draw(texts()), "subagent_type": "general-purpose"}
        if flip(draw):
            out["run_in_background"] = True
        return out
    if name in ("Bash", "Monitor"):
        return {"command": draw(texts(1, 5)), "run_in_background": flip(draw)}
    if name in ("TaskOutput", "BashOutput"):
        return {"task_id": pick(draw, AGENT_IDS + BASH_IDS), "block": True}
    if name == "SendMessage":
        return {"to": pick(draw, AGENT_IDS), "message": draw(texts())}
    return {"file_path": f"/home/{NAME_CANARY}/app/x.py", "old_string": draw(texts()), "new_string": draw(texts())}


def blocks(draw) -> list:
    kind = pick(draw, ["text", "text", "thinking", "tool_use", "tool_use"])
    if kind == "text":
        return [{"type": "text", "text": draw(texts())}]
    if kind == "thinking":
        return [{"type": "thinking", "thinking": draw(texts()), "signature": "sig"}]
    name = pick(draw, TOOLS)
    return [{"type": "tool_use", "id": pick(draw, TOOL_IDS), "name": name, "input": tool_inputs(name, draw),
             "caller": {"type": "direct"}}]


def tool_use_results(draw) -> dict | None:
    agent = pick(draw, AGENT_IDS)
    return pick(draw, [
        None,
        {"status": "completed", "agentId": agent, "prompt": "go", "content": [{"type": "text", "text": "done"}],
         "totalDurationMs": 5000, "totalTokens": 1200, "totalToolUseCount": 3, "usage": {"input_tokens": 10, "output_tokens": 20}},
        {"isAsync": True, "status": "async_launched", "agentId": agent, "description": "d", "prompt": "p",
         "outputFile": f"/tmp/claude/{NAME_CANARY}/tasks/{agent}.output"},
        {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "backgroundTaskId": BASH_IDS[0]},
        {"success": True, "commandName": "review", "status": "forked", "background": True, "agentId": agent, "result": "r"},
        {"success": True, "message": f"Resuming agent {agent}", "resumedAgentId": agent},
        {"taskId": BASH_IDS[1], "timeoutMs": 60000, "persistent": False},
    ])


@st.composite
def record(draw, second: int = 1) -> dict:
    """One transcript line's value (a dict; mutations may later make it anything)."""
    kind = pick(draw, ["prompt", "assistant", "assistant", "tool_result", "system", "progress",
                                 "queue", "notification", "title", "other"])
    if kind == "prompt":
        return _envelope("user", second, draw, message={"role": "user", "content": draw(texts())})
    if kind == "assistant":
        msg = {"id": f"msg_{draw(st.integers(0, 5))}", "model": pick(draw, MODELS), "role": "assistant",
               "content": [b for _ in range(draw(st.integers(1, 3))) for b in blocks(draw)], "usage": draw(usages())}
        return _envelope("assistant", second, draw, message=msg, requestId=f"req_{second}")
    if kind == "tool_result":
        content = draw(st.one_of(texts(), st.lists(st.builds(lambda t: {"type": "text", "text": t}, texts()), max_size=2)))
        line = _envelope("user", second, draw, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": pick(draw, TOOL_IDS), "content": content,
             "is_error": flip(draw)}]})
        result = tool_use_results(draw)
        if result is not None:
            line["toolUseResult"] = result
        return line
    if kind == "system":
        sub = pick(draw, ["stop_hook_summary", "turn_duration", "compact_boundary", "api_error", "local_command"])
        return _envelope("system", second, draw, subtype=sub, content=draw(texts()), durationMs=1234)
    if kind == "progress":
        data = pick(draw, ["agent_progress", "bash_progress", "hook_progress", "waiting_for_task"])
        inner = {"type": "assistant", "message": {"id": "msg_p", "role": "assistant", "content": [{"type": "text", "text": draw(texts())}],
                                                  "usage": draw(usages())}}
        return _envelope("progress", second, draw, data={"type": data, "agentId": pick(draw, AGENT_IDS), "message": inner},
                         toolUseID=f"agent_msg_{second}", parentToolUseID=pick(draw, TOOL_IDS))
    if kind == "queue":
        op = pick(draw, ["enqueue", "remove", "dequeue", "popAll"])
        content = notification(draw) if flip(draw) else draw(texts())
        return {"type": "queue-operation", "operation": op, "timestamp": draw(timestamps(second)), "content": content,
                "sessionId": f"s{NAME_CANARY}"}
    if kind == "notification":
        line = _envelope("user", second, draw, message={"role": "user", "content": notification(draw)})
        if flip(draw):
            line["origin"] = {"kind": "task-notification"}
        return line
    if kind == "title":
        return {"type": pick(draw, ["custom-title", "summary", "ai-title"]), "customTitle": draw(texts(1, 3)),
                "summary": draw(texts(1, 3)), "leafUuid": "u1"}
    return _envelope(pick(draw, ["file-history-snapshot", "attachment", "pr-link", "mode", "brand-new-type"]), second, draw)


@st.composite
def transcript(draw, min_lines: int = 1, max_lines: int = 10, subagent: str | None = None) -> list:
    """A transcript's line values in time order: a prompt first, as real files start."""
    n = draw(st.integers(min_lines, max_lines))
    first = _envelope("user", 1, draw, message={"role": "user", "content": draw(texts(3))})
    lines = [first] + [draw(record(second=i + 2)) for i in range(n - 1)]
    if subagent is not None:
        for value in lines:
            if isinstance(value, dict) and value.get("type") in ("user", "assistant"):
                value["isSidechain"] = True
                value["agentId"] = subagent
    return lines
