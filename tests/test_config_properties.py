"""Property: any mutation of a valid config gets either a clear error naming a key, or a config whose
cells run and score. Never a traceback, never accepted and then broken inside a job."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import REPO, soak_count, tiny_config
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hivebench.anchors import load_anchors
from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.contrasts import contrast_table
from hivebench.engine.jobs import summary_row
from hivebench.engine.writer import run_episode
from hivebench.ids import digest
from hivebench.registry import SUITE_METRICS
from hivebench.scores import score_table

SECTIONS = ("tasks", "methods", "studies", "prices", "report", "anchors")
PROBLEM = re.compile(r"^  - (\(top level\)|(" + "|".join(SECTIONS) + r")\b)")
MOST_AGENT_STEPS_RUN = 20_000  # larger valid cells are expanded but not played, to keep the test fast
MOST_AGENTS_RUN = 2_000
ANCHORS = load_anchors(REPO / "config/anchors.yaml")
MOST_BLOCKS_RUN = 12


def base_config() -> dict[str, Any]:
    """A study of each suite: LoopBench (tiny_config and more), AgentsNet with Silo-Bench, SwarmBench."""
    config = tiny_config()
    config["tasks"]["k3"] = {"kind": "coloring", "graph": {"edges": [[0, 1], [1, 2], [0, 2]]}, "colors": 3}
    config["tasks"]["an"] = {"kind": "agentsnet", "problem": "matching", "family": "delaunay", "rounds": 4}
    config["tasks"]["silo"] = {"kind": "silobench", "task": "III-24", "protocol": "broadcast", "rounds": 2}
    config["tasks"]["sw"] = {"kind": "swarmbench", "task": "pursuit", "rounds": 6}
    config["methods"]["greedy"] = {"kind": "greedy", "seeds_per_job": 3}
    config["methods"]["api"] = {"kind": "llm", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    config["methods"]["distributed"] = {"kind": "distributed", "seeds_per_job": 2}
    config["methods"]["heuristic"] = {"kind": "heuristic"}
    config["studies"]["tiny"]["tasks"].append("k3")
    config["studies"]["tiny"]["contrasts"] = {"reference": "random", "metrics": ["proximity"]}
    config["studies"]["graphs"] = {
        "tasks": ["an", "silo"],
        "methods": ["random", "distributed"],
        "populations": [6],
        "seeds": 2,
    }
    config["studies"]["swarm"] = {
        "tasks": ["sw"],
        "methods": ["heuristic", "random"],
        "populations": [8],
        "seeds": 2,
        "contrasts": {"reference": "random"},
    }
    config["prices"] = {"m": {"input": 1.0, "output": 2.0}}
    return config


NASTY = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            0,
            -1,
            1,
            2,
            3.0,
            0.5,
            1.5,
            math.nan,
            math.inf,
            -math.inf,
            2**31,
            2**63,
            10**9,
            "",
            "x",
            "random",
            "random\n",
            "a" * 300,
            "cycle",
            "full",
            "soft_fp",
            [],
            {},
            [0],
            [3, 3],
            [[0, 1]],
            [[0, 0]],
            {"kind": "random"},
            {"edges_file": "missing.txt"},
            {"reference": "soft_fp"},
            "llm_slots_x",
            "mem_mb",
        ]
    ),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)


def places(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a config tree."""
    found = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        found.append((node, key))
        found += places(value)
    return found


def tweaked(value: Any) -> st.SearchStrategy[Any]:
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.one_of(st.integers(-2, 40), st.integers(0, 2_000_000))
    if isinstance(value, float):
        return st.floats(-0.5, 2.5)
    if isinstance(value, str):
        return st.sampled_from(
            [
                "random",
                "soft_fp",
                "soft_cfp",
                "greedy",
                "cycle",
                "k3",
                "full",
                "same",
                "random",
                "after_steps",
                "from_initial",
                "coloring",
                "llm",
                "openai",
                "transformers",
                "an",
                "silo",
                "sw",
                "agentsnet",
                "silobench",
                "swarmbench",
                "distributed",
                "heuristic",
                "matching",
                "coloring",
                "consensus",
                "delaunay",
                "III-24",
                "I-01",
                "broadcast",
                "p2p",
                "store",
                "complete",
                "pursuit",
                "foraging",
                "transport",
                "auto",
                "paper",
            ]
        )
    if isinstance(value, list) and value:
        return st.lists(st.sampled_from(value), min_size=0, max_size=len(value) + 1)
    return st.just(value)


@st.composite
def mutated_configs(draw: st.DrawFn) -> dict[str, Any]:
    config = base_config()
    for _ in range(draw(st.integers(1, 3))):
        spots = places(config)
        container, key = spots[draw(st.integers(0, len(spots) - 1))]
        action = draw(st.sampled_from(["tweak", "tweak", "replace", "delete", "add", "rename"]))
        if action == "tweak":  # a value of the same type: mostly what a person would change
            container[key] = draw(tweaked(container[key]))
        elif action == "replace":
            container[key] = copy.deepcopy(draw(NASTY))
        elif action == "delete":
            del container[key]
        elif action == "add" and isinstance(container, dict):
            container[draw(st.text(min_size=1, max_size=8))] = copy.deepcopy(draw(NASTY))
        elif action == "rename" and isinstance(container, dict):
            new = draw(
                st.one_of(st.sampled_from(["random", "x\n", "ab" * 20, "a" * 65, "soft_fp"]), st.text(max_size=8))
            )
            container[new] = container.pop(key)
    return config


def run_and_score(config: dict[str, Any], base: Path) -> None:
    """Play the first cell of each job block (up to a few), then score and contrast what ran."""
    for study, blocks in all_blocks(config, base).items():
        rows = []
        for block in blocks[:MOST_BLOCKS_RUN]:
            cell = next(block.cells())
            if cell["method"]["kind"] == "llm":
                continue  # would call a server; its config checks are what matters here
            params = cell["task"]["params"]
            rounds = params["steps"] if cell["suite"] == "loopbench" else params["rounds"]
            if not isinstance(rounds, int):  # AgentsNet's "paper": 2D + 1 rounds, D the graph's diameter
                rounds = 2 * cell["population"] + 1
            if cell["population"] > MOST_AGENTS_RUN or cell["population"] * rounds > MOST_AGENT_STEPS_RUN:
                continue
            table, summary = run_episode(cell)
            if cell["suite"] == "loopbench":
                assert table.num_rows == cell["population"] * (rounds + 1)
                assert 0 <= summary["stability"] <= 100
                assert math.isnan(summary["proximity"]) or summary["proximity"] <= 100
                assert min(summary["conflicts"]) >= summary["conf_best"]
            rows.append(summary_row(cell, digest(cell), summary))
        if not rows:
            continue
        episodes = pd.DataFrame(rows)
        report = config["report"]
        scores = score_table(episodes, 200, report["confidence"], report["bootstrap_seed"], ANCHORS, "percentile")
        assert scores["mean"].notna().any()
        spec = config["studies"][study].get("contrasts")
        ran = set(episodes["method"])
        if spec and {spec.get("reference"), *(m for pair in spec.get("pairs", []) for m in pair)} - {None} <= ran:
            metrics = spec.get("metrics") or [m.name for suite in set(episodes["suite"]) for m in SUITE_METRICS[suite]]
            contrast_table(episodes, spec, metrics, 200, report["confidence"], report["bootstrap_seed"])


@pytest.mark.slow  # ~15 s at CI's sample of 150 mutants
@pytest.mark.soak  # 600 under `make soak`
@settings(
    max_examples=soak_count(150, 600),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(config=mutated_configs())
def test_a_mutated_config_is_refused_by_key_or_runs(config: dict[str, Any], tmp_path: Path) -> None:
    try:
        filled = validate(config, str(tmp_path / "mutant.yaml"))
    except ConfigError as exc:
        event("refused, naming the key")
        lines = str(exc).splitlines()
        assert lines[0] == f"invalid hivebench configuration {tmp_path / 'mutant.yaml'}:"
        for line in lines[1:]:
            if line.startswith("  - "):  # a key path: a section, or a key the mutation put at the top
                assert PROBLEM.match(line) or line[4:].startswith(tuple(map(str, config))), line
        return
    event("accepted, and ran")
    run_and_score(filled, tmp_path)


def test_the_unmutated_config_runs(tmp_path: Path) -> None:
    run_and_score(validate(base_config(), "base.yaml"), tmp_path)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
