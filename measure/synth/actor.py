"""Actor: writes one conversation thread (API calls, tools and their results, token usage)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import orjson

from measure.akm.jscompat import to_iso
from measure.synth.lines import Envelope, Era, Ids, Transcript
from measure.synth.text import Project, TextForge, _snake
from measure.synth.vocab import BASE62, EXT, MALWARE_REMINDER, NOUNS


class Meter:
    """Token usage per API call: context grows with every message, compaction resets it."""

    def __init__(self, rng: random.Random, era: Era, base: int):
        self.r = rng
        self.era = era
        self.context = base
        self.pending_chars = 0  # text added since the last call: the next call's cache creation
        self.last: dict | None = None

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
        u = {"input_tokens": inp, "cache_creation_input_tokens": created, "cache_read_input_tokens": read}
        key = self.era.key
        if key == "modern" or (key == "2.1.39" and r.random() < 0.25):  # a quarter of 2.1.39's calls look modern
            modern = key == "modern"
            u |= {"output_tokens": out if modern else max(out, out_chars // 4),
                  "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard",
                  "cache_creation": dict(reversed(cc.items())),  # 1h first here
                  "inference_geo": "not_available" if modern else "",
                  "iterations": [{"input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
                                  "cache_creation_input_tokens": created, "cache_creation": cc, "type": "message"}] if modern else []}
            if modern:
                u["speed"] = "standard"
        else:
            u |= {"cache_creation": cc, "output_tokens": out, "service_tier": "standard"}
            if key not in ("inline", "sibling"):
                u["inference_geo"] = r.choice(("not_available", "global"))
        self.last = u
        return u

    def final_usage(self, out_chars: int) -> dict:
        """The Task result's `usage`: the final call with its real output token count."""
        u = dict(self.last or self.call(out_chars))
        u["output_tokens"] = max(u.get("output_tokens", 1), out_chars // 4 + self.r.randint(5, 300))
        return u


def shell_result(stdout: str) -> dict:
    """A Bash call's toolUseResult."""
    return {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}


@dataclass(frozen=True)
class SessionContext:
    """What every thread of one session shares: its random stream, ids, text, project, era and hooks."""

    rng: random.Random
    ids: Ids
    forge: TextForge
    project: Project
    era: Era
    hooks: int  # hook_progress traffic: 0 none, 1 light, 2 heavy


class Actor:
    """Writes one conversation thread (the main session or one subagent) into a transcript."""

    def __init__(self, ctx: SessionContext, tr: Transcript, env: Envelope, clock: int, model: str, *,
                 main: bool = False, scale: float = 1.0, before_write: Callable[[int], None] | None = None):
        self.r = ctx.rng
        self.ids = ctx.ids
        self.forge = ctx.forge
        self.project = ctx.project
        self.era = ctx.era
        self.hooks = ctx.hooks
        self.tr = tr
        self.env = env
        self.now = clock
        self.model = model
        self.main = main  # the main thread, which alone writes file-history snapshots
        self.scale = scale
        self.before_write = before_write  # called with each line's time before it is written
        self.last_uuid: str | None = None
        self.meter = Meter(ctx.rng, ctx.era, 14_000 + ctx.rng.randint(0, 9000))
        self.tool_uses = 0
        self.echo: list | None = None  # agent_progress copies (sync subagents, 2.1.3x)
        self.lines = 0
        self.msg_lines = 0
        self.first_ts = clock
        self.pace = 1.0  # stretches waits so a subagent can span a planned wall time
        self.tool_log: list[str] | None = None  # TaskOutput's "[Tool: X] {...}" lines (2.0.x)

    def emit(self, obj: dict, ts: int, *, corruptible: bool = False) -> None:
        if self.before_write is not None:
            self.before_write(ts)
        self.tr.write(obj, ts, corruptible=corruptible)
        self.lines += 1
        if obj.get("type") in ("user", "assistant"):
            self.msg_lines += 1
        if "uuid" in obj:
            self.last_uuid = obj["uuid"]

    # -- assistant side ----------------------------------------------------------------------
    def api_call(self, blocks: list[dict]) -> list[str]:
        """One API response written as one line per content block, sharing id and usage."""
        era = self.era
        msg_id = self.ids.msg()
        req_id = self.ids.req()
        out_chars = sum(len(b["text"]) if b["type"] == "text" else len(b["thinking"]) if b["type"] == "thinking"
                        else 80 + len(orjson.dumps(b["input"])) for b in blocks)
        usage = self.meter.call(out_chars)
        self.now += int(self.r.randint(900, 6000 + out_chars // 3) * self.pace)
        has_tool = any(b["type"] == "tool_use" for b in blocks)
        uuids = []
        for i, b in enumerate(blocks):
            # Modern versions mark every line of the response, older ones its last line only (2.1.x: none).
            last = era.modern or (era.key in ("inline", "sibling") and i == len(blocks) - 1)
            message = {"model": self.model, "id": msg_id, "type": "message", "role": "assistant", "content": [b],
                       "stop_reason": ("tool_use" if has_tool else "end_turn") if last else None, "stop_sequence": None}
            message |= {"stop_details": None, "usage": usage, "diagnostics": None} if era.modern else {"usage": usage}
            uuid = self.ids.uuid()
            self.emit(self.env.assistant(uuid, self.last_uuid, self.now, message, req_id), self.now)
            uuids.append(uuid)
            if self.echo is not None:
                self.echo.append((self.now, {"type": "assistant", "timestamp": to_iso(self.now), "message": message,
                                             "requestId": req_id, "uuid": uuid}))
            if b["type"] == "tool_use":
                self.tool_uses += 1
                if self.tool_log is not None:
                    self.tool_log.append(f"[Tool: {b['name']}] " + orjson.dumps(b["input"]).decode()[:300])
            self.now += self.r.randint(3, 400)
        return uuids

    def thinking(self, size: int) -> dict:
        text = self.forge.prose(size) if size > 120 else self.forge.short()
        return {"type": "thinking", "thinking": text, "signature": "Es" + self.ids.chars(BASE62 + "+/", self.r.randint(180, 900))}

    def tool_use(self, name: str, inp: dict) -> dict:
        b = {"type": "tool_use", "id": self.ids.toolu(), "name": name, "input": inp}
        if self.era.key not in ("inline", "sibling", "2.1.17"):
            b["caller"] = {"type": "direct"}
        return b

    def work(self, tools: tuple) -> None:
        """One API call (thinking, text, tool calls drawn from the weighted `tools`), then each tool's result."""
        r = self.r
        blocks = []
        if r.random() < 0.24:
            blocks.append(self.thinking(int(r.choice((40, 60, 150, 400, 900)))))
        if r.random() < 0.45:
            blocks.append({"type": "text", "text": self.forge.short()})
        n = 1 if r.random() < 0.74 else r.choice((2, 2, 3, 4))
        made = [self.make_tool(_weighted(r, tools)) for _ in range(n)]
        blocks.extend(m[0] for m in made)
        uuids = self.api_call(blocks)
        for (block, content, tur, err, dur), uuid in zip(made, uuids[-n:]):
            self.run_tool(block, content, tur, err, dur, uuid)

    # -- user side ---------------------------------------------------------------------------
    def tool_result(self, block: dict, content, tur, source_uuid: str, *, is_error: bool = False,
                    wait_ms: int = 0) -> None:
        self.now += int((wait_ms + self.r.randint(20, 1500)) * self.pace)
        if is_error:
            res = {"type": "tool_result", "content": content, "is_error": True, "tool_use_id": block["id"]}
        else:
            res = {"tool_use_id": block["id"], "type": "tool_result", "content": content}
            if block["name"] == "Bash" and self.r.random() < 0.5:
                res["is_error"] = False
        chars = len(content) if isinstance(content, str) else sum(len(c.get("text", "")) for c in content)
        self.meter.pending_chars += chars
        uuid = self.ids.uuid()
        self.emit(self.env.user(uuid, self.last_uuid, self.now, [res], tur=tur, source=source_uuid), self.now,
                  corruptible=True)
        if self.echo is not None:
            self.echo.append((self.now, {"type": "user", "message": {"role": "user", "content": [res]}, "uuid": uuid,
                                         "timestamp": to_iso(self.now)}))

    def run_tool(self, block: dict, content, tur, err: bool, dur: int, uuid: str) -> None:
        """A tool's result with the hook, progress and snapshot lines around it."""
        r = self.r
        era = self.era
        hooks = self.hooks if era.key not in ("inline", "sibling") else 0
        name = block["name"]
        for i in range(hooks if r.random() < 0.8 else 0):
            self.hook("PreToolUse", name, block["id"], ("cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run ./guardian.ts", "~/.claude/hooks/pre-commit.sh")[i % 2])
        if name == "Bash" and dur > 6000 and era.key in ("2.1.17", "2.1.39", "modern"):
            for k in range(min(8, dur // 6000)):  # a Bash result is a string
                self.now += 1000 * r.randint(1, 5)
                cut = content[: (k + 1) * len(content) // 8]
                data = {"type": "bash_progress", "output": cut[-400:], "fullOutput": cut[-3000:],
                        "elapsedTimeSeconds": (k + 1) * 3, "totalLines": cut.count("\n")}
                self.emit(self.env.progress(self.ids.uuid(), self.last_uuid, self.now, data, f"bash-progress-{k}", block["id"]),
                          self.now, corruptible=True)
        self.tool_result(block, content, tur, uuid, is_error=err, wait_ms=dur)
        for i in range(hooks if r.random() < 0.8 else 0):
            self.hook("PostToolUse", name, block["id"], "${CLAUDE_PLUGIN_ROOT}/scripts/post-tool-capture.sh")
        if self.main and name in ("Edit", "Write") and era.key != "inline" and r.random() < 0.35:
            self.snapshot(self.ids.uuid(), update=True)
        if hooks and name in ("Edit", "Write") and r.random() < 0.1:
            self.now += r.randint(10, 200)
            note = f"<system-reminder>\nPostToolUse:{name} hook additional context: [COMPILE]\n{self.forge.shell(r.randint(100, 500))}\n</system-reminder>"
            self.emit(self.env.user(self.ids.uuid(), self.last_uuid, self.now, [{"type": "text", "text": note}], meta=True,
                                    source_tool_use=block["id"]), self.now)

    def user_text(self, text: str, *, human: bool = False, meta: bool = False, origin: str | None = None,
                  compact: bool = False) -> None:
        uuid = self.ids.uuid()
        if self.era.modern and (human or origin):
            self.env.prompt_id = self.ids.uuid()
        obj = self.env.user(uuid, self.last_uuid, self.now, text, human=human, meta=meta, origin=origin, compact=compact)
        self.meter.pending_chars += len(text)
        self.emit(obj, self.now)

    def hook(self, event: str, matcher: str, tool_use_id: str, command: str, corruptible: bool = True) -> None:
        data = {"type": "hook_progress", "hookEvent": event, "hookName": f"{event}:{matcher}", "command": command}
        self.emit(self.env.progress(self.ids.uuid(), self.last_uuid, self.now, data, tool_use_id, tool_use_id), self.now,
                  corruptible=corruptible)

    def snapshot(self, message_id: str, update: bool = False) -> None:
        """A file-history-snapshot line (the main thread's): the files backed up before an edit."""
        r = self.r
        backups = {}
        if update or r.random() < 0.4:
            for _ in range(r.randint(1, 4)):
                backups[r.choice(self.project.files)] = {"backupFileName": f"{self.ids.hexs(16)}@v{r.randint(1, 5)}",
                                                         "version": r.randint(1, 5), "backupTime": to_iso(self.now)}
        d = {"type": "file-history-snapshot", "messageId": message_id,
             "snapshot": {"messageId": message_id, "trackedFileBackups": backups, "timestamp": to_iso(self.now)},
             "isSnapshotUpdate": update}
        self.tr.write(d, self.now, corruptible=True)

    def binary_result(self) -> None:
        """A Bash result holding bytes that are not UTF-8 (the head of a binary file), written as raw bytes."""
        block = self.tool_use("Bash", {"command": f"head -c 64 build/{self.project.module}.bin", "description": "Peek at the artifact"})
        uuids = self.api_call([block])
        self.now += 300
        res = {"tool_use_id": block["id"], "type": "tool_result", "content": "ELF@@BIN@@ .text .data @@BIN@@ ok"}
        uuid = self.ids.uuid()
        obj = self.env.user(uuid, self.last_uuid, self.now, [res], tur=shell_result("ELF@@BIN@@"), source=uuids[-1])
        if self.before_write is not None:
            self.before_write(self.now)
        self.tr.write_raw(orjson.dumps(obj).replace(b"@@BIN@@", b"\x7f\xff\xfe\xc3\x28\xa0") + b"\n", self.now)
        self.last_uuid = uuid

    # -- tools -------------------------------------------------------------------------------
    def abs_path(self, rel: str) -> str:
        return f"{self.project.cwd}/{rel}"

    def make_tool(self, name: str) -> tuple[dict, object, object, bool, int]:
        """Build (tool_use block, result content, toolUseResult, is_error, duration ms)."""
        r = self.r
        f = self.forge
        p = self.project
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
                inp.update(offset=start, limit=n)
            elif sc < 1 and len(body) > 60:
                lines = body[: max(20, int(len(body) * sc))]
            text = "\n".join(f"{i:>6}→{line}" for i, line in enumerate(lines, start))  # the Read tool's rendering
            if self.era.key in ("2.1.17", "2.1.39") and r.random() < 0.7:
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
            if self.era.key in ("inline", "sibling", "2.1.17"):
                del inp["replace_all"]
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
            tur = {"mode": "content", "numFiles": 0, "filenames": [], "content": out, "numLines": out.count("\n") + 1}
            return self.tool_use("Grep", inp), out, tur, False, r.randint(20, 300)
        if name == "Glob":
            inp = {"pattern": f"**/*{EXT[p.language]}"}
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
        return self.tool_use("Bash", inp), out, shell_result(out), False, r.randint(100, 60_000)

    def bash_command(self) -> tuple[str, str, str]:
        r = self.r
        p = self.project
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

    def akm(self, kind: str) -> None:
        """A Bash call to akm and its result: remember/feedback carry inline refs, search/show are read-only."""
        r = self.r
        f = self.forge
        ref = f"{r.choice(('memory', 'memory', 'skill', 'knowledge'))}:{_snake(r, 2).replace('_', '-')}"
        if kind == "remember":
            body = f.sentence().replace("`", "").replace('"', "'")
            if r.random() < 0.15:
                body += " " + f.sentence().replace("`", "").replace('"', "'")
            cmd = "akm remember '" + body.replace("'", "") + "'" if r.random() < 0.12 else f'akm remember "{body}"'
            out = f"Saved {ref}-{self.ids.hexs(4)} ({len(body)} chars) to stash {self.project.name}"
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
        blocks = [block]
        if r.random() < 0.4:
            blocks.insert(0, {"type": "text", "text": f.short()})
        uuids = self.api_call(blocks)
        self.run_tool(block, out, shell_result(out), False, r.randint(200, 2500), uuids[-1])


PARENT_TOOLS = (("Bash", 34), ("Read", 26), ("Edit", 16), ("Grep", 8), ("Glob", 4), ("Write", 4), ("TodoWrite", 4))
EXPLORE_TOOLS = (("Read", 45), ("Grep", 25), ("Glob", 12), ("Bash", 18))
REVIEW_TOOLS = (("Bash", 34), ("Read", 40), ("Grep", 16), ("Glob", 10))
IMPLEMENT_TOOLS = (("Read", 30), ("Edit", 28), ("Bash", 30), ("Grep", 8), ("Write", 4))


def _weighted(rng: random.Random, table: tuple) -> str:
    """A tool name drawn by weight (one draw, exactly as subtracting the weights from random() * total would)."""
    return rng.choices([name for name, _ in table], [w for _, w in table])[0]
