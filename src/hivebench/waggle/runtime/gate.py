"""The fixed candidate-ready gate: "two or more incident channels carrying the same claim, total
support at least eight, zero conflict, and support-weighted directional coherence at least 0.6".

Directional coherence of a claim's traces on one agent (the paper names it without a formula; this is
the mean resultant length of their directions, each weighted by its support):

    coherence = | sum_i s_i u(d_i) | / sum_i s_i      over the traces that carry a direction,

u(d) the unit vector of compass point d. 1 when every direction agrees, 0 when they cancel; a claim
whose traces carry no direction (or no support) has coherence 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hivebench.waggle.runtime.records import CHANNEL, CLAIM, CONFLICT, DIRECTION, NONE, SUPPORT

ANGLE = np.arange(8) * np.pi / 4  # compass point -> angle clockwise from north
UNIT = np.stack([np.sin(ANGLE), np.cos(ANGLE)], axis=1)  # (8, 2): (east, north) of each point


@dataclass(frozen=True)
class Gate:
    channels: int = 2
    support: int = 8
    coherence: float = 0.6


@dataclass(frozen=True)
class Claims:
    """Per (agent, claim) on a block's incident traces, grouped."""

    agent: np.ndarray
    claim: np.ndarray
    channels: np.ndarray  # distinct incident channels carrying it
    support: np.ndarray  # total support
    conflict: np.ndarray  # total conflict
    coherence: np.ndarray
    heading: np.ndarray  # (groups, 2) the support-weighted sum of the direction vectors (east, north)

    def ready(self, gate: Gate) -> np.ndarray:
        return (
            (self.channels >= gate.channels)
            & (self.support >= gate.support)
            & (self.conflict == 0)
            & (self.coherence >= gate.coherence - 1e-9)
        )


def claims(receiver: np.ndarray, traces: np.ndarray) -> Claims:
    """Group incident `traces` (records, 7) held by `receiver` (records,) by (receiver, claim)."""
    groups, group = np.unique(receiver.astype(np.int64) << 32 | traces[:, CLAIM], return_inverse=True)
    count = len(groups)
    support = traces[:, SUPPORT].astype(np.float64)
    directed = traces[:, DIRECTION] != NONE
    # support per compass point (exact integers), then the vectors: the heading does not depend on the
    # order the traces are held in (a float sum would, and a tie between two moves with it)
    point = group[directed] * len(UNIT) + traces[directed, DIRECTION]
    per_point = np.bincount(point, weights=support[directed], minlength=count * len(UNIT)).reshape(count, len(UNIT))
    heading = per_point @ UNIT
    weight = per_point.sum(axis=1)
    coherence = np.where(weight > 0, np.hypot(heading[:, 0], heading[:, 1]) / np.maximum(weight, 1e-12), 1.0)
    channel_keys = np.unique(group.astype(np.int64) << 32 | traces[:, CHANNEL])
    return Claims(
        agent=groups >> 32,
        claim=groups & 0xFFFFFFFF,
        channels=np.bincount(channel_keys >> 32, minlength=count),
        support=np.bincount(group, weights=support, minlength=count).astype(np.int64),
        conflict=np.bincount(group, weights=traces[:, CONFLICT], minlength=count).astype(np.int64),
        coherence=coherence,
        heading=heading,
    )
