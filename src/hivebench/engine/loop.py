"""The one synchronous round loop of every suite: a job block's cells played in lockstep, with the
method's policy built as its implementation asks."""

from __future__ import annotations

from typing import Any

from hivebench.engine.api import EpisodeRecord, Policy
from hivebench.paths import calls_path
from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind
from hivebench.seeding import Streams
from hivebench.suite import load


def make_policy(cells: list[dict[str, Any]]) -> Policy:
    """The cells' method as it runs their suite, with one random stream per cell; a method that calls
    models also gets each cell's response cache, one that reads text the suite's text view."""
    first = cells[0]
    impl = METHODS[first["method"]["kind"]].impl(first["suite"])
    extra: dict[str, Any] = {}
    if impl.calls_models:
        extra["cache_paths"] = [calls_path(cell) for cell in cells]
    if impl.reads_text:
        extra["view"] = load(SUITE_OBJECTS[first["suite"]].text_view)()
    if impl.adapted:
        adapter = SUITE_OBJECTS[first["suite"]].waggle
        if adapter is None:
            raise ValueError(
                f"{first['method']['kind']} runs on the Waggle runtime, which has no adapter for {first['suite']}"
            )
        extra["adapter"] = load(adapter)()
    policy = impl.load()(first["method"]["params"], Streams([cell["seed"] for cell in cells], "policy"), **extra)
    if not isinstance(policy, Policy):  # before the block plays, rather than when its records are made
        raise TypeError(f"{impl.target} is not a hivebench.engine.api.Policy (decide, columns, summary)")
    return policy


def play_block(cells: list[dict[str, Any]]) -> list[EpisodeRecord]:
    """Play cells that differ only in their seed to the end, in lockstep: each round, observe every
    agent of every episode, decide for all at once, apply. One record per cell."""
    first = cells[0]
    task = task_kind(first["task"]["kind"]).load()(first["task"]["params"], first["population"])
    task.reset([cell["seed"] for cell in cells])
    policy = make_policy(cells)
    while not task.done:
        task.step(policy.decide(task.observe()))
    records = task.record()
    for episode, record in enumerate(records):
        record.agents.update(policy.columns(episode))
        record.summary.update(policy.summary(episode))
        record.tables.update(policy.tables(episode))
    return records


def play(cell: dict[str, Any]) -> EpisodeRecord:
    """Play one cell to the end."""
    return play_block([cell])[0]
