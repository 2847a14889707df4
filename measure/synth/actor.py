"""Actor: writes one conversation thread (API calls, tool calls and results, token usage) into a transcript."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import orjson

from measure.synth.lines import Envelope, Era, Transcript, iso
from measure.synth.text import _snake
from measure.synth.vocab import EXT, MALWARE_REMINDER, NOUNS

if TYPE_CHECKING:
    from measure.synth.session import SessionSim


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
