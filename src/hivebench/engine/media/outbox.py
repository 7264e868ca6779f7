"""Text messages as parallel arrays, one row per message, and the size cap on them.

An outbox's content is text. A classical policy sends numbers instead (`payload`, what its algorithm
reads), each with its text as a code into a fixed list of texts (`dictionary`), so the record and the
size cap see the same messages as text without writing each one out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class Outbox:
    sender: np.ndarray  # (m,) block agents
    receiver: np.ndarray  # (m,) block agents; -1: whoever the medium's rules reach (a broadcast)
    text: pa.StringArray | None = None  # (m,) the messages, or None when `codes` carry them
    payload: np.ndarray | None = None  # (m, ...) numeric content of a classical policy's messages
    codes: np.ndarray | None = None  # (m,) each message's text as an index into `dictionary`
    dictionary: pa.StringArray | None = None
    # `payload` and `codes` hold one entry per agent, the message it sends to each of its receivers
    per_sender: bool = False

    def texts(self) -> pa.StringArray:
        if self.text is not None:
            return self.text
        assert self.codes is not None and self.dictionary is not None
        return self.dictionary.take(pa.array(self.codes[self.sender] if self.per_sender else self.codes))

    def take(self, rows: np.ndarray) -> Outbox:
        if self.per_sender:
            assert self.payload is not None and self.codes is not None
            per_message = Outbox(
                self.sender, self.receiver, None, self.payload[self.sender], self.codes[self.sender], self.dictionary
            )
            return per_message.take(rows)
        return Outbox(
            self.sender[rows],
            self.receiver[rows],
            None if self.text is None else self.text.take(pa.array(rows)),
            None if self.payload is None else self.payload[rows],
            None if self.codes is None else self.codes[rows],
            self.dictionary,
        )

    @staticmethod
    def empty() -> Outbox:
        none = np.zeros(0, dtype=np.int64)
        return Outbox(none, none, pa.array([], pa.string()))


def cut(texts: pa.StringArray, max_chars: int, marker: str = "") -> tuple[pa.StringArray, np.ndarray]:
    """The texts cut to `max_chars` characters with `marker` added to each cut one, and (m,) which
    were longer."""
    long = pc.utf8_length(texts).to_numpy(zero_copy_only=False) > max_chars
    if not long.any():
        return texts, long
    short = pc.utf8_slice_codeunits(texts, 0, max_chars)
    if marker:
        short = pc.if_else(pa.array(long), pc.binary_join_element_wise(short, marker, ""), short)
    return short, long
