"""What a suite gives the Waggle runtime (`Suite.waggle` names its adapter class): the native private
proposal, the contacts, the agents' own evidence as claims, and the compilation of a record's parts
into the suite's native actions. A block's agents at once, like a policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from hivebench.seeding import Streams
from hivebench.waggle.runtime.field import Incident


@dataclass(frozen=True)
class Proposal:
    """The benchmark-native private proposal of every agent (the paper's `worker_proposal`)."""

    action: np.ndarray  # (agents,) an index into the adapter's `actions`
    route: np.ndarray  # (agents,) bool: the proposal follows the agent's own evidence (a private route)
    message: pa.StringArray | None = None  # (agents,) the task-native message it would send (null: none)


@dataclass(frozen=True)
class Evidence:
    """What agents see for themselves this round, one row per (agent, claim): the claim, the agent's
    bearing to it (a compass point, or -1 where it stands on it), and whether the evidence moves
    (refreshed after `refresh_rounds`) or stays (written once: event-once)."""

    agent: np.ndarray
    claim: np.ndarray
    direction: np.ndarray
    moving: np.ndarray


class Adapter(Protocol):
    actions: tuple[str, ...]  # the suite's native action names (a record's `task_action`)
    wait: int  # the action of an agent that waits
    # Optional (default False): whether a frame carries its sender's proposal intent beside its trace and
    # task snapshot (Silo-Bench); the view's private state then lists the round's frames, by channel
    frame_intent: bool
    # Optional: an adapter whose proposal keeps per-agent state of what its agents sent (Silo-Bench's
    # flood) declares `asked` (None): a perturbation that holds agents back sets it before each
    # `proposal` to who acts (hivebench.perturb.agents.GatedView), so that only their state moves on

    def start(self, observation: Any, seeds: list[int], rng: Streams, params: dict[str, Any]) -> None:
        """A block begins (`rng`: node-indexed streams, a row per agent; `params`: the method's, with
        the adapter's settings)."""

    def live(self, observation: Any) -> np.ndarray:
        """(agents,) bool: who decides this round."""

    def running(self, observation: Any) -> np.ndarray:
        """(episodes,) bool: whose episode this round belongs to (its per-agent table has a state for
        it), whether or not any of its agents decides."""

    def legal(self, observation: Any) -> np.ndarray:
        """(agents, actions) bool: the native actions each agent may take."""

    def proposal(self, observation: Any, medium: str) -> Proposal:
        """Every agent's private proposal, for a method that talks through `medium`: silent
        (nothing goes out), native (the task's own messages) or field (the trace field, and what the
        suite's frames carry beside a trace)."""

    def contacts(self, observation: Any) -> tuple[np.ndarray, np.ndarray]:
        """(writer, receiver) block agents that are in contact now (the field's channels)."""

    def most_contacts(self, observation: Any) -> int:
        """The most distinct contacts one agent can have in an episode."""

    def evidence(self, observation: Any) -> Evidence:
        """What each agent sees for itself, as claims."""

    def refutes(self, observation: Any, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """Per (agent, claim): whether the agent verifies from its own view that the claim is false."""

    def wants(self, observation: Any, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """Per (agent, claim): whether the agent would move for it now (a claim it may commit to)."""

    def kind(self, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """What each claim (held by the agent) is about: claims of one kind contradict each other."""

    def towards(self, observation: Any, agent: np.ndarray, heading: np.ndarray) -> np.ndarray:
        """Per agent, the native action along `heading` (east, north), or -1 where none is open."""

    def act(self, observation: Any, action: np.ndarray, messages: pa.StringArray | None, incident: Incident) -> Any:
        """The task's action batch (`incident`: the field the agents decided on, where the suite's
        compilation reads it)."""

    def contract(self, observation: Any, agent: int) -> dict[str, Any]:
        """The task contract of an agent's view: the task, its actions and horizon (no population)."""

    def private_state(self, observation: Any, agent: int) -> dict[str, Any]:
        """What the agent holds privately: its native local observation and state."""

    def heard(self, observation: Any) -> tuple[np.ndarray, np.ndarray]:
        """(sender, receiver) of every task-native message delivered this round (block agents)."""

    def budget(self, observation: Any) -> tuple[int, int | np.ndarray]:
        """(this round, the decision rounds of each agent's episode: one number, or one per agent)."""

    def intervention(self, observation: Any) -> int:
        """The round from which the task's late counterevidence holds (its observation shows it), or -1
        for a task without the intervention."""


class GraphContacts:
    """An adapter's part for a suite whose contacts are its block's graph (`observation.block`, a
    hivebench.engine.block.GraphBlock) and whose actions do not move: every edge, both ways, is a
    contact, and no record's heading compiles to a move."""

    def contacts(self, observation: Any) -> tuple[np.ndarray, np.ndarray]:
        return observation.block.src, observation.block.indices

    def most_contacts(self, observation: Any) -> int:
        return int(observation.block.degrees.max())

    def towards(self, observation: Any, agent: np.ndarray, heading: np.ndarray) -> np.ndarray:
        return np.full(len(agent), -1)
