"""Cells played into a test folder for the episode viewer's tests: one per suite, and LoopBench under a
scripted LLM whose replies the tests choose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.writer import write_episode
from hivebench.paths import cell_path

# A small task of each suite and a classical method of it that sends messages.
SUITE_CELLS = {
    "loopbench": ({"kind": "coloring", "graph": "cycle", "steps": 6, "init": "random"}, {"kind": "random"}, 5),
    "agentsnet": ({"kind": "agentsnet", "problem": "coloring", "family": "delaunay"}, {"kind": "distributed"}, 8),
    "swarmbench": ({"kind": "swarmbench", "task": "pursuit", "rounds": 12}, {"kind": "heuristic"}, 8),
    "silobench": (
        {"kind": "silobench", "task": "I-09", "topology": "regular3", "rounds": 4},
        {"kind": "distributed"},
        8,
    ),
}


def played(
    folder: Path,
    task: dict[str, Any],
    method: dict[str, Any],
    population: int,
    seed: int = 0,
    perturbation: dict[str, Any] | None = None,
) -> Path:
    """Play one cell of `task` under `method` (run from `folder`: its paths are relative), perturbed
    as given; its file."""
    study: dict[str, Any] = {"tasks": ["t"], "methods": ["m"], "populations": [population], "seeds": seed + 1}
    config: dict[str, Any] = {"tasks": {"t": task}, "methods": {"m": method}, "studies": {"s": study}}
    if perturbation is not None:
        config["perturbations"] = {"p": perturbation}
        study["perturbations"] = ["p"]
    source = folder / "config.yaml"
    (blocks,) = all_blocks(validate(config, str(source)), folder).values()
    cell = [c for block in blocks for c in block.cells() if c["seed"] == seed][0]
    path = folder / cell_path(cell)
    write_episode(cell, path)
    return path


def scripted_loopbench(folder: Path, replies: list[dict[str, Any] | str], steps: int, n: int = 3) -> Path:
    """LoopBench C_n for `steps` rounds under the scripted backend answering `replies` in order (round
    by round, agent by agent)."""
    (folder / "replies.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replies))
    method = {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", "notes_chars": 60, "max_tokens": 64}
    task = {"kind": "coloring", "graph": "cycle", "steps": steps}
    return played(folder, task, method, n)
