"""The contracts between the episode loop, a suite's task and a method's policy.

A round is synchronous: every agent observes the same pre-update state (one batch of local views),
the policy decides for all agents at once, and the task applies every action together. What one agent
may know lives in the observation batch, never in a global object handed to a policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np
import pyarrow as pa


@dataclass
class EpisodeRecord:
    """What a finished episode writes: the per-agent table, one row per (state, agent) for the states
    0..horizon (state 0 before any decision), in state-major order; side tables (e.g. one row per
    message), written beside it; and the episode summary (metrics), stored in the file metadata."""

    agents: dict[str, Any]  # column name -> values (numpy or pyarrow arrays)
    summary: dict[str, Any]
    # name -> the table, or a function that builds it when it is read (a block's messages stay
    # compact arrays until a cell is written)
    tables: dict[str, pa.Table | Callable[[], pa.Table]] = field(default_factory=dict)

    def table(self, name: str) -> pa.Table:
        table = self.tables[name]
        return table if isinstance(table, pa.Table) else table()


def state_agent_columns(n: int, states: int) -> tuple[np.ndarray, np.ndarray]:
    """The step and agent columns of a per-agent table of n agents over `states` states (state-major)."""
    return np.repeat(np.arange(states, dtype=np.int32), n), np.tile(np.arange(n, dtype=np.int32), states)


class Task(Protocol):
    """The episodes of a job block of one suite's task, played in lockstep. `reset(seeds)` lays one
    episode per seed side by side: agent v of episode s is agent s * n + v of the block, and its graph
    is the disjoint union of the episodes' graphs. A round's observation batch and actions cover every
    agent of the block; an episode's numbers depend on its own seed alone, never on its block."""

    n: int  # agents per episode
    horizon: int  # decision rounds of the block's longest episode

    def reset(self, seeds: Sequence[int]) -> None:
        """Start one episode per seed; every random draw comes from a named stream of its seed
        (hivebench.seeding)."""

    @property
    def done(self) -> bool:
        """Every episode of the block has ended."""

    def observe(self) -> Any:
        """Every agent's local view of the current state, as one batch (with `step`, the decision
        round, and `horizon`, the rounds in the episode)."""

    def step(self, actions: Any) -> None:
        """Apply every agent's action at once."""

    def record(self) -> list[EpisodeRecord]:
        """One record per seed, in the order of `reset`."""


class Policy(Protocol):
    """Maps one round's batch of observations to one batch of actions, for every episode of a block;
    built with the block's `Streams` (one random stream per episode). A policy may add per-(state,
    agent) columns (`columns(episode)`, state 0 included) and summary fields (`summary(episode)`) to
    each episode's record."""

    def decide(self, observation: Any) -> Any: ...
