"""LoopBench in the episode viewer: the graph (a cycle on a circle) with each node's colour."""

from __future__ import annotations

from hivebench.view.episode import Episode
from hivebench.view.scene import Scene, edge_lines, graph_edges, layout, placed_agents, reset_task, step_sums


def scene(episode: Episode) -> Scene:
    graph = reset_task(episode.cell).graph
    edges = graph_edges(graph.indptr, graph.indices)
    ring = episode.cell["task"]["params"].get("graph") == "cycle"
    positions = layout(episode.n, edges, int(episode.cell["seed"]), ring=ring)
    agents = episode.agents
    measures = {"conflicts": "edges in conflict", "changed": "nodes that changed colour"}
    # each edge in conflict counts at both its ends
    halved = agents.assign(conflicts=agents["conflicts"] / 2)
    return Scene(
        agents=placed_agents(agents, positions, agents["color"]),
        state="colour",
        metrics=step_sums(halved, {c: name for c, name in measures.items() if c in agents}),
        edges=edge_lines(edges, positions),
    )
