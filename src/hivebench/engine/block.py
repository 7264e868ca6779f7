"""A job block's episodes side by side, as every suite plays them: agent v of episode s is agent
s * n + v of the block, and where the episodes have contact graphs the block's graph is their
disjoint union (CSR), so one round of the whole block is one batch of arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

import numpy as np


def csr(edges: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The CSR adjacency (indptr, indices) of n nodes joined by the undirected (m, 2) `edges`: both
    directions of each edge, every node's neighbours in ascending order."""
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    return indptr, dst[np.lexsort((dst, src))]


def carried(values: Any, sigma: np.ndarray) -> Any:
    """Node-indexed values (an array, or a sequence of anything) relabelled by `sigma`: node i's at
    sigma(i)."""
    if isinstance(values, np.ndarray):
        out = np.empty_like(values)
        out[sigma] = values
        return out
    moved = [None] * len(values)
    for i, value in enumerate(values):
        moved[sigma[i]] = value
    return type(values)(moved) if isinstance(values, tuple) else moved


def relabel_csr(
    indptr: np.ndarray, indices: np.ndarray, sigma: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A graph's CSR adjacency with node i renamed sigma(i): (indptr, indices, image), image[e] the
    position there of the directed edge at position e here."""
    n = len(indptr) - 1
    src = np.repeat(np.arange(n), np.diff(indptr))
    pairs = np.stack([src, indices], axis=1)
    new_indptr, new_indices = csr(sigma[pairs[pairs[:, 0] < pairs[:, 1]]], n)
    keys = np.repeat(np.arange(n), np.diff(new_indptr)) * n + new_indices  # ascending: CSR order
    return new_indptr, new_indices, np.searchsorted(keys, sigma[src] * n + sigma[indices])


@dataclass(frozen=True, eq=False)  # compared by identity: the arrays have no single truth value
class Graph:
    """n agents and their neighbours: v's are indices[indptr[v]:indptr[v + 1]], ascending (CSR)."""

    n: int
    indptr: np.ndarray
    indices: np.ndarray

    @property
    def degrees(self) -> np.ndarray:
        return np.diff(self.indptr)

    def neighbours(self, v: int) -> np.ndarray:
        return self.indices[self.indptr[v] : self.indptr[v + 1]]


class Block:
    """The agents of a job block's episodes side by side: agent v of episode s is agent s * n + v."""

    def __init__(self, n: int, episodes: int):
        self.n = n  # agents per episode
        self.episodes = episodes
        self.agents = n * episodes

    @cached_property
    def episode_of_agent(self) -> np.ndarray:
        return np.repeat(np.arange(self.episodes), self.n)

    def per_episode(self, values: np.ndarray | None = None, agents: np.ndarray | None = None) -> np.ndarray:
        """Per episode, the sum of `values` over its agents, or over items owned by `agents` (without
        `values`: how many items; integers)."""
        owner = np.arange(self.agents) if agents is None else agents
        return np.bincount(owner // self.n, weights=values, minlength=self.episodes)


G = TypeVar("G", bound=Graph)


class GraphBlock(Block, Generic[G]):
    """A block's episodes on their graphs (`graphs[s]`, each of n agents): the block's graph is their
    disjoint union, CSR like each of them."""

    def __init__(self, graphs: Sequence[G]):
        super().__init__(graphs[0].n, len(graphs))
        self.graphs = tuple(graphs)

    @cached_property
    def indptr(self) -> np.ndarray:
        edges = np.array([g.indptr[-1] for g in self.graphs], dtype=np.int64)  # directed edges per episode
        rows = np.concatenate([g.indptr[1:] for g in self.graphs]) + np.repeat(np.cumsum(edges) - edges, self.n)
        return np.concatenate([[0], rows])

    @cached_property
    def indices(self) -> np.ndarray:
        edges = [len(g.indices) for g in self.graphs]
        return np.concatenate([g.indices for g in self.graphs]) + np.repeat(np.arange(self.episodes) * self.n, edges)

    @cached_property
    def degrees(self) -> np.ndarray:
        return np.diff(self.indptr)

    @cached_property
    def src(self) -> np.ndarray:
        """The sender of every directed edge: CSR position e runs from src[e] to indices[e]."""
        return np.repeat(np.arange(self.agents), self.degrees)

    @cached_property
    def edge_keys(self) -> np.ndarray:
        """Every directed edge as one integer key (src * agents + dst), sorted: membership by binary search."""
        return np.sort(self.src * self.agents + self.indices)

    def neighbours(self, agent: int) -> np.ndarray:
        return self.indices[self.indptr[agent] : self.indptr[agent + 1]]

    def graph(self, agent: int) -> G:
        return self.graphs[agent // self.n]

    def fan_out(self, senders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(i, receiver): one row per neighbour of each sender, i its position in `senders`."""
        degrees = self.degrees[senders]
        i = np.repeat(np.arange(len(senders)), degrees)
        first = np.repeat(self.indptr[senders] - np.concatenate([[0], np.cumsum(degrees)[:-1]]), degrees)
        return i, self.indices[first + np.arange(len(i))]
