"""SessionSim: simulates one main session in time order and writes it, its subagents and sidecars.

Long: one simulator; its subagents share the session's clock, random stream and files.
"""

from __future__ import annotations

import random
from bisect import insort
from pathlib import Path

import orjson

from measure.synth.actor import (EXPLORE_TOOLS, IMPLEMENT_TOOLS, PARENT_TOOLS, REVIEW_TOOLS, Actor, SessionContext,
                                 shell_result)
from measure.akm.jscompat import to_iso
from measure.synth.lines import ERAS, WINDOW_CHARS, Envelope, Ids, Tally, Transcript, write_file
from measure.synth.plans import AgentPlan, SessionRecipe
from measure.synth.tasks import (Running, agent_launched, bash_launched, notification, skill_forked, task_output, task_result,
                                 tmp_root)
from measure.synth.text import Project, TextForge
from measure.synth.vocab import ADJS, CAVEAT, COMPACT_PREFIX, LOWER_ALNUM, NOUNS, STOPPED, USERS, VERBS


def as_sidechain(line: dict, agent_id: str) -> dict:
    """A parent line as a replay in a subagent file writes it: `isSidechain: true`, then the agent's id."""
    out = {}
    for k, v in line.items():
        out |= {k: True, "agentId": agent_id} if k == "isSidechain" else {k: v}
    return out


class SessionSim:
    """Simulates one main session in time order and writes it, its subagents and sidecars."""

    def __init__(self, root: Path, recipe: SessionRecipe, project: Project, rng: random.Random, tally: Tally):
        self.root = root
        self.recipe = recipe
        self.era = era = ERAS[recipe.era]
        self.rng = rng
        self.ids = Ids(rng)
        self.project = project
        self.forge = TextForge(rng, project, body_scale=recipe.scale)
        self.tally = tally
        self.sid = recipe.session_id or self.ids.uuid()
        self.proj_dir = root / project.slug
        self.session_dir = self.proj_dir / self.sid
        self.env = Envelope(era, self.sid, project.cwd, rng.choice(era.versions), rng.choice(project.branches))
        self.tr = Transcript(self.proj_dir / f"{self.sid}.jsonl", tally, track_text=True, torn_lines=recipe.malformed,
                             torn_rng=random.Random(rng.random()) if recipe.malformed else None)
        self.ctx = SessionContext(rng, self.ids, self.forge, project, era, recipe.hooks)
        self.parent = Actor(self.ctx, self.tr, self.env, recipe.start_ms, era.model, main=True, scale=recipe.scale,
                            before_write=self.flush_queue)
        self.pending: list[Running] = []  # background tasks the parent will be notified of, by end time
        self.ready: list[Running] = []  # notified, to be delivered as the next turn
        self.awaiting_output: list[Running] = []  # 'agent' era: results fetched with TaskOutput
        self.resumable: list[Running] = []
        self.outliving: list[Running] = []  # fate late/lost: they report after the parent's last turn, if ever
        self.plans = sorted(recipe.agents, key=lambda a: a.at)  # still to launch
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
        self.slug_name = "-".join(rng.choice(ADJS) if i < 2 else rng.choice(USERS) for i in range(3))
        self.tmp = tmp_root(era, project, self.sid)

    # -- time & progress ---------------------------------------------------------------------
    def progress(self) -> float:
        r = self.recipe
        if r.windows:  # 0 until the first window opens
            return max(0.0, (self.tr.windows - 1 + self.tr.window_fill / WINDOW_CHARS) / r.windows)
        if r.target_bytes:
            return self.tr.fh.tell() / r.target_bytes
        return self.tr.text_chars / max(1, r.target_chars)

    def done(self) -> bool:
        r = self.recipe
        if r.windows:
            return self.tr.windows > r.windows or (self.tr.windows == r.windows and self.tr.window_fill >= 30_000)
        return self.progress() >= 1.0

    def _duration_ms(self, plan: AgentPlan) -> int:
        """A task's planned wall time: `duration_s` seconds, or if negative that share of the parent's remaining time."""
        if plan.duration_s >= 0:
            return plan.duration_s * 1000
        rate = (self.parent.now - self.recipe.start_ms) / max(0.01, self.progress())
        return int(-plan.duration_s * rate * max(0.02, 1.0 - self.progress()))

    def reached(self, marks: list[float]) -> bool:
        """Whether the session has got to the first of `marks` (sorted progress fractions), using it up."""
        if marks and self.progress() >= marks[0]:
            marks.pop(0)
            return True
        return False

    # -- queue: background completions ------------------------------------------------------
    def push(self, run: Running) -> None:
        if run.plan.fate in ("late", "lost"):  # it outlives the parent's last turn, which never waits for it
            self.outliving.append(run)
            return
        insort(self.pending, run, key=lambda task: task.t_end)  # after those ending at the same ms: launch order

    def queue_line(self, op: str, ts: int, content: str | None = None) -> None:
        d = {"type": "queue-operation", "operation": op, "timestamp": to_iso(ts), "sessionId": self.sid}
        if content is not None:
            d["content"] = content
        self.tr.write(d, ts)

    def flush_queue(self, ts: int) -> None:
        """Write the `enqueue` of every background task that finished before `ts`."""
        while self.pending and self.pending[0].t_end <= ts:
            run = self.pending.pop(0)
            text = notification(self.era, self.tmp, run)
            self.queue_line("enqueue", run.t_end, text)
            if run.status == "killed" or self.era.notify == "agent":
                # `remove` is not a delivery: killed agents and the 2.0.x era never get a user line.
                self.queue_line("remove", min(ts, run.t_end + self.rng.randint(2, 900)), text if self.era.notify != "agent" else None)
            else:
                self.ready.append(run)

    # -- main loop ---------------------------------------------------------------------------
    def run(self) -> None:
        self.head()
        for _ in range(200_001):  # a bound on the turns, should a recipe never be done
            if self.done():
                break
            if self.recipe.wait_at and not self.waited and self.progress() >= self.recipe.wait_at:
                self.wait_all()
                self.waited = True
            if self.reached(self.compact_due):
                self.compact()
            self.turn()
        self.finish()

    def head(self) -> None:
        r = self.rng
        if self.era.key in ("inline", "sibling"):
            for _ in range(r.randint(0, 2)):
                self.tr.write({"type": "summary", "summary": self.forge.description(), "leafUuid": self.ids.uuid()})
        elif self.recipe.hooks:
            a = self.parent
            tid = self.ids.uuid()
            for cmd in ("~/.claude/hooks/notify.sh clear", "bd prime")[: self.recipe.hooks]:
                a.now += r.randint(5, 60)
                a.hook("SessionStart", "startup", tid, cmd, corruptible=False)

    def turn(self) -> None:
        r = self.rng
        a = self.parent
        era = self.era
        gap = int(min(7_200_000, r.lognormvariate(10.6, 1.3)))  # human think time, median ~40 s
        if self.pending and era.notify not in ("", "agent") and self.pending[0].t_end <= a.now + gap:
            a.now = max(a.now, self.pending[0].t_end) + r.randint(20, 2000)
        else:
            a.now += gap
        self.flush_queue(a.now)
        if self.ready:
            self.deliver(self.ready.pop(0))
            calls = r.choice((1, 1, 2, 3))
        else:
            if self.reached(self.caveat_due):
                self.caveat()
            uid_hint = self.ids.uuid()
            if era.key != "inline":
                a.snapshot(uid_hint)
            prompt = self.forge.human()
            if self.reached(self.fp_due):
                prompt += f'\n\nwhen you are done, run akm remember "{self.forge.sentence().replace(chr(96), "")}"'
            a.user_text(prompt, human=True)
            if era.modern and self.recipe.title and not self.title_written and (
                    self.recipe.title == "head" or self.progress() > 0.5):
                self.tr.write({"type": "custom-title", "customTitle": self.forge.description(), "sessionId": self.sid}, a.now)
                self.title_written = True
            if era.key == "2.1.39" and r.random() < 0.3:  # as real 2.1.39 lines: no slug, the ids in another order
                head = {k: v for k, v in self.env.head(a.last_uuid).items() if k != "slug"}
                data = {"type": "hook_progress", "hookEvent": "UserPromptSubmit", "hookName": "UserPromptSubmit",
                        "command": "~/.claude/hooks/notify.sh clear"}
                self.tr.write(head | {"type": "progress", "data": data, "parentToolUseID": self.ids.uuid(),
                                      "toolUseID": self.ids.uuid(), "timestamp": to_iso(a.now), "uuid": self.ids.uuid()},
                              a.now, corruptible=True)
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
            a.emit(obj | {"toolUseID": self.ids.uuid()}, a.now)
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
        command = f"<command-name>/{cmd}</command-name>\n            <command-message>{cmd}</command-message>\n            <command-args></command-args>"
        if self.era.key in ("inline", "sibling", "2.1.17"):  # user lines; the output is drawn after the command's line
            a.user_text(command)
            a.user_text(f"<local-command-stdout>{self.forge.sentence()}</local-command-stdout>")
        else:
            for content in (command, f"<local-command-stdout>{self.forge.sentence()}</local-command-stdout>"):
                fields = {"content": content, "level": "info"}
                a.emit(self.env.system(self.ids.uuid(), a.last_uuid, a.now, "local_command", fields), a.now)

    def deliver(self, run: Running) -> None:
        """A queued notification becomes the next turn: `dequeue`, then the same string as a user line."""
        a = self.parent
        self.queue_line("dequeue", a.now)
        a.user_text(notification(self.era, self.tmp, run), origin="task-notification")
        run.notified += 1
        if run.plan.fate == "resumed" and run.notified == 1 and run.actor is not None:
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
        p = self.progress()
        if last:
            blocks = []
            if r.random() < 0.12:
                blocks.append(a.thinking(r.randint(60, 900)))
            size = int(r.choice((60, 120, 250, 600, 1400)) * self.recipe.scale)
            blocks.append({"type": "text", "text": a.forge.short() if size < 200 else a.forge.prose(size)})
            a.api_call(blocks)
        elif self.plans and self.plans[0].at <= p and not (self.recipe.wait_at and self.waited):
            self.spawn_due()
        elif self.akm_due and self.akm_due[0][0] <= p:
            a.akm(self.akm_due.pop(0)[1])
        elif self.resumable and r.random() < 0.5:
            self.resume(self.resumable.pop(0))
        elif self.era.notify == "agent" and self.awaiting_output and r.random() < 0.35:
            self.poll(self.awaiting_output[0], block=r.random() < 0.5)
        elif self.reached(self.persist_due):
            self.persisted_output()
        elif not self.invalid_done and p > 0.3:
            self.invalid_done = True
            self.parent.binary_result()
        else:
            a.work(PARENT_TOOLS)

    # -- background tasks: launch, resume, poll ------------------------------------------------
    def spawn_due(self) -> None:
        """Launch the next planned agent, or its whole fan-out group, in one assistant message."""
        a = self.parent
        batch = [self.plans.pop(0)]
        if batch[0].kind == "aside":  # a side question launches nothing the parent records
            self.aside(self.tr.head, batch[0].report_chars)
            return
        while batch[0].group and self.plans and self.plans[0].group == batch[0].group:
            batch.append(self.plans.pop(0))
        blocks = []
        if self.rng.random() < 0.7:
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
            return a.tool_use("Bash", {"command": a.bash_command()[0], "description": desc, "run_in_background": True})
        if plan.kind == "fork":
            return a.tool_use("Skill", {"skill": plan.name, "args": "high"})
        if plan.kind == "workflow":
            name = "-".join(desc.lower().split()[:3])
            return a.tool_use("Workflow", {"scriptPath": f"{self.project.cwd}/.claude/workflows/{name}.workflow.js",
                                           "args": {"target": self.rng.choice(self.project.files).split("/")[0] + "/",
                                                    "batches": plan.workflow_agents}})
        inp = self.task_input(desc, plan.agent_type, model="haiku" if plan.agent_type == "Explore" else None)
        if plan.kind == "async":
            inp["run_in_background"] = True
        return a.tool_use(era.task_tool, inp)

    def task_input(self, desc: str, agent_type: str, model: str | None = None) -> dict:
        """A Task/Agent call's input, with a prompt written for it; `model` only in the modern era's order."""
        prompt = self.prompt(desc)
        if not self.era.modern:
            return {"description": desc, "prompt": prompt, "subagent_type": agent_type}
        return {"description": desc, "subagent_type": agent_type} | ({"model": model} if model else {}) | {"prompt": prompt}

    def launch(self, plan: AgentPlan, block: dict, desc: str, source_uuid: str) -> None:
        r = self.rng
        a = self.parent
        era = self.era
        if plan.kind == "bash":
            tid = "b" + (self.ids.chars(LOWER_ALNUM[10:], 8) if era.modern else self.ids.hexs(6))
            dur = self._duration_ms(plan) or r.randint(20_000, 900_000)
            run = Running(plan, tid, block["id"], desc, "", t_end=a.now + dur,
                          status="completed" if r.random() < 0.8 else "failed")
            a.tool_result(block, *bash_launched(era, self.tmp, tid), source_uuid, wait_ms=200)
            self.push(run)
            return
        if plan.kind == "workflow":
            self.launch_workflow(plan, block, desc, source_uuid)
            return
        prompt = block["input"].get("prompt") or self.prompt(desc)
        start = a.now + r.randint(30, 400)
        run = self.run_agent(plan, tool_use_id=block["id"], description=desc, prompt=prompt, start=start,
                             duration_ms=self._duration_ms(plan), replay=self.tr.head if plan.kind == "fork" else ())
        if plan.kind == "sync":
            for ms, entry in run.actor.echo or ():
                data = {"message": entry, "normalizedMessages": [], "type": "agent_progress", "prompt": prompt,
                        "agentId": run.agent_id}
                t = a.now = max(a.now, ms)
                a.emit(a.env.progress(self.ids.uuid(), a.last_uuid, t, data,
                                      "agent_msg_" + self.ids.msg()[4:], block["id"]), t, corruptible=True)
            a.now = max(a.now, run.t_end) + r.randint(20, 900)
            stopped = STOPPED.get(plan.fate)  # the user stopped the launch: the parent never gets the result
            a.tool_result(block, *(stopped or task_result(era, run)), source_uuid, is_error=stopped is not None)
            if plan.fate == "interrupted":
                a.user_text(stopped[0])
            return
        if plan.kind == "fork":  # a forked Skill: a background agent that opens with the conversation it forks
            a.tool_result(block, *skill_forked(plan.name, run.agent_id), source_uuid, wait_ms=80)
        else:
            if era.notify == "agent":
                self.awaiting_output.append(run)
            text, tur = agent_launched(era, self.tmp, run)
            a.tool_result(block, [{"type": "text", "text": text}], tur, source_uuid, wait_ms=100)
        self.push(run)

    def launch_workflow(self, plan: AgentPlan, block: dict, desc: str, source_uuid: str) -> None:
        """A dynamic workflow started in the background; its agents and files are written at once."""
        run_id = "wf_" + self.ids.chars(LOWER_ALNUM, 10)
        task_id = "w" + self.ids.chars(LOWER_ALNUM, 8)
        script = block["input"]["scriptPath"]
        transcripts = f"{self.sid}/subagents/workflows/{run_id}"
        text = f"Workflow launched in background. Task ID: {task_id}\nSummary: {desc}\nTranscript dir: {transcripts}\nScript file: {script}"
        tur = {"isAsync": True, "status": "async_launched", "runId": run_id, "taskId": task_id, "transcriptDir": transcripts,
               "scriptPath": script}
        self.parent.tool_result(block, text, tur, source_uuid, wait_ms=150)
        r = self.rng
        t0 = self.parent.now
        duration = self._duration_ms(plan)
        wf_dir = self.session_dir / "subagents" / "workflows" / run_id
        journal, runs, results = [], [], []
        for k in range(plan.workflow_agents):
            label = f"{r.choice(VERBS)}:{chr(97 + k % 26)}"
            start = t0 + r.randint(200, 5000) + (k * r.randint(500, 20_000) if duration == 0 else int(duration * 0.3 * k / max(1, plan.workflow_agents)))
            sub_plan = AgentPlan(at=0, kind="async", events=max(4, int(plan.events * r.uniform(0.6, 1.4))),
                                 report_chars=r.randint(300, 1500), agent_type="workflow-subagent",
                                 remember=plan.remember if k == 0 else 0, feedback=plan.feedback if k == 0 else 0,
                                 step_scale=plan.step_scale)
            prompt = f"{desc}: batch {label}\n\n" + self.forge.prose(r.choice((100, 250, 500)))
            run = self.run_agent(sub_plan, tool_use_id="", description=f"{label} {desc.lower()}", prompt=prompt,
                                 start=start, wf_dir=wf_dir, duration_ms=int(duration * 0.7) if duration else 0)
            key = f"v2:h{self.ids.hexs(6)}"
            journal += [(start, {"type": "started", "key": key, "agentId": run.agent_id}),
                        (run.t_end, {"type": "result", "key": key, "agentId": run.agent_id, "result": run.final_text[:400]})]
            runs.append(run)
            results.append({"label": label, "agentId": run.agent_id, "result": run.final_text[:300]})
        t_end = max((run.t_end for run in runs), default=t0) + r.randint(300, 4000)
        total_tok = sum(run.total_tokens for run in runs)
        total_tools = sum(run.tool_uses for run in runs)
        data = b"".join(orjson.dumps(obj) + b"\n" for _, obj in sorted(journal, key=lambda x: x[0]))
        write_file(wf_dir / "journal.jsonl", data, self.tally, t_end)
        snapshot = {"runId": run_id, "taskId": task_id, "status": "completed",
                    "workflowName": script.rsplit("/", 1)[-1].replace(".workflow.js", ""), "timestamp": to_iso(t0),
                    "durationMs": t_end - t0, "agentCount": plan.workflow_agents, "totalTokens": total_tok,
                    "totalToolCalls": total_tools, "defaultModel": self.era.model, "scriptPath": script,
                    "args": block["input"]["args"], "summary": desc,
                    "workflowProgress": [{"type": "workflow_agent", "index": i, "label": res["label"], "agentId": res["agentId"],
                                          "state": "done", "resultPreview": res["result"][:80]} for i, res in enumerate(results)]}
        write_file(self.session_dir / "workflows" / f"{run_id}.json", orjson.dumps(snapshot), self.tally, t_end)
        output = orjson.dumps({"summary": desc, "results": results}).decode()
        self.push(Running(plan, task_id, block["id"], desc, "", t_end=t_end, output=output, total_tokens=total_tok,
                          tool_uses=total_tools))

    def resume(self, run: Running) -> None:
        """SendMessage to a finished background agent: it continues in the same file and notifies again."""
        a = self.parent
        msg = f"Please continue: {self.forge.sentence()}"
        block = a.tool_use("SendMessage", {"to": run.agent_id, "summary": self.forge.description(), "message": msg,
                                           "type": "message", "recipient": run.agent_id, "content": msg})
        uuids = a.api_call([block])
        pin = {"id": run.agent_id, "name": run.agent_id, "ref": self.ids.hexs(6)}
        tur = {"success": True, "message": f"Resuming agent {run.agent_id[:7]}", "resumedAgentId": run.agent_id, "pin": pin}
        a.tool_result(block, [{"type": "text", "text": orjson.dumps(tur).decode()}], tur, uuids[-1])
        actor = run.actor  # its new turn is appended to its own transcript, with a new final report
        actor.tr = Transcript(actor.tr.path, self.tally, append=True)
        actor.now = a.now + self.rng.randint(50, 500)
        actor.user_text(msg)
        self._work(actor, actor.msg_lines + run.plan.events - max(4, run.plan.events // 3), REVIEW_TOOLS, run.agent_id, [])
        run.final_text = actor.forge.report(run.plan.report_chars, run.description)
        actor.api_call([{"type": "text", "text": run.final_text}])
        self._close(run)
        self.push(run)

    def poll(self, run: Running, block: bool) -> None:
        """2.0.x: the model polls a background agent with TaskOutput (no user-line delivery)."""
        a = self.parent
        tu = a.tool_use("TaskOutput", {"task_id": run.agent_id, "block": block, "timeout": 120000 if block else 30000})
        uuids = a.api_call([tu])
        if block:
            a.now = max(a.now, run.t_end + self.rng.randint(100, 3000))
        done = a.now >= run.t_end
        a.tool_result(tu, *task_output(run, done), uuids[-1])
        if done:
            self.awaiting_output.remove(run)

    # -- persisted output ----------------------------------------------------------------------
    def persisted_output(self) -> None:
        """A Bash result too large to inline: saved to tool-results/<id>.txt, previewed in the result."""
        a = self.parent
        r = self.rng
        cmd, desc, _ = a.bash_command()
        block = a.tool_use("Bash", {"command": cmd, "description": desc})
        uuids = a.api_call([block])
        full = a.forge.shell(r.randint(60_000, 180_000), "test")
        path = self.session_dir / "tool-results" / f"{block['id']}.txt"
        write_file(path, full.encode(), self.tally, a.now)
        content = (f"<persisted-output>\nOutput too large ({len(full) / 1024:.1f}KB). Full output saved to: {path.as_posix().replace(self.root.as_posix(), '~/.claude/projects')}\n\n"
                   f"Preview (first 2KB):\n{full[:2000]}\n...\n</persisted-output>")
        a.run_tool(block, content, shell_result(full[:2000]), False, r.randint(2000, 30_000), uuids[-1])

    # -- compaction, waiting, end -------------------------------------------------------------
    def compact(self) -> None:
        r = self.rng
        a = self.parent
        era = self.era
        a.now += r.randint(20_000, 120_000)
        summary_analysis = self.forge.prose(int(r.randint(1500, 4000) * self.recipe.scale))
        summary_body = "\n".join(f"{i}. {h}:\n   {self.forge.prose(r.randint(150, 500))}" for i, h in
                                 enumerate(("Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections",
                                            "Errors and fixes", "Pending Tasks", "Current Work"), 1))
        if era.layout == "nested":
            self._compaction(a.now, summary_analysis, summary_body)
        if era.key == "inline":
            self.tr.write({"type": "summary", "summary": self.forge.description(), "leafUuid": a.last_uuid})
        else:
            boundary = self.env.system(self.ids.uuid(), None, a.now, "compact_boundary",
                                       {"compactMetadata": {"trigger": r.choice(("auto", "auto", "manual")), "preTokens": a.meter.context}},
                                       logical_parent=a.last_uuid)
            a.emit(boundary, a.now)
        a.now += r.randint(5, 50)
        a.user_text(COMPACT_PREFIX + "Analysis:\n" + summary_analysis + "\n\nSummary:\n" + summary_body, compact=True)
        a.meter.context = 16_000 + len(summary_analysis) // 4

    def _compaction(self, now: int, summary_analysis: str, summary_body: str) -> None:
        """agent-acompact-<id>.jsonl: the call that wrote the compaction summary, ending at `now`."""
        r = self.rng
        c = self._side_actor("acompact-" + self.ids.hexs(6), lambda: now - r.randint(15_000, 60_000))
        for _ in range(r.choice((0, 1, 1, 2, 3, 5))):
            c.user_text("<system-reminder>\nPostToolUse:Edit hook additional context: "
                        f"{self.forge.shell(r.randint(100, 700))}\n</system-reminder>", meta=True)
        c.user_text("Your task is to create a detailed summary of the conversation so far, paying close attention "
                    "to the user's explicit requests and your previous actions.\n"
                    + self.forge.prose(r.randint(800, 2500)))
        c.api_call([{"type": "text", "text": f"\n\n<analysis>\n{summary_analysis}\n</analysis>\n\n<summary>\n"
                                             f"{summary_body}\n</summary>"}])
        c.tr.close()

    def wait_all(self) -> None:
        """The parent idles until every background task has reported (and reacts to each)."""
        a = self.parent
        while self.awaiting_output:
            self.poll(self.awaiting_output[0], block=True)
        while self.pending or self.ready:
            if not self.ready:
                a.now = max(a.now, self.pending[0].t_end) + self.rng.randint(50, 3000)
                self.flush_queue(a.now)
                continue
            start = a.now
            self.deliver(self.ready.pop(0))
            self.parent_call(last=True)
            self.turn_end(start)

    def finish(self) -> None:
        r = self.rng
        a = self.parent
        while self.plans:
            self.spawn_due()
        for _, kind in self.akm_due:
            a.akm(kind)
        self.wait_all()
        while self.resumable:
            self.resume(self.resumable.pop(0))
            self.wait_all()
        # Tasks still running when the parent stops: a `late` one's notification is enqueued after the parent's
        # last line and never dequeued; a `lost` one writes nothing.
        for run in self.outliving:
            if run.plan.fate == "late":
                t = max(run.t_end, a.now + r.randint(30_000, 240_000))
                self.queue_line("enqueue", t, notification(self.era, self.tmp, run))
        if self.recipe.title and not self.title_written and self.era.modern:
            self.tr.write({"type": "custom-title", "customTitle": self.forge.description(), "sessionId": self.sid}, a.now)
        if self.recipe.torn_tail:
            # The process died mid-write: the last line has no end and no newline.
            a.now += r.randint(1000, 30_000)
            obj = a.env.assistant(self.ids.uuid(), a.last_uuid, a.now,
                                  {"model": a.model, "id": self.ids.msg(), "type": "message", "role": "assistant",
                                   "content": [{"type": "text", "text": self.forge.prose(400)}], "stop_reason": None,
                                   "stop_sequence": None, "usage": a.meter.call(400)}, self.ids.req())
            data = orjson.dumps(obj)
            self.tr.write_raw(data[: r.randint(len(data) // 3, len(data) - 5)])
        self.tr.close()

    # -- subagents ------------------------------------------------------------------------------
    def prompt(self, desc: str) -> str:
        """The prompt a parent writes for a subagent."""
        r = self.rng
        branch = self.env.branch
        where = "in the working tree" if branch == "main" else f"on branch `{branch}` compared to main"
        lines = [f"{desc} {where}.", "",
                 f"1. Run `git diff main...HEAD` and read `{r.choice(self.project.files)}`", "2. Focus on:"]
        lines += [f"   - {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} around `{r.choice(self.project.functions)}`"
                  for _ in range(r.randint(2, 6))]
        lines += ["", self.forge.prose(r.choice((80, 200, 400, 800))), "",
                  r.choice(("Be specific about file:line for every finding.", "Do research only, don't write any code.",
                            "Report back with a prioritized list.", "Keep the report under 800 words."))]
        return "\n".join(lines)

    def run_agent(self, plan: AgentPlan, *, tool_use_id: str, description: str, prompt: str, start: int,
                  duration_ms: int = 0, depth: int = 1, parent_agent: str | None = None,
                  wf_dir: Path | None = None, replay: list[dict] = ()) -> Running:
        """Write one subagent transcript and sidecar from `start`, after replaying `replay` (a fork's); return its outcome."""
        era = self.era
        agent_type = plan.agent_type
        agent_id = f"a{plan.name}-{self.ids.hexs(16)}" if plan.name else self.ids.agent(era.agent_id)
        if era.layout == "inline":
            env = self.env.sidechain_of(None)
            tr = self.tr
        else:
            env = self.env.sidechain_of(agent_id, agent_type if era.modern else None)
            folder = self.proj_dir if era.layout == "sibling" else wf_dir or self.session_dir / "subagents"
            path = folder / f"agent-{agent_id}.jsonl"
            if not era.modern and era.key != "sibling":
                env.slug = self.slug_name
            tr = Transcript(path, self.tally)
            if era.sidecars:
                self._sidecar(path, plan, description, tool_use_id, depth, parent_agent, wf_dir is not None)
        model = era.fast_model if agent_type == "Explore" else era.model
        actor = Actor(self.ctx, tr, env, start, model, scale=plan.step_scale)
        if era.agent_progress and plan.kind == "sync" and depth == 1:
            actor.echo = []
        if era.notify == "agent" and plan.kind == "async":
            actor.tool_log = []
        if duration_ms > 0:  # stretch its waits to the planned wall time
            actor.pace = max(0.2, duration_ms / (max(1, plan.events // 3) * 11_000))
        if era.modern:
            env.prompt_id = self.ids.uuid()
        for line in replay:
            tr.write(as_sidechain(line, agent_id))
        actor.user_text(prompt)
        if actor.echo is not None:
            actor.echo.append((actor.now, {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
                                           "uuid": actor.last_uuid, "timestamp": to_iso(actor.now)}))
        run = Running(plan, agent_id, tool_use_id, description, prompt, actor=actor)
        tools = (EXPLORE_TOOLS if agent_type == "Explore" else
                 REVIEW_TOOLS if any(w in description for w in ("Review", "Audit", "review", "Explore", "Find", "Map", "Trace"))
                 else IMPLEMENT_TOOLS)
        resumed = plan.fate == "resumed"  # it stops early; the parent resumes it later
        special = ["remember"] * plan.remember + ["feedback"] * plan.feedback + ["nested"] * plan.nested
        self.rng.shuffle(special)
        self._work(actor, max(4, plan.events // 3) if resumed else plan.events, tools, agent_id, special)
        if plan.fate == "killed":
            run.status = "killed"
        else:
            report = actor.forge.report(max(300, plan.report_chars // 4) if resumed else plan.report_chars,
                                        f"Partial results: {description}" if resumed else description)
            if resumed:
                report = "I could not finish: " + actor.forge.sentence() + "\n\n" + report
            actor.api_call([{"type": "text", "text": report}])
            run.final_text = report
        self._close(run)
        return run

    def aside(self, parent_lines: list[dict], report_chars: int) -> None:
        """A `/btw` side question (no sidecar): the parent's lines so far replayed, then the question and its answer."""
        actor = self._side_actor("aside_question-" + self.ids.hexs(16),
                                 lambda: self.parent.now + self.rng.randint(200, 4000), replay=parent_lines)
        question = self.forge.sentence()
        actor.user_text(f"btw, {question[:1].lower()}{question[1:]}")
        actor.api_call([{"type": "text", "text": self.forge.prose(report_chars)}])
        actor.tr.close()

    def _side_actor(self, agent_id: str, start, replay: list[dict] = ()) -> Actor:
        """A side thread's file, replaying `replay` (/btw, compaction); `start()` draws its clock after the ids."""
        env = self.env.sidechain_of(agent_id)
        if self.era.modern:
            env.prompt_id = self.ids.uuid()
        else:
            env.slug = self.slug_name
        tr = Transcript(self.session_dir / "subagents" / f"agent-{agent_id}.jsonl", self.tally)
        for line in replay:
            tr.write(as_sidechain(line, agent_id))
        return Actor(self.ctx, tr, env, start(), self.era.model)

    def _close(self, run: Running) -> None:
        actor = run.actor
        run.t_end = actor.now + self.rng.randint(50, 900)
        run.tool_uses = actor.tool_uses
        run.duration_ms = run.t_end - actor.first_ts
        run.usage = actor.meter.final_usage(len(run.final_text))
        run.total_tokens = sum(run.usage.get(k, 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                             "cache_read_input_tokens", "output_tokens"))
        if actor.tr is not self.tr:
            actor.tr.close()

    def _work(self, actor: Actor, target: int, tools: tuple, agent_id: str, special: list[str]) -> None:
        """Tool calls until about `target` user/assistant lines; the `special` calls (akm kinds and "nested"
        agents) at random steps, all of them by the estimated last step."""
        steps_est = max(1, (target - 2) // 3)
        slots = sorted(self.rng.randint(0, steps_est) for _ in special)
        step = 0
        while actor.msg_lines < target - 1 or special:
            while slots and slots[0] <= step:
                slots.pop(0)
                kind = special.pop(0)
                if kind == "nested":
                    self._nested(actor, agent_id)
                else:
                    actor.akm(kind)
            if actor.msg_lines >= target - 1 and not special:
                break
            actor.work(tools)
            step += 1

    def _nested(self, actor: Actor, parent_agent: str) -> None:
        """A subagent spawning its own subagent: the spawn lives in the parent agent's file."""
        r = self.rng
        era = self.era
        desc = self.forge.description()
        block = actor.tool_use(era.task_tool, self.task_input(desc, "Explore"))
        uuids = actor.api_call([block])
        sub_plan = AgentPlan(at=0, kind="sync", events=r.randint(8, 24), report_chars=r.randint(800, 2500), agent_type="Explore")
        run = self.run_agent(sub_plan, tool_use_id=block["id"], description=desc, prompt=block["input"]["prompt"],
                             start=actor.now + 100, depth=2, parent_agent=parent_agent)
        actor.now = run.t_end + r.randint(20, 500)
        actor.tool_result(block, *task_result(era, run), uuids[-1])

    def _sidecar(self, path: Path, plan: AgentPlan, desc: str, tool_use_id: str, depth: int,
                 parent_agent: str | None, workflow: bool) -> None:
        """agent-<id>.meta.json, in every variant real roots hold (full, minimal, missing, null, cut short)."""
        r = self.rng
        if workflow:
            meta = {"agentType": "workflow-subagent"}
            if r.random() < 0.5:
                meta["spawnDepth"] = 1
            if r.random() < 0.3:
                meta["model"] = r.choice(("sonnet", "haiku"))
            if r.random() < 0.3:
                meta["workflowPhase"] = r.choice(("Sweep", "Review", "Verify"))
        elif plan.sidecar == "missing":
            return
        elif plan.sidecar == "null":
            meta = None
        elif plan.sidecar == "minimal":  # most real sidecars: agentType and description only
            meta = {"agentType": plan.agent_type, "description": desc}
        elif plan.sidecar == "fork":
            meta = {"agentType": "fork", "isFork": True, "name": plan.name, "description": desc, "spawnDepth": depth}
        else:
            meta = {"agentType": plan.agent_type, "description": desc, "toolUseId": tool_use_id, "spawnDepth": depth}
            if plan.agent_type == "Explore":
                meta["model"] = "haiku"
            if parent_agent:
                meta["parentAgentId"] = parent_agent
        data = orjson.dumps(meta)
        write_file(path.with_suffix(".meta.json"), data[: len(data) // 2] if plan.sidecar == "broken" else data,
                   self.tally, self.parent.now)
