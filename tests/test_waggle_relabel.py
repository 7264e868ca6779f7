"""Proposition 1 of the Waggle paper as a conformance check: relabelling the nodes (their starting
state, and the node-indexed random draws carried with them) relabels the episode's records and leaves
its scores unchanged, for FixedSwarm and for a scripted controller reading six-part local views.

SwarmBench: an agent's label is its index; relabelling by a permutation sigma starts agent sigma(i)
where agent i started (with its light), and gives it agent i's row of every node-indexed draw."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from hivebench.agents.waggle.runtime import ViewRuntime
from hivebench.agents.waggle.view import forbidden_keys
from hivebench.cells import expand_blocks
from hivebench.config import validate
from hivebench.engine import loop
from hivebench.engine.writer import stored
from hivebench.seeding import Streams
from hivebench.suites.swarmbench import TASKS, levels
from hivebench.suites.swarmbench import task as swarm_task

N = 8


class Relabelled(Streams):
    """Node-indexed draws carried to their images: a draw of a row per agent puts agent i's row at sigma(i)."""

    def __init__(self, seeds: list[int], name: str, sigma: np.ndarray):
        super().__init__(seeds, name)
        self.sigma = sigma

    def child(self, name: str) -> Streams:
        return Relabelled(self.seeds, f"{self.name}/{name}", self.sigma)

    def _draw(self, kind, shape, split):
        out = super()._draw(kind, shape, split)
        assert shape[0] == len(self.sigma), f"a draw of shape {shape} is not a row per agent"
        moved = np.empty_like(out)
        moved[self.sigma] = out
        return moved


class Scripted(ViewRuntime):
    """A controller that reads only its six-part view: it writes what it sees, else relays the
    strongest incident trace it can lower; it commits to a claim two channels carry, and otherwise
    follows its proposal."""

    views_seen: list[dict[str, Any]] = []

    def reply(self, views: list[dict[str, Any]]) -> list[Any]:
        Scripted.views_seen.extend(views)
        return [self.decide_one(view) for view in views]

    @staticmethod
    def decide_one(view: dict[str, Any]) -> dict[str, Any]:
        record: dict[str, Any] = {
            "task_action": view["worker_proposal"],
            "response": None,
            "deposits": [],
            "commit": None,
        }
        traces = sorted(view["incident_fields"], key=lambda t: (-t["support"], t["claim"], t["channel"]))
        lowerable = [t for t in traces if min(t["support"], t["novelty"]) >= 1 and t["ttl"] >= 2 and not t["conflict"]]
        own = [e for e in view["private_state"]["evidence"] if not e.get("refuted")]
        if own:
            record["deposits"] = [{"channel": 0, "novelty": 4, "support": 4, "conflict": 0, "ttl": 3, **own[0]}]
        elif lowerable:
            t = lowerable[0]
            relay = {**t, "channel": 0, "support": t["support"] - 1, "novelty": t["novelty"] - 1, "ttl": t["ttl"] - 1}
            record["deposits"] = [relay]
        channels: dict[int, set[int]] = {}
        for t in traces:
            channels.setdefault(t["claim"], set()).add(t["channel"])
        ready = sorted(c for c, chans in channels.items() if len(chans) >= 2)
        if ready:
            record["commit"] = {"claim": ready[0], "confidence_bin": 2}
            record["execution_intent"] = "FIELD"
        return record


def cells(task: str, method: dict[str, Any], seed: int = 3) -> list[dict[str, Any]]:
    config = {
        "tasks": {"t": {"kind": "swarmbench", "task": task, "rounds": 25}},
        "methods": {"m": method},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": [seed]}},
    }
    return list(expand_blocks(validate(config, "relabel.yaml"), "relabel.yaml")["s"][0].cells())


def play(cell_list, monkeypatch, sigma: np.ndarray, policy=None):
    original = levels.played_level

    def relabelled_level(*args, **kwargs):
        level = original(*args, **kwargs)
        agents = np.empty_like(level.agents)
        agents[sigma] = level.agents
        lights = None
        if level.lights is not None:
            lights = np.empty_like(level.lights)
            lights[sigma] = level.lights
        return levels.Level(level.terrain, agents, level.prey, lights, level.box)

    monkeypatch.setattr(swarm_task, "played_level", relabelled_level)
    monkeypatch.setattr(loop, "Streams", lambda seeds, name: Relabelled(seeds, name, sigma))
    if policy is not None:
        impl = loop.METHODS["fixedswarm"].impl("swarmbench")
        monkeypatch.setattr(type(impl), "load", lambda self: policy)
    try:
        return loop.play_block(cell_list)[0]
    finally:
        monkeypatch.undo()


def relabel(table: pa.Table, columns: tuple[str, ...], sigma: np.ndarray) -> list[tuple]:
    """The table's rows as sorted tuples, with the agent columns mapped through sigma."""
    data = stored(table).to_pydict()
    for column in columns:
        data[column] = [int(sigma[v]) for v in data[column]]
    names = sorted(data)
    return sorted(zip(*(map(str, data[name]) for name in names)))


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("controller", ["fixedswarm", "scripted"])
def test_relabelling_the_nodes_relabels_the_records_and_keeps_the_scores(task, controller, monkeypatch):
    cell_list = cells(task, {"kind": "fixedswarm"})
    policy = Scripted if controller == "scripted" else None
    identity = np.arange(N)
    sigma = np.random.default_rng(11).permutation(N)
    a = play(cell_list, monkeypatch, identity, policy)
    b = play(cell_list, monkeypatch, sigma, policy)
    assert a.summary == b.summary  # the score, the telemetry, every count
    assert relabel(pa.table(a.agents), ("agent",), sigma) == relabel(pa.table(b.agents), ("agent",), identity)
    assert relabel(a.table("traces"), ("writer", "receiver"), sigma) == relabel(
        b.table("traces"), ("writer", "receiver"), identity
    )
    if task in ("pursuit", "foraging", "transport"):
        assert a.summary["traces_written"] > 0  # the field was used, so the check could fail


def test_the_scripted_controller_saw_only_six_part_views_without_forbidden_keys(monkeypatch):
    Scripted.views_seen = []
    play(cells("pursuit", {"kind": "fixedswarm"}), monkeypatch, np.arange(N), Scripted)
    assert Scripted.views_seen
    assert any(view["incident_fields"] for view in Scripted.views_seen)
    for view in Scripted.views_seen:
        assert forbidden_keys(view) == []
        assert len(view) == 6
