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
    """Node- and edge-indexed draws carried to their images: a draw of a row per agent puts agent i's
    row at sigma(i); one of a row per directed edge (CSR position), edge e's at `edges[e]`."""

    def __init__(self, seeds: list[int], name: str, sigma: np.ndarray, edges: np.ndarray | None = None):
        super().__init__(seeds, name)
        self.sigma, self.edges = sigma, edges

    def child(self, name: str) -> Streams:
        return Relabelled(self.seeds, f"{self.name}/{name}", self.sigma, self.edges)

    def _draw(self, kind, shape, split):
        out = super()._draw(kind, shape, split)
        if shape[0] == len(self.sigma):
            image = self.sigma
        else:
            assert self.edges is not None and shape[0] == len(self.edges), (
                f"a draw of shape {shape} is not per node or edge"
            )
            image = self.edges
        moved = np.empty_like(out)
        moved[image] = out
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
    assert a.summary["invalid_records"] == 0
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


# Silo-Bench: an agent's label is its index: relabelling by sigma gives agent sigma(i) agent i's shard
# and ports (the graph carried with it). A message cap no flood reaches keeps the packing (in owner
# order) out of it.
SILO_TASKS = ("I-09", "II-11", "III-23", "I-04", "III-26")


def silo_cells(task: str, method: dict[str, Any]) -> list[dict[str, Any]]:
    config = {
        "tasks": {
            "t": {"kind": "silobench", "task": task, "topology": "regular3", "rounds": 9, "message_chars": 10**6}
        },
        "methods": {"m": method},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": [5]}},
    }
    return list(expand_blocks(validate(config, "relabel.yaml"), "relabel.yaml")["s"][0].cells())


def play_silo(cell_list, monkeypatch, sigma: np.ndarray, policy=None):
    from hivebench.engine.block import GraphBlock, csr
    from hivebench.suites.silobench import task as silo_task
    from hivebench.suites.silobench.instances import PROBLEMS
    from hivebench.suites.silobench.network import Topology
    from hivebench.suites.silobench.problems import Instance

    instance, block = silo_task.instance, silo_task.block

    def relabelled_instance(task, n, seed):
        inst = instance(task, n, seed)
        shards = [None] * n
        for i, shard in enumerate(inst.shards):
            shards[sigma[i]] = shard
        return Instance(task, n, tuple(shards), inst.public, PROBLEMS[task].solve(shards, inst.public))

    def relabelled_block(kind, n, seeds):
        graphs = []
        for g in block(kind, n, seeds).graphs:
            edges = np.stack([np.repeat(np.arange(n), np.diff(g.indptr)), g.indices], axis=1)
            indptr, indices = csr(sigma[edges[edges[:, 0] < edges[:, 1]]], n)
            graphs.append(Topology(n, indptr, indices, g.diameter))
        return GraphBlock(graphs)

    monkeypatch.setattr(silo_task, "instance", relabelled_instance)
    monkeypatch.setattr(silo_task, "block", relabelled_block)
    monkeypatch.setattr(loop, "Streams", lambda seeds, name: Relabelled(seeds, name, sigma))
    if policy is not None:
        impl = loop.METHODS["fixedswarm"].impl("silobench")
        monkeypatch.setattr(type(impl), "load", lambda self: policy)
    try:
        return loop.play_block(cell_list)[0]
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("task", SILO_TASKS)
@pytest.mark.parametrize("controller", ["fixedswarm", "scripted"])
def test_relabelling_a_silobench_episode_relabels_its_records_and_keeps_its_scores(task, controller, monkeypatch):
    cell_list = silo_cells(task, {"kind": "fixedswarm"})
    policy = Scripted if controller == "scripted" else None
    identity, sigma = np.arange(N), np.random.default_rng(7).permutation(N)
    a = play_silo(cell_list, monkeypatch, identity, policy)
    b = play_silo(cell_list, monkeypatch, sigma, policy)
    assert a.summary["success"] == 1.0  # the flood gathers everything in 9 rounds
    assert a.summary == b.summary
    assert a.summary["invalid_records"] == 0
    # an answer that names agents by index renames with them; the rest is per agent, carried
    same = [c for c in a.agents if c not in ("answer",)]
    assert relabel(pa.table({c: a.agents[c] for c in same}), ("agent",), sigma) == relabel(
        pa.table({c: b.agents[c] for c in same}), ("agent",), identity
    )
    assert relabel(a.table("traces"), ("writer", "receiver"), sigma) == relabel(
        b.table("traces"), ("writer", "receiver"), identity
    )
    # a message's text names the owners of the shards it carries (renamed with them): compared without it
    untexted = [c for c in a.table("messages").column_names if c != "text"]
    assert relabel(a.table("messages").select(untexted), ("sender", "receiver"), sigma) == relabel(
        b.table("messages").select(untexted), ("sender", "receiver"), identity
    )
    assert a.summary["traces_written"] > 0


# AgentsNet: an agent's label is its index: relabelling by sigma gives agent sigma(i) agent i's name and
# edges; a draw per directed edge goes to the edge's image.
NET_PROBLEMS = ("coloring", "vertex_cover", "matching", "leader_election", "consensus")


def net_cells(problem: str, method: dict[str, Any]) -> list[dict[str, Any]]:
    config = {
        "tasks": {"t": {"kind": "agentsnet", "problem": problem, "family": "delaunay"}},
        "methods": {"m": method},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": [4]}},
    }
    return list(expand_blocks(validate(config, "relabel.yaml"), "relabel.yaml")["s"][0].cells())


def play_net(cell_list, monkeypatch, sigma: np.ndarray, policy=None):
    from hivebench.suites.agentsnet import task as net_task
    from hivebench.suites.agentsnet.graphs import graph_from_edges

    original = net_task.instance
    graph = original("delaunay", N, 4)
    relabelled = graph_from_edges(sigma[graph.edges], tuple(graph.names[i] for i in np.argsort(sigma)))
    keys = np.repeat(np.arange(N), np.diff(relabelled.indptr)) * N + relabelled.indices  # sorted: CSR order
    src = np.repeat(np.arange(N), np.diff(graph.indptr))
    edges = np.searchsorted(keys, sigma[src] * N + sigma[graph.indices])

    monkeypatch.setattr(net_task, "instance", lambda family, n, seed: relabelled)
    monkeypatch.setattr(loop, "Streams", lambda seeds, name: Relabelled(seeds, name, sigma, edges))
    if policy is not None:
        impl = loop.METHODS["fixedswarm"].impl("agentsnet")
        monkeypatch.setattr(type(impl), "load", lambda self: policy)
    try:
        return loop.play_block(cell_list)[0]
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("problem", NET_PROBLEMS)
@pytest.mark.parametrize("controller", ["fixedswarm", "scripted"])
def test_relabelling_an_agentsnet_episode_relabels_its_records_and_keeps_its_scores(problem, controller, monkeypatch):
    cell_list = net_cells(problem, {"kind": "fixedswarm"})
    policy = Scripted if controller == "scripted" else None
    identity, sigma = np.arange(N), np.random.default_rng(5).permutation(N)
    a = play_net(cell_list, monkeypatch, identity, policy)
    b = play_net(cell_list, monkeypatch, sigma, policy)
    assert a.summary == b.summary
    assert a.summary["invalid_records"] == 0
    assert relabel(pa.table(a.agents), ("agent",), sigma) == relabel(pa.table(b.agents), ("agent",), identity)
    assert relabel(a.table("traces"), ("writer", "receiver"), sigma) == relabel(
        b.table("traces"), ("writer", "receiver"), identity
    )
    assert relabel(a.table("messages"), ("sender", "receiver"), sigma) == relabel(
        b.table("messages"), ("sender", "receiver"), identity
    )
    if problem != "matching":
        assert a.summary["traces_written"] > 0
