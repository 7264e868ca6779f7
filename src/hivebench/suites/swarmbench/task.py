"""A SwarmBench episode: N agents on a walled grid, each seeing the k x k cells around it, move (push)
and broadcast short messages for T rounds while the task scores them.

A round: every agent observes (its view, the messages delivered to it, its own state), all decide at
once, the world moves under the push physics, the task updates and scores, and the round's messages
are delivered by where the agents now stand (the reference's order: the `radius` medium). A job
block plays its episodes side by side, each on its own grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench import compat
from hivebench.engine import media
from hivebench.engine.api import EpisodeRecord, state_agent_columns
from hivebench.engine.media import Outbox
from hivebench.suites.swarmbench import DIFFERENCES, behaviour, rules, side
from hivebench.suites.swarmbench.levels import played_level, relabelled
from hivebench.suites.swarmbench.world import ACTIONS, Worlds

# What a view shows besides the terrain codes (FLOOR, WALL, FOOD, NEST, OUTSIDE)
AGENT, PREY, BOX = 5, 6, 7
RULES = {
    "pursuit": rules.Pursuit,
    "synchronization": rules.Synchronization,
    "foraging": rules.Foraging,
    "flocking": rules.Flocking,
    "transport": rules.Transport,
}


def spoken(texts: pa.StringArray, present: np.ndarray) -> Outbox:
    """A round's broadcasts: one per agent on the map with a message (`texts`: null for none)."""
    senders = np.flatnonzero(texts.is_valid().to_numpy(zero_copy_only=False) & present)
    return Outbox(senders, np.full(len(senders), -1), texts.take(pa.array(senders)))


def by_state(per_round: np.ndarray, own: slice) -> np.ndarray:
    """One episode's column over the states 0..T (state-major) from per-round values (state t + 1:
    round t's; state 0: none)."""
    return np.concatenate([np.zeros(own.stop - own.start, per_round.dtype), per_round[:, own].ravel()])


@dataclass(frozen=True)
class SwarmViews:
    """One round's local views of every agent of a block. Agent v may know: its view (the k x k cells
    around it, `cells[v]`, with the agents in it by id within the episode, `ids[v]`), its position,
    the messages delivered to it (`heard` rows with receiver v), its own task state (`state`), and in
    Pursuit the score (the reference shows it)."""

    step: int
    horizon: int
    n: int
    task: str
    size: int  # the map's side (known to every agent, like the task)
    message_chars: int  # the size cap of one message
    cells: np.ndarray  # (agents, k, k) terrain codes, or AGENT / PREY / BOX where one is
    ids: np.ndarray  # (agents, k, k) the agent there (within its episode), else -1
    position: np.ndarray  # (agents, 2) row, column on the map
    present: np.ndarray  # (agents,) False once an agent has left the map (Transport)
    heard_by: np.ndarray  # (messages,) the receiving agent of each message delivered this round
    heard: pa.StringArray  # (messages,) its text
    heard_from: np.ndarray  # (messages,) its sender (for the record, not for the agent: messages are anonymous)
    state: dict[str, np.ndarray]  # per agent: light (Synchronization), carrying (Foraging), ...
    score: np.ndarray  # (episodes,)
    intervention: int = -1  # Pursuit's relocation round (relocate_at), or -1: the runtime's, not an agent's


@dataclass(frozen=True)
class SwarmActions:
    move: np.ndarray  # (agents,) an index into ACTIONS
    messages: pa.StringArray | None = None  # (agents,) null for none; None: nobody speaks


class SwarmTask:
    relabelling: np.ndarray | None = None  # see hivebench.engine.api.Task
    edge_image = None  # no graph

    def __init__(self, params: dict[str, Any], population: int):
        self.params = params
        self.task = params["task"]
        self.n = population
        self.rounds = int(params["rounds"])
        self.k = int(params["view"])
        self.size = side(population) if params["grid"] == "auto" else int(params["grid"])
        self.relocate_at = int(params.get("relocate_at", -1))
        self.t = 0

    @property
    def horizon(self) -> int:
        return self.rounds

    @property
    def done(self) -> bool:
        return self.t >= self.rounds

    def reset(self, seeds: Sequence[int]) -> None:
        self.seeds = list(seeds)
        settings = compat.settings(self.params, DIFFERENCES)
        levels = [played_level(self.task, self.n, seed, self.size, settings) for seed in seeds]
        if self.relabelling is not None:
            levels = [relabelled(level, self.relabelling) for level in levels]
        self.worlds = Worlds(  # views and escapes stay inside the array
            levels, margin=max(self.k // 2, 1), pushable_prey=settings["prey_pushable"] == "first"
        )
        self.rules: rules.Rules = RULES[self.task](self.worlds, levels, self.seeds, self.rounds, settings)
        self.medium = media.medium("radius")(
            self.worlds.block,
            radius=self.k // 2,
            max_chars=int(self.params["message_chars"]),
            to_sender=bool(settings["to_sender"]),
            marker="..." if settings["message_cut"] == "ellipsis" else "",
        )
        self.inbox = self._heard()
        states = self.rounds + 1
        self.positions = np.zeros((states, self.worlds.agents, 2), dtype=np.int16)
        self.actions = np.full((states, self.worlds.agents), -1, dtype=np.int8)
        self.columns: list[dict[str, np.ndarray]] = []
        self._keep_state()
        self.t = 0

    def _keep_state(self) -> None:
        self.positions[len(self.columns)] = self.worlds.position
        self.columns.append(self.rules.agent_columns())
        self.rules.track()

    def observe(self) -> SwarmViews:
        w, r = self.worlds, self.k // 2
        cells = w.terrain.copy()
        bodies = w.grid >= 0
        cells[bodies] = np.where(w.grid[bodies] < w.agents, AGENT, BOX)
        if isinstance(self.rules, rules.Pursuit):
            m = w.margin
            cells[np.arange(len(self.seeds)), self.rules.prey[:, 0] + m, self.rules.prey[:, 1] + m] = PREY
        ids = np.where(bodies & (w.grid < w.agents), w.grid % self.n, -1)
        return SwarmViews(
            step=self.t,
            horizon=self.rounds,
            n=self.n,
            task=self.task,
            size=self.size,
            message_chars=int(self.params["message_chars"]),
            cells=w.around(cells, r),
            ids=w.around(ids, r),
            position=w.position.copy(),
            present=w.present.copy(),
            heard_by=self.inbox[0],
            heard=self.inbox[1],
            heard_from=self.inbox[2],
            state=self.rules.agent_columns(),
            score=self.rules.score.copy(),
            intervention=self.relocate_at,
        )

    def step(self, actions: SwarmActions) -> None:
        move = np.asarray(actions.move)
        if move.shape != (self.worlds.agents,) or move.min() < 0 or move.max() >= len(ACTIONS):
            raise ValueError(f"round {self.t}: expected {self.worlds.agents} actions, each an index into {ACTIONS}")
        present = self.worlds.present.copy()  # who acts this round (an agent leaving the map still speaks)
        move = np.where(present, move, 0)
        self.worlds.move(move)
        self.rules.update(self.t, move)
        if self.t + 1 == self.relocate_at:
            self.rules.relocate(self.k)  # type: ignore[attr-defined]  # relocate_at is Pursuit's (problems)
        self.actions[self.t + 1] = move
        if actions.messages is not None:
            self.medium.send(self.t, spoken(actions.messages, present))
        self.inbox = self._heard()
        self.t += 1
        self._keep_state()

    def _in_view_of_prey(self) -> list[float]:
        """Per episode, the share of its agents with the prey in their view at the last state."""
        prey = np.repeat(self.rules.prey, self.n, axis=0)  # type: ignore[attr-defined]
        near = np.abs(self.worlds.position - prey).max(axis=1) <= self.k // 2
        return near.reshape(len(self.seeds), self.n).mean(axis=1).tolist()

    def _heard(self) -> tuple[np.ndarray, pa.StringArray, np.ndarray]:
        """What the medium delivers now, where the agents stand: (receivers, texts, senders)."""
        heard = self.medium.deliver((self.worlds.position, self.worlds.present))
        return heard.receiver, heard.texts(), heard.sender

    def record(self) -> list[EpisodeRecord]:
        """Per episode and (state, agent): position, the action that led to the state, messages sent
        and heard, the task's own state; one row per message in the `messages` table; the score."""
        states, n = self.rounds + 1, self.n
        traffic = self.medium.traffic(self.rounds)
        step, agent = state_agent_columns(n, states)
        names = pa.array(["", *ACTIONS])
        summary = self.rules.summary()
        rules_label = behaviour(self.params)  # hivebench's rules add no column (their files are as before)
        if rules_label != "hivebench":
            summary["compat"] = [rules_label] * len(self.seeds)
        if self.relocate_at >= 0:
            summary["recovery"] = self._in_view_of_prey()
        score = self.rules.score.tolist()
        records = []
        for s in range(len(self.seeds)):
            own = slice(s * n, (s + 1) * n)
            agents = {
                "step": step,
                "agent": agent,
                "row": self.positions[:, own, 0].ravel(),
                "col": self.positions[:, own, 1].ravel(),
                "action": pa.DictionaryArray.from_arrays(
                    pa.array(self.actions[:, own].ravel().astype(np.int32) + 1), names
                ),
                "sent": by_state(traffic["sent"], own),
                "heard": by_state(traffic["received"], own),
                **{key: np.stack([c[key][own] for c in self.columns]).ravel() for key in self.columns[0]},
            }
            records.append(
                EpisodeRecord(
                    agents,
                    {
                        "swarm_task": self.task,
                        "size": self.size,
                        "rounds": self.rounds,
                        "score": score[s],
                        **{key: values[s] for key, values in summary.items()},
                        **self.medium.counts(s),  # messages, truncated_messages
                    },
                    self.medium.tables(s),
                )
            )
        return records
