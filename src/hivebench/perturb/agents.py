"""Faulty agents and partial activation: which agents act in each round, drawn from the cell's seed
(streams `perturbation/faults`, `perturbation/activation`), and the policy wrapper that holds the
others to the suite's idle action (its text view's fallback: keep its state, send nothing).

A method that asks its agents one by one (the LLM agent, the Waggle runtime) is told through its
view or adapter that an agent not acting is not live, so it is not asked and keeps its memory; a
classical policy decides for every agent at once, and the actions of those not acting are replaced
(its own per-agent state may advance for them: it is not told).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.api import EpisodeRecord, Policy
from hivebench.perturb.actions import merge
from hivebench.seeding import Streams


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
        self.round = -1
        self.acting = np.ones(agents, dtype=bool)  # this round's
        self.acted: list[np.ndarray] = []  # per round, who acted

    def next_round(self) -> tuple[np.ndarray, np.ndarray]:
        """Start a round: (idle, stuck) masks, the agents held to the idle action and those repeating
        their onset round's action; `acting` holds the others."""
        self.round += 1
        asleep = self._asleep()
        failed = self.faulty & (self.round >= self.faults["onset"]) if self.faults else np.zeros_like(self.faulty)
        if self.faults and self.faults["kind"] == "stuck":  # acts in its onset round, then repeats that round
            stuck = failed & (self.round > self.faults["onset"])
            idle = asleep & ~stuck
        else:
            stuck, idle = np.zeros_like(failed), asleep | failed
        self.acting = ~(idle | stuck)
        self.acted.append(self.acting)
        return idle, stuck

    def _asleep(self) -> np.ndarray:
        if not self.activation:
            return np.zeros_like(self.faulty)
        keys = self.wake.random((len(self.faulty),))
        if "probability" in self.activation:
            return keys >= self.activation["probability"]
        rank = np.argsort(np.argsort(keys.reshape(self.episodes, self.n), axis=1, kind="stable"), axis=1)
        return (rank >= self.activation["count"]).ravel()

    def columns(self, episode: int, states: int) -> dict[str, np.ndarray]:
        """Per (state, agent) of one episode: `acted` (in the round that led to the state; state 0:
        False) and with faults `faulty`."""
        own = slice(episode * self.n, (episode + 1) * self.n)
        rounds = np.stack(self.acted[: states - 1]) if states > 1 else np.zeros((0, len(self.faulty)), dtype=bool)
        acted = np.concatenate([np.zeros(self.n, dtype=bool), rounds[:, own].ravel()])
        columns = {"acted": acted}
        if self.faults:
            columns["faulty"] = np.tile(self.faulty[own], states)
        return columns

    def summary(self, episode: int) -> dict[str, int]:
        return (
            {"faulty_agents": int(self.faulty[episode * self.n : (episode + 1) * self.n].sum())} if self.faults else {}
        )


class GatedView:
    """A suite's text view (or Waggle adapter) through which only the acting agents are live."""

    def __init__(self, inner: Any, gate: Gate):
        self.inner, self.gate = inner, gate

    def live(self, observation: Any) -> np.ndarray:
        return self.inner.live(observation) & self.gate.acting

    def running(self, observation: Any) -> np.ndarray:
        """Whose episode runs this round, whoever acts in it (as the inner view says)."""
        running = getattr(self.inner, "running", None)
        if running is not None:
            return running(observation)
        return self.inner.live(observation).reshape(-1, self.gate.n).any(axis=1)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class GatedPolicy(Policy):
    """The method's policy, with each round's idle agents held to `view`'s fallback and stuck ones
    repeating their onset round's actions."""

    def __init__(self, inner: Policy, gate: Gate, view: Any):
        self.inner, self.gate, self.view = inner, gate, view
        self.onset_actions: Any = None

    def decide(self, observation: Any) -> Any:
        idle, stuck = self.gate.next_round()
        actions = self.inner.decide(observation)
        if idle.any():
            actions = merge(actions, self.view.actions(observation, [None] * len(idle)), idle)
        if self.gate.faults and self.gate.round == self.gate.faults["onset"]:
            self.onset_actions = actions
        if stuck.any():
            actions = merge(actions, self.onset_actions, stuck)
        return actions

    def columns(self, episode: int) -> dict[str, Any]:
        return self.inner.columns(episode)

    def summary(self, episode: int) -> dict[str, Any]:
        return {**self.inner.summary(episode), **self.gate.summary(episode)}

    def tables(self, episode: int) -> dict[str, pa.Table | Any]:
        return self.inner.tables(episode)


def add_columns(records: list[EpisodeRecord], gate: Gate) -> None:
    """Each episode's `acted` (and `faulty`) columns, over its own states."""
    for episode, record in enumerate(records):
        states = len(record.agents["step"]) // gate.n
        record.agents.update(gate.columns(episode, states))
