"""AgentsNet's adversary (an `adversarial` fault, hivebench.perturb): it sends what its method sends,
and answers to do the most harm a single answer can: it claims leadership (leader election), takes
the first colour (colouring), the first bit (consensus), stays out of the cover (vertex cover) and
claims its first neighbour as its partner (matching)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa

from hivebench.seeding import Streams
from hivebench.suites.agentsnet import problems
from hivebench.suites.agentsnet.task import NetActions, NetViews


def claim(views: NetViews, agent: int) -> str:
    """The answer an adversarial agent gives."""
    options = views.options(agent)
    if views.problem == "leader_election":
        return problems.YES
    if views.problem == "vertex_cover":
        return problems.NO
    return options[0]  # the first colour, bit, or neighbour


class NetAdversary:
    def __init__(self, streams: Streams):
        self.streams = streams  # it draws nothing

    def act(self, views: NetViews, actions: NetActions, agents: np.ndarray) -> NetActions:
        if actions.answers is None:
            return actions
        answers = actions.answers.to_pylist() if isinstance(actions.answers, pa.Array) else list(actions.answers)
        for agent in np.flatnonzero(agents & views.answering).tolist():
            answers[agent] = claim(views, agent)
        return replace(actions, answers=answers)
