"""An AgentsNet episode: named agents on a graph exchange messages with their neighbours for R
synchronous rounds, then each gives a final answer to the instance's problem.

Decision rounds 0..R: in rounds 0..R-1 every agent sends its messages (delivered at the start of the
next round); in round R, having read the last delivery, every agent answers. That is R deliveries and
R + 1 decisions per agent, as in the reference code.

A job block plays its episodes side by side on the union of their graphs (`Block`), and they talk
by named neighbour messages (the `neighbours` medium). Each keeps its
own instance and R: an episode whose round R has passed has ended, and what its agents still do is
neither delivered nor recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine import media
from hivebench.engine.api import EpisodeRecord, state_agent_columns
from hivebench.engine.media import Outbox, sent_as_recorded
from hivebench.suite import TaskParamError
from hivebench.suites.agentsnet import behaviour, problems
from hivebench.suites.agentsnet.graphs import Block, instance, relabelled

NO_CAP = 2**62  # `message_chars: null` (the reference): no message is ever cut


@dataclass(frozen=True)
class NetViews:
    """One round's local views of every agent of a block. Agent v may know: its name
    `block.names[v]`, its neighbours and their names (`block.neighbours(v)`), n, its episode's R, its
    answer options, the messages delivered to it (`inbox` rows with receiver v) and its own earlier
    rounds (`delivered`, `sent`). The graph beyond its neighbours is there for the record, not for the
    agent."""

    step: int  # decision round, 0..R of the block's longest episode
    rounds: np.ndarray  # (episodes,) R, the message rounds of each episode
    agent_rounds: np.ndarray  # (agents,) R of each agent's episode
    problem: str
    message_chars: int | None  # the size cap of one message (None: none)
    block: Block
    inbox: Outbox  # delivered at the start of this round (sent in round step - 1)
    delivered: tuple[Outbox, ...]  # every earlier round's messages, as delivered
    sent: tuple[Outbox, ...]  # every earlier round's messages, as sent (the same unless a perturbation changes them)

    @property
    def horizon(self) -> int:
        """Decision rounds of the block's longest episode."""
        return int(self.rounds.max()) + 1

    @property
    def answering(self) -> np.ndarray:
        """(agents,) whose episode asks for answers this round (its round R); the agents before it
        send messages, those after it have ended (their actions are ignored)."""
        return self.agent_rounds == self.step

    def final(self, agent: int) -> bool:
        return self.step >= self.rounds[agent // self.block.n]

    def options(self, agent: int) -> list[str]:
        return problems.options(self.problem, self.block.graph(agent), agent % self.block.n)


@dataclass(frozen=True)
class NetActions:
    """One round's actions of a block's agents: messages from the agents still sending, and answers
    (None: no valid answer), read from the agents whose episode is in its round R."""

    outbox: Outbox | None = None
    answers: Sequence[str | None] | pa.StringArray | None = None  # one per agent of the block


def instance_seed(params: dict[str, Any], seed: int) -> int:
    """The graph a cell plays on: its own seed's, or with `instances: K` one of K per (family, n)."""
    return seed if params["instances"] is None else seed % params["instances"]


class NetTask:
    relabelling: np.ndarray | None = None  # see hivebench.engine.api.Task

    def __init__(self, params: dict[str, Any], population: int):
        self.params = params
        self.problem = params["problem"]
        self.n = population
        self.t = 0

    def reset(self, seeds: Sequence[int]) -> None:
        graphs = [instance(self.params["family"], self.n, instance_seed(self.params, s)) for s in seeds]
        self.edge_image = None
        if self.relabelling is not None:
            moved = [relabelled(g, self.relabelling) for g in graphs]
            graphs = [g for g, _ in moved]
            offsets = np.cumsum([0] + [len(image) for _, image in moved[:-1]])
            self.edge_image = np.concatenate([image + offset for (_, image), offset in zip(moved, offsets)])
        self.block = Block(tuple(graphs))
        rounds = self.params["rounds"]
        self.rounds = np.array(
            [
                problems.paper_rounds(self.problem, self.n, g.diameter) if rounds == "paper" else rounds
                for g in self.block.graphs
            ]
        )
        if rounds == "paper":
            self._check_agent_steps()
        self.agent_rounds = np.repeat(self.rounds, self.n)
        self.medium = self._sent_on = media.medium("neighbours")(
            self.block, max_chars=self.params["message_chars"] or NO_CAP, last_round=self.rounds - 1
        )
        self.inbox: Outbox = self.medium.deliver()
        self.delivered: list[Outbox] = []  # every earlier round's messages, as delivered
        self.sent: list[Outbox] = []  # and as sent (a medium wrapped around the task's may lose some)
        self.answered: list[tuple[np.ndarray, pa.StringArray]] = []  # (agents, their answers) per round
        self.t = 0

    def _check_agent_steps(self) -> None:
        """The paper's R follows the diameter, known only now: the agent-step limit the config check
        applies to a numeric R (hivebench.config.MAX_AGENT_STEPS), applied here."""
        from hivebench import config

        longest = int(self.rounds.argmax())
        steps = self.n * (int(self.rounds[longest]) + 1)
        if steps > config.MAX_AGENT_STEPS:
            graph = self.block.graphs[longest]
            raise TaskParamError(
                "rounds",
                f"rounds: paper gives R = {self.rounds[longest]} on a {self.params['family']} graph "
                f"of {self.n:,} nodes "
                f"(diameter {graph.diameter}): {steps:,} agent-steps, over the limit of {config.MAX_AGENT_STEPS:,}; "
                "give rounds as a number",
            )

    @property
    def horizon(self) -> int:
        return int(self.rounds.max()) + 1

    @property
    def done(self) -> bool:
        return self.t >= self.horizon

    def observe(self) -> NetViews:
        message_chars = self.params["message_chars"]
        return NetViews(
            self.t,
            self.rounds,
            self.agent_rounds,
            self.problem,
            message_chars,
            self.block,
            self.inbox,
            tuple(self.delivered),
            tuple(self.sent),
        )

    def step(self, actions: NetActions) -> None:
        answering = np.flatnonzero(self.agent_rounds == self.t)
        if self.t < self.rounds.max():
            if actions.outbox is None:
                raise ValueError(f"round {self.t}: expected messages")
            self.medium.send(self.t, actions.outbox)
            self.inbox = self.medium.deliver()
            self.delivered.append(self.inbox)
            self.sent.append(sent_as_recorded(self._sent_on, self.inbox))
        if len(answering):
            if actions.answers is None or len(actions.answers) != self.block.agents:
                raise ValueError(f"round {self.t}: expected an answer (or None) for each of {self.block.agents} agents")
            given = actions.answers if isinstance(actions.answers, pa.Array) else pa.array(actions.answers, pa.string())
            self.answered.append(
                (answering, given if len(answering) == len(given) else given.take(pa.array(answering)))
            )
        self.t += 1

    def answers(self) -> pa.StringArray:
        """Every agent's answer, in agent order (each answered in its episode's round R)."""
        if len(self.answered) == 1:
            return self.answered[0][1]
        agents = np.concatenate([a for a, _ in self.answered])
        return pa.concat_arrays([given for _, given in self.answered]).take(pa.array(np.argsort(agents)))

    def record(self) -> list[EpisodeRecord]:
        """Per episode and (state, agent): messages sent and received in the round that led to it,
        and the answer (state R + 1); one row per message in the `messages` table; score and solved
        flag."""
        # state t + 1 holds round t's counts: state 0 and each episode's answer state hold none
        n, episodes = self.n, len(self.rounds)
        counts = np.zeros((2, episodes, self.horizon + 1, n), dtype=np.int32)
        traffic = self.medium.traffic(self.horizon)
        for i, key in enumerate(("sent", "received")):
            counts[i, :, 1:] = traffic[key].reshape(self.horizon, episodes, n).transpose(1, 0, 2)
        answers = self.answers()
        scores, valid = problems.scores(self.problem, self.block, answers)
        # plain Python numbers, converted once for the block
        valid_answers = self.block.per_episode(valid).astype(int).tolist()
        scores, rounds = scores.tolist(), self.rounds.tolist()
        rules_label = behaviour(self.params)
        records = []
        for s, graph in enumerate(self.block.graphs):
            states = rounds[s] + 2
            step, agent, before = columns(n, states)
            agents = {
                "step": step,
                "agent": agent,
                "name": pa.DictionaryArray.from_arrays(agent, graph.name_array),
                "sent": counts[0, s, :states].ravel(),
                "received": counts[1, s, :states].ravel(),
                "answer": pa.concat_arrays([before, answers[s * n : (s + 1) * n]]),
            }
            summary = {
                "problem": self.problem,
                "family": self.params["family"],
                "score": scores[s],
                "solved": float(scores[s] == 1.0),
                "rounds": rounds[s],
                "diameter": graph.diameter,
                "max_degree": graph.max_degree,
                "edges": len(graph.edges),
                "valid_answers": valid_answers[s],
                **self.medium.counts(s),  # messages, message_chars, truncated_messages
            }
            if rules_label != "hivebench":  # hivebench's rules add no column (their files are as before)
                summary["compat"] = rules_label
            records.append(EpisodeRecord(agents, summary, self.medium.tables(s)))
        return records


@cache
def columns(n: int, states: int) -> tuple[pa.Array, pa.Array, pa.Array]:
    """What every episode of n agents and `states` states shares in its per-agent table (state-major):
    the step and agent columns, and the answers before the last state (none)."""
    step, agent = state_agent_columns(n, states)
    return pa.array(step), pa.array(agent), pa.nulls(n * (states - 1), pa.string())
