"""Counterfactual replays: a finished cell played again with some of its agents switched to another
method (one that calls no model), every other agent keeping the cell's method and the random streams
it drew from, so that a call whose prompt the switch left unchanged is answered from the cell's
response cache and only the calls whose prompts it changed are made anew.

The counterfactual is a mixed population (hivebench.agents.mixed) of the cell's method and the
switched-in ones, written beside the cell as method `<method>@swap-<agents>-<other>`; the member that
plays the cell's method answers from a copy of the cell's response cache.

Before it runs, a forecast: the episode is played dry, every call the cache cannot answer given the
reply its agent gave in the original episode at that point (so the count is exact where the new replies
change nothing other agents see), and every call from the first changed one on counted twice (a
repair each) for the bound. What the switch will really cost depends on the new replies, which no one
knows before they are made: the replay's count lies between the two, and equals a forecast given its
own replies (`recorded_replies` of the counterfactual).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hivebench.agents.mixed import MIXED, member_cell
from hivebench.engine.loop import play_block, policy_stream
from hivebench.engine.writer import write_episode
from hivebench.models import ChatRequest, ChatResult, OnResult, Usage
from hivebench.models.cache import cache_records
from hivebench.models.open import answering
from hivebench.paths import EPISODES_DIR, calls_path, cell_path
from hivebench.registry import METHODS
from hivebench.spend.meter import Meter, Settings, metering

Replies = dict[int, list[ChatResult]]  # a request's sample index -> the replies to its asks, in order


class CounterfactualError(ValueError):
    """A switch that cannot be replayed (an agent out of range, a method that calls a model, a cell
    with no response cache)."""


def swapped_cell(cell: dict[str, Any], swaps: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The cell with each agent of `swaps` played by its resolved method, the rest by the cell's own."""
    n = cell["population"]
    if not METHODS[cell["method"]["kind"]].impl(cell["suite"]).calls_models:
        raise CounterfactualError(f"method {cell['method']['name']} calls no model: there is no call to replay")
    by_method: dict[str, tuple[dict[str, Any], list[int]]] = {}
    for agent, method in sorted(swaps.items()):
        if not 0 <= agent < n:
            raise CounterfactualError(f"agent {agent}: the cell has agents 0 to {n - 1}")
        if METHODS[method["kind"]].impl(cell["suite"]).calls_models:
            raise CounterfactualError(f"method {method['name']} calls a model: only methods that call none switch in")
        by_method.setdefault(method["name"], (method, []))[1].append(agent)
    if len(swaps) == n:
        raise CounterfactualError("every agent is switched: no call of the cell's method is left to replay")
    own = {"method": cell["method"], "share": "rest", "stream": policy_stream(cell)}
    others = [{"method": method, "share": agents} for method, agents in by_method.values()]
    label = "-".join(f"{'+'.join(map(str, agents))}-{name}" for name, (_, agents) in by_method.items())
    version = METHODS[MIXED].impl(cell["suite"]).version
    method = {"name": f"{cell['method']['name']}@swap-{label}", "kind": MIXED, "version": version}
    return {**cell, "method": {**method, "params": {"members": [own, *others]}}}


def own_cache(swapped: dict[str, Any]) -> str:
    """The response cache of the counterfactual's member that plays the cell's own method."""
    return calls_path(member_cell(swapped, swapped["method"]["params"]["members"][0]))


class Answers:
    """A dry run's backend, in the place of the cell's model (its name and model, so that requests key
    as they did): each request answered from `replies` by its sample index, ask after ask; `asked`
    counts what it answered."""

    cacheable = True

    def __init__(self, name: str, model: str, replies: Replies):
        self.name, self.model, self.replies = name, model, replies
        self.asked: dict[int, int] = {}

    def complete(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        results = [self.answer(request) for request in requests]
        for index, result in enumerate(results):
            on_result(index, result)
        return results

    def answer(self, request: ChatRequest) -> ChatResult:
        ask = self.asked.get(request.sample, 0)
        self.asked[request.sample] = ask + 1
        known = self.replies.get(request.sample, [])
        return known[ask] if ask < len(known) else ChatResult("", Usage())  # never asked before: invalid


class Recorder(Answers):
    """Answers from a finished cell's cache by key, and records each request's reply by its sample."""

    def __init__(self, name: str, model: str, entries: dict[str, ChatResult]):
        super().__init__(name, model, {})
        self.entries = entries

    def answer(self, request: ChatRequest) -> ChatResult:
        result = self.entries.get(request.key(self.name, self.model))
        if result is None:
            raise CounterfactualError("the cell's response cache lacks a call it made: it cannot be replayed")
        self.replies.setdefault(request.sample, []).append(result)
        return result


class Tally:
    """A dry run's count of each batch of calls: (answered from the cache, asked of the backend),
    in order (what the Decider reports to a job's progress line)."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    def tick(self, replayed: int = 0) -> None:
        self.batches.append([replayed, 0])

    def called(self, usage: Usage) -> None:
        self.batches[-1][1] += 1


@contextlib.contextmanager
def dry(cell: dict[str, Any], backend: Answers) -> Iterator[tuple[dict[str, Any], Tally]]:
    """Inside: the cell as a scratch study of its own (its caches under results/episodes/<scratch>/,
    removed after; the same streams: none depends on the study's name), every model answered by
    `backend`, each batch tallied, no episode progress logged (a dry run's rounds are not the job's)."""
    scratch = f".dry-{secrets.token_hex(6)}"  # no study's name: a name starts with a letter or digit
    quiet = logging.getLogger("hivebench.llm")
    level = quiet.level
    with tempfile.TemporaryDirectory() as spend, answering(backend):
        meter = Meter(scratch, "dry", Settings(), Path(spend))
        meter.progress = Tally()  # type: ignore[assignment]  # the Decider's two calls on it, counted
        quiet.setLevel(logging.WARNING)
        try:
            with metering(meter):
                yield {**cell, "study": scratch}, meter.progress
        finally:
            quiet.setLevel(level)
            shutil.rmtree(Path(EPISODES_DIR.split("{study}")[0]) / scratch, ignore_errors=True)


def model_of(cache: Path) -> tuple[str, dict[str, ChatResult]]:
    """The model a cell's response cache was filled by (its records' `model`) and its replies by key."""
    models, entries = set(), {}
    for record, result in cache_records(cache):
        models.add(record.get("model", ""))
        entries[record["key"]] = result
    if len(models) != 1:
        raise CounterfactualError(f"{cache}: {'no calls' if not models else 'calls of several models'} to replay")
    return models.pop(), entries


def backend_name(cell: dict[str, Any]) -> str:
    """The backend of the model a cell's calls went to (a counterfactual's: its own member's)."""
    method = cell["method"]["params"]["members"][0]["method"] if cell["method"]["kind"] == MIXED else cell["method"]
    return method["params"]["backend"]


def recorded_replies(cell: dict[str, Any], cache: Path) -> Replies:
    """A finished cell's replies by sample index, as its episode asked them (a dry run of the cell on
    an empty cache, each call answered from `cache`; a counterfactual's, from its own member's)."""
    model, entries = model_of(cache)
    recorder = Recorder(backend_name(cell), model, entries)
    with dry(cell, recorder) as (scratch, _):
        play_block([scratch])
    return recorder.replies


@dataclass(frozen=True)
class Forecast:
    new_calls: int  # if each new reply acts as its agent's original reply did
    # every call from the first changed one on new, each with a repair: a bound where an episode asks
    # as many calls whatever the replies (LoopBench, AgentsNet), an estimate where replies end it sooner
    # or later or ask more (Silo-Bench's submissions, SwarmSys's events)
    at_most: int


def forecast(swapped: dict[str, Any], cache: Path, replies: Replies) -> Forecast:
    """The new calls of the counterfactual `swapped` over `cache` (the original cell's, or the
    counterfactual's own after a replay), each call the cache cannot answer given the reply in
    `replies` (the original episode's, by sample index)."""
    model, _ = model_of(cache)
    answers = Answers(backend_name(swapped), model, replies)
    with dry(swapped, answers) as (scratch, tally):
        own = Path(own_cache(scratch))
        own.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cache, own)
        play_block([scratch])
    new = sum(asked for _, asked in tally.batches)
    first = next((i for i, (_, asked) in enumerate(tally.batches) if asked), len(tally.batches))
    return Forecast(new, 2 * sum(hits + asked for hits, asked in tally.batches[first:]))


def replay(swapped: dict[str, Any], cache: Path) -> tuple[dict[str, Any], int]:
    """Play the counterfactual for real (its own member's cache starts as a copy of the cell's; a
    rerun keeps the calls it made), write it beside the cell; its summary and the calls it made."""
    own = Path(own_cache(swapped))
    if not own.exists():
        own.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cache, own)
    before = sum(1 for _ in cache_records(own))
    summary = write_episode(swapped, cell_path(swapped))
    return summary, sum(1 for _ in cache_records(own)) - before
