"""Who may talk to whom: every agent with every other (complete), or the Waggle study's degree-three
ports (a seeded random 3-regular graph, connected). A job block lays its episodes' graphs side by side."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Sequence

import networkx as nx
import numpy as np

from hivebench.seeding import stream

TOPOLOGIES = ("complete", "regular3")


@dataclass(frozen=True)
class Topology:
    n: int
    indptr: np.ndarray  # CSR adjacency: agent v's neighbours are indices[indptr[v]:indptr[v + 1]], ascending
    indices: np.ndarray
    diameter: int  # rounds a flood needs to reach everyone

    def neighbours(self, v: int) -> np.ndarray:
        return self.indices[self.indptr[v] : self.indptr[v + 1]]


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


@dataclass(frozen=True)
class Block:
    """The episodes' graphs side by side: agent v of episode s is agent s * n + v."""

    graphs: tuple[Topology, ...]

    @property
    def n(self) -> int:
        return self.graphs[0].n

    @property
    def agents(self) -> int:
        return self.n * len(self.graphs)

    @cached_property
    def indptr(self) -> np.ndarray:
        degrees = np.concatenate([np.diff(g.indptr) for g in self.graphs])
        return np.concatenate([[0], np.cumsum(degrees)])

    @cached_property
    def indices(self) -> np.ndarray:
        return np.concatenate([g.indices + s * self.n for s, g in enumerate(self.graphs)])

    def fan_out(self, senders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(i, receiver): one row per neighbour of each sender, i its position in `senders`."""
        degrees = np.diff(self.indptr)[senders]
        i = np.repeat(np.arange(len(senders)), degrees)
        first = np.repeat(self.indptr[senders] - np.concatenate([[0], np.cumsum(degrees)[:-1]]), degrees)
        return i, self.indices[first + np.arange(len(i))]


def block(kind: str, n: int, seeds: Sequence[int]) -> Block:
    return Block(tuple(topology(kind, n, seed) for seed in seeds))
