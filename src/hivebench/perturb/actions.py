"""One round's action batches combined agent by agent, whatever the suite: a batch is an array or a
sequence with one entry per agent, an outbox (rows with a `sender`), a dataclass of those, or None
(nothing: no messages, no answers). This is how a perturbation sets some agents' actions without
knowing the suite's action types."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.media import exchange
from hivebench.engine.media.outbox import Outbox
from hivebench.perturb.inboxes import concat_outboxes, concat_sent


def merge(actions: Any, other: Any, mask: np.ndarray) -> Any:
    """`actions`, with each agent of `mask` (agents,) acting as in `other` instead."""
    if not mask.any():
        return actions
    if mask.all():
        return other
    return _merged(actions, other, mask)


def _merged(a: Any, b: Any, mask: np.ndarray) -> Any:
    if a is None and b is None:
        return None
    if a is None and _silent(b, mask):  # nobody outside the mask says anything, nor anybody in it
        return None
    if a is None or b is None:
        present = b if a is None else a
        nothing = _nothing(present, len(mask))
        return _merged(nothing, b, mask) if a is None else _merged(a, nothing, mask)
    if isinstance(a, (Outbox, exchange.Outbox)):
        return _merged_rows(a, b, mask)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        changes = {f.name: _merged(getattr(a, f.name), getattr(b, f.name), mask) for f in dataclasses.fields(a)}
        return dataclasses.replace(a, **changes)
    if isinstance(a, np.ndarray):
        return np.where(mask.reshape(-1, *([1] * (a.ndim - 1))), b, a)
    if isinstance(a, pa.Array):
        return pc.if_else(pa.array(mask), b, a)
    if isinstance(a, (list, tuple)):
        if len(a) != len(mask) or len(b) != len(mask):
            raise ValueError(f"cannot combine per-agent actions of {len(a)} and {len(b)} agents for {len(mask)}")
        return type(a)(y if m else x for x, y, m in zip(a, b, mask.tolist()))
    if a == b:
        return a
    raise TypeError(f"cannot combine {type(a).__name__} actions agent by agent")


def _nothing(like: Any, agents: int) -> Any:
    """What stands for None beside `like`: no messages, or no entry for any agent."""
    if isinstance(like, (Outbox, exchange.Outbox)):
        return like.take(np.zeros(0, dtype=np.int64))
    if isinstance(like, pa.Array):
        return pa.nulls(agents, like.type)
    if isinstance(like, (list, tuple)):
        return type(like)([None] * agents)
    if isinstance(like, np.ndarray) and like.dtype.kind in "bO":  # flags (False) or objects (None)
        return np.zeros(like.shape, dtype=like.dtype) if like.dtype.kind == "b" else np.full(like.shape, None)
    raise TypeError(f"cannot combine None with {type(like).__name__} actions agent by agent")


def _silent(x: Any, mask: np.ndarray) -> bool:
    """Whether `x` holds nothing for the agents of `mask` (no message from them, no entry)."""
    if isinstance(x, (Outbox, exchange.Outbox)):
        return not mask[x.sender].any()
    if isinstance(x, pa.Array):
        return x.filter(pa.array(mask)).null_count == int(mask.sum())
    if isinstance(x, (list, tuple)):
        return all(value is None for value, m in zip(x, mask.tolist()) if m)
    return False


def _merged_rows(a: Any, b: Any, mask: np.ndarray) -> Any:
    """Outbox rows: `a`'s from the agents outside the mask, then `b`'s from those in it, by sender."""
    keep = np.flatnonzero(~mask[a.sender]) if len(a.sender) else np.zeros(0, dtype=np.int64)
    add = np.flatnonzero(mask[b.sender]) if len(b.sender) else np.zeros(0, dtype=np.int64)
    if not add.size:
        return a if keep.size == len(a.sender) else a.take(keep)
    if not keep.size:
        return b.take(add)
    parts = [a.take(keep), b.take(add)]
    joined = concat_outboxes(parts) if isinstance(a, Outbox) else concat_sent(parts)
    return joined.take(np.argsort(joined.sender, kind="stable"))
