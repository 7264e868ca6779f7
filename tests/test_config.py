"""A bad config stops with a message that names the file and the key."""

import subprocess
import sys

import pytest
import yaml

from conftest import REPO, write_config
from hivebench.config import ConfigError, load, validate
from hivebench.registry import METHODS, TASKS


def problems_of(config, tmp_path):
    with pytest.raises(ConfigError) as info:
        load(write_config(tmp_path / "study.yaml", config))
    message = str(info.value)
    assert str(tmp_path / "study.yaml") in message
    return message


def test_the_default_config_is_valid_and_gets_its_defaults_filled():
    config = load(REPO / "config" / "config.yaml")
    assert config["methods"]["soft_fp"]["p"] == 0.3
    assert config["report"]["bootstrap_resamples"] == 10000


def test_defaults_are_filled_into_a_copy(config):
    del config["methods"]["soft_fp"]["p"]
    filled = validate(config, "x.yaml")
    assert filled["methods"]["soft_fp"]["p"] == 0.3
    assert filled["tasks"]["cycle"]["init"] == "same"
    assert "p" not in config["methods"]["soft_fp"]


def test_unknown_method_in_a_study(config, tmp_path):
    config["studies"]["tiny"]["methods"].append("o3")
    message = problems_of(config, tmp_path)
    assert "studies.tiny.methods[2]: unknown method 'o3'" in message


def test_unknown_method_kind(config, tmp_path):
    config["methods"]["soft_fp"]["kind"] = "softfp"
    assert "methods.soft_fp.kind: 'softfp' is not one of" in problems_of(config, tmp_path)


def test_wrong_type(config, tmp_path):
    config["tasks"]["cycle"]["steps"] = "fifteen"
    assert "tasks.cycle.steps: 'fifteen' is not of type 'integer'" in problems_of(config, tmp_path)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_probability_outside_the_unit_interval(config, tmp_path, p):
    config["methods"]["soft_fp"]["p"] = p
    assert "methods.soft_fp.p:" in problems_of(config, tmp_path)


def test_cycle_shorter_than_three(config, tmp_path):
    config["studies"]["tiny"]["populations"] = [2, 5]
    assert "studies.tiny.populations[0]: a cycle needs at least 3 nodes, got 2" in problems_of(config, tmp_path)


@pytest.mark.parametrize(
    "where,key",
    [(("methods", "random"), "methods.random"), (("tasks", "cycle"), "tasks.cycle"), ((), "(top level)")],
)
def test_unknown_key(config, tmp_path, where, key):
    node = config
    for part in where:
        node = node[part]
    node["colour"] = 3
    message = problems_of(config, tmp_path)
    assert key in message and "'colour'" in message


def test_a_parameter_of_another_method_kind_is_an_unknown_key(config, tmp_path):
    config["methods"]["random"]["p"] = 0.3
    message = problems_of(config, tmp_path)
    assert "methods.random" in message and "'p' was unexpected" in message


def test_every_problem_is_reported_at_once(config, tmp_path):
    config["tasks"]["cycle"]["steps"] = 1
    config["methods"]["soft_fp"]["p"] = 2
    message = problems_of(config, tmp_path)
    assert "tasks.cycle.steps" in message and "methods.soft_fp.p" in message


def test_fixed_graph_checks(config, tmp_path):
    config["tasks"]["loop"] = {"kind": "coloring", "graph": {"edges": [[0, 1], [1, 1]]}}
    config["studies"]["tiny"]["tasks"].append("loop")
    assert "tasks.loop.graph: edges: self-loop on node 1" in problems_of(config, tmp_path)
    config["tasks"]["loop"]["graph"] = {"edges_file": "missing.txt"}
    assert "missing.txt' does not exist" in problems_of(config, tmp_path)


def test_fixed_graph_from_an_edges_file_relative_to_the_config(config, tmp_path):
    (tmp_path / "k4.txt").write_text("# K4\n0 1\n0 2\n0,3\n1 2\n1 3\n2 3\n")
    config["tasks"]["k4"] = {"kind": "coloring", "graph": {"edges_file": "k4.txt"}}
    config["studies"]["tiny"]["tasks"].append("k4")
    config["studies"]["tiny"]["populations"] = [3, 4]
    loaded = load(write_config(tmp_path / "study.yaml", config))
    assert loaded["tasks"]["k4"]["graph"] == {"edges_file": "k4.txt"}
    config["studies"]["tiny"]["populations"] = [3, 5]
    assert "fixed graph of 4 nodes" in problems_of(config, tmp_path)


def test_schema_names_exactly_the_registered_kinds():
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    assert set(schema["$defs"]["method"]["properties"]["kind"]["enum"]) == set(METHODS)
    assert set(schema["$defs"]["task"]["properties"]["kind"]["enum"]) == set(TASKS)


def test_cli_validate_exits_2_and_names_the_key(config, tmp_path):
    config["methods"]["soft_fp"]["p"] = 1.5
    path = write_config(tmp_path / "bad.yaml", config)
    result = subprocess.run(
        [sys.executable, "-m", "hivebench", "validate", "--config", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert str(path) in result.stderr and "methods.soft_fp.p: 1.5 is greater than the maximum of 1" in result.stderr
