"""Classical LoopBench baselines, vectorised over the agents of every episode of a block.

Every rule draws the same amount of randomness each round whatever the state, so a cell's random
stream is consumed identically across runs. Decisions see only the pre-update state (synchronous).
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np

from hivebench.engine.api import Policy
from hivebench.seeding import Streams, first_argmax, uniform_among
from hivebench.suites.loopbench.task import ColoringViews


def fewest_conflicts(views: ColoringViews) -> np.ndarray:
    """(n,) the fewest conflicts each agent could have with its neighbours (a column at a time: with a
    few colours, ~50x numpy's reduction along the short axis)."""
    return reduce(np.minimum, views.neighbor_counts.T)


def least_conflicted(views: ColoringViews) -> np.ndarray:
    """(n, c) mask of the colours that minimise each agent's conflicts with its neighbours."""
    return views.neighbor_counts == fewest_conflicts(views)[:, None]


class RandomColorer(Policy):
    """Every node picks a uniformly random colour every step."""

    def __init__(self, params: dict[str, Any], rng: Streams):
        self.rng = rng

    def decide(self, views: ColoringViews) -> np.ndarray:
        if views.step == 0:  # what the episode will draw: a colour per agent a round
            self.rng.reserve(views.horizon * views.n, (0, views.num_colors))
        return self.rng.integers(0, views.num_colors, (len(views.colors),))


class ConservativeRandomColorer(RandomColorer):
    """A node in conflict picks a uniformly random colour (possibly its own); the others keep theirs."""

    def decide(self, views: ColoringViews) -> np.ndarray:
        draw = super().decide(views)
        return np.where(views.own_conflicts > 0, draw, views.colors)


class SoftColorerFP(Policy):
    """Each node activates with probability p; an active node takes a least-conflicted colour,
    ties broken uniformly at random (its own colour among the candidates)."""

    def __init__(self, params: dict[str, Any], rng: Streams):
        self.p = float(params["p"])
        self.rng = rng

    def activated(self, views: ColoringViews) -> np.ndarray:
        if views.step == 0:  # what the episode will draw: a number per agent and per (agent, colour) a round
            self.rng.reserve(views.horizon * views.n * (1 + views.num_colors))
        return self.rng.random((len(views.colors),)) < self.p

    def decide(self, views: ColoringViews) -> np.ndarray:
        active = self.activated(views)
        choice = uniform_among(least_conflicted(views), self.rng)
        return np.where(active, choice, views.colors)


class SoftColorerCFP(SoftColorerFP):
    """As FP, but an active node changes colour only when another colour strictly reduces its
    conflicts; it then takes a least-conflicted colour, ties broken uniformly at random."""

    def decide(self, views: ColoringViews) -> np.ndarray:
        active = self.activated(views)
        best = least_conflicted(views)
        choice = uniform_among(best, self.rng)
        improves = views.own_conflicts > fewest_conflicts(views)
        return np.where(active & improves, choice, views.colors)


class GreedyColorer(Policy):
    """Deterministic synchronous best response: keep the colour if it is least-conflicted, else take
    the lowest-numbered least-conflicted colour. From a symmetric start every node moves in lockstep."""

    def __init__(self, params: dict[str, Any], rng: Streams):
        pass

    def decide(self, views: ColoringViews) -> np.ndarray:
        best = least_conflicted(views)
        keep = best[np.arange(len(views.colors)), views.colors]
        return np.where(keep, views.colors, first_argmax(best))
