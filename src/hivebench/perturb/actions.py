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
    return choose([actions, other], mask.astype(np.int64))


def choose(batches: list[Any], source: np.ndarray) -> Any:
    """Each agent acting as in the batch `source` names for it (`batches[source[agent]]`), in one
    pass. The first batch is the base: where it is None and the batches taken give nothing for their
    own agents, the result is None (no messages, as an empty outbox), and where nothing stands for
    None it is shaped like the first batch given; a later batch no agent takes may be anything (it is
    not read). Where several batches give outbox rows the rows come by sender."""
    taken = [k for k, count in enumerate(np.bincount(source, minlength=len(batches)).tolist()) if count]
    if len(taken) <= 1:  # one batch for every agent (or no agent)
        return batches[taken[0] if taken else 0]
    kept = taken if taken[0] == 0 else [0, *taken]
    if len(kept) < len(batches):  # the batches no agent takes left out
        index = np.zeros(len(batches), dtype=np.int64)
        index[kept] = np.arange(len(kept))
        batches, source = [batches[k] for k in kept], index[source]
    return _merged(batches, source)


def _merged(batches: list[Any], source: np.ndarray) -> Any:
    given = [k for k, batch in enumerate(batches) if batch is not None]
    if len(given) < len(batches):
        # nobody says anything where the batches given are silent for their own agents (or none is)
        if batches[0] is None and all(_silent(batches[k], source == k) for k in given):
            return None
        nothing = _nothing(batches[given[0]], len(source))
        batches = [nothing if batch is None else batch for batch in batches]
    a = batches[0]
    if isinstance(a, (Outbox, exchange.Outbox)):
        return _merged_rows(batches, source)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        changes = {f.name: _merged([getattr(b, f.name) for b in batches], source) for f in dataclasses.fields(a)}
        return dataclasses.replace(a, **changes)
    if isinstance(a, np.ndarray):
        out, per_agent = a, source.reshape(-1, *([1] * (a.ndim - 1)))  # a row per agent
        for k, b in enumerate(batches[1:], start=1):
            out = np.where(per_agent == k, b, out)
        return out
    if isinstance(a, pa.Array):
        out = a
        for k, b in enumerate(batches[1:], start=1):
            out = pc.if_else(pa.array(source == k), b, out)
        return out
    if isinstance(a, (list, tuple)):
        if any(len(b) != len(source) for b in batches):
            sizes = sorted({len(b) for b in batches})
            raise ValueError(f"cannot combine per-agent actions of {sizes} agents for {len(source)}")
        # from the batch most agents take, the others' entries put in one by one
        counts = np.bincount(source, minlength=len(batches))
        top = int(counts.argmax())
        out = list(batches[top])
        for k, batch in enumerate(batches):
            if k != top and counts[k]:
                for i in (source == k).nonzero()[0].tolist():
                    out[i] = batch[i]
        return type(a)(out)
    if all(b == a for b in batches[1:]):
        return a
    raise TypeError(f"cannot combine {type(a).__name__} actions agent by agent")


def _merged_rows(batches: list[Any], source: np.ndarray) -> Any:
    """Outbox rows: each batch's rows from its own agents, by sender (as they come where one batch
    gives them all; `actions` itself where it keeps all of its own)."""
    taken = [(k, np.flatnonzero(source[b.sender] == k)) for k, b in enumerate(batches) if len(b.sender)]
    taken = [(k, rows) for k, rows in taken if rows.size]
    a = batches[0]
    if not taken or (len(taken) == 1 and taken[0][0] == 0):
        kept = taken[0][1] if taken else np.zeros(0, dtype=np.int64)
        return a if kept.size == len(a.sender) else a.take(kept)
    if len(taken) == 1:
        k, rows = taken[0]
        return batches[k].take(rows)
    parts = [batches[k].take(rows) for k, rows in taken]
    joined = concat_outboxes(parts) if isinstance(batches[0], Outbox) else concat_sent(parts)
    return joined.take(np.argsort(joined.sender, kind="stable"))


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
