"""The contracts between the episode loop, a suite's task and a method's policy.

A round is synchronous: every agent observes the same pre-update state (one batch of local views),
the policy decides for all agents at once, and the task applies every action together. What one agent
may know lives in the observation batch, never in a global object handed to a policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pyarrow as pa

from hivebench.engine.block import Block


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
    # A task that can relabel its agents (the Waggle relabelling check, hivebench.engine.conformance)
    # has `relabelling`: set before `reset` to a permutation sigma, every episode starts with agent
    # sigma(i) where agent i would have started (its state, its place in the graph); after reset,
    # `edge_image`: where each directed edge (its CSR position in the block) went, or None; and
    # `indexed_text`: the table columns whose text names agents by index (not comparable after it).

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


@runtime_checkable
class Policy(Protocol):
    """Maps one round's batch of observations to one batch of actions, for every episode of a block;
    built with the method's parameters and the block's `Streams` (one random stream per episode), and
    with what its implementation asks for (hivebench.method.MethodImpl: `cache_paths`, `view`). A
    policy class subclasses this one: `columns`, `summary` and `tables` add nothing unless it overrides
    them."""

    # A classical policy that keeps per-agent state may declare `asked` (None): a perturbation that
    # holds some agents back (partial activation, clocks) sets it before each `decide` to the agents
    # whose decisions can take effect, so that it moves on only their state, and sets `lost` to the
    # agents whose pending call was lost before it applied (clocks: left the swarm, or a deadline;
    # None: none), so that it takes back what it counted done for that call (hivebench.perturb.agents).
    def decide(self, observation: Any) -> Any:
        """Every agent's action this round, as the task's `step` takes them."""
        ...

    def columns(self, episode: int) -> dict[str, Any]:
        """Per-(state, agent) columns for one episode's table, in its order (state 0 included)."""
        return {}

    def summary(self, episode: int) -> dict[str, Any]:
        """Fields for one episode's summary."""
        return {}

    def tables(self, episode: int) -> dict[str, pa.Table | Callable[[], pa.Table]]:
        """One episode's side tables of the method's own (those its `MethodImpl.tables` declares)."""
        return {}


class Medium(Protocol):
    """How messages travel between the rounds of a job block's episodes, under a suite's rules: who
    hears whom, the size caps, what is counted (hivebench.engine.media: a task builds its own by name).
    In each round t in which a task's agents may send:

        medium.send(t, outbox)          # checked, cut to the caps (counted) and recorded
        inbox = medium.deliver(where)   # what each agent receives at the start of round t + 1

    An outbox and an inbox are the medium's own types; an outbox is rows of messages, each with its
    `sender` (a block agent), that `take(rows)` selects from. `where` is what delivery depends on
    besides the messages (SwarmBench: where the agents stand after the round's movement), else None.
    `deliver` with nothing sent since the last delivery gives an empty inbox (with the shared store:
    the store as it stands). Once the block has ended the task reads `traffic` for its per-(state,
    agent) columns, `counts` for each episode's summary and `tables` for its side tables.

    A medium may wrap another and change what passes, without touching it: a perturbation, a
    communication control (NoComm: send nothing on) or the Waggle trace field (take the deposits out
    of each outbox, send the rest on, add a `trace` table) wraps the suite's own medium, and the task
    is built with the wrapper in its place. Messages lost in transit with probability p, each episode's
    draws from its own stream (hivebench.seeding.Streams), so that they do not depend on its block (an
    outbox's rows come in episode order; a policy that reads its inbox by position over the whole
    adjacency, as AgentsNet's classical baselines do, cannot take a medium that drops rows):

        class LossyMedium:
            def __init__(self, inner: Medium, p: float, streams: Streams):
                self.inner, self.p, self.streams, self.block = inner, p, streams, inner.block
                self.lost = np.zeros(inner.block.episodes, dtype=np.int64)

            def send(self, step: int, outbox: Any) -> None:
                per_episode = self.block.per_episode(agents=outbox.sender)
                lost = self.streams.random((len(outbox.sender),), split=per_episode) < self.p
                self.lost += self.block.per_episode(agents=outbox.sender[lost])
                self.inner.send(step, outbox.take(np.flatnonzero(~lost)))

            def deliver(self, where: Any = None) -> Any:
                return self.inner.deliver(where)

            def traffic(self, rounds: int) -> dict[str, np.ndarray]:
                return self.inner.traffic(rounds)

            def counts(self, episode: int) -> dict[str, int]:
                return {**self.inner.counts(episode), "lost_messages": int(self.lost[episode])}

            def tables(self, episode: int) -> dict[str, pa.Table | Callable[[], pa.Table]]:
                return self.inner.tables(episode)
    """

    block: Block  # the block's agents side by side (and their graphs, for a medium that follows them)

    def send(self, step: int, outbox: Any) -> None:
        """Round `step`'s messages from every agent of the block."""

    def deliver(self, where: Any = None) -> Any:
        """The inbox of every agent of the block: the messages sent since the last delivery, as they
        arrive."""

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        """Per round and agent, (rounds, agents): "sent" and "received" messages (and what else the
        medium counts per agent, e.g. "chars"); row t: the messages sent in round t."""

    def counts(self, episode: int) -> dict[str, int]:
        """The episode's summary fields: "messages", "truncated_messages" (cut to the cap) and the
        medium's own (characters, deliveries, refused writes, ...)."""

    def tables(self, episode: int) -> dict[str, pa.Table | Callable[[], pa.Table]]:
        """The episode's side tables by name (e.g. `messages`, one row per message), or functions that
        build them when they are read."""


class TextView(Protocol):
    """A suite's observations as an LLM agent reads them (one per suite, `Suite.text_view`): what a
    method that reads text (the LLM agent, replay) is given. It renders observations and names the
    reply's fields; an agent's memory (notes, their rule, their field) is the method's own.

    A view may also offer `reference(quirks: bool) -> ReferenceProtocol`: the prompt protocol of the
    benchmark its suite reproduces (the LLM agent's `prompt_protocol: reference`); `quirks` keeps its
    parser's oddities. A view without that method has none. And it may offer `running(observation) ->
    np.ndarray`, (episodes,) bool: whose episode still runs this round, where an episode may run on
    with none of its agents live (SwarmBench Transport, once every agent has left the map); without
    it, an episode runs while any of its agents is live. And `answering(observation) -> np.ndarray`,
    (agents,) bool: whose reply this round is its final answer (AgentsNet's and Silo-Bench's answer
    round), which partial activation may leave awake (hivebench.perturb); without it, none."""

    def agents(self, observation: Any) -> int:
        """How many agents the block has (every episode's)."""

    def live(self, observation: Any) -> np.ndarray:
        """(agents,) bool: who decides this round: not an agent whose episode has ended, nor one that
        is done before it (has answered, has left the map)."""

    def reply_schema(self, observation: Any, agent: int) -> dict[str, Any]:
        """JSON Schema properties of this agent's reply this round, all required (a method adds its
        own, such as the LLM agent's `notes`)."""

    def reply_format(self, observation: Any, agent: int) -> str:
        """The same fields as the prompt shows them, inside a JSON object's braces:
        `"color": <an integer from 0 to 1>`."""

    def system(self, observation: Any, agent: int) -> str:
        """The task statement: the same for every agent of an episode (a local model pre-fills it once)."""

    def turn(self, observation: Any, agent: int, window: int) -> str:
        """One agent's view this round: its local view, and its last `window` rounds (0: none; with a
        chat of every round the earlier rounds are the chat's earlier turns)."""

    def actions(self, observation: Any, replies: list[dict[str, Any] | None]) -> Any:
        """The batch of actions from every agent's valid reply, or its fallback where the reply is None
        (the actions of agents whose episode has ended are ignored)."""


class ReferenceProtocol(Protocol):
    """A reference benchmark's prompt protocol, for a block's agents (`TextView.reference`): its own
    prompts and memory, a reply in free text (reasoning, then the reference's answer marker) read as
    its parser reads it into the fields `TextView.actions` takes, and its message asking again after a
    reply that does not parse."""

    grows: bool  # every agent's chat only grows from round to round (its earlier turns and replies kept)

    def chat(self, observation: Any, agent: int) -> tuple[dict[str, str], ...]:
        """The agent's chat this round (asked once per agent and round)."""

    def parse(self, observation: Any, agent: int, text: str) -> tuple[dict[str, Any] | None, str | None]:
        """The reply's fields and None, or None and why the reference's parser finds no answer in it."""

    def again(self, observation: Any, agent: int, error: str) -> str:
        """The user message that asks once more after a reply that does not parse (`error`: why)."""

    def replied(
        self, observation: Any, agent: int, turns: tuple[dict[str, str], ...], reply: dict[str, Any] | None
    ) -> None:
        """The agent's round is over: `turns` is what it added to its chat (its reply; after a repair,
        the rejected reply and the message that asked again before it), `reply` the fields its action
        took (None: the fallback)."""
