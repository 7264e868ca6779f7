"""LoopBench: soft colouring of a graph by one agent per node, synchronous rounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from hivebench.engine.api import EpisodeRecord, state_agent_columns
from hivebench.engine.block import Graph, GraphBlock, csr
from hivebench.seeding import Streams
from hivebench.suites.loopbench import scoring
from hivebench.suites.loopbench.graphs import (
    BRUTE_FORCE_LIMIT,
    cycle_conf_best,
    cycle_edges,
)
from hivebench.suites.loopbench.hearing import Announcements, Hearing


@dataclass(frozen=True)
class ColoringViews:
    """One round's local views of all agents of a block, as arrays (row v is agent v's view; a block
    of S episodes has S * n agents on the disjoint union of their graphs).

    Agent v may know: its id v, its colour, its neighbours' colours as it has heard them (through
    `neighbor_counts`, or `neighbor_colors(v)`), its own history (`history[:, v]`) and what it heard of
    its neighbours in each earlier state (`neighbor_colors(v, t)`). Unperturbed an agent hears every
    neighbour's colour as it is (hivebench.suites.loopbench.hearing).
    """

    step: int
    horizon: int  # T, the number of rounds in the episode
    n: int  # agents per episode (agent v is agent v mod n of episode v // n)
    num_colors: int
    colors: np.ndarray  # (n,) each agent's current colour
    neighbor_counts: np.ndarray  # (n, c) how many neighbours of v hold colour k, as v heard them
    own_conflicts: np.ndarray  # (n,) how many neighbours of v hold v's colour, as v heard them
    history: np.ndarray  # (step, S * n) the colours of earlier states 0..step-1
    # (step + 1, E) per state and directed edge e, what src[e] heard of indices[e]'s colour; None
    # where every announcement arrived as sent (the colours themselves, `history` and `colors`)
    heard: np.ndarray | None
    indptr: np.ndarray  # CSR adjacency: neighbours of v are indices[indptr[v]:indptr[v + 1]]
    indices: np.ndarray

    def neighbors_of(self, agent: int) -> np.ndarray:
        return self.indices[self.indptr[agent] : self.indptr[agent + 1]]

    def neighbor_colors(self, agent: int, state: int = -1) -> np.ndarray:
        """The colours `agent` heard from its neighbours (in `neighbors_of` order) in `state` (0..step, or
        counted back from the current one, -1)."""
        state %= self.step + 1
        if self.heard is not None:
            return self.heard[state, self.indptr[agent] : self.indptr[agent + 1]]
        return (self.colors if state == self.step else self.history[state])[self.neighbors_of(agent)]


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
    """State: every node's colour. All agents see the same pre-update state (as announced to them:
    `medium`); `step` applies all at once. A block's episodes share the graph and the horizon; the
    block plays S copies of it side by side."""

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
        self.graph = Graph(population, *csr(self.edges, population))  # a block plays copies of it side by side
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
        block = GraphBlock([self.graph] * len(seeds))
        # every directed edge from _src to _dst: the bincount keys of the neighbour counts
        self._src, self._dst, self.indptr = block.src, block.indices, block.indptr
        self.agents = block.agents
        self._row_starts = np.arange(self.agents) * self.num_colors  # agent v's counts in the flat array
        self.trajectory = np.zeros((self.steps + 1, self.agents), dtype=np.int64)
        self.conflicts = np.zeros((self.steps + 1, self.agents), dtype=np.int64)  # each agent's, per state
        if self.init != "same":
            self.trajectory[0] = Streams(seeds, "init").integers(0, self.num_colors, (self.agents,))
        self.medium = self._bare = Announcements(block)
        self.hearing: Hearing | None = None  # kept once a perturbation wraps the medium
        self.t = 0
        self._count()

    @property
    def done(self) -> bool:
        return self.t >= self.steps

    def neighbor_counts(self, colors: np.ndarray) -> np.ndarray:
        keys = self._src * self.num_colors + colors[self._dst]
        return np.bincount(keys, minlength=self.agents * self.num_colors).reshape(self.agents, self.num_colors)

    def _count(self) -> None:
        """The current state's neighbour counts as each agent heard them, and every agent's conflicts
        in it for the record (as they are)."""
        colors = self.trajectory[self.t]
        self._counts = self.neighbor_counts(colors)
        self.conflicts[self.t] = self._counts.ravel()[self._row_starts + colors]
        self._own = self.conflicts[self.t].view()
        if self.hearing is not None and not self.hearing.exact:
            keys = self._src * self.num_colors + self.hearing.heard[self.t]
            self._counts = np.bincount(keys, minlength=self.agents * self.num_colors).reshape(self.agents, -1)
            self._own = self._counts.ravel()[self._row_starts + colors]
        self._counts.flags.writeable = self._own.flags.writeable = False

    def observe(self) -> ColoringViews:
        # Read-only views, not copies: rows 0..t are never written again.
        past = self.trajectory[: self.t + 1].view()
        past.flags.writeable = False
        heard = None
        if self.hearing is not None:
            heard = self.hearing.heard[: self.t + 1].view()
            heard.flags.writeable = False
        return ColoringViews(
            step=self.t,
            horizon=self.steps,
            n=self.n,
            num_colors=self.num_colors,
            colors=past[self.t],
            neighbor_counts=self._counts,
            own_conflicts=self._own,
            history=past[: self.t],
            heard=heard,
            indptr=self.indptr,
            indices=self._dst,
        )

    def step(self, decisions: np.ndarray) -> None:
        decisions = np.asarray(decisions)
        if decisions.shape != (self.agents,) or decisions.min() < 0 or decisions.max() >= self.num_colors:
            raise ValueError(f"step {self.t}: expected {self.agents} colours in 0..{self.num_colors - 1}")
        if self.medium is not self._bare:  # the bare medium delivers every colour as it is: nothing to keep
            if self.hearing is None:
                self.hearing = Hearing(self.medium.block, self.num_colors, self.steps + 1, self.trajectory[0])
            self.hearing.announce(self.medium, self.t, decisions)
        self.t += 1
        self.trajectory[self.t] = decisions
        self._count()

    def record(self) -> list[EpisodeRecord]:
        """Per episode and (state, agent): colour, conflicting edges, whether the colour changed; the
        metrics."""
        states, n, episodes = self.steps + 1, self.n, len(self.seeds)

        def by_episode(values: np.ndarray) -> np.ndarray:
            """(T + 1, S * n) -> (S, (T + 1) * n): each episode's rows, state-major, contiguous."""
            return values.reshape(states, episodes, n).transpose(1, 0, 2).reshape(episodes, -1)

        changed = np.zeros_like(self.trajectory, dtype=bool)
        changed[1:] = self.trajectory[1:] != self.trajectory[:-1]
        color = by_episode(self.trajectory.astype(np.int16))
        conflicts, changed = by_episode(self.conflicts.astype(np.int16)), by_episode(changed)
        step, agent = state_agent_columns(n, states)
        # The column reports group by: C5 for a 5-cycle; a fixed graph is labelled by its task's name.
        label = f"C{n}" if self.cycle else None
        # every conflicting edge is counted once at each end
        metrics = self.metrics(self.conflicts.reshape(states, episodes, n).sum(axis=2).T // 2)
        return [
            EpisodeRecord(
                {"step": step, "agent": agent, "color": color[s], "conflicts": conflicts[s], "changed": changed[s]},
                {"graph": label, **dict(zip(metrics, values)), **self.medium.counts(s)},
                dict(self.medium.tables(s)),  # none on the bare medium; a perturbation's `transit`
            )
            for s, values in enumerate(zip(*metrics.values()))
        ]

    def metrics(self, conflicts: np.ndarray) -> dict[str, list[Any]]:
        """Each episode's metrics from its conflicting edges at states 0..T, (S, T + 1): per metric, S values."""
        if conflicts.min() < self.conf_best:
            raise ValueError(
                f"a state has {conflicts.min()} conflicting edges, fewer than conf_best = {self.conf_best}: "
                "the task's conf_best is too high"
            )
        window = scoring.metric_window(conflicts, self.steps, self.window)
        episodes = len(conflicts)
        return {
            "proximity": scoring.proximity(window, conflicts[:, 0], self.conf_best).tolist(),
            "stability": scoring.stability(window).tolist(),
            **{key: values.tolist() for key, values in scoring.outcomes(conflicts, self.conf_best).items()},
            "initial_conflicts": conflicts[:, 0].tolist(),
            "final_conflicts": conflicts[:, -1].tolist(),
            "conf_best": [self.conf_best] * episodes,
            "steps": [self.steps] * episodes,
            "conflicts": conflicts.tolist(),
        }
