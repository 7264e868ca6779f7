"""Media: how messages travel between rounds (the `Medium` protocol of hivebench.engine.api). A task
builds its medium by name and hands each round's deliveries to its agents' observations; the medium
enforces the suite's rules and records every message.

    neighbours  named neighbour messages (AgentsNet)
    radius      radius broadcast on a grid (SwarmBench)
    p2p, broadcast, store
                Silo-Bench's protocols, named by its `protocol` parameter

A medium that changes another (loss, delay, a trace field, NoComm) wraps it; see `Medium`.
"""

from __future__ import annotations

from collections.abc import Callable

from hivebench.engine.api import Medium
from hivebench.engine.media.neighbours import NeighbourMessages
from hivebench.engine.media.outbox import Outbox
from hivebench.suite import load

__all__ = ["MEDIA", "NeighbourMessages", "Outbox", "medium"]

# name -> the class, as a "package.module:Name" path: imported when a task asks for it
MEDIA = {
    "neighbours": "hivebench.engine.media.neighbours:NeighbourMessages",
    "radius": "hivebench.engine.media.radius:RadiusBroadcast",
    "p2p": "hivebench.engine.media.exchange:PointToPoint",
    "broadcast": "hivebench.engine.media.exchange:Broadcast",
    "store": "hivebench.engine.media.exchange:SharedStore",
}


def medium(name: str) -> Callable[..., Medium]:
    """The medium class registered under `name` (each takes the block first, then its own settings)."""
    return load(MEDIA[name])
