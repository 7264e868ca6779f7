"""A model job's progress line: cells done, calls made and replayed, tokens, spend and call rate,
written to its log (standard error) every `every_s` seconds while it calls a model, and once at its end."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from hivebench.models import Usage


class Progress:
    def __init__(self, every_s: float, out: TextIO | None = None):
        self.every_s = every_s
        self.out = out
        self.started = self.shown = time.monotonic()
        self.cells = self.cells_done = 0
        self.calls = self.replayed = self.input_tokens = self.output_tokens = 0
        self.usd = 0.0

    def called(self, usage: Usage) -> None:
        self.calls += 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.tick()

    def charged(self, usd: float) -> None:
        self.usd += usd

    def tick(self, replayed: int = 0) -> None:
        self.replayed += replayed
        if time.monotonic() - self.shown >= self.every_s:
            self.show()

    def line(self) -> str:
        minutes = max(time.monotonic() - self.started, 1e-9) / 60
        return (
            f"progress: {self.cells_done} of {self.cells} cells done, {self.calls} calls made and "
            f"{self.replayed} replayed from the response cache, {self.input_tokens:,} input and "
            f"{self.output_tokens:,} output tokens, ${self.usd:.4f}, {self.calls / minutes:.1f} calls/min"
        )

    def show(self) -> None:
        self.shown = time.monotonic()
        print(self.line(), file=self.out or sys.stderr, flush=True)
