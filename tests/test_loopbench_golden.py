"""LoopBench's classical trajectories are those of the code before the engine (commit ead4f13): the
colours of every agent at every state, seeds 0..9 on C3, C5 and C11, hashed. A change to a rule, a
random stream or the order of draws changes them; such a change must bump the method's version. The
ten seeds give the same trajectories played one at a time and played together in lockstep."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play, play_block

# sha256 (first 16 hex digits) of the JSON list, over seeds 0..9, of each episode's colours
# (state-major, agent-minor), as the pre-engine code wrote them.
BEFORE_THE_ENGINE = {
    ("conservative_random", 3): "163879f719307a9e",
    ("conservative_random", 5): "d634c1fc5470dab1",
    ("conservative_random", 11): "fe357604c9585990",
    ("greedy", 3): "e6624b983e14c9a8",
    ("greedy", 5): "31e325108546f4bf",
    ("greedy", 11): "76ed71f4720701f1",
    ("random", 3): "c7257b33b2a09e0e",
    ("random", 5): "f7ab4b468e5a87bc",
    ("random", 11): "bdacb37598007722",
    ("soft_cfp", 3): "3509115d031d617e",
    ("soft_cfp", 5): "d2dcad4909cd4d75",
    ("soft_cfp", 11): "24df275e06a66c93",
    ("soft_fp", 3): "3696bd3e0b4d9802",
    ("soft_fp", 5): "a69c017c1ad53f2b",
    ("soft_fp", 11): "314478a0f89ccf44",
}


@pytest.mark.parametrize("lockstep", [False, True], ids=["one-at-a-time", "lockstep"])
@pytest.mark.parametrize(("method", "n"), list(BEFORE_THE_ENGINE))
def test_classical_trajectories_are_unchanged_by_the_engine(method, n, lockstep):
    config = {
        "tasks": {"cycle": {"kind": "coloring"}},
        "methods": {method: {"kind": method}},
        "studies": {"s": {"tasks": ["cycle"], "methods": [method], "populations": [n], "seeds": 10}},
    }
    block = all_blocks(validate(config, "golden.yaml"), Path("golden.yaml").parent)["s"][0]
    cells = list(block.cells())
    records = play_block(cells) if lockstep else [play(cell) for cell in cells]
    colours = [record.agents["color"].tolist() for record in records]
    assert hashlib.sha256(json.dumps(colours).encode()).hexdigest()[:16] == BEFORE_THE_ENGINE[(method, n)]
