"""SwarmBench's messages: each agent may broadcast one message a round (at most `max_chars`
characters: a longer one is cut to it and counted). It is delivered once, at the start of the next
round, anonymously, to every agent of its episode within Chebyshev distance `radius` of the sender,
where both stand then (after the round's movement). The reference also delivers it to its sender:
`to_sender` (off by default)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MESSAGE_SCHEMA = pa.schema([("step", pa.int32()), ("sender", pa.int32()), ("size", pa.int32()), ("receivers", pa.int32()), ("text", pa.string())])


class Broadcasts:
    def __init__(self, episodes: int, n: int, radius: int, max_chars: int, to_sender: bool):
        self.episodes, self.n, self.radius = episodes, n, radius
        self.max_chars, self.to_sender = max_chars, to_sender
        self.sent: list[tuple[int, np.ndarray, pa.StringArray, np.ndarray]] = []  # (step, senders, texts, receivers each)
        self.truncated = np.zeros(episodes, dtype=np.int64)

    def send(self, step: int, texts: pa.StringArray, present: np.ndarray) -> None:
        """Round `step`'s messages: one entry per agent of the block, null for none."""
        senders = np.flatnonzero(texts.is_valid().to_numpy(zero_copy_only=False) & present)
        chosen = texts.take(pa.array(senders))
        long = pc.greater(pc.utf8_length(chosen), self.max_chars).to_numpy(zero_copy_only=False)
        self.truncated += np.bincount(senders[long] // self.n, minlength=self.episodes)
        chosen = pc.utf8_slice_codeunits(chosen, 0, self.max_chars)
        self.sent.append((step, senders, chosen, np.zeros(len(senders), dtype=np.int64)))

    def deliver(self, position: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, pa.StringArray]:
        """The last round's messages to their receivers, where the agents stand now (call once a round,
        after its movement): (receiver, text) pairs, by receiver then sender."""
        _, senders, texts, receivers = self.sent[-1]
        episode = senders // self.n
        others = episode[:, None] * self.n + np.arange(self.n)[None, :]  # (messages, n): the sender's episode
        near = (np.abs(position[others] - position[senders][:, None, :]).max(axis=2) <= self.radius) & present[others]
        if not self.to_sender:
            near &= others != senders[:, None]
        message, member = np.nonzero(near)
        receiver = others[message, member]
        receivers += near.sum(axis=1)
        order = np.lexsort((message, receiver))
        return receiver[order], texts.take(pa.array(message[order]))

    def sent_counts(self, states: int) -> np.ndarray:
        """(states, agents): whether each agent sent a message in the round leading to each state."""
        sent = np.zeros((states, self.episodes * self.n), dtype=bool)
        for step, senders, _, _ in self.sent:
            sent[step + 1, senders] = True
        return sent

    def table(self, episode: int) -> pa.Table:
        """One row per message of the episode: round, sender (within the episode), size, how many heard it, text."""
        parts = []
        for step, senders, texts, receivers in self.sent:
            mine = np.flatnonzero(senders // self.n == episode)
            parts.append(pa.table({
                "step": pa.array(np.full(len(mine), step, dtype=np.int32)),
                "sender": pa.array((senders[mine] % self.n).astype(np.int32)),
                "size": pa.array(pc.utf8_length(texts.take(pa.array(mine))).to_numpy(zero_copy_only=False).astype(np.int32)),
                "receivers": pa.array(receivers[mine].astype(np.int32)),
                "text": texts.take(pa.array(mine)),
            }, schema=MESSAGE_SCHEMA))  # fmt: skip
        return pa.concat_tables(parts) if parts else MESSAGE_SCHEMA.empty_table()
