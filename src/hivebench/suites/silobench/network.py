"""Who may talk to whom: every agent with every other (complete), or the Waggle study's degree-three
ports (a seeded random 3-regular graph, connected). A job block lays its episodes' graphs side by side
(hivebench.engine.block)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import networkx as nx
import numpy as np

from hivebench.engine.block import Graph, GraphBlock, relabel_csr
from hivebench.seeding import stream

TOPOLOGIES = ("complete", "regular3")


@dataclass(frozen=True, eq=False)
class Topology(Graph):
    diameter: int  # rounds a flood needs to reach everyone


def topology(kind: str, n: int, seed: int) -> Topology:
    if kind == "complete":
        return complete(n)
    if kind != "regular3":
        raise ValueError(f"unknown Silo-Bench topology {kind!r} (one of {', '.join(TOPOLOGIES)})")
    return ports(n, seed)


@lru_cache(maxsize=16)
def complete(n: int) -> Topology:
    others = np.arange(n)[None, :].repeat(n, axis=0)[~np.eye(n, dtype=bool)]  # row v: every u != v, ascending
    return Topology(n, np.arange(n + 1, dtype=np.int64) * (n - 1), others.astype(np.int64), min(n - 1, 1))


@lru_cache(maxsize=256)  # every task of a study plays the same ports at an (N, seed)
def ports(n: int, seed: int) -> Topology:
    graph = regular3(n, seed)
    matrix = nx.to_scipy_sparse_array(graph, nodelist=range(n), format="csr")
    matrix.sort_indices()
    return Topology(n, matrix.indptr.astype(np.int64), matrix.indices.astype(np.int64), nx.diameter(graph))


def regular3(n: int, seed: int) -> nx.Graph:
    """A connected random 3-regular graph on n agents (n even, at least 4), from the seed's own stream:
    redrawn until connected (almost every draw is)."""
    rng = stream(seed, f"silobench ports N{n}")
    for _ in range(1000):
        graph = nx.random_regular_graph(3, n, seed=int(rng.integers(2**31)))
        if nx.is_connected(graph):
            return graph
    raise RuntimeError(f"no connected 3-regular graph on {n} nodes in 1000 draws")  # pragma: no cover


def block(kind: str, n: int, seeds: Sequence[int], sigma: np.ndarray | None = None) -> GraphBlock[Topology]:
    """The block's topologies; with `sigma`, each with node i renamed sigma(i)."""
    graphs = [topology(kind, n, seed) for seed in seeds]
    if sigma is not None:
        graphs = [Topology(n, *relabel_csr(g.indptr, g.indices, sigma)[:2], g.diameter) for g in graphs]
    return GraphBlock(graphs)
