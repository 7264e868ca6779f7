"""SwarmBench's adversary (an `adversarial` fault, hivebench.perturb): it moves as its method moves,
and broadcasts a false sighting every round: the prey (Pursuit's `P row col`, as the local rule
says a real one) at a place drawn uniformly on the map, each round afresh."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa

from hivebench.seeding import Streams
from hivebench.suites.swarmbench.task import SwarmActions, SwarmViews


class SwarmAdversary:
    def __init__(self, streams: Streams):
        self.streams = streams

    def act(self, views: SwarmViews, actions: SwarmActions, agents: np.ndarray) -> SwarmActions:
        # every agent's draw, adversarial or not, so the stream advances alike every round
        place = np.floor(self.streams.random((len(agents), 2)) * views.size).astype(np.int64)
        said = [None] * len(agents) if actions.messages is None else actions.messages.to_pylist()
        for agent in np.flatnonzero(agents & views.present).tolist():
            said[agent] = f"P {place[agent, 0]} {place[agent, 1]}"
        return replace(actions, messages=pa.array(said, pa.string()))
