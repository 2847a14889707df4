"""SessionSim: simulates one main session in time order and writes it, its subagents and sidecars.

Slightly over ~500 lines: one simulation loop whose parts share its clock and random stream.
"""

from __future__ import annotations

import heapq
import random
from pathlib import Path

import orjson

from measure.synth.actor import PARENT_TOOLS, Actor, _weighted
from measure.synth.agents import Running, SubagentsMixin
from measure.synth.lines import (
    ERAS,
    Envelope,
    Ids,
    Tally,
    Transcript,
    iso,
    write_json_file,
    xml_escape,
)
from measure.synth.plans import SessionRecipe
from measure.synth.text import Project, TextForge
from measure.synth.vocab import ADJS, CAVEAT, COMPACT_PREFIX, MODERN_NOTE, USERS

OUTLIVING = ("late", "lost")
"""Fates of background tasks that outlive the parent's last turn."""


class SessionSim(SubagentsMixin):
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
        self.outliving: list[Running] = []  # fate late/lost: they report after the parent's last turn, if ever
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
        if run.plan.fate in OUTLIVING:  # the parent never waits for it (see outlive)
            self.outliving.append(run)
            return
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

    def outlive(self) -> None:
        """Background tasks still running when the parent stops: a `late` one's notification is
        enqueued after the parent's last line and never dequeued; a `lost` one writes nothing."""
        for run in self.outliving:
            if run.plan.fate == "late":
                t = max(run.t_end, self.parent.now + self.rng.randint(30_000, 240_000))
                self.queue_line("enqueue", t, self.notification(run))
                self.notifications += 1
                self.tally.notifications += 1

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
        self.outlive()
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
