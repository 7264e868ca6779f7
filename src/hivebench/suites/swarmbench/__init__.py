"""SwarmBench: embodied grid swarms (pursuit, synchronization, foraging, flocking, transport) under
push physics with local broadcast messages (RUC-GSAI/YuLan-SwarmIntell). Parse-time part: standard
library only."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from hivebench import compat
from hivebench.compat import Difference
from hivebench.method import MethodImpl
from hivebench.suite import Metric, Suite, TaskHooks, TaskKind

PACKAGE = "hivebench.suites.swarmbench"
TASKS = ("pursuit", "synchronization", "foraging", "flocking", "transport")
BAND = 4  # Foraging: a maze wall every 4 rows (levels.py builds the maze)
# The tasks whose normalised scores make the Waggle aggregate (each over its frozen N = 8 anchor)
AGGREGATE = ("pursuit", "foraging", "synchronization")
# Where hivebench's SwarmBench departs from the reference's code (RUC-GSAI/YuLan-SwarmIntell, swarmbench/):
# each a task parameter; `compat: reference` takes the reference's side of every one.
DIFFERENCES = (
    Difference(
        "prey_danger",
        "symmetric",
        "reference",
        "the prey's danger of a cell counts agents (1) and walls (0.9) over the 8 x 8 window from 4 cells "
        "before it to 3 after (`grid[i-4:i+4, j-4:j+4]`); hivebench's window is the symmetric 9 x 9 one",
    ),
    Difference(
        "prey_compares",
        "own_cell",
        "left_cell",
        "the prey moves when a destination is less dangerous than the cell to its left (a loop variable "
        "left over from the capture check), not than its own cell",
    ),
    Difference(
        "prey_respawn",
        "safest",
        "sampled",
        "a caught prey respawns on the first least dangerous of H x W cells sampled at random, not on a "
        "least dangerous free cell",
    ),
    Difference(
        "prey_pushable",
        "never",
        "first",
        "agents can push the first prey (a one-cell body of mass 1); those that respawn are static",
    ),
    Difference("to_sender", False, True, "a message is delivered to its sender too", kept=True),
    Difference(
        "message_cut",
        "plain",
        "ellipsis",
        'a message over the cap is cut and "..." added (the reference agent\'s parser does it)',
    ),
    Difference(
        "flocking_distance",
        "exact",
        "paired_shifts",
        "the distance to the shape tries only the shifts that pair an agent with a shape cell, which can "
        "miss the least one",
    ),
    Difference(
        "flocking_level",
        "seeded",
        "fixed",
        "every Flocking episode plays one level (the reference's Flocking ignores its seed and uses 42); "
        "`fixed` plays the level of cell seed 42, hivebench's generator's, not the reference's",
    ),
    Difference(
        "level_draws",
        "hivebench",
        "reference",
        "each level is the reference's own for the seed: its generator's draws from Python's "
        "random.Random(seed) in its order (Flocking's from Random(42)), so a seed is the reference's map, "
        "agents and objects; hivebench draws each level from the cell seed's own stream",
    ),
    Difference(
        "foraging_maze",
        "serpentine",
        "reference",
        "the maze walls' spans come from `-width // 3 + 1` (an operator-precedence slip) and an odd wall "
        "count puts food and nest in the first column; up to a 12 x 12 map its walls are hivebench's and "
        "its food and nest can lie where hivebench's can",
    ),
)


def side(n: int) -> int:
    """The map's side for n agents: the paper's density (12 agents on a 10 x 10 map, 8 x 8 inside) at
    every n, never below 10 (N up to 12: 10; 16: 12, 32: 16, 64: 21, 128: 29)."""
    return max(10, math.ceil(math.sqrt(n * 64 / 12)) + 2)


def capacity(task: str, size: int) -> int:
    """How many agents a level of this task places on a map of this side (its free starting cells)."""
    if task == "pursuit":  # the near quadrant
        return (size // 2) ** 2
    inside = (size - 2) ** 2
    if task == "foraging":  # less the maze's walls (a 2-cell gap each), the food and the nest
        return inside - len(range(BAND, size - BAND, BAND)) * (size - 4) - 8
    if task == "transport":  # less the box's body
        return inside - 9
    return inside


# The differences that act on one task alone (the rest act on every task)
ONLY_ON = {
    "prey_danger": "pursuit",
    "prey_compares": "pursuit",
    "prey_respawn": "pursuit",
    "prey_pushable": "pursuit",
    "flocking_distance": "flocking",
    "flocking_level": "flocking",
    "foraging_maze": "foraging",
}


def acting(params: dict[str, Any]) -> tuple[Difference, ...]:
    """The differences that can act on a task."""
    return tuple(d for d in DIFFERENCES if ONLY_ON.get(d.key, params["task"]) == params["task"])


def idle_rule(task: str, key: str) -> str:
    """Why a difference of one task's rules is refused on another."""
    return f"only {ONLY_ON[key].capitalize()} has this rule (task: {task})"


def behaviour(params: dict[str, Any]) -> str:
    """A task's rules as its report rows name them (`compat.behaviour`)."""
    return compat.behaviour(params, acting(params))


class SwarmHooks(TaskHooks):
    def resolve(self, params: dict[str, Any], base: Path) -> dict[str, Any]:
        return compat.resolve(params, DIFFERENCES, acting(params), partial(idle_rule, params["task"]))

    def problems(self, params: dict[str, Any]) -> Iterator[str]:
        values = compat.settings(params, DIFFERENCES)
        if values["level_draws"] == "reference":
            # the reference's generator draws its own maze and plays seed 42's Flocking level
            own = {"foraging": ("foraging_maze", "reference"), "flocking": ("flocking_level", "fixed")}
            key, needed = own.get(params["task"], (None, None))
            if key is not None and values[key] != needed:
                yield (
                    f"{key}: level_draws: reference plays the reference's own {params['task']} levels, whose "
                    f"{key} is {needed} (set {key}: {needed}, or compat: reference), not {values[key]}"
                )
        k = params["view"]
        if k < 3 or k % 2 == 0:
            yield f"view: the view is k x k cells around the agent, k odd and at least 3; got {k}"
        if "relocate_at" in params:
            if params["task"] != "pursuit":
                yield f"relocate_at: only Pursuit has a prey to relocate (task: {params['task']})"
            elif params["relocate_at"] >= params["rounds"]:
                yield f"relocate_at: {params['relocate_at']} is not a round before the last ({params['rounds']} rounds)"

    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        size = side(n) if params["grid"] == "auto" else params["grid"]
        room = capacity(params["task"], size)
        if n > room:
            yield f"a {params['task']} level on a {size} x {size} map holds at most {room} agents, got {n} (raise grid)"
        k, inside = params["view"], size - 2
        if "relocate_at" in params and inside // 2 < k:
            # the prey moves at least k cells (the view's side) from where it stood, so that no agent
            # that saw it there sees it after; from the middle of a smaller map no cell is that far
            yield (
                f"relocate_at: on a {size} x {size} map ({inside} x {inside} inside) with view {k}, the prey cannot "
                f"move {k} cells from every cell it may stand on, so some agent that saw it could see it still: "
                f"needs a map of at least {2 * k + 2} (grid) or a smaller view"
            )

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        return n * (params["rounds"] + 1)

    def anchor_key(self, name: str, entry: dict[str, Any]) -> str:
        return entry["task"]  # the episodes' `swarm_task` (required: no default to fill in)


def frame_picks(episodes: Iterable[tuple[str, int, int]]) -> list[int]:
    """The episodes the report section draws as grid frames, as positions among `episodes` (each its
    SwarmBench task, N and seed, in the study's order): per task, the first of those at the smallest N
    and seed; ordered by N, seed and position."""
    first: dict[str, tuple[int, int, int]] = {}
    for position, (task, n, seed) in enumerate(episodes):
        key = (int(n), int(seed), position)
        if task not in first or key < first[task]:
            first[task] = key
    return [position for _, _, position in sorted(first.values())]


def frame_cells(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Suite.report_cells: the cells whose per-agent files the report section reads (frame_picks)."""
    return [
        cells[i]
        for i in frame_picks((cell["task"]["params"]["task"], cell["population"], cell["seed"]) for cell in cells)
    ]


SUITE = Suite(
    name="swarmbench",
    tasks={
        "swarmbench": TaskKind(
            f"{PACKAGE}.task:SwarmTask", version=1, hooks=SwarmHooks(), tables=("messages",), medium=True
        )
    },
    methods={
        "random": MethodImpl(f"{PACKAGE}.baselines:RandomMoves", version=1),
        "heuristic": MethodImpl(f"{PACKAGE}.baselines:LocalHeuristic", version=1),
    },
    metrics=(Metric("score", normalised_by_anchor=True),),
    schema="schema.yaml",
    text_view=f"{PACKAGE}.text:SwarmView",
    example={"task": {"kind": "swarmbench", "task": "pursuit", "rounds": 12}, "method": "random", "population": 8},
    report=f"{PACKAGE}.report:render",
    viewer=f"{PACKAGE}.view:scene",
    report_cells=frame_cells,
    waggle=f"{PACKAGE}.waggle:SwarmAdapter",
    adversary=f"{PACKAGE}.adversary:SwarmAdversary",
    anchor_column="swarm_task",
    anchored=AGGREGATE,
    report_files=(
        "swarmbench.csv",
        "swarmbench.md",
        "swarmbench.tex",
        "swarmbench_scaling.html",
        "swarmbench_scaling.png",
        "swarmbench_episodes.png",
    ),
)
