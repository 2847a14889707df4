"""Subagents of a simulated session: the Running state and SessionSim's spawning half (SubagentsMixin)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from measure.synth.actor import (
    EXPLORE_TOOLS,
    IMPLEMENT_TOOLS,
    REVIEW_TOOLS,
    Actor,
    total_tokens,
)
from measure.synth.lines import Envelope, Transcript, iso, write_json_file
from measure.synth.plans import AgentPlan
from measure.synth.vocab import ADJS, LOWER_ALNUM, NOUNS, VERBS


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


class SubagentsMixin:
    """The subagent half of SessionSim (session.py): spawning, writing, resuming and polling subagents.

    Only ever used as a base of SessionSim; its methods read and write the simulator's state
    (`self.rng`, `self.parent`, `self.tr`, `self.heap`, ...) set up by `SessionSim.__init__`."""

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
