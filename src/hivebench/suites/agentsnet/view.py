"""AgentsNet in the episode viewer: the instance's graph with each agent's answer once it gave one."""

from __future__ import annotations

from hivebench.view.episode import Episode
from hivebench.view.scene import Scene, edge_lines, graph_edges, layout, placed_agents, reset_task, step_sums

NO_ANSWER = "(none yet)"


def scene(episode: Episode) -> Scene:
    graph = reset_task(episode.cell).block.graphs[0]
    edges = graph_edges(graph.indptr, graph.indices)
    positions = layout(episode.n, edges, int(episode.cell["seed"]))
    agents = episode.agents
    # an agent answers once, in its round R: it shows its answer from then on
    answers = agents["answer"].where(agents["answer"].notna()).groupby(agents["agent"]).ffill().fillna(NO_ANSWER)
    return Scene(
        agents=placed_agents(agents, positions, answers),
        state="answer",
        metrics=step_sums(
            agents.assign(answered=agents["answer"].notna()), {"sent": "messages sent", "answered": "answers given"}
        ),
        edges=edge_lines(edges, positions),
    )
