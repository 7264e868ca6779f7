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
from typing import Any

from hivebench.engine.api import Medium
from hivebench.engine.media.neighbours import NeighbourMessages
from hivebench.engine.media.outbox import Outbox
from hivebench.suite import load

__all__ = ["MEDIA", "NeighbourMessages", "Outbox", "medium", "sent_as_recorded"]

# name -> the class, as a "package.module:Name" path: imported when a task asks for it
MEDIA = {
    "neighbours": "hivebench.engine.media.neighbours:NeighbourMessages",
    "radius": "hivebench.engine.media.radius:RadiusBroadcast",
    "p2p": "hivebench.engine.media.exchange:PointToPoint",
    "broadcast": "hivebench.engine.media.exchange:Broadcast",
    "store": "hivebench.engine.media.exchange:SharedStore",
}


def sent_as_recorded(medium: Any, delivered: Any) -> Any:
    """The last round's messages as the task's own medium recorded them, whatever a medium wrapped
    around it since delivered (`delivered`: what a medium without a record of its own gives instead)."""
    last_sent = getattr(medium, "last_sent", None)
    return delivered if last_sent is None else last_sent()


def medium(name: str) -> Callable[..., Medium]:
    """The medium class registered under `name` (each takes the block first, then its own settings)."""
    return load(MEDIA[name])
