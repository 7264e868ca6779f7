"""The contracts between the episode loop, a suite's task and a method's policy.

A round is synchronous: every agent observes the same pre-update state (one batch of local views),
the policy decides for all agents at once, and the task applies every action together. What one agent
may know lives in the observation batch, never in a global object handed to a policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa


@dataclass
class EpisodeRecord:
    """What a finished episode writes: the per-agent table, one row per (state, agent) for the states
    0..horizon (state 0 before any decision), in state-major order; side tables (e.g. one row per
    message), written beside it; and the episode summary (metrics), stored in the file metadata."""

    agents: dict[str, Any]  # column name -> values (numpy or pyarrow arrays)
    summary: dict[str, Any]
    tables: dict[str, pa.Table] = field(default_factory=dict)


class Task(Protocol):
    """One episode of a suite's task with n agents."""

    n: int
    horizon: int  # decision rounds in the episode

    def reset(self, seed: int) -> None:
        """Start an episode; every random draw comes from a named stream of `seed` (hivebench.seeding)."""

    @property
    def done(self) -> bool: ...

    def observe(self) -> Any:
        """Every agent's local view of the current state, as one batch (with `step`, the decision
        round, and `horizon`, the rounds in the episode)."""

    def step(self, actions: Any) -> None:
        """Apply every agent's action at once."""

    def record(self) -> EpisodeRecord: ...


class Policy(Protocol):
    """Maps one round's batch of observations to one batch of actions. It may add per-(state, agent)
    columns (`columns()`, state 0 included) and summary fields (`summary()`) to the record."""

    def decide(self, observation: Any) -> Any: ...
