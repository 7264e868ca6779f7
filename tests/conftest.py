from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def tiny_config() -> dict[str, Any]:
    """A small LoopBench config: two methods on C3 and C5, ten seeds in blocks of five."""
    return {
        "tasks": {"cycle": {"kind": "coloring", "graph": "cycle", "steps": 15}},
        "methods": {
            "random": {"kind": "random", "seeds_per_job": 5},
            "soft_fp": {"kind": "soft_fp", "p": 0.3, "seeds_per_job": 5},
        },
        "studies": {"tiny": {"tasks": ["cycle"], "methods": ["random", "soft_fp"], "populations": [3, 5], "seeds": 10}},
        "report": {"bootstrap_resamples": 1000},
    }


@pytest.fixture
def config() -> dict[str, Any]:
    return copy.deepcopy(tiny_config())


def write_config(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
