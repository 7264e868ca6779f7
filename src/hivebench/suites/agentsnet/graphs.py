"""AgentsNet instances: a graph of one family with named agents, a function of (family, n, instance
seed) alone.

Families as in the AgentsNet reference: Watts-Strogatz (networkx's connected variant, k = 4,
p = 0.4), Barabasi-Albert (m = 2), and the Delaunay triangulation of n points drawn uniformly in the
unit square (scipy). The graph's random draws and the names come from two named streams of the
instance seed, so a family's graphs do not shift when the naming changes, and back.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import networkx as nx
import numpy as np
import pyarrow as pa
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path
from scipy.spatial import Delaunay

from hivebench.engine.block import Graph, GraphBlock, carried, csr, relabel_csr
from hivebench.seeding import stream
from hivebench.suites.agentsnet.names import name_pool

WS_K, WS_P, BA_M = 4, 0.4, 2


@dataclass(frozen=True, eq=False)  # one object per (family, n, seed) (`instance` caches): compared by identity
class Instance(Graph):
    edges: np.ndarray  # (m, 2) undirected, u < v, sorted
    names: tuple[str, ...]  # agent v's name
    diameter: int

    @cached_property
    def max_degree(self) -> int:
        return int(self.degrees.max())

    @cached_property
    def name_array(self) -> pa.StringArray:
        return pa.array(self.names, pa.string())


class Block(GraphBlock[Instance]):
    """A job block's instances side by side (hivebench.engine.block), with the agents' names and the
    episodes' undirected edges in block indices."""

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(name for g in self.graphs for name in g.names)

    @cached_property
    def edges(self) -> np.ndarray:
        """(m, 2) every episode's undirected edges, in block indices, episode by episode."""
        return np.concatenate([g.edges + s * self.n for s, g in enumerate(self.graphs)])

    @cached_property
    def edge_counts(self) -> np.ndarray:
        return np.array([len(g.edges) for g in self.graphs])


def family_edges(family: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """The family's random graph on nodes 0..n-1 as (m, 2) edges."""
    if family == "watts_strogatz":
        graph = nx.connected_watts_strogatz_graph(n, WS_K, WS_P, tries=1000, seed=int(rng.integers(2**31)))
        return np.asarray(graph.edges(), dtype=np.int64).reshape(-1, 2)
    if family == "barabasi_albert":
        graph = nx.barabasi_albert_graph(n, BA_M, seed=int(rng.integers(2**31)))
        return np.asarray(graph.edges(), dtype=np.int64).reshape(-1, 2)
    if family == "delaunay":
        triangles = Delaunay(rng.random((n, 2))).simplices
        sides = np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]])
        return np.unique(np.sort(sides, axis=1), axis=0).astype(np.int64)
    raise ValueError(f"unknown graph family {family!r}")


@cache  # a job block's seeds may share instances (the task's `instances`): build each once
def instance(family: str, n: int, seed: int) -> Instance:
    edges = family_edges(family, n, stream(seed, f"agentsnet.graph.{family}"))
    pool = name_pool(n)
    names = tuple(pool[i] for i in stream(seed, "agentsnet.names").permutation(len(pool))[:n])
    try:
        return graph_from_edges(edges, names)
    except ValueError as exc:
        raise ValueError(f"{family} graph with n = {n} and instance seed {seed}: {exc}") from None


def relabelled(graph: Instance, sigma: np.ndarray) -> tuple[Instance, np.ndarray]:
    """The instance with node i renamed sigma(i) (its name carried with it), and where each directed
    edge went (its CSR position in the new one)."""
    image = relabel_csr(graph.indptr, graph.indices, sigma)[2]
    return graph_from_edges(sigma[graph.edges], carried(graph.names, sigma)), image


def graph_from_edges(pairs: np.ndarray, names: tuple[str, ...]) -> Instance:
    """The instance of a connected graph on nodes 0..len(names)-1 given by its (m, 2) edges."""
    n = len(names)
    edges = np.unique(np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1), axis=0)
    indptr, indices = csr(edges, n)
    adjacency = csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, n))
    if connected_components(adjacency, directed=False)[0] != 1:
        raise ValueError("the graph is not connected")
    return Instance(n, indptr, indices, edges, names, diameter(adjacency))


def diameter(adjacency: csr_matrix, chunk: int = 256) -> int:
    """The longest shortest path, by breadth-first search from every node, `chunk` sources at a time
    (the whole distance matrix of 10,000 nodes would take 800 MB)."""
    n = adjacency.shape[0]
    return max(
        int(
            shortest_path(
                adjacency, unweighted=True, directed=False, indices=np.arange(start, min(n, start + chunk))
            ).max()
        )
        for start in range(0, n, chunk)
    )
