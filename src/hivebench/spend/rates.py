"""Rate limits per endpoint (a base URL and model), shared by every job that calls it: one small state
file per endpoint beside the ledger, read and rewritten under its own lock.

The limit is kept as a schedule (the generic cell rate algorithm, with no burst): each call takes the
next free start time, and moves it on by 60 / requests_per_minute seconds and by its tokens' share of
tokens_per_minute, so calls from any number of jobs start evenly spaced at the limit. A server's
`retry-after` moves the schedule past the wait it asks for: every job's next call waits it out.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from hivebench.ids import digest
from hivebench.spend.ledger import write_locked


@dataclass(frozen=True)
class Limit:
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None


class Pace:
    """The shared schedule of one endpoint's calls."""

    def __init__(self, folder: Path, base_url: str, model: str, limit: Limit):
        name = digest({"base_url": base_url, "model": model})[:16]
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{name}.json"
        self.lock = FileLock(folder / f"{name}.lock")
        self.limit = limit
        self.endpoint = {"base_url": base_url, "model": model}

    def _read(self) -> tuple[float, float]:
        """(the next free start, the end of a server's pause)."""
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return 0.0, 0.0
        return float(state["next"]), float(state.get("paused", 0.0))

    def take(self, tokens: int) -> float:
        """Book a call of `tokens` tokens: the seconds to wait before sending it. Without a limit it
        books nothing: it only waits out a server's pause (the file is replaced whole: no lock)."""
        if not self.limit.requests_per_minute and not self.limit.tokens_per_minute:
            return self.pause_left()
        spacing = 0.0
        if self.limit.requests_per_minute:
            spacing = max(spacing, 60.0 / self.limit.requests_per_minute)
        if self.limit.tokens_per_minute:
            spacing = max(spacing, 60.0 * tokens / self.limit.tokens_per_minute)
        with self.lock:
            now = time.time()
            following, paused = self._read()
            start = max(now, following, paused)
            write_locked({**self.endpoint, "next": start + spacing, "paused": paused}, self.path)
        return start - now

    def pause_left(self) -> float:
        """The seconds left of a server's pause (a call that booked its turn before the pause began
        waits it out too, right before it is sent)."""
        return max(0.0, self._read()[1] - time.time())

    def hold_off(self, seconds: float) -> None:
        """A server asked for a pause (`retry-after`): no call of any job starts before it ends."""
        with self.lock:
            following, paused = self._read()
            until = time.time() + seconds
            if until > paused:
                write_locked({**self.endpoint, "next": max(following, until), "paused": until}, self.path)
