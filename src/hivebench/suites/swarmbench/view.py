"""SwarmBench in the episode viewer: the grid with its walls, food and nests, the prey or the box, and
each agent where it stands, coloured by the action that brought it there (carrying food, in Foraging).
The report's episode frames draw the same level and objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from hivebench import compat
from hivebench.suites.swarmbench import DIFFERENCES
from hivebench.suites.swarmbench.levels import FOOD, NEST, WALL, Level, played_level
from hivebench.view.episode import Episode
from hivebench.view.scene import EVERY_STATE, Scene, step_sums

KINDS = {WALL: "wall", FOOD: "food", NEST: "nest"}


def level_of(cell: Mapping[str, Any], summary: Mapping[str, Any]) -> Level:
    """The level a cell played (from its resolved cell and its summary)."""
    settings = compat.settings(cell["task"]["params"], DIFFERENCES)
    return played_level(
        summary["swarm_task"], int(cell["population"]), int(cell["seed"]), int(summary["size"]), settings
    )


def terrain_tiles(terrain: np.ndarray) -> pd.DataFrame:
    """The level's walls, food and nests: (row, col, kind)."""
    rows, cols = np.nonzero(terrain)
    return pd.DataFrame({"row": rows, "col": cols, "kind": [KINDS[int(terrain[r, c])] for r, c in zip(rows, cols)]})


def moved_objects(summary: Mapping[str, Any], box: np.ndarray | None, size: int) -> pd.DataFrame:
    """The prey or the box at every state: (step, row, col, kind)."""
    if summary["swarm_task"] == "pursuit":
        path = np.stack(list(summary["prey_path"])).reshape(-1, 2)  # lists, or arrays from a Parquet table
        return pd.DataFrame({"step": np.arange(len(path)), "row": path[:, 0], "col": path[:, 1], "kind": "prey"})
    if summary["swarm_task"] != "transport" or box is None:
        return pd.DataFrame({"step": [], "row": [], "col": [], "kind": []})
    offsets = np.stack(list(summary["box_path"])).reshape(-1, 2)  # (states, 2)
    cells = box[None, :, :] + offsets[:, None, :]  # (states, box cells, 2)
    steps = np.repeat(np.arange(len(offsets)), len(box))
    cells = cells.reshape(-1, 2)
    inside = ((cells >= 0) & (cells < size)).all(axis=1)
    return pd.DataFrame({"step": steps[inside], "row": cells[inside, 0], "col": cells[inside, 1], "kind": "box"})


def agent_states(agents: pd.DataFrame) -> pd.Series:
    state = agents["action"].fillna("").replace("", "start")
    if "carrying" in agents:
        state = state.where(~agents["carrying"].fillna(False).astype(bool), "carrying")
    return state


def scene(episode: Episode) -> Scene:
    level = level_of(episode.cell, episode.summary)
    size = len(level.terrain)
    agents = episode.agents
    on_map = agents["row"].between(0, size - 1) & agents["col"].between(0, size - 1)
    placed = agents.assign(x=agents["col"], y=agents["row"], state=agent_states(agents))[on_map]
    moving = moved_objects(episode.summary, level.box, size)
    tiles = pd.concat([terrain_tiles(level.terrain).assign(step=EVERY_STATE), moving], ignore_index=True)
    measures = {"sent": "messages sent", "heard": "messages heard"}
    return Scene(
        agents=placed[["step", "agent", "x", "y", "state"]],
        state="action",
        metrics=step_sums(agents.assign(on_map=on_map), {**measures, "on_map": "agents on the map"}),
        tiles=tiles.rename(columns={"col": "x", "row": "y"})[["step", "x", "y", "kind"]],
        grid=True,
        size=size,
    )
