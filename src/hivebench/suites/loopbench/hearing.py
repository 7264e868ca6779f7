"""What each LoopBench agent knows of its neighbours' colours: after every round each node announces
its new colour to each neighbour, one message per directed edge through a `Medium`
(hivebench.engine.api), so that a perturbation may lose or delay an announcement
(hivebench.perturb). Every announcement arrives at once on the bare medium, and an agent sees its
neighbours' colours as they are: the paper's rule, and its numbers unchanged (the task then sends
nothing and keeps no record of what was heard: it is the colours themselves). An agent that has not
heard a neighbour's latest colour keeps the last one it heard (at the start, every colour is known);
an announcement carries no round, so under delays drawn from a range an older one that arrives after
a newer one stands.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.block import GraphBlock
from hivebench.engine.media.outbox import Outbox


class Announcements:
    """The bare medium: each round's announcements, delivered as sent. It counts and records nothing
    of its own (the colours are in the per-agent table); a medium around it adds its own."""

    def __init__(self, block: GraphBlock):
        self.block = block
        self.pending: Outbox | None = None

    def send(self, step: int, outbox: Outbox) -> None:
        self.pending = outbox

    def deliver(self, where: Any = None) -> Outbox:
        inbox, self.pending = self.pending or Outbox.empty(), None
        return inbox

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        return {}

    def counts(self, episode: int) -> dict[str, int]:
        return {}

    def tables(self, episode: int) -> dict[str, pa.Table]:
        return {}


class Hearing:
    """Per state, the colour each agent last heard from each neighbour: `heard[t, e]` is what node
    `src[e]` knows at state t of neighbour `indices[e]`'s colour (edges in CSR order)."""

    def __init__(self, block: GraphBlock, num_colors: int, states: int, start: np.ndarray):
        self.block = block
        # a message per directed edge, from the neighbour to the node: the same arrays every round
        self.sender, self.receiver = block.indices, block.src
        self.dictionary = pa.array([str(k) for k in range(num_colors)])  # a colour's announcement, as text
        self.heard = np.zeros((states, len(block.indices)), dtype=np.int64)
        self.heard[0] = start[block.indices]
        self.exact = True  # whether the last state's heard colours are every neighbour's colour

    def announce(self, medium: Any, step: int, colors: np.ndarray) -> None:
        """Round `step`'s new colours, sent and delivered: what every agent has heard at state step + 1."""
        announced = colors[self.sender]
        medium.send(step, Outbox(self.sender, self.receiver, None, announced, announced, self.dictionary))
        inbox = medium.deliver()
        now = self.heard[step + 1]
        if inbox.sender is self.sender and inbox.receiver is self.receiver:  # every announcement, as sent
            now[:] = announced
            self.exact = True
            return
        now[:] = self.heard[step]
        if len(inbox.sender):
            keys = inbox.receiver.astype(np.int64) * self.block.agents + inbox.sender
            edges, colors = np.searchsorted(self.block.edge_keys, keys), inbox.payload
            if np.bincount(edges).max() > 1:  # rows in arrival order: the last heard from a neighbour stands
                last = len(edges) - 1 - np.unique(edges[::-1], return_index=True)[1]
                edges, colors = edges[last], colors[last]
            now[edges] = colors
        self.exact = bool(np.array_equal(now, announced))
