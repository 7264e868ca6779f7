"""Silo-Bench in the episode viewer: the agents on their ports' graph (a complete graph on a circle),
each with its shard's status: still exchanging, silent, or its answer right or wrong. A complete
graph's edges are not drawn (every pair is in contact)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hivebench.view.episode import Episode
from hivebench.view.scene import Scene, edge_lines, graph_edges, layout, placed_agents, reset_task, step_sums


def status(agents: pd.DataFrame) -> pd.Series:
    answered = agents["answer"].notna()
    exact = agents["exact"].fillna(False).astype(bool)
    verdict = np.where(exact, "answered: exact", "answered: wrong")
    exchanging = np.where(agents["sent"] > 0, "sending", "silent")
    return pd.Series(np.where(answered, verdict, exchanging), index=agents.index)


def scene(episode: Episode) -> Scene:
    graph = reset_task(episode.cell).block.graphs[0]
    edges = graph_edges(graph.indptr, graph.indices)
    complete = len(edges) == episode.n * (episode.n - 1) // 2
    positions = layout(episode.n, edges, int(episode.cell["seed"]), ring=complete)
    agents = episode.agents
    return Scene(
        agents=placed_agents(agents, positions, status(agents)),
        state="shard",
        metrics=step_sums(agents, {"sent": "messages sent", "chars": "characters sent"}),
        edges=edge_lines(edges[:0] if complete else edges, positions),
    )
