"""SwarmBench's Waggle adapter: what the Waggle runtime and its controls need of a SwarmBench block.

- Contacts: "SwarmBench uses a 5 x 5 egocentric window": the agents within the task's view (k x k,
  k = 5 by default) of each other, after the round's movement, as its messages reach.
- Private proposal: "Egocentric observations generate a private movement proposal": the local
  heuristic's move (hivebench.suites.swarmbench.baselines), without the agent's index: in Flocking an
  agent heads for the nearest cell of the shape that no agent in its view stands on, in Transport it
  searches the corners from one drawn for it. NativeMsg's proposal hears and sends the heuristic's own
  messages; the others' hear nothing.
- Evidence, as claims: the prey (Pursuit; each prey a new claim, so one caught is a claim a later
  sighting refutes), the food and the nest (Foraging), the box (Transport), in the agent's view, with
  its bearing; the prey and the box move, the food and the nest stay. Synchronization and Flocking
  have none: their controls' fields stay empty. A claim's handle is opaque (hivebench.waggle.runtime.claims).
- Field move: one step along the heading's longer axis, else its shorter, where the view shows no
  wall, food or nest there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.media.radius import in_reach
from hivebench.seeding import Streams
from hivebench.suites.swarmbench.baselines import DOWN, LEFT, RIGHT, STAY, STEP, UP, LocalHeuristic, nearest, towards
from hivebench.suites.swarmbench.levels import FOOD, NEST, WALL, ring
from hivebench.suites.swarmbench.task import AGENT, BOX, PREY, SwarmActions, SwarmViews
from hivebench.suites.swarmbench.world import ACTIONS, OUTSIDE, SWITCH
from hivebench.waggle.runtime.adapter import Evidence, Proposal
from hivebench.waggle.runtime.claims import ClaimCodes
from hivebench.waggle.runtime.field import Incident
from hivebench.waggle.runtime.records import NONE

# What a claim is about: (view code, kind, moving) per task
KINDS = {
    "pursuit": ((PREY, 0, True),),
    "foraging": ((FOOD, 1, False), (NEST, 2, False)),
    "transport": ((BOX, 3, True),),
}
CODES = {
    0: "floor",
    WALL: "wall",
    FOOD: "food",
    NEST: "nest",
    OUTSIDE: "outside",
    AGENT: "agent",
    PREY: "prey",
    BOX: "box",
}
SHUT = (WALL, FOOD, NEST, OUTSIDE)


def compass(offset: np.ndarray) -> np.ndarray:
    """(rows,) the compass point (0 = N, clockwise) of each (row, column) offset; NONE at (0, 0)."""
    angle = np.arctan2(offset[:, 1], -offset[:, 0])  # east over north, clockwise from north
    point = np.rint(angle / (np.pi / 4)).astype(np.int64) % 8
    return np.where((offset == 0).all(axis=1), NONE, point)


class AnonymousHeuristic(LocalHeuristic):
    """The local heuristic with nothing that depends on an agent's index (see the module's docstring)."""

    def __init__(self, rng: Streams, first_corner: np.ndarray):
        super().__init__({}, rng)
        self.first_corner = first_corner

    def flocking(self, views: SwarmViews, wander: np.ndarray) -> SwarmActions:
        shape = ring(views.n) + 1
        r = views.cells.shape[1] // 2
        rel = shape[None, :, :] - views.position[:, None, :]  # (agents, cells, 2)
        in_view = (np.abs(rel) <= r).all(axis=2)
        agents = np.arange(len(rel))[:, None]
        code = views.cells[agents, np.clip(rel[..., 0] + r, 0, 2 * r), np.clip(rel[..., 1] + r, 0, 2 * r)]
        taken = in_view & (code == AGENT) & (rel != 0).any(axis=2)
        distance = np.abs(rel).sum(axis=2) + np.where(taken, 10**6, 0)
        best = distance.argmin(axis=1)
        move = towards(rel[np.arange(len(rel)), best])
        return SwarmActions(np.where(distance.min(axis=1) >= 10**6, STAY, move))

    def transport(self, views: SwarmViews, wander: np.ndarray) -> SwarmActions:
        if self.box is None:
            self.box = np.full((len(views.present), 3), -1)
            self.corner = self.first_corner.copy()
        return super().transport(views, wander)


class SwarmAdapter:
    actions = ACTIONS
    wait = STAY

    def start(self, views: SwarmViews, seeds: list[int], rng: Streams, params: dict[str, Any]) -> None:
        agents = len(views.present)
        corner = (rng.child("corner").random((agents,)) * 4).astype(np.int64)
        self.heuristic = AnonymousHeuristic(rng.child("proposal"), corner)
        self.n = views.n
        self.codes = ClaimCodes(seeds, views.n)
        self.kinds = KINDS.get(views.task, ())
        self._evidence: tuple[int, Evidence] | None = None

    def live(self, views: SwarmViews) -> np.ndarray:
        return views.present

    def running(self, views: SwarmViews) -> np.ndarray:
        return np.ones(len(views.score), dtype=bool)  # every round, even once every agent has left (Transport)

    def legal(self, views: SwarmViews) -> np.ndarray:
        legal = np.ones((len(views.present), len(ACTIONS)), dtype=bool)
        legal[:, SWITCH] = views.task == "synchronization"
        return legal

    def heard(self, views: SwarmViews) -> tuple[np.ndarray, np.ndarray]:
        return views.heard_from, views.heard_by

    def budget(self, views: SwarmViews) -> tuple[int, int]:
        return views.step, views.horizon

    def intervention(self, views: SwarmViews) -> int:
        return views.intervention

    def proposal(self, views: SwarmViews, medium: str) -> Proposal:
        native = medium == "native"
        if not native:
            none = np.zeros(0, dtype=np.int64)
            views = replace(views, heard_by=none, heard=pa.array([], pa.string()), heard_from=none)
        actions = self.heuristic.decide(views)
        evidence = self.evidence(views)
        route = np.zeros(len(views.present), dtype=bool)
        route[evidence.agent[self._wanted(views, evidence.agent, evidence.claim)]] = True
        return Proposal(np.asarray(actions.move), route, actions.messages if native else None)

    def evidence(self, views: SwarmViews) -> Evidence:
        if self._evidence is not None and self._evidence[0] == views.step:
            return self._evidence[1]
        parts = []
        for code, kind, moving in self.kinds:
            seen, offset = nearest(views.cells == code)
            agent = np.flatnonzero(seen & views.present)
            which = views.score[agent // self.n].astype(np.int64) if code == PREY else np.zeros(len(agent), np.int64)
            claim = self.codes.encode(agent, np.full(len(agent), kind), which)
            distance = np.abs(offset[agent]).sum(axis=1)
            parts.append((agent, claim, compass(offset[agent]), np.full(len(agent), moving), distance))
        if not parts:
            none = np.zeros(0, dtype=np.int64)
            evidence = Evidence(none, none, none, none.astype(bool))
        else:
            agent, claim, direction, moving, distance = (np.concatenate(p) for p in zip(*parts))
            wanted = self._wanted(views, agent, claim)
            order = np.lexsort((distance, ~wanted, agent))  # per agent: what it wants first, nearest first
            evidence = Evidence(agent[order], claim[order], direction[order], moving[order])
        self._evidence = (views.step, evidence)
        return evidence

    def _wanted(self, views: SwarmViews, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        kind, which = self.codes.decode(agent, claim)
        carrying = views.state.get("carrying", np.zeros(len(views.present), dtype=bool))[agent]
        prey = (kind == 0) & (which == views.score[agent // self.n].astype(np.int64))
        return prey | ((kind == 1) & ~carrying) | ((kind == 2) & carrying) | (kind == 3)

    def wants(self, views: SwarmViews, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        return self._wanted(views, agent, claim) & views.present[agent]

    def refutes(self, views: SwarmViews, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """A prey claim is false once that prey is caught; an agent verifies it by seeing the prey now there."""
        kind, which = self.codes.decode(agent, claim)
        sees_prey = (views.cells[agent] == PREY).any(axis=(1, 2))
        return (kind == 0) & (which < views.score[agent // self.n].astype(np.int64)) & sees_prey

    def kind(self, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        return self.codes.decode(agent, claim)[0]

    def most_contacts(self, views: SwarmViews) -> int:
        return views.n - 1  # over an episode, an agent may come near every other

    def contacts(self, views: SwarmViews) -> tuple[np.ndarray, np.ndarray]:
        agents = np.arange(len(views.present))
        others, near = in_reach(views.position, views.present, agents, self.n, views.cells.shape[1] // 2)
        near &= views.present[:, None]  # between agents on the map (a symmetric relation: row = receiver)
        receiver, member = np.nonzero(near)
        return others[receiver, member], receiver

    def towards(self, views: SwarmViews, agent: np.ndarray, heading: np.ndarray) -> np.ndarray:
        east, north = heading[:, 0], heading[:, 1]
        vertical = np.where(north > 0, UP, DOWN)
        horizontal = np.where(east > 0, RIGHT, LEFT)
        first = np.where(np.abs(north) >= np.abs(east), vertical, horizontal)
        second = np.where(np.abs(north) >= np.abs(east), horizontal, vertical)
        r = views.cells.shape[1] // 2
        view = views.cells[agent]
        rows = np.arange(len(agent))

        def open_(action: np.ndarray) -> np.ndarray:
            return ~np.isin(view[rows, r + STEP[action][:, 0], r + STEP[action][:, 1]], SHUT)

        second_ok = open_(second) & (np.where(np.abs(north) >= np.abs(east), east, north) != 0)
        return np.where(open_(first), first, np.where(second_ok, second, -1))

    def act(
        self, views: SwarmViews, action: np.ndarray, messages: pa.StringArray | None, incident: Incident
    ) -> SwarmActions:
        return SwarmActions(action, messages)

    def contract(self, views: SwarmViews, agent: int) -> dict[str, Any]:
        legal = [a for a in ACTIONS if a != "SWITCH" or views.task == "synchronization"]
        return {"benchmark": "SwarmBench", "task": views.task, "actions": legal, "rounds": views.horizon}

    def private_state(self, views: SwarmViews, agent: int) -> dict[str, Any]:
        return {
            "view": [[CODES[int(c)] for c in row] for row in views.cells[agent]],
            "position": views.position[agent].tolist(),
            **{key: int(values[agent]) for key, values in views.state.items()},
        }
