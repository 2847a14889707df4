"""Subagents: writes a session's subagent transcripts, sidecars and workflow runs."""

from __future__ import annotations

from pathlib import Path

import orjson

from measure.synth.actor import EXPLORE_TOOLS, IMPLEMENT_TOOLS, REVIEW_TOOLS, Actor, SessionContext, total_tokens
from measure.synth.lines import Tally, Transcript, iso, write_file
from measure.synth.plans import AgentPlan
from measure.synth.tasks import Running, task_result
from measure.synth.vocab import ADJS, NOUNS, VERBS


def as_sidechain(line: dict, agent_id: str) -> dict:
    """A parent line as a replay in a subagent file writes it: `isSidechain: true`, then the agent's id."""
    out = {}
    for k, v in line.items():
        out[k] = True if k == "isSidechain" else v
        if k == "isSidechain":
            out["agentId"] = agent_id
    return out


class Subagents:
    """Writes the subagents of one session; the main thread's own lines are the caller's."""

    def __init__(self, ctx: SessionContext, main: Actor, tally: Tally, session_dir: Path, slug: str):
        self.rng = ctx.rng
        self.ids = ctx.ids
        self.forge = ctx.forge
        self.project = ctx.project
        self.era = ctx.era
        self.ctx = ctx
        self.main = main  # its clock dates the sidecars; the oldest layout writes subagents into its file
        self.tally = tally
        self.session_dir = session_dir  # <project>/<session id>/
        self.slug = slug

    def prompt(self, desc: str) -> str:
        """The prompt a parent writes for a subagent."""
        r = self.rng
        branch = self.main.env.branch
        where = "in the working tree" if branch == "main" else f"on branch `{branch}` compared to main"
        lines = [f"{desc} {where}.", "",
                 f"1. Run `git diff main...HEAD` and read `{r.choice(self.project.files)}`", "2. Focus on:"]
        for _ in range(r.randint(2, 6)):
            lines.append(f"   - {r.choice(ADJS)} {r.choice(NOUNS).replace('_', ' ')} around `{r.choice(self.project.functions)}`")
        lines += ["", self.forge.prose(r.choice((80, 200, 400, 800))), ""]
        lines.append(r.choice(("Be specific about file:line for every finding.", "Do research only, don't write any code.",
                               "Report back with a prioritized list.", "Keep the report under 800 words.")))
        return "\n".join(lines)

    def run(self, plan: AgentPlan, *, tool_use_id: str, description: str, prompt: str, start: int,
            duration_ms: int = 0, depth: int = 1, parent_agent: str | None = None,
            wf_dir: Path | None = None, agent_type: str | None = None, replay: list[dict] = ()) -> Running:
        """Write one subagent transcript (and its sidecar) from `start`, after the parent lines of
        `replay` (a fork opens with the conversation it forks); return its outcome."""
        era = self.era
        agent_type = agent_type or plan.agent_type
        agent_id = f"a{plan.name}-{self.ids.hexs(16)}" if plan.name else self.ids.agent(era.agent_id)
        if era.layout == "inline":
            env = self.main.env.sidechain_of(None)
            tr = self.main.tr
        else:
            env = self.main.env.sidechain_of(agent_id, agent_type if era.modern else None)
            if era.layout == "sibling":
                path = self.session_dir.parent / f"agent-{agent_id}.jsonl"
            else:
                path = (wf_dir if wf_dir is not None else self.session_dir / "subagents") / f"agent-{agent_id}.jsonl"
            if not era.modern and era.key != "sibling":
                env.slug = self.slug
            tr = Transcript(path, self.tally)
            if era.sidecars:
                self._sidecar(path, plan, description, tool_use_id, depth, parent_agent, wf_dir is not None)
        model = era.fast_model if agent_type == "Explore" else era.model
        actor = Actor(self.ctx, tr, env, start, model, scale=plan.step_scale)
        if era.agent_progress and plan.kind == "sync" and depth == 1:
            actor.echo = []
        if era.notify == "agent" and plan.kind == "async":
            actor.tool_log = []
        if duration_ms > 0:
            natural = max(1, plan.events // 3) * 11_000
            actor.pace = max(0.2, duration_ms / natural)
        if era.modern:
            env.prompt_id = self.ids.uuid()
        for line in replay:
            tr.write(as_sidechain(line, agent_id))
        actor.user_text(prompt)
        if actor.echo is not None:
            actor.echo.append((actor.now, {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
                                           "uuid": actor.last_uuid, "timestamp": iso(actor.now)}))
        run = Running(plan, agent_id, tool_use_id, description, prompt, actor=actor)
        tools = (EXPLORE_TOOLS if agent_type == "Explore" else
                 REVIEW_TOOLS if any(w in description for w in ("Review", "Audit", "review", "Explore", "Find", "Map", "Trace"))
                 else IMPLEMENT_TOOLS)
        resumed = plan.fate == "resumed"  # it stops early; the parent resumes it later
        self._work(actor, plan, max(4, plan.events // 3) if resumed else plan.events, tools, depth, agent_id, plan_akm=True)
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

    def resume(self, run: Running, message: str) -> None:
        """A finished background agent told to continue (SendMessage): it goes on in the same file."""
        actor = run.actor
        actor.tr = Transcript(actor.tr.path, self.tally, append=True)
        actor.now = self.main.now + self.rng.randint(50, 500)
        actor.user_text(message)
        self._work(actor, run.plan, actor.msg_lines + run.plan.events - max(4, run.plan.events // 3), REVIEW_TOOLS, 1,
                   run.agent_id, plan_akm=False)
        report = actor.forge.report(run.plan.report_chars, run.description)
        actor.api_call([{"type": "text", "text": report}])
        run.final_text = report
        self._close(run)

    def aside(self, parent_lines: list[dict], report_chars: int) -> None:
        """A `/btw` side question: agent-aside_question-<16 hex>.jsonl, no sidecar, the parent's lines
        so far replayed, then the question and its answer."""
        agent_id = "aside_question-" + self.ids.hexs(16)
        env = self.main.env.sidechain_of(agent_id)
        env.prompt_id = self.ids.uuid()
        tr = Transcript(self.session_dir / "subagents" / f"agent-{agent_id}.jsonl", self.tally)
        for line in parent_lines:
            tr.write(as_sidechain(line, agent_id))
        actor = Actor(self.ctx, tr, env, self.main.now + self.rng.randint(200, 4000), self.era.model)
        question = self.forge.sentence()
        actor.user_text(f"btw, {question[:1].lower()}{question[1:]}")
        actor.api_call([{"type": "text", "text": self.forge.prose(report_chars)}])
        tr.close()

    def compaction(self, now: int, analysis: str, summary: str) -> None:
        """agent-acompact-<id>.jsonl: the call that wrote a compaction's summary, ending at `now`."""
        r = self.rng
        cid = "acompact-" + self.ids.hexs(6)
        env = self.main.env.sidechain_of(cid)
        if not self.era.modern:
            env.slug = self.slug
        else:
            env.prompt_id = self.ids.uuid()
        tr = Transcript(self.session_dir / "subagents" / f"agent-{cid}.jsonl", self.tally)
        c = Actor(self.ctx, tr, env, now - r.randint(15_000, 60_000), self.era.model)
        for _ in range(r.choice((0, 1, 1, 2, 3, 5))):
            c.user_text(f"<system-reminder>\nPostToolUse:Edit hook additional context: {self.forge.shell(r.randint(100, 700))}\n</system-reminder>", meta=True)
        c.user_text("Your task is to create a detailed summary of the conversation so far, paying close attention to the user's "
                    "explicit requests and your previous actions.\n" + self.forge.prose(r.randint(800, 2500)))
        c.api_call([{"type": "text", "text": f"\n\n<analysis>\n{analysis}\n</analysis>\n\n<summary>\n{summary}\n</summary>"}])
        tr.close()

    def _close(self, run: Running) -> None:
        actor = run.actor
        run.t_end = actor.now + self.rng.randint(50, 900)
        run.tool_uses = actor.tool_uses
        run.duration_ms = run.t_end - actor.first_ts
        run.usage = actor.meter.final_usage(len(run.final_text))
        run.total_tokens = total_tokens(run.usage)
        if actor.tr is not self.main.tr:
            actor.tr.close()

    def _work(self, actor: Actor, plan: AgentPlan, target: int, tools: tuple, depth: int, agent_id: str,
              plan_akm: bool) -> None:
        """Tool calls until about `target` user/assistant lines; the plan's akm calls and nested agents at random steps."""
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
                    self._nested(actor, plan, agent_id)
                else:
                    actor.akm(kind)
            if actor.msg_lines >= target - 1 and not special:
                break
            if special and step > steps_est:
                slots = [step] * len(special)
                continue
            actor.work(tools)
            step += 1

    def _nested(self, actor: Actor, plan: AgentPlan, parent_agent: str) -> None:
        """A subagent spawning its own subagent: the spawn lives in the parent agent's file."""
        r = self.rng
        era = self.era
        desc = self.forge.description()
        prompt = self.prompt(desc)
        inp = {"description": desc, "subagent_type": "Explore", "prompt": prompt} if era.modern else \
            {"description": desc, "prompt": prompt, "subagent_type": "Explore"}
        block = actor.tool_use(era.task_tool, inp)
        uuids = actor.api_call([block])
        sub_plan = AgentPlan(at=0, kind="sync", events=r.randint(8, 24), report_chars=r.randint(800, 2500), agent_type="Explore")
        run = self.run(sub_plan, tool_use_id=block["id"], description=desc, prompt=prompt, start=actor.now + 100,
                       depth=2, parent_agent=parent_agent)
        actor.now = run.t_end + r.randint(20, 500)
        actor.tool_result(block, *task_result(era, run), uuids[-1])

    def _sidecar(self, path: Path, plan: AgentPlan, desc: str, tool_use_id: str, depth: int,
                 parent_agent: str | None, workflow: bool) -> None:
        """agent-<id>.meta.json, in every variant real roots hold (full, minimal, missing, null, cut short)."""
        r = self.rng
        meta_path = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
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
        write_file(meta_path, data[: len(data) // 2] if plan.sidecar == "broken" else data, self.tally, self.main.now)

    def workflow(self, plan: AgentPlan, block: dict, desc: str, run_id: str, task_id: str, t0: int, duration: int) -> Running:
        """A dynamic workflow's files: N agents under subagents/workflows/<runId>/, a journal and a run snapshot."""
        r = self.rng
        wf_dir = self.session_dir / "subagents" / "workflows" / run_id
        name = block["input"]["scriptPath"].rsplit("/", 1)[-1].replace(".workflow.js", "")
        journal = []
        runs = []
        results = []
        for k in range(plan.workflow_agents):
            label = f"{r.choice(VERBS)}:{chr(97 + k % 26)}"
            wdesc = f"{label} {desc.lower()}"
            start = t0 + r.randint(200, 5000) + (k * r.randint(500, 20_000) if duration == 0 else int(duration * 0.3 * k / max(1, plan.workflow_agents)))
            sub_plan = AgentPlan(at=0, kind="async", events=max(4, int(plan.events * r.uniform(0.6, 1.4))),
                                 report_chars=r.randint(300, 1500), agent_type="workflow-subagent",
                                 remember=plan.remember if k == 0 else 0, feedback=plan.feedback if k == 0 else 0,
                                 step_scale=plan.step_scale)
            prompt = f"{desc}: batch {label}\n\n" + self.forge.prose(r.choice((100, 250, 500)))
            run = self.run(sub_plan, tool_use_id="", description=wdesc, prompt=prompt, start=start, wf_dir=wf_dir,
                           duration_ms=int(duration * 0.7) if duration else 0, agent_type="workflow-subagent")
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
        snapshot = {"runId": run_id, "taskId": task_id, "status": "completed", "workflowName": name, "timestamp": iso(t0),
                    "durationMs": t_end - t0, "agentCount": plan.workflow_agents, "totalTokens": total_tok,
                    "totalToolCalls": total_tools, "defaultModel": self.era.model, "scriptPath": block["input"]["scriptPath"],
                    "args": block["input"]["args"], "summary": desc,
                    "workflowProgress": [{"type": "workflow_agent", "index": i, "label": res["label"], "agentId": res["agentId"],
                                          "state": "done", "resultPreview": res["result"][:80]} for i, res in enumerate(results)]}
        write_file(self.session_dir / "workflows" / f"{run_id}.json", orjson.dumps(snapshot), self.tally, t_end)
        output = orjson.dumps({"summary": desc, "results": results}).decode()
        return Running(plan, task_id, block["id"], desc, "", t_end=t_end, task_kind="workflow", output=output,
                       total_tokens=total_tok, tool_uses=total_tools)
