"""A job's meter: its study's budgets, the ledger, the endpoints' paces and its progress line, which
every call it makes to a model server passes through (hivebench.models.remote asks `current()`).

The run's settings (budgets, prices, rate limits, the progress interval) are a file beside the ledger
that the workflow writes as it starts (hivebench.spend.run): not job parameters, so raising a budget
reruns no job that is done. A job run without one records its calls in the ledger, uncapped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hivebench.models import ChatRequest, Usage, approximate_count, token_cost
from hivebench.spend.ledger import SPEND_DIR, BudgetReached, Budgets, Charge, Hold, Ledger, LedgerError
from hivebench.spend.progress import Progress
from hivebench.spend.rates import Limit, Pace

SETTINGS = "settings.json"
PROGRESS_S = 30.0
# A prompt's tokens at most: a byte-level tokenizer gives no token less than a byte, and a chat template
# adds its role markers per message and its frame once (generous for the templates of today's models).
TOKENS_PER_MESSAGE, TOKENS_PER_CHAT = 16, 64
WAIT_S = 0.2  # between asks for room in the budget while calls in flight hold it


@dataclass(frozen=True)
class Settings:
    budgets: Budgets = field(default_factory=Budgets)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    rate_limits: tuple[dict[str, Any], ...] = ()
    progress_s: float = PROGRESS_S

    def to_json(self) -> dict[str, Any]:
        return {
            "budgets": self.budgets.to_json(),
            "prices": self.prices,
            "rate_limits": list(self.rate_limits),
            "progress_s": self.progress_s,
        }

    @classmethod
    def read(cls, folder: Path = SPEND_DIR) -> Settings:
        path = folder / SETTINGS
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                Budgets.from_json(data["budgets"]), data["prices"], tuple(data["rate_limits"]), data["progress_s"]
            )
        except FileNotFoundError:
            return cls()
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise LedgerError(
                f"{path}: not the run's spend settings ({exc}); rerun snakemake to write it again"
            ) from None

    def limit(self, base_url: str | None, model: str) -> tuple[str, Limit]:
        """The schedule a model's calls at a base URL share, and its limit: the first entry naming the
        URL and this model (the model's own schedule), or the URL alone (every model at the URL shares
        one, as a provider's limits and retry-after hold for the key); no limit without an entry."""
        for entry in self.rate_limits:
            if entry["base_url"].rstrip("/") == (base_url or "").rstrip("/") and entry.get("model") in (None, model):
                return entry.get("model", "*"), Limit(entry.get("requests_per_minute"), entry.get("tokens_per_minute"))
        return "*", Limit()


def worst_prompt_tokens(request: ChatRequest) -> int:
    return TOKENS_PER_CHAT + sum(len(m["content"].encode("utf-8")) + TOKENS_PER_MESSAGE for m in request.messages)


def expected_tokens(request: ChatRequest) -> int:
    """A call's tokens as providers count them against a tokens-per-minute limit: its prompt as
    `hivebench estimate` counts a server's (characters / 4, and 4 per message) and its cap of output
    tokens."""
    return approximate_count(request.messages) + request.sampling.max_tokens


class Gate:
    """One endpoint's calls for one job: each held against the budgets, paced, then settled."""

    def __init__(self, meter: Meter, base_url: str | None, served: str, priced: str, lapse_s: float):
        self.meter, self.priced, self.lapse_s = meter, priced, lapse_s
        self.price = meter.settings.prices.get(priced)
        # Every endpoint has its shared schedule: a server's retry-after holds off every job, limit or none.
        shared, limit = meter.settings.limit(base_url, served)
        self.pace = Pace(meter.folder / "rates", (base_url or "").rstrip("/"), shared, limit)

    def cost(self, input_tokens: int, output_tokens: int) -> Charge:
        usd = 0.0 if self.price is None else token_cost(self.price, input_tokens, output_tokens)
        return Charge(usd, input_tokens, output_tokens)

    async def hold(self, request: ChatRequest) -> Hold:
        """Room in the budgets for the request's worst case; raises BudgetReached where there is none."""
        worst = self.cost(worst_prompt_tokens(request), request.sampling.max_tokens)
        while True:
            if self.meter.stopped is not None:  # the job stops at its first refusal
                raise self.meter.stopped
            try:
                hold = self.meter.ledger.hold(self.meter.study, self.meter.method, self.priced, worst, self.lapse_s)
            except BudgetReached as reached:
                self.meter.stopped = reached
                raise
            if hold is not None:
                return hold
            await asyncio.sleep(WAIT_S)

    async def paced(self, request: ChatRequest) -> None:
        """Wait for the request's turn at its endpoint's rate limit."""
        await asyncio.sleep(self.pace.take(expected_tokens(request)))

    async def unpaused(self) -> None:
        """Wait out a server's pause that began after the request took its turn."""
        await asyncio.sleep(self.pace.pause_left())

    def hold_off(self, seconds: float) -> None:
        self.pace.hold_off(seconds)

    def renew(self, hold: Hold) -> None:
        self.meter.ledger.renew(hold, self.lapse_s)

    def settle(self, hold: Hold, usage: Usage | None) -> None:
        """What the call cost: as the server counted it; its worst case where the server counted
        nothing or no count came (None: cut off mid-call)."""
        if usage is None or (usage.input_tokens == 0 and usage.output_tokens == 0):
            cost = hold.worst
        else:
            cost = self.cost(usage.input_tokens, usage.output_tokens)
        self.meter.ledger.settle(hold, cost)
        self.meter.progress.charged(cost.usd)

    def release(self, hold: Hold) -> None:
        """A call that failed for good (no reply): nothing counted."""
        self.meter.ledger.settle(hold, None)


class Meter:
    def __init__(self, study: str, method: str, settings: Settings, folder: Path = SPEND_DIR):
        self.study, self.method, self.settings, self.folder = study, method, settings, folder
        self.ledger = Ledger(settings.budgets, folder)
        self.progress = Progress(settings.progress_s)
        self.stopped: BudgetReached | None = None  # the refusal that stops this job

    def gate(self, base_url: str | None, served: str, priced: str, lapse_s: float) -> Gate:
        return Gate(self, base_url, served, priced, lapse_s)


_current: Meter | None = None


def current() -> Meter | None:
    """The meter of the job this process runs, if any."""
    return _current


@contextlib.contextmanager
def metering(meter: Meter) -> Iterator[Meter]:
    global _current
    outer, _current = _current, meter
    try:
        yield meter
    finally:
        _current = outer
