"""SwarmBench as an LLM agent reads it. The system message states the rules (the task, the symbols,
the physics, the messages; after the reference's prompt), the same for every agent of an episode; each
round's user message holds the agent's view drawn as the reference draws it (global row and column
numbers around a k x k grid, itself as Y, other agents by id, with $ before an agent whose light is off
or who carries no food), its own state and the messages it heard. Its reply's fields are the action
and the message (the LLM agent adds its notes). Without a valid reply an agent stays and says nothing;
a message longer than the cap is cut to it and counted (not refused)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.suites.swarmbench.levels import FLOOR, FOOD, NEST, WALL
from hivebench.suites.swarmbench.task import BOX, PREY, SwarmActions, SwarmViews
from hivebench.suites.swarmbench.world import ACTIONS, OUTSIDE

SYMBOLS = {FLOOR: ".", WALL: "W", FOOD: "F", NEST: "N", OUTSIDE: "*", PREY: "P", BOX: "B"}
TASKS = {
    "pursuit": "There is a prey (P) somewhere on the map. Chase it down together: it is caught when its four "
    "neighbouring cells (up, down, left, right) are all agents or walls. It moves two cells a round, away from "
    "danger. Each catch earns a point, and a new prey appears somewhere else.",
    "synchronization": "Each agent has a light, on or off. You earn a point each time every light agrees (all on or "
    "all off, including agents you cannot see); after that the next point needs them all to agree on the opposite "
    "state. The action SWITCH flips your light (and you do not move that round). Agents whose light is off are "
    "shown with a $ before their id.",
    "foraging": "You are in a maze of walls (W). Carry food (F) to the nest (N): an agent next to F picks up one "
    "piece (the food never runs out; one piece at a time), and an agent carrying food next to N drops it there, "
    "earning a point. Agents carrying nothing are shown with a $ before their id.",
    "flocking": "Together form a hollow square of side {side} (each of you on one cell of its border), anywhere on "
    "the map. Your score is how much closer to that shape the group gets than it started.",
    "transport": "The map is walled in, with a gap to the outside (*) blocked by an obstacle (B) of 13 cells and "
    "weight 5. Push it out through the gap together (at least five agents pushing the same way), then leave the "
    "map through the gap: the sooner each agent leaves, the more it scores.",
}
SYSTEM = (
    "You are one of {n} agents on a grid, each controlling itself. {task}\n"
    "You see only the {k} x {k} cells around you. Symbols: Y you; a number: the agent with that id; "
    "W wall; . empty; * outside the map; P prey; B pushable obstacle; F food; N nest.\n"
    "Every round all agents act at once. Actions: {actions}. Moving pushes: you weigh 1 and push with force 2, "
    "so you can move yourself and push one idle agent ahead of you; agents pushing from behind add their force; "
    "walls never move.\n"
    "You may broadcast one message a round (at most {chars} characters; longer ones are cut): next round it reaches, "
    "without your name, every agent within {radius} cells of you in each direction. Coordinates are (row, column), "
    "rows growing downward."
)


def draw(views: SwarmViews, agent: int) -> str:
    """The agent's view as the reference draws it: global column numbers on top, each row's global
    number on the left, cells 4 wide."""
    k = views.cells.shape[1]
    r = k // 2
    row0, col0 = views.position[agent] - r
    episode = agent // views.n
    off = views.state.get("light", views.state.get("carrying"))
    rows = []
    for i in range(k):
        cells = []
        for j in range(k):
            other = int(views.ids[agent, i, j])
            if i == r and j == r:
                cells.append("Y")
            elif other >= 0:
                dim = off is not None and not off[episode * views.n + other]
                cells.append(f"{'$' if dim else ''}{other}")
            else:
                cells.append(SYMBOLS.get(int(views.cells[agent, i, j]), "?"))
        rows.append(cells)
    width = max(4, 1 + max(len(c) for cells in rows for c in cells))  # 4 as the reference; wider for "$100"
    lines = ["   " + " ".join(f"{col0 + j:>{width - 1}}" for j in range(k))]
    lines += [f"{row0 + i:>3}  " + "".join(c.ljust(width) for c in cells) for i, cells in enumerate(rows)]
    return "\n".join(lines)


def actions_of(task: str) -> list[str]:
    return list(ACTIONS) if task == "synchronization" else [a for a in ACTIONS if a != "SWITCH"]


class SwarmView:
    """The LLM agent's reading of SwarmBench observations (see hivebench.engine.api.TextView)."""

    def agents(self, views: SwarmViews) -> int:
        return len(views.present)

    def live(self, views: SwarmViews) -> np.ndarray:
        return views.present  # an agent that has left the map (Transport) asks nothing

    def reply_schema(self, views: SwarmViews, agent: int) -> dict[str, Any]:
        # the message has no length limit here: the medium cuts a long one and counts it
        return {"action": {"enum": actions_of(views.task)}, "message": {"type": "string"}}

    def reply_format(self, views: SwarmViews, agent: int) -> str:
        return f'"action": <one of {", ".join(actions_of(views.task))}>, "message": "<your message, or empty>"'

    def system(self, views: SwarmViews, agent: int) -> str:
        k = views.cells.shape[1]
        return SYSTEM.format(
            n=views.n,
            task=TASKS[views.task].format(side=views.n // 4 + 1),
            k=k,
            actions=", ".join(actions_of(views.task)),
            chars=views.message_chars,
            radius=k // 2,
        )

    def turn(self, views: SwarmViews, agent: int, window: int) -> str:
        row, col = views.position[agent]
        lines = [
            f"You are agent {agent % views.n}, at ({row}, {col}). Round {views.step + 1} of {views.horizon}.",
            draw(views, agent),
        ]
        if "light" in views.state:
            lines.append(f"Your light is {'on' if views.state['light'][agent] else 'off'}.")
        if "carrying" in views.state:
            lines.append(f"You {'carry' if views.state['carrying'][agent] else 'do not carry'} food.")
        if views.task == "pursuit":
            lines.append(f"Prey caught so far: {int(views.score[agent // views.n])}.")
        heard = [text for receiver, text in zip(views.heard_by.tolist(), views.heard.to_pylist()) if receiver == agent]
        lines += ["Messages you heard:", *(f'  "{text}"' for text in heard)] if heard else ["Messages you heard: none"]
        return "\n".join(lines)

    def actions(self, views: SwarmViews, replies: list[dict[str, Any] | None]) -> SwarmActions:
        """Each agent's action and message; one without a valid reply stays and says nothing."""
        move = np.array([ACTIONS.index(r["action"]) if r else 0 for r in replies], dtype=np.int64)
        texts = [(r.get("message") or None) if r else None for r in replies]
        return SwarmActions(move, pa.array(texts, pa.string()))
