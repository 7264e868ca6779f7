"""What an unreliable medium does to the inboxes of every suite's medium, by row: an inbox is a
media Outbox (neighbours, radius: one row per delivery) or a Silo-Bench `Delivered` (delivery i brings
message `message[i]` of its outbox)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.media import exchange
from hivebench.engine.media.outbox import Outbox

Inbox = Outbox | exchange.Delivered


def ends(inbox: Inbox) -> tuple[np.ndarray, np.ndarray]:
    """(sender, receiver) of each delivery."""
    return inbox.sender, inbox.receiver


def take(inbox: Inbox, rows: np.ndarray) -> Inbox:
    """The inbox with only the deliveries `rows`."""
    if isinstance(inbox, exchange.Delivered):
        return replace(inbox, receiver=inbox.receiver[rows], sender=inbox.sender[rows], message=inbox.message[rows])
    return inbox.take(rows)


def received_traffic(
    traffic: dict[str, np.ndarray], received: list[tuple[int, np.ndarray]], rounds: int, agents: int
) -> dict[str, np.ndarray]:
    """A medium's per-(round, agent) counts with `received` as a wrapper delivered them: per delivery
    made, (its round, the receivers of its rows)."""
    traffic = dict(traffic)
    if "received" in traffic:
        counts = np.zeros_like(traffic["received"])
        for step, receivers in received:
            if step < rounds:
                counts[step] = np.bincount(receivers, minlength=agents)
        traffic["received"] = counts
    return traffic


def concat(earlier: list[Inbox], now: Inbox) -> Inbox:
    """The deliveries held back from earlier rounds, then this round's, as one inbox (with this
    round's store where the medium has one)."""
    if not earlier:
        return now
    parts = [*earlier, now]
    if isinstance(now, exchange.Delivered):
        offsets = np.cumsum([0] + [len(p.outbox) for p in parts[:-1]])
        return replace(
            now,
            outbox=concat_sent([p.outbox for p in parts]),
            receiver=np.concatenate([p.receiver for p in parts]),
            sender=np.concatenate([p.sender for p in parts]),
            message=np.concatenate([p.message + offset for p, offset in zip(parts, offsets)]),
        )
    return concat_outboxes(parts)


def concat_outboxes(parts: list[Outbox]) -> Outbox:
    """Media outboxes as one, row after row: coded where they share one dictionary, else as text."""
    parts = [p.take(np.arange(len(p.sender))) if p.per_sender else p for p in parts]  # one row per message
    sender = np.concatenate([p.sender for p in parts])
    receiver = np.concatenate([p.receiver for p in parts])
    dictionary = parts[0].dictionary
    # what a classical algorithm reads, kept where every part with messages carries it (two members'
    # outboxes too; an idle round's empty outbox carries none)
    payloads = [p.payload for p in with_rows(parts)]
    payload = None if any(x is None for x in payloads) else np.concatenate(payloads)  # type: ignore[arg-type]
    if all(p.codes is not None and p.dictionary is dictionary for p in parts):
        codes = np.concatenate([p.codes for p in parts])  # type: ignore[misc]
        return Outbox(sender, receiver, None, payload, codes, dictionary)
    return Outbox(sender, receiver, pa.concat_arrays([p.texts() for p in parts]), payload)


def with_rows(parts: list[Any]) -> list[Any]:
    """The parts that hold messages (the last part where none does): an empty part, such as an idle
    round's outbox, has no say in what the whole carries."""
    return [p for p in parts if len(p.sender)] or parts[-1:]


def concat_sent(parts: list[exchange.Outbox]) -> exchange.Outbox:
    """Silo-Bench outboxes as one, row after row."""

    def joined(field: str) -> Any:
        values = [getattr(p, field) for p in with_rows(parts)]
        if any(v is None for v in values):
            return None
        return np.concatenate(values) if isinstance(values[0], np.ndarray) else [x for v in values for x in v]

    return exchange.Outbox(
        np.concatenate([p.sender for p in parts]),
        np.concatenate([p.receiver for p in parts]),
        joined("text"),
        joined("payload"),
        joined("keys"),
    )


def truncated(inbox: Inbox, cut: np.ndarray, chars: int) -> tuple[Inbox, np.ndarray]:
    """The inbox with the deliveries `cut` cut to `chars` characters, and (deliveries,) which of them a
    cut leaves unreadable (a classical algorithm's payload: no text to cut)."""
    if isinstance(inbox, exchange.Delivered):
        if inbox.outbox.text is None:
            return inbox, cut.copy()
        rows = np.flatnonzero(cut)
        copies = inbox.outbox.take(inbox.message[rows])  # each cut delivery gets its own shortened copy
        copies = replace(copies, text=[text[:chars] for text in copies.text or []])
        message = inbox.message.copy()
        message[rows] = len(inbox.outbox) + np.arange(len(rows))
        return replace(inbox, outbox=concat_sent([inbox.outbox, copies]), message=message), np.zeros_like(cut)
    if inbox.text is None:
        return inbox, cut.copy()
    text = pc.if_else(pa.array(cut), pc.utf8_slice_codeunits(inbox.text, 0, chars), inbox.text)
    return Outbox(inbox.sender, inbox.receiver, text), np.zeros_like(cut)
