"""Faulty agents and partial activation: which agents act in each round, drawn from the cell's seed
(streams `perturbation/faults`, `perturbation/activation`), and the policy wrapper that holds the
others to the suite's idle action (its text view's fallback: keep its state, send nothing).

A method that asks its agents one by one (the LLM agent, the Waggle runtime) is told through its
view or adapter that an agent not acting is not live, so it is not asked and keeps its memory; a
classical policy decides for every agent at once, and the actions of those not acting are replaced
(its own per-agent state may advance for them, unless it declares `asked`: then it is told who acts).
"""

from __future__ import annotations

import itertools
import math
from functools import cache, cached_property
from typing import Any, NamedTuple, Protocol

import numpy as np
import pyarrow as pa

from hivebench.engine.api import EpisodeRecord, Policy
from hivebench.perturb.actions import choose, merge
from hivebench.perturb.clocks import Clocks
from hivebench.seeding import Streams


class Round(NamedTuple):  # a named tuple: made every round, several times cheaper than a frozen dataclass
    """One round's agents that their method does not decide for, by what they do instead."""

    idle: np.ndarray
    stuck: np.ndarray
    random: np.ndarray
    adversarial: np.ndarray


class Adversary(Protocol):
    """A suite's adversary (`Suite.adversary`), built with the block's streams of it: what the agents
    of an `adversarial` fault do instead of what their method decided."""

    def __init__(self, streams: Streams) -> None: ...

    def act(self, observation: Any, actions: Any, agents: np.ndarray) -> Any:
        """`actions` with the agents of the mask `agents` acting adversarially."""


class Gate:
    """Per round, who acts: not a faulty agent from its onset (a stuck one acts in its onset round),
    and, under partial activation, only the round's activated agents."""

    def __init__(self, perturbation: dict[str, Any], n: int, streams: Streams):
        self.n, self.episodes = n, len(streams)
        agents = n * self.episodes
        self.faults = perturbation.get("faults")
        self.activation = perturbation.get("activation")
        self.faulty = np.zeros(agents, dtype=bool)
        if self.faults:
            count = math.floor(self.faults["fraction"] * n + 0.5)
            keys = streams.child("faults").random((agents,)).reshape(self.episodes, n)
            chosen = np.argsort(keys, axis=1, kind="stable")[:, :count]
            self.faulty[(chosen + n * np.arange(self.episodes)[:, None]).ravel()] = True
        self.wake = streams.child("activation")
        clocks = perturbation.get("clocks")
        self.clocks = Clocks(clocks, agents, streams.child("clocks")) if clocks else None
        self.churn = perturbation.get("churn")
        self.moves = streams.child("churn")
        self.present = np.ones(agents, dtype=bool)  # under churn: who is in the swarm this round
        self.presence: list[np.ndarray] = []  # under churn, per round: who was present
        self.streams = streams
        self.round = -1
        self.acting = np.ones(agents, dtype=bool)  # this round's
        self._none = np.zeros(agents, dtype=bool)  # no agent, shared by every round's Round
        self._none.setflags(write=False)
        self.now = Round(*(self._none,) * 4)  # this round's, by what they do instead
        self.acted: list[np.ndarray] = []  # per round, who acted
        self.asked: list[np.ndarray] = []  # under clocks, per round: who was asked
        self.staleness: list[np.ndarray] = []  # under clocks, per round: the applied decisions' age (-1: none)

    def next_round(self, answering: np.ndarray | None = None) -> Round:
        """Start a round: who takes the idle action, who repeats its onset round, who acts at random,
        who is adversarial now; `acting` holds the agents their method decides for (an adversary among
        them: it sees what its method would do). `answering`: who gives its final answer this round,
        awake whatever its draw where the activation spares answers."""
        self.round += 1
        absent = self._absent()
        if absent is not None and answering is not None:
            answering = answering & ~absent  # gone: no answer
        if self.clocks is not None:
            self.clocks.next_tick(answering, absent)
            asleep = ~self.clocks.applying  # an absent agent's call was dropped: it applies nothing
        else:
            asleep = self._asleep()
            if absent is not None:
                asleep = asleep | absent
        if answering is not None and self.spares_answers:
            asleep = asleep & ~answering
        failed = self.faulty & (self.round >= self.faults["onset"]) if self.faults else self._none
        now = self._faulted(asleep, absent, failed)
        self.acting = ~(now.idle | now.stuck | now.random) if self.faults else ~now.idle
        self.acted.append(self.acting)
        if self.clocks is not None:  # asked now, applied later: its method decides for those asked
            self.acting = self.clocks.asking
            if self.faults:
                held = failed if self.faults["kind"] != "adversarial" else self._none  # an adversary decides
                self.acting = self.acting & ~(now.stuck | now.random | held)
                self.staleness.append(np.where(self.acted[-1], self.clocks.staleness, -1))
            else:  # every agent applying acts: the clocks' own ages
                self.staleness.append(self.clocks.staleness)
            self.asked.append(self.acting)
        self.now = now
        return now

    def _faulted(self, asleep: np.ndarray, absent: np.ndarray | None, failed: np.ndarray) -> Round:
        """The round's agents by what they do instead of their method's decision, given who sleeps
        and whose fault has set in (an absent agent does nothing, whatever its fault)."""
        if not self.faults:
            return Round(asleep, self._none, self._none, self._none)
        kind, onset = self.faults["kind"], self.faults["onset"]
        none = self._none
        if kind == "stuck":  # it acts in its onset round, then repeats that round
            stuck = failed & (self.round > onset)
            now = Round(asleep & ~stuck, stuck, none, none)
        elif kind == "random":
            now = Round(asleep & ~failed, none, failed, none)
        elif kind == "adversarial":  # awake or not: an adversary does not sleep
            now = Round(asleep & ~failed, none, none, failed)
        else:
            now = Round(asleep | failed, none, none, none)
        if absent is not None:
            now = Round(now.idle | absent, now.stuck & ~absent, now.random & ~absent, now.adversarial & ~absent)
        return now

    def in_episode(self, live: np.ndarray) -> None:
        """Under clocks: this round's asked agents and applied decisions only of the agents still in
        their episode (`live`: an agent that has answered, or whose episode has ended, is asked nothing)."""
        if live.all():
            return
        self.asked[-1] = self.asked[-1] & live
        self.staleness[-1] = np.where(live, self.staleness[-1], -1)

    def _absent(self) -> np.ndarray | None:
        """Under churn, who is away this round: each present agent leaves with probability `leave`
        from round 1, each absent one comes back with probability `join` (one draw per agent a round);
        without churn None."""
        if not self.churn:
            return None
        draws = self.moves.random((len(self.faulty),))
        if self.round > 0:
            self.present = np.where(self.present, draws >= self.churn["leave"], draws < self.churn.get("join", 0))
        self.presence.append(self.present)
        return ~self.present

    @property
    def lost(self) -> np.ndarray | None:
        """Under clocks, this round's agents whose pending call was lost before it applied (they left
        the swarm, or answered at the deadline); None where none was."""
        return None if self.clocks is None else self.clocks.lost

    @property
    def spares_answers(self) -> bool:
        return bool(self.activation) and bool(self.activation.get("spare_answers"))

    @property
    def adversarial(self) -> bool:
        return bool(self.faults) and self.faults["kind"] == "adversarial"

    def _asleep(self) -> np.ndarray:
        if not self.activation:
            return np.zeros_like(self.faulty)
        keys = self.wake.random((len(self.faulty),))
        if "probability" in self.activation:
            return keys >= self.activation["probability"]
        rank = np.argsort(np.argsort(keys.reshape(self.episodes, self.n), axis=1, kind="stable"), axis=1)
        return (rank >= self.activation["count"]).ravel()

    @cached_property
    def _states(self) -> dict[str, np.ndarray]:
        """Once the block has ended, per episode, state and agent (episodes, rounds + 1, n), state 0
        first (STATE_ZERO, it follows no round): `acted`, under churn `present`, under clocks `asked`
        and `staleness`, each in the round that led to the state."""
        recorded = {"acted": (self.acted, bool)}
        if self.churn:
            recorded["present"] = (self.presence, bool)
        if self.clocks is not None:
            recorded |= {"asked": (self.asked, bool), "staleness": (self.staleness, np.int64)}
        states = {}
        for name, (rows, dtype) in recorded.items():
            out = np.empty((self.episodes, len(rows) + 1, self.n), dtype=dtype)
            out[:, 0] = STATE_ZERO[name]
            if rows:
                out[:, 1:] = np.stack(rows).reshape(len(rows), self.episodes, self.n).transpose(1, 0, 2)
            states[name] = out
        return states

    def columns(self, episode: int, states: int) -> dict[str, Any]:
        """Per (state, agent) of one episode: `acted` (in the round that led to the state; state 0:
        False), with faults `faulty`, and under clocks `asked` (in the round that led to the state: it
        decided on that round's snapshot) and `staleness` (the age in rounds of the decision it applied
        in that round; null where none)."""
        per_state = {name: values[episode, :states].ravel() for name, values in self._states.items()}
        columns: dict[str, Any] = {"acted": per_state["acted"]}
        if self.faults:
            columns["faulty"] = np.tile(self.faulty[episode * self.n : (episode + 1) * self.n], states)
        if self.churn:
            columns["present"] = per_state["present"]
        if self.clocks is not None:
            rows = self._states["staleness"][0].size  # an episode's rows in the block's layout
            staleness = self._staleness.slice(episode * rows, states * self.n)
            columns |= {"asked": per_state["asked"], "staleness": staleness}
        return columns

    @cached_property
    def _staleness(self) -> pa.Array:
        """The block's `staleness` in `_states`' layout as one Arrow array, null where none (each
        episode's column a slice of it), made from its buffers (no conversion value by value)."""
        ages = self._states["staleness"].ravel()
        valid = pa.py_buffer(np.packbits(ages >= 0, bitorder="little"))
        return pa.Array.from_buffers(pa.int32(), len(ages), [valid, pa.py_buffer(ages.astype(np.int32))])

    @cached_property
    def _totals(self) -> dict[str, np.ndarray]:
        """Per episode and state, the counts over the rounds that led to it from round 1: under churn
        agents `present`, `leaves` and `joins`, under clocks `decisions` applied and their ages' sum."""
        per_round: dict[str, np.ndarray] = {}  # (episodes, states): each round's count, state 0 none
        if self.churn:
            present = self._states["present"]
            stayed, was = present[:, 2:], present[:, 1:-1]  # a move from round 2 on, against the round before
            per_round["present"] = present.sum(axis=2)
            per_round["present"][:, 0] = 0
            for name, moved in {"leaves": was & ~stayed, "joins": ~was & stayed}.items():
                per_round[name] = np.zeros_like(per_round["present"])
                per_round[name][:, 2:] = moved.sum(axis=2)
        if self.clocks is not None:
            ages = self._states["staleness"]  # state 0: -1 (no decision)
            per_round["decisions"] = (ages >= 0).sum(axis=2)
            per_round["ages"] = np.where(ages >= 0, ages, 0).sum(axis=2)
        return {name: np.cumsum(counts, axis=1) for name, counts in per_round.items()}

    def summary(self, episode: int) -> dict[str, Any]:
        own = slice(episode * self.n, (episode + 1) * self.n)
        return {"faulty_agents": int(self.faulty[own].sum())} if self.faults else {}

    def rounds_summary(self, episode: int, states: int) -> dict[str, Any]:
        """The episode's counts over its own rounds (`states` - 1 of them, whatever its block's): under
        churn `leaves`, `joins` and `present_share`, under clocks `decisions` and `mean_staleness`."""
        summary: dict[str, Any] = {}
        last = {name: int(counts[episode, states - 1]) for name, counts in self._totals.items()}
        if self.churn:
            rounds = states - 1
            share = last["present"] / (rounds * self.n) if rounds else 1.0
            summary |= {"leaves": last["leaves"], "joins": last["joins"], "present_share": share}
        if self.clocks is not None:
            decisions = last["decisions"]
            summary |= {"decisions": decisions, "mean_staleness": last["ages"] / decisions if decisions else None}
        return summary


STATE_ZERO = {"acted": False, "asked": False, "staleness": -1, "present": True}  # state 0 follows no round


class GatedView:
    """A suite's text view (or Waggle adapter) through which only the acting agents are live."""

    def __init__(self, inner: Any, gate: Gate):
        self.inner, self.gate = inner, gate

    def live(self, observation: Any) -> np.ndarray:
        return self.inner.live(observation) & self.gate.acting

    def proposal(self, observation: Any, medium: str) -> Any:
        """A Waggle adapter's proposals, an adapter that keeps per-agent state of what its agents sent
        (one declaring `asked`, hivebench.waggle.runtime.adapter) told who acts."""
        tell(self.inner, self.gate)
        return self.inner.proposal(observation, medium)

    def running(self, observation: Any) -> np.ndarray:
        """Whose episode runs this round, whoever acts in it (as the inner view says)."""
        running = getattr(self.inner, "running", None)
        if running is not None:
            return running(observation)
        return self.inner.live(observation).reshape(-1, self.gate.n).any(axis=1)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class GatedPolicy(Policy):
    """The method's policy, with each round's idle agents held to `view`'s fallback, stuck ones
    repeating their onset round's actions, random ones replying at random within `view`'s reply
    schema and adversarial ones acting as the suite's `adversary` has them."""

    def __init__(self, inner: Policy, gate: Gate, view: Any, adversary: Adversary | None = None):
        self.inner, self.gate, self.view, self.adversary = inner, gate, view, adversary
        self.onset_actions: Any = None
        self.dice = gate.streams.child("faults/random")

    def decide(self, observation: Any) -> Any:
        spared = self.gate.spares_answers or self.gate.clocks is not None  # the answer round: a deadline for clocks
        answering = getattr(self.view, "answering", None) if spared else None
        now = self.gate.next_round(None if answering is None else answering(observation))
        tell(self.inner, self.gate)
        actions = self.inner.decide(observation)
        if (clocks := self.gate.clocks) is not None:
            if clocks.by_calls:
                clocks.timed(call_seconds(self.inner))
            self.gate.in_episode(self.view.live(observation))
            age = clocks.staleness  # of the decision an agent applies (-1: none, it idles)
            if self.gate.faults:  # a faulty agent idles; an adversary applying nothing sees what its method decides now
                age = np.where(self.gate.acted[-1], np.maximum(age, 0), -1)
            # this round's decisions first (the base, as the merges they replace had it), then the idle
            # action (no agent idle: not read), then the earlier rounds' by age
            idle = self.view.actions(observation, [None] * len(age)) if (age < 0).any() else actions
            recent = clocks.recent(actions)
            actions = choose([actions, idle, *itertools.islice(recent, 1, None)], by_age(len(recent))[age + 1])
        elif now.idle.any():
            actions = merge(actions, self.view.actions(observation, [None] * len(now.idle)), now.idle)
        if self.gate.faults and self.gate.round == self.gate.faults["onset"]:
            self.onset_actions = actions
        if not self.gate.faults:
            return actions
        if now.stuck.any():
            actions = merge(actions, self.onset_actions, now.stuck)
        if now.random.any():
            actions = merge(actions, self._random(observation, now.random), now.random)
        if now.adversarial.any() and self.adversary is not None:
            actions = self.adversary.act(observation, actions, now.adversarial)
        return actions

    def _random(self, observation: Any, agents: np.ndarray) -> Any:
        """Every agent's actions from a reply drawn uniformly within its reply schema (one draw per
        agent and field, whoever is random, so the stream advances alike every round)."""
        draws = self.dice.random((len(agents), RANDOM_FIELDS))
        replies = [
            random_reply(self.view.reply_schema(observation, agent), draws[agent]) if agents[agent] else None
            for agent in range(len(agents))
        ]
        return self.view.actions(observation, replies)

    def columns(self, episode: int) -> dict[str, Any]:
        return self.inner.columns(episode)

    def summary(self, episode: int) -> dict[str, Any]:
        return {**self.inner.summary(episode), **self.gate.summary(episode)}

    def tables(self, episode: int) -> dict[str, pa.Table | Any]:
        return self.inner.tables(episode)


@cache
def by_age(ages: int) -> np.ndarray:
    """Per decision age + 1 (0: none), its batch among [this round's, the idle action, then the
    `ages` - 1 earlier rounds', newest first]."""
    order = np.array([1, 0, *range(2, ages + 1)], dtype=np.int64)
    order.setflags(write=False)  # shared by every call
    return order


def tell(keeper: Any, gate: Any) -> None:
    """Tell a policy or adapter that keeps per-agent state of what its agents sent (one declaring
    `asked`, hivebench.engine.api.Policy) who acts this round and whose pending call was lost."""
    if hasattr(keeper, "asked"):
        keeper.asked, keeper.lost = gate.acting, gate.lost


def call_seconds(policy: Any) -> np.ndarray:
    """The seconds each agent's model call of this round took (NaN: none), as a policy that calls
    models says (`call_seconds`)."""
    seconds = getattr(policy, "call_seconds", None)
    if seconds is None:
        raise ValueError(
            f"clocks.seconds_per_round times decisions by their model calls, and {type(policy).__name__} "
            "makes none it can time (give the clocks a latency instead)"
        )
    return seconds()


RANDOM_FIELDS = 4  # a reply's fields drawn for (no suite's reply has more)


def random_reply(schema: dict[str, Any], draws: np.ndarray) -> dict[str, Any] | None:
    """A reply drawn uniformly within a reply schema's fields: an enum's values, an integer's range, a
    boolean; a text, an object or a list left empty (no message, no write). None (the fallback) where a
    field is none of these (a free JSON answer)."""
    reply: dict[str, Any] = {}
    for (name, field), u in zip(schema.items(), draws.tolist()):
        if "enum" in field:
            reply[name] = field["enum"][int(u * len(field["enum"]))]
        elif field.get("type") == "integer":
            reply[name] = field["minimum"] + int(u * (field["maximum"] - field["minimum"] + 1))
        elif field.get("type") == "boolean":
            reply[name] = u < 0.5
        elif field.get("type") in EMPTY:
            reply[name] = EMPTY[field["type"]]
        else:
            return None
    return reply


EMPTY: dict[str, Any] = {"string": "", "object": {}, "array": []}


def add_columns(records: list[EpisodeRecord], gate: Gate) -> None:
    """Each episode's `acted` (and `faulty`, `present`, `asked`, `staleness`) columns and its counts
    over its own rounds, over its own states."""
    for episode, record in enumerate(records):
        states = len(record.agents["step"]) // gate.n
        record.agents.update(gate.columns(episode, states))
        record.summary.update(gate.rounds_summary(episode, states))
