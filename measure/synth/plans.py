"""Plans: what a session (SessionRecipe) or a subagent (AgentPlan) should contain; shapes produce them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentPlan:
    """One delegated unit of work spawned by a session (or by another subagent)."""

    at: float  # fraction of the parent's progress at which it is launched
    kind: str = "sync"  # "sync" | "async" | "workflow" | "bash" | "fork" (a forked Skill) | "aside" (a /btw side question)
    fate: str = "completed"  # "completed" | "killed" | "resumed" | "late" | "lost" | "rejected" | "interrupted"
    # late: finishes after the parent's last turn; its notification is enqueued, never delivered.
    # lost: finishes after the parent's last turn and no notification is ever written.
    # rejected / interrupted (sync): the agent works, the parent's tool result says the user stopped it.
    events: int = 40  # user/assistant lines in its transcript (akm events), approximately
    report_chars: int = 2500  # size of its final report
    agent_type: str = "general-purpose"
    sidecar: str = "full"  # "full" | "minimal" ({agentType, description}) | "fork" | "missing" | "broken" | "null" (modern era only)
    name: str = ""  # a named agent: its id is a<name>-<16 hex> (forks; the skill a fork runs)
    nested: int = 0  # depth-2 agents it spawns itself (flat in subagents/)
    remember: int = 0  # `akm remember "..."` calls inside it
    feedback: int = 0  # `akm feedback <ref> --note "..."` calls inside it
    workflow_agents: int = 0  # kind == "workflow": agents in the run
    group: int = 0  # plans sharing a nonzero group launch in one assistant message (fan-out)
    duration_s: float = 0  # wall time override (0: derived from its events; negative: a share of the parent's remaining time)
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
