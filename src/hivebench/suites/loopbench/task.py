"""LoopBench: soft colouring of a graph by one agent per node, synchronous rounds."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Sequence

import numpy as np

from hivebench.engine.api import EpisodeRecord
from hivebench.seeding import Streams
from hivebench.suites.loopbench import scoring
from hivebench.suites.loopbench.graphs import BRUTE_FORCE_LIMIT, cycle_conf_best, cycle_edges


@dataclass(frozen=True)
class ColoringViews:
    """One round's local views of all agents of a block, as arrays (row v is agent v's view; a block
    of S episodes has S * n agents on the disjoint union of their graphs).

    Agent v may know: its id v, its colour, its neighbours' colours (through `neighbor_counts`, or
    `neighbors_of(v)` with `colors`), and its own history (`history[:, v]` and its neighbours' columns).
    """

    step: int
    horizon: int  # T, the number of rounds in the episode
    n: int  # agents per episode (agent v is agent v mod n of episode v // n)
    num_colors: int
    colors: np.ndarray  # (n,) each agent's current colour
    neighbor_counts: np.ndarray  # (n, c) how many neighbours of v hold colour k
    history: np.ndarray  # (step, S * n) the colours of earlier states 0..step-1
    indptr: np.ndarray  # CSR adjacency: neighbours of v are indices[indptr[v]:indptr[v + 1]]
    indices: np.ndarray

    @property
    def own_conflicts(self) -> np.ndarray:
        return np.take_along_axis(self.neighbor_counts, self.colors[:, None], axis=1)[:, 0]

    def neighbors_of(self, agent: int) -> np.ndarray:
        return self.indices[self.indptr[agent] : self.indptr[agent + 1]]


def exact_conf_best(edges: np.ndarray, n: int, colors: int) -> int:
    """The fewest conflicting edges over all colourings, by exhaustive search in chunks."""
    return _exact_conf_best(tuple(map(tuple, edges.tolist())), n, colors)


@cache  # a job block runs many seeds of one graph in one process: search once
def _exact_conf_best(edge_list: tuple[tuple[int, int], ...], n: int, colors: int) -> int:
    edges = np.asarray(edge_list, dtype=np.int64)
    total = colors**n
    if total > BRUTE_FORCE_LIMIT:
        raise ValueError(f"{colors}^{n} colourings are too many to search; give conf_best in the task config")
    best = len(edges)
    powers = colors ** np.arange(n, dtype=np.int64)
    for start in range(0, total, 1 << 16):
        codes = np.arange(start, min(total, start + (1 << 16)), dtype=np.int64)
        assignment = (codes[:, None] // powers) % colors
        conflicts = np.count_nonzero(assignment[:, edges[:, 0]] == assignment[:, edges[:, 1]], axis=1)
        best = min(best, int(conflicts.min()))
    return best


class ColoringTask:
    """State: every node's colour. All agents see the same pre-update state; `step` applies all at once.
    A block's episodes share the graph and the horizon; the block plays S copies of it side by side."""

    def __init__(self, params: dict[str, Any], population: int):
        graph = params["graph"]
        pairs = cycle_edges(population) if graph == "cycle" else [tuple(e) for e in graph]
        self.edges = np.asarray(pairs, dtype=np.int64)
        self.n = population
        self.num_colors = int(params["colors"])
        self.steps = int(params["steps"])
        self.init = params["init"]
        self.window = params["metric_window"]
        self.cycle = graph == "cycle"
        self.conf_best = self._conf_best(params, self.cycle)
        self.t = 0

    def _conf_best(self, params: dict[str, Any], cycle: bool) -> int:
        """The optimum: exact where it can be computed, and a configured value checked against it."""
        exact = None
        if cycle:
            exact = cycle_conf_best(self.n, self.num_colors)
        elif self.num_colors**self.n <= BRUTE_FORCE_LIMIT:
            exact = exact_conf_best(self.edges, self.n, self.num_colors)
        given = params.get("conf_best")
        if given is not None and exact is not None and given != exact:
            raise ValueError(
                f"task parameter conf_best = {given} is wrong: the optimum of this graph with "
                f"{self.num_colors} colours is {exact} conflicting edges (leave conf_best out to use it)"
            )
        return exact if exact is not None else int(given)

    @property
    def horizon(self) -> int:
        return self.steps

    def reset(self, seeds: Sequence[int]) -> None:
        self.seeds = list(seeds)
        block = (self.edges[None] + (np.arange(len(seeds)) * self.n)[:, None, None]).reshape(-1, 2)
        # Both directions of every edge, sorted by source: the CSR adjacency and the bincount keys.
        src = np.concatenate([block[:, 0], block[:, 1]])
        dst = np.concatenate([block[:, 1], block[:, 0]])
        order = np.lexsort((dst, src))
        self._src, self._dst = src[order], dst[order]
        self.agents = self.n * len(seeds)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(self._src, minlength=self.agents))])
        self.trajectory = np.zeros((self.steps + 1, self.agents), dtype=np.int64)
        if self.init != "same":
            self.trajectory[0] = Streams(seeds, "init").integers(0, self.num_colors, (self.agents,))
        self.t = 0

    @property
    def done(self) -> bool:
        return self.t >= self.steps

    def neighbor_counts(self, colors: np.ndarray) -> np.ndarray:
        keys = self._src * self.num_colors + colors[self._dst]
        return np.bincount(keys, minlength=self.agents * self.num_colors).reshape(self.agents, self.num_colors)

    def observe(self) -> ColoringViews:
        # Read-only views, not copies: rows 0..t are never written again.
        past = self.trajectory[: self.t + 1].view()
        past.flags.writeable = False
        return ColoringViews(
            step=self.t,
            horizon=self.steps,
            n=self.n,
            num_colors=self.num_colors,
            colors=past[self.t],
            neighbor_counts=self.neighbor_counts(past[self.t]),
            history=past[: self.t],
            indptr=self.indptr,
            indices=self._dst,
        )

    def step(self, decisions: np.ndarray) -> None:
        decisions = np.asarray(decisions)
        if decisions.shape != (self.agents,) or decisions.min() < 0 or decisions.max() >= self.num_colors:
            raise ValueError(f"step {self.t}: expected {self.agents} colours in 0..{self.num_colors - 1}")
        self.t += 1
        self.trajectory[self.t] = decisions

    def agent_conflicts(self) -> np.ndarray:
        """(T + 1, S * n): how many of each agent's edges conflict at each state."""
        same = self.trajectory[:, self._src] == self.trajectory[:, self._dst]
        # _src is sorted and every node has an edge, so node v's entries are indptr[v]:indptr[v+1].
        return np.add.reduceat(same, self.indptr[:-1], axis=1)

    def record(self) -> list[EpisodeRecord]:
        """Per episode and (state, agent): colour, conflicting edges, whether the colour changed; the
        metrics."""
        states, n = self.steps + 1, self.n
        changed = np.zeros_like(self.trajectory, dtype=bool)
        changed[1:] = self.trajectory[1:] != self.trajectory[:-1]
        conflicts = self.agent_conflicts()
        step, agent = np.repeat(np.arange(states, dtype=np.int32), n), np.tile(np.arange(n, dtype=np.int32), states)
        # The column reports group by: C5 for a 5-cycle; a fixed graph is labelled by its task's name.
        label = f"C{n}" if self.cycle else None
        records = []
        for s in range(len(self.seeds)):
            own = slice(s * n, (s + 1) * n)
            agents = {
                "step": step,
                "agent": agent,
                "color": self.trajectory[:, own].ravel().astype(np.int16),
                "conflicts": conflicts[:, own].ravel().astype(np.int16),
                "changed": changed[:, own].ravel(),
            }
            records.append(EpisodeRecord(agents, {"graph": label, **self.metrics(self.trajectory[:, own])}))
        return records

    def metrics(self, trajectory: np.ndarray) -> dict[str, Any]:
        """One episode's metrics from its (T + 1, n) colours."""
        conflicts = np.count_nonzero(trajectory[:, self.edges[:, 0]] == trajectory[:, self.edges[:, 1]], axis=1)
        if conflicts.min() < self.conf_best:
            raise ValueError(
                f"a state has {conflicts.min()} conflicting edges, fewer than conf_best = {self.conf_best}: "
                "the task's conf_best is too high"
            )
        window = scoring.metric_window(conflicts, self.steps, self.window)
        return {
            "proximity": scoring.proximity(window, int(conflicts[0]), self.conf_best),
            "stability": scoring.stability(window),
            **scoring.outcomes(conflicts, self.conf_best),
            "initial_conflicts": int(conflicts[0]),
            "final_conflicts": int(conflicts[-1]),
            "conf_best": self.conf_best,
            "steps": self.steps,
            "conflicts": [int(c) for c in conflicts],
        }
