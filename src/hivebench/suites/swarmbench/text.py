"""SwarmBench as an LLM agent reads it. The system message states the rules (the task, the symbols,
the physics, the messages; after the reference's prompt), the same for every agent of an episode; each
round's user message holds the agent's view drawn as the reference draws it (global row and column
numbers around a k x k grid, itself as Y, other agents by id, with $ before an agent whose light is off
or who carries no food), its own state and the messages it heard. Its reply's fields are the action
and the message (the LLM agent adds its notes). Without a valid reply an agent stays and says nothing;
a message longer than the cap is cut to it and counted (not refused).

`SwarmReference` is the SwarmBench reference code's own prompt protocol (swarmbench/agent.py): its
prompt verbatim, with its memory of the agent's last 5 views and actions, and its parser of the
`ACTION:` and `MSG:` lines."""

from __future__ import annotations

import re
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


def heard_by(views: SwarmViews, agent: int) -> list[str]:
    """The messages delivered to `agent` this round."""
    return [text for receiver, text in zip(views.heard_by.tolist(), views.heard.to_pylist()) if receiver == agent]


def actions_of(task: str) -> list[str]:
    return list(ACTIONS) if task == "synchronization" else [a for a in ACTIONS if a != "SWITCH"]


class SwarmView:
    """The LLM agent's reading of SwarmBench observations (see hivebench.engine.api.TextView)."""

    def agents(self, views: SwarmViews) -> int:
        return len(views.present)

    def live(self, views: SwarmViews) -> np.ndarray:
        return views.present  # an agent that has left the map (Transport) asks nothing

    def running(self, views: SwarmViews) -> np.ndarray:
        return np.ones(len(views.score), dtype=bool)  # every episode runs to the horizon, even with no agent left

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
        heard = heard_by(views, agent)
        lines += ["Messages you heard:", *(f'  "{text}"' for text in heard)] if heard else ["Messages you heard: none"]
        return "\n".join(lines)

    def actions(self, views: SwarmViews, replies: list[dict[str, Any] | None]) -> SwarmActions:
        """Each agent's action and message; one without a valid reply stays and says nothing."""
        move = np.array([ACTIONS.index(r["action"]) if r else 0 for r in replies], dtype=np.int64)
        texts = [(r.get("message") or None) if r else None for r in replies]
        return SwarmActions(move, pa.array(texts, pa.string()))

    def reference(self, quirks: bool) -> SwarmReference:
        return SwarmReference(quirks)


# The reference's prompt (RUC-GSAI/YuLan-SwarmIntell, swarmbench/agent.py and task.py), verbatim but
# for the message cap, which is the task's (120, the reference's, unless `message_chars` says otherwise).
REFERENCE_SYSTEM = "You are a agent. You need to cooperate with other agents and finish a given task."
REFERENCE_TASKS = {
    "pursuit": "Target: There is a prey (denoted as P) somewhere on the map. Your target is to cooperate with other "
    "agents to chase the prey down. A prey is caught only when it is surrounded by 4 agents (A) or walls (W):\n"
    ".,A/W,.\nA/W,P,A/W\n.,A/W,.\nThe prey moves faster than all of your kinds (2 steps each round). Once it is "
    "caught, you will earn a point, and a new prey will spawn somewhere on the map.",
    "synchronization": "Target: Each of you agents has a light that has two possible states: on/off. All of you "
    "need to synchronize your light states, i.e., all on or all off. You earn one point when all agents "
    "(including the ones out of your sight) have the same light states. And after this, all agents must "
    "synchronize their light states to the opposite in ordered to earn one another point. That means if you "
    "earned a point for synchronizing light states to all on, next time you earn a point is when light states "
    "are all off (the opposite), vice versa.\nThere is one more action: SWITCH. When you choose SWITCH, light "
    "states will be changed to the opposite. In your view, agents with lights on are denoted in the regular way, "
    "while agents with lights off start with a dollar sign ($).",
    "foraging": "Target: You are in a maze where walls (W) blocks your way. Your task is to find a path and carry "
    "food (F) to your nest (N). To carry one piece of food to your nest, you must follow these steps:\n1. If you "
    "are not carrying food, find the food source (F), pick up a piece of it and leave(food is infinite, you can "
    "only carry one piece at a time).\n2. If you are carrying food, find a path to the nest (N), drop the food "
    "and leave, then you earn a point.\nMove as many pieces of food to the nest as possible.\nNote that only "
    "agents that are directly adjacent to F/N can pick up/drop the food. Agents carrying food are denoted in the "
    "regular way, while others start with a dollar sign ($).",
    "flocking": "Your target is to properly align in the map and formthe following shape with other agents (A for "
    "agent):\n{shape}",
    "transport": "The boundary of the map is surrounded by walls (denoted as W), with a gap leading to the outside "
    "of the map (denoted as '*'). The gap is blocked by an obstacle (denoted as B).\nThe goal is to first locate "
    "the obstacle (B), then have five robots simultaneously push it through the exit, and finally escape to the "
    "outside of the map (denoted as '*').",
}
REFERENCE_END = (
    'End your response clearly with your chosen action: "ACTION: [YOUR_ACTION]" and/or "MSG: [Your message (no '
    'line breaks).]"'
)
REFERENCE_PROMPT = (
    """You are Agent {name}, operating in a multi-agent environment. Your goal is to complete \
the task through exploration and collaboration.

Task description:
{task}

Round: {round}

Your recent {memory}-step vision (not the entire map):
{vision}

Your current observation:
{observation}

Message you received:
{messages}

Your action history:
{history}

Symbol legend:
- Number: An agent whose id is this number (do not mistake column no. and line no. as agent id).
- Y: Yourself. Others see you as your id instead of "Y".
- W: Wall.
- B: Pushable obstacle (requires at least 5 agents pushing in the same direction).
- .: Empty space (you can move to this area).
- *: Area outside the map.
And other symbols given in task description (if any).

Available actions:
1. UP: Move up
2. DOWN: Move down
3. LEFT: Move left
4. RIGHT: Move right
5. STAY: Stay in place
6. MSG: Send a message
And other actions given in task description (if any).

Physics rules:
1. Your own weight is 1, and you can exert a force of up to 2.
2. An object (including yourself) can only be pushed if the total force in one direction is greater than or \
equal to its weight.
3. Static objects like W (walls) cannot be pushed; only B can be pushed.
4. Force can be transmitted, but only between directly adjacent objects. That means, if an agent is applying \
force in a direction, you can push that agent from behind to help.
5. Only pushing is allowed - there is no pulling or lateral dragging. In other words, to push an object to the \
right, you must be on its left side and take the RIGHT action to apply force.

Message rules:
1. A message is a string including things you want to tell other agents.
2. Your message can be received by all agents within your view, and you can receive messages from all agents \
within your view.
3. Messages are broadcast-based. The source of a message is anonymous.
4. Write only what's necessary in your message. Avoid any ambiguity in your message.
5. Messages is capped to no more than {chars} characters, exceeding part will be replaced by "...".

Other rules:
1. Coordinates are represented as (i, j), where i is the row index and j is the column index. Your vision uses \
global coordinates, so please use global coordinates.
2. The direction of increasing i is downward, and increasing j is to the right.
3. Objects that are completely outside the map (marked with "*") will be removed.

Please think carefully and choose your next action. You will need to collaborate with other agents to \
successfully complete the task.

Your response should include:
1. Analysis of the current situation
2. Your decision and reasoning
3. The message to be left (if any)

"""
    + REFERENCE_END
    + "\n"
)
REFERENCE_ACTIONS = ("UP", "DOWN", "LEFT", "RIGHT", "STAY")  # the reference's order (its parser tries them so)
MEMORY = 5  # the views and actions its prompt shows
LABELS = ["Current Step", *(f"{i} Steps Before" for i in range(1, MEMORY))]


def reference_actions(task: str) -> tuple[str, ...]:
    """The actions the reference's parser looks for, in its order."""
    return REFERENCE_ACTIONS + (("SWITCH",) if task == "synchronization" else ())


def marked_lines(text: str, marker: str, quirks: bool) -> list[str]:
    """The rest of the line after each `marker` the reference's parser reads, in its order: with quirks
    the first occurrence of each of its spellings in turn (ACTION:, Action:, action:); without, the
    last occurrence in any case."""
    if quirks:
        spellings = (marker.upper(), marker.capitalize(), marker.lower())
        return [text.split(spelling, 1)[1].split("\n", 1)[0] for spelling in spellings if spelling in text]
    found = list(re.finditer(re.escape(marker), text, re.IGNORECASE))
    return [text[found[-1].end() :].split("\n", 1)[0]] if found else []


def marked_action(text: str, actions: tuple[str, ...], quirks: bool) -> str | None:
    """The reference's `to_action` action: in each line it reads, the first action of its list found
    anywhere in the line, a later line's replacing an earlier one's (quirks: "ACTION: STAY, not UP" is
    UP, "ACTION: UPWARD" is UP); without quirks the first action the line names as a word."""
    found = None
    for line in marked_lines(text, "action:", quirks):
        named = [a for a in actions if a in line] if quirks else re.findall(rf"\b(?:{'|'.join(actions)})\b", line)
        found = named[0] if named else found
    return found


def marked_message(text: str, quirks: bool, cap: int) -> str:
    """The reference's `to_action` message: the last line it reads after `MSG:`, stripped ("" for none),
    cut to `cap` characters with "..." added."""
    lines = marked_lines(text, "msg:", quirks)
    message = lines[-1].strip() if lines else ""
    return message[:cap] + "..." if len(message) > cap else message


def reference_observation(views: SwarmViews, agent: int) -> str:
    """The reference's `task_obs` lines of the agent."""
    if views.task == "pursuit":
        return f"score: {int(views.score[agent // views.n])}"
    if views.task == "synchronization":
        return f"light_on: {bool(views.state['light'][agent])}"
    if views.task == "foraging":
        return f"carrying_food: {bool(views.state['carrying'][agent])}"
    return ""


def shape(side: int) -> str:
    """The Flocking target as the reference writes it: a hollow square of A, its inside dots."""
    return "\n".join(
        " ".join("A" if i in (0, side - 1) or j in (0, side - 1) else "." for j in range(side)) for i in range(side)
    )


class SwarmReference:
    """The SwarmBench reference's prompt protocol for a block's agents (hivebench.engine.api.
    ReferenceProtocol): a fixed system message and one user message a round (`gen_prompt`), which
    shows the agent's last 5 views, newest first, and its last 5 actions and messages (`NONE` where
    none was read); the model is asked without its earlier turns. The action and the message are read
    from the `ACTION:` and `MSG:` lines (`to_action`). With quirks a reply without an action is STAY
    and still sends the message it has, never asked again, as the reference takes it (a valid reply);
    without, it is invalid and asked once more, as in every protocol."""

    grows = False

    def __init__(self, quirks: bool):
        self.quirks = quirks
        self.views: dict[int, list[str]] = {}  # every agent's last views, as drawn
        self.history: dict[int, list[tuple[int, str, str]]] = {}  # its last (round, action, message)

    def chat(self, views: SwarmViews, agent: int) -> tuple[dict[str, str], ...]:
        seen = self.views.setdefault(agent, [])
        seen.append(draw(views, agent) + "\n")
        del seen[:-MEMORY]
        history = self.history.get(agent, [])
        prompt = REFERENCE_PROMPT.format(
            name=f"Agent_{agent % views.n}",
            task=REFERENCE_TASKS[views.task].format(shape=shape(views.n // 4 + 1)),
            round=views.step,
            memory=MEMORY,
            vision="\n".join(f"{label}:\n{view}" for label, view in zip(LABELS, seen[::-1])),
            observation=reference_observation(views, agent),
            messages="".join(f'Message: "{text}"\n' for text in heard_by(views, agent)),
            history="".join(f'Round {k}: Action: {action}, Message: "{message}"\n' for k, action, message in history),
            chars=views.message_chars,
        )
        return {"role": "system", "content": REFERENCE_SYSTEM}, {"role": "user", "content": prompt}

    def parse(self, views: SwarmViews, agent: int, text: str) -> tuple[dict[str, Any] | None, str | None]:
        actions = reference_actions(views.task)
        action = marked_action(text, actions, self.quirks)
        if action is None and not self.quirks:
            return None, f"no ACTION: followed by one of {', '.join(actions)}"
        message = marked_message(text, self.quirks, views.message_chars)
        return {"action": action or "STAY", "message": message}, None

    def again(self, views: SwarmViews, agent: int, error: str) -> str:
        return f"Your response could not be parsed: {error}. {REFERENCE_END}"

    def replied(
        self, views: SwarmViews, agent: int, turns: tuple[dict[str, str], ...], reply: dict[str, Any] | None
    ) -> None:
        history = self.history.setdefault(agent, [])
        # the action as read from the reply: NONE for a fallback, or a reply taken as STAY for want of one
        action = marked_action(turns[-1]["content"], reference_actions(views.task), self.quirks) if reply else None
        history.append((history[-1][0] + 1 if history else 1, action or "NONE", reply["message"] if reply else ""))
        del history[:-MEMORY]
