"""Radius broadcast on a grid (SwarmBench): each agent may broadcast one message a round (at most
`max_chars` characters: a longer one is cut to it and counted). It is delivered once, at the start of
the next round, anonymously, to every agent of its episode within Chebyshev distance `radius` of the
sender, where both stand then (after the round's movement: `deliver`'s `where`). The reference also
delivers it to its sender (`to_sender`), and marks a cut message with "..." (`marker`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.engine.block import Block
from hivebench.engine.media.outbox import Outbox, cut

MESSAGE_SCHEMA = pa.schema(
    [
        ("step", pa.int32()),
        ("sender", pa.int32()),
        ("size", pa.int32()),
        ("receivers", pa.int32()),
        ("text", pa.string()),
    ]
)


def in_reach(
    position: np.ndarray, present: np.ndarray, senders: np.ndarray, n: int, radius: int, to_sender: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Who each sender reaches: (others, near), both (senders, n): `others` every agent of the
    sender's episode, `near` whether it is on the map within Chebyshev distance `radius` of the sender
    (the sender itself only with `to_sender`)."""
    others = (senders // n)[:, None] * n + np.arange(n)[None, :]
    near = (np.abs(position[others] - position[senders][:, None, :]).max(axis=2) <= radius) & present[others]
    if not to_sender:
        near &= others != senders[:, None]
    return others, near


class RadiusBroadcast:
    """A `Medium`: an outbox holds one row per speaking agent (receiver -1); an inbox one row per
    (receiver, message), by receiver then sender."""

    def __init__(self, block: Block, radius: int, max_chars: int, to_sender: bool, marker: str = ""):
        self.block = block
        self.radius, self.max_chars, self.to_sender, self.marker = radius, max_chars, to_sender, marker
        # (step, messages, how many heard each) per round sent
        self.sent: list[tuple[int, Outbox, np.ndarray]] = []
        self.pending: tuple[int, Outbox, np.ndarray] | None = None
        # per round delivered: (step, deliveries per receiver); int16 holds them: at most
        # (2 * radius + 1)^2 agents stand within reach of one, under 2^15 for every view the schema allows
        self.heard: list[tuple[int, np.ndarray]] = []
        self.truncated = np.zeros(block.episodes, dtype=np.int64)
        self.messages = np.zeros(block.episodes, dtype=np.int64)

    def send(self, step: int, outbox: Outbox) -> None:
        """Round `step`'s messages, at most one per agent."""
        assert outbox.text is not None
        text, long = cut(outbox.text, self.max_chars, self.marker)
        self.truncated += self.block.per_episode(agents=outbox.sender[long])
        self.messages += self.block.per_episode(agents=outbox.sender)
        self.pending = (
            step,
            Outbox(outbox.sender, outbox.receiver, text),
            np.zeros(len(outbox.sender), dtype=np.int64),
        )
        self.sent.append(self.pending)

    def deliver(self, where: tuple[np.ndarray, np.ndarray] | None = None) -> Outbox:
        """The messages sent since the last delivery to the agents within reach, where they stand now:
        `where` is every agent's (row, column) position and whether it is still on the map."""
        if self.pending is None:
            return Outbox.empty()
        assert where is not None
        (step, outbox, receivers), self.pending = self.pending, None
        position, present = where
        senders = outbox.sender
        others, near = in_reach(position, present, senders, self.block.n, self.radius, self.to_sender)
        message, member = np.nonzero(near)
        receiver = others[message, member]
        receivers += near.sum(axis=1)
        self.heard.append((step, np.bincount(receiver, minlength=self.block.agents).astype(np.int16)))
        order = np.lexsort((message, receiver))
        return Outbox(senders[message[order]], receiver[order], outbox.text.take(pa.array(message[order])))

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        """(rounds, agents): whether each agent sent a message in each round (at most one), and how
        many it heard of them."""
        sent = np.zeros((rounds, self.block.agents), dtype=bool)
        for step, outbox, _ in self.sent:
            sent[step, outbox.sender] = True
        received = np.zeros((rounds, self.block.agents), dtype=np.int16)
        for step, heard in self.heard:
            received[step] = heard
        return {"sent": sent, "received": received}

    def counts(self, episode: int) -> dict[str, int]:
        return {"messages": int(self.messages[episode]), "truncated_messages": int(self.truncated[episode])}

    def tables(self, episode: int) -> dict[str, pa.Table]:
        """`messages`: one row per message of the episode: round, sender (within the episode), size,
        how many heard it, text."""
        n, parts = self.block.n, []
        for step, outbox, receivers in self.sent:
            mine = np.flatnonzero(outbox.sender // n == episode)
            assert outbox.text is not None
            texts = outbox.text.take(pa.array(mine))
            parts.append(
                pa.table(
                    {
                        "step": pa.array(np.full(len(mine), step, dtype=np.int32)),
                        "sender": pa.array((outbox.sender[mine] % n).astype(np.int32)),
                        "size": pa.array(pc.utf8_length(texts).to_numpy(zero_copy_only=False).astype(np.int32)),
                        "receivers": pa.array(receivers[mine].astype(np.int32)),
                        "text": texts,
                    },
                    schema=MESSAGE_SCHEMA,
                )
            )
        return {"messages": pa.concat_tables(parts) if parts else MESSAGE_SCHEMA.empty_table()}
