"""Proposition 1 of the Waggle paper as a conformance check, on every suite with a Waggle adapter:
relabelling the nodes (the graph and every node-indexed state, and the node- and edge-indexed random
draws carried to their images) relabels the episode's records and leaves its scores and counts
unchanged, for FixedSwarm and for a scripted controller reading six-part local views.

An agent's label is its index. Relabelling by a permutation sigma gives agent sigma(i) what agent i
had: SwarmBench, its starting cell (and light); Silo-Bench, its shard and ports; AgentsNet, its name
and edges; and, everywhere, its row of every node-indexed draw."""

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


def one_cell(task: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """The FixedSwarm cell of the task at N = 8 and the seed."""
    config = {
        "tasks": {"t": task},
        "methods": {"m": {"kind": "fixedswarm"}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": [seed]}},
    }
    return list(expand_blocks(validate(config, "relabel.yaml"), "relabel.yaml")["s"][0].cells())


def play(cells, monkeypatch, sigma: np.ndarray, controller: str, edges: np.ndarray | None = None):
    """The cell played with the draws relabelled (the suite's state relabelled by the caller's
    patches), by FixedSwarm or the scripted controller; the patches undone after."""
    monkeypatch.setattr(loop, "Streams", lambda seeds, name: Relabelled(seeds, name, sigma, edges))
    if controller == "scripted":
        impl = loop.METHODS["fixedswarm"].impl(cells[0]["suite"])
        monkeypatch.setattr(type(impl), "load", lambda self: Scripted)
    try:
        return loop.play_block(cells)[0]
    finally:
        monkeypatch.undo()


def relabel(table: pa.Table, columns: tuple[str, ...], sigma: np.ndarray, without: tuple[str, ...] = ()) -> list[tuple]:
    """The table's rows as sorted tuples (less the columns `without`), the agent columns mapped through sigma."""
    data = stored(table).to_pydict()
    for column in columns:
        data[column] = [int(sigma[v]) for v in data[column]]
    names = sorted(set(data) - set(without))
    return sorted(zip(*(map(str, data[name]) for name in names)))


def check_relabelled(a, b, sigma: np.ndarray, messages: tuple[str, ...] | None, without: tuple[str, ...] = ()) -> None:
    """Episode b is episode a relabelled by sigma: the same summary, and every table's rows relabelled
    (`without`: per-agent columns that name agents in their values; `messages`: the messages table's
    columns left out, or None where the method sends none)."""
    identity = np.arange(len(sigma))
    assert a.summary == b.summary  # the scores, the telemetry, every count
    assert a.summary["invalid_records"] == 0
    assert relabel(pa.table(a.agents), ("agent",), sigma, without) == relabel(
        pa.table(b.agents), ("agent",), identity, without
    )
    pairs = {"traces": ("writer", "receiver"), "messages": ("sender", "receiver")}
    for name, columns in pairs.items():
        if name == "messages" and messages is None:
            continue
        left_out = messages if name == "messages" else ()
        assert relabel(a.table(name), columns, sigma, left_out) == relabel(b.table(name), columns, identity, left_out)


CONTROLLERS = ["fixedswarm", "scripted"]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("controller", CONTROLLERS)
def test_relabelling_a_swarmbench_episode_relabels_its_records_and_keeps_its_scores(task, controller, monkeypatch):
    cells = one_cell({"kind": "swarmbench", "task": task, "rounds": 25}, 3)
    sigma = np.random.default_rng(11).permutation(N)

    def played(sigma: np.ndarray):
        original = levels.played_level

        def relabelled_level(*args, **kwargs):
            level = original(*args, **kwargs)
            lights = None if level.lights is None else carried(level.lights, sigma)
            return levels.Level(level.terrain, carried(level.agents, sigma), level.prey, lights, level.box)

        monkeypatch.setattr(swarm_task, "played_level", relabelled_level)
        return play(cells, monkeypatch, sigma, controller)

    a, b = played(np.arange(N)), played(sigma)
    check_relabelled(a, b, sigma, messages=None)
    if task in ("pursuit", "foraging", "transport"):
        assert a.summary["traces_written"] > 0  # the field was used, so the check could fail


def carried(values: Any, sigma: np.ndarray) -> Any:
    """Node-indexed values (an array, or a sequence of anything) with node i's at sigma(i)."""
    if isinstance(values, np.ndarray):
        out = np.empty_like(values)
        out[sigma] = values
        return out
    moved = [None] * len(values)
    for i, value in enumerate(values):
        moved[sigma[i]] = value
    return moved


def test_the_scripted_controller_saw_only_six_part_views_without_forbidden_keys(monkeypatch):
    Scripted.views_seen = []
    play(one_cell({"kind": "swarmbench", "task": "pursuit", "rounds": 25}, 3), monkeypatch, np.arange(N), "scripted")
    assert Scripted.views_seen
    assert any(view["incident_fields"] for view in Scripted.views_seen)
    for view in Scripted.views_seen:
        assert forbidden_keys(view) == []
        assert len(view) == 6


SILO_TASKS = ("I-09", "II-11", "III-23", "I-04", "III-26")


@pytest.mark.parametrize("task", SILO_TASKS)
@pytest.mark.parametrize("controller", CONTROLLERS)
def test_relabelling_a_silobench_episode_relabels_its_records_and_keeps_its_scores(task, controller, monkeypatch):
    from hivebench.engine.block import GraphBlock, csr
    from hivebench.suites.silobench import task as silo_task
    from hivebench.suites.silobench.instances import PROBLEMS
    from hivebench.suites.silobench.network import Topology
    from hivebench.suites.silobench.problems import Instance

    # a message cap no flood reaches keeps the packing (in owner order) out of it
    entry = {"kind": "silobench", "task": task, "topology": "regular3", "rounds": 9, "message_chars": 10**6}
    cells = one_cell(entry, 5)
    sigma = np.random.default_rng(7).permutation(N)

    def played(sigma: np.ndarray):
        instance, block = silo_task.instance, silo_task.block

        def relabelled_instance(task, n, seed):
            inst = instance(task, n, seed)
            shards = carried(inst.shards, sigma)
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
        return play(cells, monkeypatch, sigma, controller)

    a, b = played(np.arange(N)), played(sigma)
    assert a.summary["success"] == 1.0  # the flood gathers everything in 9 rounds
    # an answer may name agents (renamed with them), a message's text the owners of its shards
    check_relabelled(a, b, sigma, messages=("text",), without=("answer",))
    assert a.summary["traces_written"] > 0


NET_PROBLEMS = ("coloring", "vertex_cover", "matching", "leader_election", "consensus")


@pytest.mark.parametrize("problem", NET_PROBLEMS)
@pytest.mark.parametrize("controller", CONTROLLERS)
def test_relabelling_an_agentsnet_episode_relabels_its_records_and_keeps_its_scores(problem, controller, monkeypatch):
    from hivebench.suites.agentsnet import task as net_task
    from hivebench.suites.agentsnet.graphs import graph_from_edges

    cells = one_cell({"kind": "agentsnet", "problem": problem, "family": "delaunay"}, 4)
    sigma = np.random.default_rng(5).permutation(N)
    graph = net_task.instance("delaunay", N, 4)

    def played(sigma: np.ndarray):
        relabelled = graph_from_edges(sigma[graph.edges], tuple(carried(graph.names, sigma)))
        keys = np.repeat(np.arange(N), np.diff(relabelled.indptr)) * N + relabelled.indices  # sorted: CSR order
        src = np.repeat(np.arange(N), np.diff(graph.indptr))
        edges = np.searchsorted(keys, sigma[src] * N + sigma[graph.indices])  # each directed edge's image
        monkeypatch.setattr(net_task, "instance", lambda family, n, seed: relabelled)
        return play(cells, monkeypatch, sigma, controller, edges)

    a, b = played(np.arange(N)), played(sigma)
    check_relabelled(a, b, sigma, messages=())
    if problem != "matching":
        assert a.summary["traces_written"] > 0
