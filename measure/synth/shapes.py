"""Shapes: named plans of whole roots (mixed, s840, bench) and SHAPES."""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import count, takewhile
from pathlib import Path
from typing import Callable, Iterator

from measure.synth.lines import Ids, Tally, write_file
from measure.synth.plans import AgentPlan, SessionRecipe
from measure.synth.text import Project, make_project
from measure.synth.vocab import LANGS, PROJECT_NAMES

A, R = AgentPlan, SessionRecipe  # short names keep the recipe tables below readable

ERA_EPOCH_MS = {  # first day of each era's sessions (UTC)
    "inline": 1_754_006_400_000,  # 2025-08-01
    "sibling": 1_767_571_200_000,  # 2026-01-05
    "2.1.17": 1_769_299_200_000,  # 2026-01-25
    "2.1.39": 1_770_681_600_000,  # 2026-02-10
    "modern": 1_786_320_000_000,  # 2026-08-10
}


@dataclass
class ShapeContext:
    """What a shape's planner sees: the seed, the requested size, the root and its running tally."""

    seed: int
    sessions: int
    size_mb: float | None
    tally: Tally
    root: Path
    rng: random.Random

    @property
    def target_bytes(self) -> int:
        return int(self.size_mb * 1_000_000) if self.size_mb else 0

    def wants_more(self, k: int) -> bool:
        """Whether to plan session `k`: --size-mb overrides --sessions, sessions come until the bytes are there."""
        return self.tally.bytes < self.target_bytes if self.target_bytes else k < self.sessions


def _start(rng: random.Random, era: str) -> int:
    return ERA_EPOCH_MS[era] + rng.randint(0, 20 * 86_400_000) + rng.randint(0, 86_399_999)


def _projects(rng: random.Random, n: int) -> list[Project]:
    names = rng.sample(PROJECT_NAMES, n)
    return [make_project(rng, name=names[i], language=LANGS[i % len(LANGS)]) for i in range(n)]


def _mixed_fixed(rng: random.Random) -> list[SessionRecipe]:
    """Twelve sessions that together cover every layout, version shape and error path."""
    u = rng.uniform
    return [
        # 0: modern; parent near the 80k budget, big background reviewers running to its end (eviction)
        R("modern", 0, _start(rng, "modern"), target_chars=62_000, title="head", persisted_output=1, hooks=1,
          remember=1, feedback=1, readonly=2,
          agents=(A(0.15, "sync", events=20, report_chars=3000, agent_type="Explore"),
                  A(0.8, "async", events=75, report_chars=9000, group=1, duration_s=-1.3, remember=2, step_scale=0.6),
                  A(0.8, "async", events=58, report_chars=6000, group=1, duration_s=-1.2, step_scale=0.6),
                  A(0.8, "async", events=52, report_chars=4000, group=1, duration_s=-1.1, sidecar="missing", step_scale=0.6))),
        # 1: modern; fan-out with every sidecar variant, a resumed and a killed agent, a nested spawn
        R("modern", 1, _start(rng, "modern"), target_chars=35_000, title="late", compactions=1,
          agents=(A(0.2, "async", events=20, report_chars=int(u(2000, 5000)), group=2),
                  A(0.2, "async", events=16, report_chars=int(u(2000, 5000)), group=2, sidecar="missing"),
                  A(0.2, "async", events=13, report_chars=int(u(2000, 5000)), group=2, sidecar="null"),
                  A(0.35, "async", fate="resumed", events=23, report_chars=3500),
                  A(0.4, "bash"),
                  A(0.5, "async", fate="killed", events=9, sidecar="broken"),
                  A(0.6, "sync", events=17, report_chars=2500, nested=1, remember=3, feedback=1))),
        # 2: modern; dynamic workflows (journal, run snapshot, minimal sidecars)
        R("modern", 2, _start(rng, "modern"), target_chars=30_000, caveats=1, remember=1,
          agents=(A(0.25, "workflow", events=8, workflow_agents=4),
                  A(0.45, "async", events=18, report_chars=3000, agent_type="Explore"),
                  A(0.6, "workflow", events=6, workflow_agents=3, remember=1))),
        # 3: 2.1.39 (spotter-like): sync Tasks echoed as agent_progress, compaction, background Bash
        R("2.1.39", 3, _start(rng, "2.1.39"), target_chars=40_000, compactions=1, hooks=2, malformed=2, caveats=1,
          readonly=1,
          agents=(A(0.2, "sync", events=22, report_chars=3500, agent_type="Explore"),
                  A(0.3, "bash"),
                  A(0.55, "sync", events=18, report_chars=2500),
                  A(0.7, "bash"))),
        # 4: 2.1.37-era notifications with <usage>; pairs with no sidecars
        R("2.1.39", 4, _start(rng, "2.1.39"), target_chars=30_000, hooks=2,
          agents=(A(0.3, "async", events=22, report_chars=5500, group=3, remember=1),
                  A(0.3, "async", events=17, report_chars=3000, group=3),
                  A(0.3, "async", events=14, report_chars=4000, group=3),
                  A(0.7, "sync", events=13, report_chars=1800))),
        # 5: 2.1.17 four-agent fan-out, one killed
        R("2.1.17", 0, _start(rng, "2.1.17"), target_chars=28_000, hooks=1,
          agents=(A(0.25, "async", events=16, report_chars=4500, group=4),
                  A(0.25, "async", events=14, report_chars=3500, group=4),
                  A(0.25, "async", events=12, report_chars=6000, group=4),
                  A(0.25, "async", fate="killed", events=6, group=4))),
        # 6: 2.0.76: legacy sibling agent files, <agent-notification> enqueue+remove, TaskOutput polls
        R("sibling", 1, _start(rng, "sibling"), target_chars=30_000, compactions=1, hooks=0, false_positive_refs=1,
          agents=(A(0.3, "async", events=13, report_chars=3000, group=5),
                  A(0.3, "async", events=12, report_chars=2500, group=5),
                  A(0.3, "async", events=10, report_chars=2000, group=5),
                  A(0.6, "sync", events=10, report_chars=1500))),
        # 7: oldest: sidechain lines inline in the parent
        R("inline", 2, _start(rng, "inline"), target_chars=30_000, hooks=0,
          agents=(A(0.3, "sync", events=10, report_chars=1800),
                  A(0.6, "sync", events=8, report_chars=1500, agent_type="Explore"))),
        # 8: modern; the parent rotated off disk, its subagents/ folder survives
        R("modern", 3, _start(rng, "modern"), target_chars=25_000, orphan=True,
          agents=(A(0.2, "async", events=13, report_chars=2500),
                  A(0.4, "async", events=10, report_chars=2000),
                  A(0.6, "sync", events=9, report_chars=1500))),
        # 9: 2.1.39 tool-heavy, no agents; non-UTF-8 bytes and a torn final line
        R("2.1.39", 4, _start(rng, "2.1.39"), target_chars=25_000, hooks=2, invalid_utf8=True, torn_tail=True),
        # 10: modern; a subagent that is only its terminal turn (a delegated akm remember)
        R("modern", 0, _start(rng, "modern"), target_chars=20_000, malformed=1, empty_subagent=True,
          agents=(A(0.3, "async", events=3, report_chars=200, remember=1),
                  A(0.6, "sync", events=6, report_chars=1200))),
        # 11: a short 2.1.17 session
        R("2.1.17", 3, _start(rng, "2.1.17"), target_chars=6_000, hooks=0),
    ]


def _mixed_outliving(rng: random.Random) -> list[SessionRecipe]:
    """Sessions 12-13: background tasks that outlive the parent's last turn."""
    return [
        # 12: modern; reviewers still running when the parent stops: one notification enqueued and
        # never delivered, one never written, a late background Bash, and a killed agent
        R("modern", 2, _start(rng, "modern"), target_chars=24_000, hooks=1, remember=1,
          agents=(A(0.2, "async", events=14, report_chars=2500),
                  A(0.5, "async", fate="killed", events=6),
                  A(0.75, "async", fate="late", events=30, report_chars=4000, duration_s=1500, remember=1),
                  A(0.8, "async", fate="lost", events=22, report_chars=3000, duration_s=1200),
                  A(0.85, "bash", fate="late", duration_s=1800))),
        # 13: 2.1.17; a fan-out whose last agent finishes after the parent's last turn (undelivered)
        R("2.1.17", 4, _start(rng, "2.1.17"), target_chars=16_000, hooks=0,
          agents=(A(0.3, "async", events=12, report_chars=2000, group=6),
                  A(0.3, "async", events=10, report_chars=1800, group=6),
                  A(0.7, "async", fate="late", events=24, report_chars=3500, duration_s=900))),
    ]


def _mixed_delegation(rng: random.Random) -> list[SessionRecipe]:
    """Sessions 14-15: delegation as real 2.1.3x-2.1.2xx sessions record it."""
    return [
        # 14: modern; a named agent with a minimal sidecar and a plain sync agent, both of whose results the
        # budget keeps twice; a /btw side question replaying the parent; a forked Skill with its fork sidecar
        # (it replays the parent too); a launch the user interrupts, found by its sidecar's toolUseId
        R("modern", 3, _start(rng, "modern"), target_chars=16_000, hooks=1, caveats=1,
          agents=(A(0.2, "sync", events=8, report_chars=900, name="schema-audit", sidecar="minimal"),
                  A(0.35, "sync", events=7, report_chars=700),
                  A(0.5, "aside", report_chars=500),
                  A(0.6, "fork", events=10, report_chars=1500, name="code-review", sidecar="fork", agent_type="fork"),
                  A(0.75, "sync", fate="interrupted", events=6, report_chars=600))),
        # 15: 2.1.39 (spotter-like); a sync launch the user rejects, its agent_progress echo naming it
        R("2.1.39", 1, _start(rng, "2.1.39"), target_chars=14_000, hooks=1,
          agents=(A(0.3, "sync", events=9, report_chars=800),
                  A(0.6, "sync", fate="rejected", events=8, report_chars=700))),
    ]


def _random_recipe(rng: random.Random, n_projects: int) -> SessionRecipe:
    era = rng.choice(("modern", "modern", "2.1.39", "2.1.39", "2.1.17", "sibling", "inline"))
    agents = []
    for _ in range(rng.choice((0, 0, 1, 2, 3, 5))):
        kind = "sync" if era == "inline" else rng.choice(("sync", "async", "async", "bash") + (("workflow",) if era == "modern" else ()))
        agents.append(AgentPlan(round(rng.uniform(0.1, 0.8), 3), kind, events=rng.randint(6, 40), report_chars=rng.randint(600, 6000),
                                workflow_agents=rng.randint(2, 4), remember=rng.choice((0, 0, 1)),
                                sidecar=rng.choice(("full", "full", "full", "missing"))))
    return SessionRecipe(era, rng.randrange(n_projects), _start(rng, era), target_chars=rng.randint(8_000, 70_000),
                         agents=tuple(agents), hooks=rng.choice((0, 1, 2)), remember=rng.choice((0, 0, 1, 2)),
                         readonly=rng.choice((0, 1)), compactions=rng.choice((0, 0, 1)))


def _mixed_plan(ctx: ShapeContext) -> Iterator[tuple[SessionRecipe, Project]]:
    """Varied sessions across every layout, version and error path (the default shape)."""
    projects = _projects(ctx.rng, 5)
    fixed = (_mixed_fixed(ctx.rng) + _mixed_outliving(random.Random(f"{ctx.seed}:mixed:outliving"))
             + _mixed_delegation(random.Random(f"{ctx.seed}:mixed:delegation")))
    for k in takewhile(ctx.wants_more, count()):
        recipe = fixed[k] if k < len(fixed) else _random_recipe(ctx.rng, len(projects))
        yield recipe, projects[recipe.project]
    # After the last session, root-level oddities: an empty session file and a directory named like one.
    ids = Ids(ctx.rng)
    ms = ERA_EPOCH_MS["modern"] + 3 * 86_400_000
    write_file(ctx.root / projects[0].slug / f"{ids.uuid()}.jsonl", b"", ctx.tally, ms)
    # git keeps no empty directories, so the directory holds a placeholder file.
    write_file(ctx.root / projects[1].slug / f"{ids.uuid()}.jsonl" / ".keep", b"", ctx.tally, ms)


# -- s840: the four sessions of akm's #840 study (pipeline-spec §12.2) -----------------------

S840_SESSIONS = {
    "4f7f80f8": "4f7f80f8-f0bc-4709-9534-f8b6ea18b2f2",
    "578b2d47": "578b2d47-2382-4593-9423-950c7f4826f1",
    "f798f45f": "f798f45f-af76-4566-a0cb-5a0c52c76526",
    "393273fd": "393273fd-d81c-47cb-9132-99912f15a35c",
}


def _spread(rng: random.Random, n: int, lo: float, hi: float) -> list[float]:
    return sorted(round(rng.uniform(lo, hi), 4) for _ in range(n))


def _s840_plan(ctx: ShapeContext) -> Iterator[tuple[SessionRecipe, Project]]:
    """The four sessions of akm's #840 study, plus #836's orphaned 4a0d9e9b subagents."""
    rng = ctx.rng
    akm = make_project(rng, name="akm", language="typescript", user="dana", cwd="/Users/dana/src/akm")
    plugins = make_project(rng, name="akm-plugins", language="typescript", user="dana", cwd="/Users/dana/src/akm-plugins")
    t0 = ERA_EPOCH_MS["modern"] + 10 * 86_400_000

    # 4f7f80f8: 28 top-level files (19 background + 5 sync + 1 killed + 1 nested + 2 compaction),
    # 22 workflow agents -> 50 chunks; 19 notification pairs; refs 2 parent / 160 subagent.
    # Every agent finishes before the parent's last quarter, so folding evicts nothing.
    agents = [A(at, "async", events=rng.randint(220, 320), report_chars=int(rng.lognormvariate(9.1, 0.6)),
                remember=5, feedback=1, step_scale=0.45) for at in _spread(rng, 19, 0.04, 0.66)]
    agents += [A(at, "sync", events=rng.randint(180, 300), report_chars=rng.randint(2000, 6000), remember=6, feedback=2,
                 nested=1 if i == 2 else 0, step_scale=0.45, agent_type="Explore" if i % 2 else "general-purpose")
               for i, at in enumerate(_spread(rng, 5, 0.05, 0.65))]
    agents += [A(0.5, "async", fate="killed", events=100, step_scale=0.45),
               *(A(at, "workflow", events=270, workflow_agents=11, remember=3, step_scale=0.4) for at in (0.3, 0.6))]
    yield SessionRecipe("modern", 0, t0, windows=17, scale=1.38, agents=tuple(agents), compactions=2, wait_at=0.72,
                        remember=1, feedback=1, hooks=0, title="head",
                        session_id=S840_SESSIONS["4f7f80f8"]), akm

    # 578b2d47: 4 top-level (3 background + 1 compaction), 28 workflow agents -> 32 chunks;
    # 3 pairs; refs 4 / 34. The last workflow and one reviewer overlap the parent's final stretch.
    agents = [A(at, "async", events=250, report_chars=rng.randint(8000, 12000), remember=5, feedback=1, step_scale=0.45)
              for at in (0.2, 0.45)]
    agents += [*(A(at, "workflow", events=168, workflow_agents=14, remember=8, step_scale=0.4) for at in (0.3, 0.62)),
               A(0.955, "async", events=32, report_chars=rng.randint(8000, 12000), remember=5, feedback=1,
                duration_s=-1.05, step_scale=0.45)]
    yield SessionRecipe("modern", 0, t0 + 2 * 86_400_000, windows=15, scale=1.1, agents=tuple(agents), compactions=1,
                        remember=3, feedback=1, hooks=0, session_id=S840_SESSIONS["578b2d47"]), akm

    # f798f45f: one synchronous subagent early on, nothing else (1 chunk, 0 pairs, refs 1 / 0).
    yield SessionRecipe("modern", 1, t0 + 4 * 86_400_000, windows=8, scale=1.0,
                        agents=(A(0.3, "sync", events=60, report_chars=3000, step_scale=0.5),), remember=1, hooks=0,
                        title="head", session_id=S840_SESSIONS["f798f45f"]), plugins

    # 393273fd: 74 top-level (55 background incl. 8 resumed + 6 sync + 2 killed + 1 nested + 10
    # compaction), 55 workflow agents -> 129 chunks; 55 pairs (resumed ones overlap little);
    # refs 8 / 0. A few reviewers and one workflow overlap the end (eviction).
    fates = ["resumed"] * 8 + ["completed"] * 46
    rng.shuffle(fates)
    agents = [A(at, "async", fate=fate, events=rng.randint(50, 110), report_chars=int(rng.lognormvariate(8.7, 0.5)),
                step_scale=0.4) for at, fate in zip(_spread(rng, 54, 0.03, 0.9), fates)]
    agents.append(A(0.988, "async", events=40, report_chars=rng.randint(4000, 9000), duration_s=-1.05, step_scale=0.4))
    agents += [A(at, "sync", events=rng.randint(40, 80), report_chars=rng.randint(1500, 4000),
                 nested=1 if i == 0 else 0, step_scale=0.4) for i, at in enumerate(_spread(rng, 6, 0.05, 0.85))]
    agents += [A(at, "async", fate="killed", events=30, step_scale=0.4) for at in (0.4, 0.7)]
    agents += [A(at, "workflow", events=40, workflow_agents=11, step_scale=0.35)
               for at in (0.15, 0.35, 0.55, 0.75, 0.9)]
    yield SessionRecipe("modern", 0, t0 + 6 * 86_400_000, windows=100, scale=0.95, agents=tuple(agents), compactions=10,
                        remember=6, feedback=2, hooks=0, session_id=S840_SESSIONS["393273fd"]), akm

    # 4a0d9e9b: #836's smallest session, whose parent later rotated off disk; 78 subagent files remain.
    agents = tuple(A(at, "async" if i % 9 else "sync", events=rng.randint(14, 44), report_chars=rng.randint(1500, 5000), step_scale=0.4)
                   for i, at in enumerate(_spread(rng, 78, 0.05, 0.95)))
    yield SessionRecipe("modern", 1, t0 - 6 * 86_400_000, target_chars=120_000, agents=agents, hooks=0, orphan=True,
                        session_id="4a0d9e9b-" + Ids(rng).uuid()[9:]), plugins


# -- bench: many large sessions --------------------------------------------------------------

def _bench_plan(ctx: ShapeContext) -> Iterator[tuple[SessionRecipe, Project]]:
    """Many large sessions for benchmarking; --size-mb sets the total."""
    rng = ctx.rng
    projects = _projects(rng, 6)
    target = ctx.target_bytes
    for k in takewhile(ctx.wants_more, count()):
        era = rng.choice(("modern", "modern", "modern", "2.1.39", "2.1.39", "2.1.17", "sibling", "inline"))
        if k == 0 and target and ctx.size_mb >= 300:
            parent_bytes = 78_000_000  # plus ~12 MB of subagents: one ~90 MB session, like ccusage's largest file
            era = "modern"  # its subagents must sit under <session>/subagents/ to count as one session
        else:
            parent_bytes = int(min(25e6, max(3e5, rng.lognormvariate(15.0, 0.8))))
            if target:
                parent_bytes = max(200_000, min(parent_bytes, int((target - ctx.tally.bytes) * 0.8)))
        n_agents = 0 if era == "inline" and rng.random() < 0.5 else max(0, int(parent_bytes / 1.8e6 * rng.uniform(0.5, 1.5)))
        if parent_bytes >= 50_000_000:
            n_agents = 12  # about 12 MB of subagents on top of the parent
        agents = []
        for _ in range(min(n_agents, 60)):
            kind = "sync" if era == "inline" else rng.choice(("sync", "async", "async") + (("workflow",) if era == "modern" else ()))
            agents.append(AgentPlan(round(rng.uniform(0.05, 0.9), 4), kind, events=rng.randint(30, 220),
                                    report_chars=int(rng.lognormvariate(8.3, 0.6)), workflow_agents=rng.randint(2, 6),
                                    remember=rng.choice((0, 0, 1, 2))))
        yield (SessionRecipe(era, rng.randrange(len(projects)), _start(rng, era), target_bytes=parent_bytes,
                             agents=tuple(agents), compactions=int(parent_bytes / 4e6), hooks=rng.choice((0, 1, 2)),
                             remember=rng.randint(0, 4), readonly=rng.randint(0, 3)), projects[k % len(projects)])


SHAPES: dict[str, Callable[[ShapeContext], Iterator[tuple[SessionRecipe, Project]]]] = {
    "mixed": _mixed_plan,
    "s840": _s840_plan,
    "bench": _bench_plan,
}
