"""A bad config stops with a message that names the file and the key."""

import subprocess
import sys

import pytest
import yaml

from conftest import REPO, write_config
from hivebench.cells import all_blocks
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


@pytest.mark.parametrize(
    "seeds,message",
    [(-3, "studies.tiny.seeds: -3 is less than the minimum of 1"),
     ([1, 1, 2], "studies.tiny.seeds: [1, 1, 2] has non-unique elements"),
     ([0, -1], "studies.tiny.seeds[1]: -1 is less than the minimum of 0")],
)
def test_bad_seeds(config, tmp_path, seeds, message):
    config["studies"]["tiny"]["seeds"] = seeds
    assert message in problems_of(config, tmp_path)


def test_yaml_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("tasks: [\n")
    with pytest.raises(ConfigError, match="not valid YAML") as info:
        load(path)
    assert str(info.value).count(str(path)) == 2  # in the heading and in the parser's position


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
    loaded = load(write_config(tmp_path / "study.yaml", config))
    assert loaded["tasks"]["k4"]["graph"] == {"edges_file": "k4.txt"}
    blocks = all_blocks(loaded, tmp_path)["tiny"]
    sizes = {(b.shared["task"]["name"], b.shared["population"]) for b in blocks}
    assert sizes == {("cycle", 3), ("cycle", 5), ("k4", 4)}  # the fixed graph at its own size only
    assert blocks[-1].shared["task"]["params"]["graph"] == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]


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


def test_contrasts_must_name_the_study_methods(config, tmp_path):
    config["studies"]["tiny"]["contrasts"] = {"reference": "greedy"}
    assert "studies.tiny.contrasts: 'greedy' is not one of this study's methods" in problems_of(config, tmp_path)
    config["studies"]["tiny"]["contrasts"] = {"pairs": [["soft_fp", "random"]], "weights": {"loopbench": 0}}
    assert "studies.tiny.contrasts.weights.loopbench" in problems_of(config, tmp_path)
    config["studies"]["tiny"]["contrasts"] = {"pairs": [["soft_fp", "random"]], "weights": {"loopbench": 2}}
    assert load(write_config(tmp_path / "study.yaml", config))["studies"]["tiny"]["contrasts"]["pairs"] == [["soft_fp", "random"]]
    config["studies"]["tiny"]["contrasts"]["weights"] = {"swarmbench": 1}
    message = problems_of(config, tmp_path)
    assert "'loopbench' has no weight" in message and "'swarmbench' is not a suite of this study" in message
