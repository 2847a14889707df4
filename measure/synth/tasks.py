"""Background tasks as the main thread sees them: state, launch and Task results, notifications."""

from __future__ import annotations

from dataclasses import dataclass, field

from measure.synth.actor import Actor, shell_result
from measure.synth.lines import Era, xml_escape
from measure.synth.plans import AgentPlan
from measure.synth.text import Project
from measure.synth.vocab import LAUNCHED, MODERN_NOTE


@dataclass
class Running:
    """A launched subagent, background Bash or workflow: what the main thread will be told about it."""

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
    actor: Actor | None = None
    notified: int = 0
    usage: dict = field(default_factory=dict)  # the final call's usage, as the Task result reports it
    output: str = ""  # workflow JSON


def tmp_root(era: Era, project: Project, session_id: str) -> str:
    """Where a session's background tasks write their output files, per era and OS (format §4)."""
    slug = project.slug
    if era.key == "2.1.17":
        return f"/private/tmp/claude/{slug}"
    if era.key in ("inline", "sibling"):
        base = "/tmp/claude"
    else:
        base = "/private/tmp/claude-501" if project.cwd.startswith("/Users") else "/tmp/claude-1000"
    return f"{base}/{slug}/{session_id}" if era.modern else f"{base}/{slug}"


def output_file(tmp: str, task_id: str) -> str:
    return f"{tmp}/tasks/{task_id}.output"


def task_result(era: Era, run: Running) -> tuple[list[dict], dict]:
    """A finished subagent's Task tool result: (content, toolUseResult), with the era's agentId footer."""
    final = [{"type": "text", "text": run.final_text}]
    tur = {"content": final, "totalDurationMs": run.duration_ms, "totalTokens": run.total_tokens,
           "totalToolUseCount": run.tool_uses, "usage": run.usage}
    if era.layout == "inline":
        return final, tur
    usage = f"\n<usage>total_tokens: {run.total_tokens}\ntool_uses: {run.tool_uses}\nduration_ms: {run.duration_ms}</usage>"
    if era.modern:
        footer = f"agentId: {run.agent_id} (use SendMessage with to: '{run.agent_id}' to continue this agent){usage}"
    else:
        footer = f"agentId: {run.agent_id} (for resuming to continue this agent's work if needed){usage if era.key == '2.1.39' else ''}"
    return final + [{"type": "text", "text": footer}], {"status": "completed", "prompt": run.prompt, "agentId": run.agent_id} | tur


def skill_forked(skill: str, agent_id: str) -> tuple[str, dict]:
    """The tool result of a Skill run as a forked background agent (claudemux 2.1.232): (text, toolUseResult)."""
    note = f"Running in the background as @{skill}"
    tur = {"success": True, "commandName": skill, "status": "forked", "background": True, "agentId": agent_id, "result": note}
    return f'Skill "{skill}" launched (forked execution, running in the background).\n\n{note}', tur


def bash_launched(era: Era, tmp: str, task_id: str) -> tuple[str, dict]:
    """The tool result of a Bash call sent to the background: (text, toolUseResult)."""
    text = (f"Command running in background with ID: {task_id}. Output is being written to: {output_file(tmp, task_id)}"
            + (". You will be notified when it completes. To check interim output, use Read on that file path." if era.modern else ""))
    return text, shell_result("") | {"backgroundTaskId": task_id}


def agent_launched(era: Era, tmp: str, run: Running) -> tuple[str, dict]:
    """The tool result of a background subagent's launch: (text, toolUseResult)."""
    out_file = output_file(tmp, run.agent_id)
    key = "agent" if era.notify == "agent" else "modern" if era.modern else "classic"
    text = LAUNCHED[key].format(agent_id=run.agent_id, out_file=out_file)
    tur = {"isAsync": True, "status": "async_launched", "agentId": run.agent_id, "description": run.description}
    if era.modern:
        tur["resolvedModel"] = run.actor.model
    tur |= {"prompt": run.prompt, "outputFile": out_file}
    if era.modern:
        tur["canReadOutputFile"] = True
    return text, tur


def notification(era: Era, tmp: str, run: Running) -> str:
    """The `<task-notification>` (or 2.0.x `<agent-notification>`) Claude Code queues when a task ends."""
    out_file = output_file(tmp, run.agent_id)
    desc = run.description
    if run.plan.kind != "bash" and era.notify == "agent":
        return (f"<agent-notification>\n<agent-id>{run.agent_id}</agent-id>\n<output-file>{out_file}</output-file>\n"
                f"<status>{run.status}</status>\n<summary>Agent \"{desc}\" {'completed' if run.status == 'completed' else 'was stopped by user'}.</summary>\n"
                "Read the output file to retrieve the full result.\n</agent-notification>")
    trailer = ""
    if run.plan.kind == "bash":
        body = (f'<summary>Background command "{desc}" completed (exit code 0)</summary>\n' if run.status == "completed"
                else f'<summary>Background command "{desc}" failed with exit code 1</summary>\n')
        trailer = f"\nRead the output file to retrieve the result: {out_file}"
    elif run.plan.kind == "workflow":
        body = f"<summary>Dynamic workflow \"{desc}\" completed</summary>\n<result>{xml_escape(run.output)}</result>\n"
    elif run.status == "killed":
        body = f"<summary>Agent \"{desc}\" was stopped by user</summary>\n"
    elif era.modern:
        body = (f"<summary>Agent \"{desc}\" finished</summary>\n<note>{MODERN_NOTE}</note>\n<result>{xml_escape(run.final_text)}</result>\n"
                f"<usage><subagent_tokens>{run.total_tokens}</subagent_tokens><tool_uses>{run.tool_uses}</tool_uses>"
                f"<duration_ms>{run.duration_ms}</duration_ms></usage>\n")
    else:  # 2.1.17 / 2.1.37: the result is copied verbatim (real files show unescaped quotes and '>')
        usage = (f"<usage>total_tokens: {run.total_tokens}\ntool_uses: {run.tool_uses}\nduration_ms: {run.duration_ms}</usage>\n"
                 if era.notify == "2.1.37" else "")
        body = f"<summary>Agent \"{desc}\" completed</summary>\n<result>{run.final_text}</result>\n{usage}"
        trailer = f"\nFull transcript available at: {out_file}"
    tool_use = f"<tool-use-id>{run.tool_use_id}</tool-use-id>\n" if era.modern else ""
    out_line = f"<output-file>{out_file}</output-file>\n" if era.modern or run.plan.kind == "bash" else ""
    return (f"<task-notification>\n<task-id>{run.agent_id}</task-id>\n{tool_use}{out_line}<status>{run.status}</status>\n"
            f"{body}</task-notification>{trailer}")


def task_output(run: Running, done: bool) -> tuple[str, dict]:
    """2.0.x: TaskOutput's result for a background agent, finished (`done`) or still running."""
    log = run.actor.tool_log
    shown = log if done else log[: max(1, len(log) // 2)]
    output = "\n".join(shown) + ("\n" + run.final_text if done else "") + "\n"
    status = "completed" if done else "running"
    retrieval = "success" if done else "not_ready"
    text = (f"<retrieval_status>{retrieval}</retrieval_status>\n\n<task_id>{run.agent_id}</task_id>\n\n<task_type>local_agent</task_type>\n\n"
            f"<status>{status}</status>\n\n<output>\n{output}</output>")
    return text, {"retrieval_status": retrieval, "task": {"task_id": run.agent_id, "task_type": "local_agent", "status": status,
                                                         "description": run.description, "output": output, "prompt": run.prompt}}
