"""What a suite's viewer draws of one episode (`Suite.viewer`): its agents at every state, placed on
the suite's contact structure, and the per-step measures of its task. The page adds what every suite
shares: the messages and traces of each round drawn on the contacts, and the agents' own columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from hivebench.engine.loop import make_task

AGENT_COLUMNS = ["step", "agent", "x", "y", "state"]
EDGE_COLUMNS = ["x", "y", "x2", "y2"]
TILE_COLUMNS = ["step", "x", "y", "kind"]
METRIC_COLUMNS = ["step", "metric", "value"]
EVERY_STATE = -1  # a tile's step when it lies there in every state (walls)


def empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="float64") for c in columns})


@dataclass(frozen=True)
class Scene:
    agents: pd.DataFrame  # AGENT_COLUMNS: each agent at each state, where it is and what it shows
    state: str  # what the agents' colour shows ("colour", "answer", ...)
    metrics: pd.DataFrame  # METRIC_COLUMNS: the task's measures per state, each a line of the chart
    edges: pd.DataFrame = field(default_factory=lambda: empty(EDGE_COLUMNS))  # the contacts, as lines
    tiles: pd.DataFrame = field(default_factory=lambda: empty(TILE_COLUMNS))  # a grid's walls and objects
    grid: bool = False  # a grid (row 0 at the top, square tiles), not a graph drawing
    size: int = 0  # a grid's side


def reset_task(cell: dict[str, Any]) -> Any:
    """The cell's task at its first state: what its contact structure is (its graph, its level)."""
    task = make_task(cell)
    task.reset([int(cell["seed"])])
    return task


def graph_edges(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The undirected edges (u < v) of a graph in CSR form, as (m, 2)."""
    src = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    keep = src < indices
    return np.stack([src[keep], indices[keep]], axis=1)


def layout(n: int, edges: np.ndarray, seed: int, ring: bool = False) -> np.ndarray:
    """Where each of n nodes is drawn, (n, 2) in [-1, 1]: on a circle (a cycle, a complete graph), or
    by a spring layout seeded with the cell's seed (the same page every time)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges.tolist())
    placed = nx.circular_layout(graph) if ring else nx.spring_layout(graph, seed=seed, iterations=100)
    return np.array([placed[v] for v in range(n)], dtype=np.float64)


def edge_lines(edges: np.ndarray, positions: np.ndarray) -> pd.DataFrame:
    u, v = edges[:, 0], edges[:, 1]
    return pd.DataFrame({"x": positions[u, 0], "y": positions[u, 1], "x2": positions[v, 0], "y2": positions[v, 1]})


def placed_agents(agents: pd.DataFrame, positions: np.ndarray, state: pd.Series) -> pd.DataFrame:
    """The per-agent rows at fixed places (a graph's nodes) with the state each shows."""
    where = positions[agents["agent"].to_numpy()]
    return pd.DataFrame(
        {
            "step": agents["step"].to_numpy(),
            "agent": agents["agent"].to_numpy(),
            "x": where[:, 0],
            "y": where[:, 1],
            "state": state.astype(str).to_numpy(),
        }
    )


def step_sums(agents: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """Per state, the sum over agents of each column (`columns`: column -> the measure's name)."""
    sums = agents.groupby("step")[list(columns)].sum().rename(columns=columns)
    return sums.reset_index().melt(id_vars="step", var_name="metric", value_name="value")
