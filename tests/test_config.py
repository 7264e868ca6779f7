"""A bad config stops with a message that names the file and the key."""

import json
import subprocess
import sys

import pytest
import yaml
from conftest import REPO, write_config

from hivebench.cells import all_blocks
from hivebench.config import ConfigError, load, validate
from hivebench.registry import METHODS, TASK_KINDS


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
    [
        (-3, "studies.tiny.seeds: -3 is less than the minimum of 1"),
        ([1, 1, 2], "studies.tiny.seeds: [1, 1, 2] has non-unique elements"),
        ([0, -1], "studies.tiny.seeds[1]: -1 is less than the minimum of 0"),
        ({"first": 100}, "studies.tiny.seeds: 'count' is a required property"),
        ({"first": 100, "count": 0}, "studies.tiny.seeds.count: 0 is less than the minimum of 1"),
    ],
)
def test_bad_seeds(config, tmp_path, seeds, message):
    config["studies"]["tiny"]["seeds"] = seeds
    assert message in problems_of(config, tmp_path)


def test_a_seed_range_is_its_seeds(config):
    config["studies"]["tiny"]["seeds"] = {"first": 1000, "count": 3}
    assert validate(config, "test")["studies"]["tiny"]["seeds"] == [1000, 1001, 1002]


def test_an_included_file_adds_its_entries_and_a_name_defined_twice_is_refused(config, tmp_path):
    study = config["studies"].pop("tiny")
    write_config(tmp_path / "more.yaml", {"studies": {"tiny": study}, "methods": {"extra": {"kind": "random"}}})
    write_config(tmp_path / "main.yaml", {**config, "include": ["more.yaml"]})
    loaded = load(tmp_path / "main.yaml")
    assert "tiny" in loaded["studies"] and "extra" in loaded["methods"] and "include" not in loaded
    write_config(tmp_path / "more.yaml", {"methods": {"random": {"kind": "random"}}, "report": {"episode_pages": 0}})
    with pytest.raises(ConfigError) as refused:
        load(tmp_path / "main.yaml")
    assert f"methods.random: defined in {tmp_path / 'main.yaml'} and in more.yaml" in str(refused.value)
    assert "include: more.yaml: 'report': an included file holds only tasks, methods, studies" in str(refused.value)
    write_config(tmp_path / "main.yaml", {**config, "include": ["missing.yaml"]})
    with pytest.raises(ConfigError, match="missing.yaml"):
        load(tmp_path / "main.yaml")
    # two included files that define one name are both named; the config given is left as it was
    write_config(tmp_path / "other.yaml", {"methods": {"extra": {"kind": "random"}}})
    write_config(tmp_path / "more.yaml", {"methods": {"extra": {"kind": "random"}}})
    given = {**config, "include": ["more.yaml", "other.yaml"]}
    with pytest.raises(ConfigError, match="methods.extra: defined in more.yaml and in other.yaml"):
        validate(given, str(tmp_path / "main.yaml"))
    assert "extra" not in given["methods"]


def test_a_seed_range_past_the_largest_seed_is_refused(config):
    config["studies"]["tiny"]["seeds"] = {"first": 2**32 - 2, "count": 5}
    with pytest.raises(ConfigError, match=r"studies.tiny.seeds: the range ends at 4,294,967,298, past the largest"):
        validate(config, "test")


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
    result = subprocess.run([sys.executable, "-m", "hivebench", "schema"], capture_output=True, text=True, check=True)
    schema = json.loads(result.stdout)
    assert set(schema["$defs"]["method"]["properties"]["kind"]["enum"]) == set(METHODS)
    assert set(schema["$defs"]["task"]["properties"]["kind"]["enum"]) == set(TASK_KINDS)
    assert {"coloring_task", "soft_fp_method", "llm_method"} <= set(schema["$defs"])  # suites' fragments merged


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
    assert load(write_config(tmp_path / "study.yaml", config))["studies"]["tiny"]["contrasts"]["pairs"] == [
        ["soft_fp", "random"]
    ]
    config["studies"]["tiny"]["contrasts"]["weights"] = {"swarmbench": 1}
    message = problems_of(config, tmp_path)
    assert "'loopbench' has no weight" in message and "'swarmbench' is not a suite of this study" in message


# One test per cause of the fault-injection probe of issue 9 (not per example).


def _set(path, value):
    def mutate(config):
        node = config
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value

    return mutate


@pytest.mark.parametrize(
    "mutate,message",
    [
        # integers written as floats: JSON Schema's `integer` takes 3.0
        (_set(("studies", "tiny", "seeds"), 3.0), "studies.tiny.seeds: 3.0 is not an integer (write 3)"),
        (
            _set(("methods", "soft_fp", "seeds_per_job"), 100.0),
            "methods.soft_fp.seeds_per_job: 100.0 is not an integer",
        ),
        (_set(("tasks", "cycle", "steps"), 2.5), "tasks.cycle.steps: 2.5 is not an integer"),
        # NaN and infinities pass minimum and maximum
        (_set(("methods", "soft_fp", "p"), float("nan")), "methods.soft_fp.p: nan is not a finite number"),
        (_set(("report", "confidence"), float("nan")), "report.confidence: nan is not a finite number"),
        (_set(("prices",), {"m": {"input": float("inf"), "output": 1}}), "prices.m.input: inf is not a finite number"),
        # upper bounds
        (
            _set(("studies", "tiny", "seeds"), 10**9),
            "studies.tiny.seeds: 1000000000 is greater than the maximum of 1000000",
        ),
        (
            _set(("studies", "tiny", "seeds"), [2**63]),
            "studies.tiny.seeds[0]: 9223372036854775808 is greater than the maximum of 4294967295",
        ),
        (
            _set(("studies", "tiny", "populations"), [3, 10**6]),
            "studies.tiny.populations[1]: 1000000 is greater than the maximum of 100000",
        ),
        (_set(("tasks", "cycle", "colors"), 10**6), "tasks.cycle.colors: 1000000 is greater than the maximum of 256"),
        (
            _set(("report", "bootstrap_resamples"), 10**12),
            "report.bootstrap_resamples: 1000000000000 is greater than the maximum of 1000000",
        ),
        (
            _set(("tasks", "cycle", "graph"), {"edges": [[0, 10**9]]}),
            "tasks.cycle.graph.edges[0][1]: 1000000000 is greater than the maximum of 99999",
        ),
        (_set(("tasks", "cycle", "steps"), 10**6), "tasks.cycle.steps: 1000000 is greater than the maximum of 10000"),
        # names: Python's `$` matches before a final newline; lengths
        (_set(("methods", "random\n"), {"kind": "random"}), "methods: 'random\\n' does not match"),
        (
            _set(("studies", "x" * 65), {"tasks": ["cycle"], "methods": ["random"], "populations": [3], "seeds": 1}),
            "is too long",
        ),
        # references between keys
        (
            _set(("studies", "tiny", "contrasts"), {"pairs": [["random", "random"]]}),
            "studies.tiny.contrasts.pairs[0]: a method contrasted with itself ('random')",
        ),
        (
            _set(("studies", "tiny", "contrasts"), {"reference": "random", "metrics": ["proximty"]}),
            "studies.tiny.contrasts.metrics[0]: 'proximty' is not a metric of this study's suites "
            "(final_optimal, first_optimal_step, proximity, reached_optimum, stability)",
        ),
        (
            _set(("tasks", "cycle", "conf_best"), 2),
            "studies.tiny.populations[0]: conf_best = 2 is wrong for C3 with 2 colours: the optimum is 1",
        ),
        (_set(("anchors",), "missing.yaml"), "anchors: "),
    ],
)
def test_each_cause_is_stopped_with_the_key_named(config, tmp_path, mutate, message):
    mutate(config)
    assert message in problems_of(config, tmp_path)


def test_bounds_that_span_keys(config, tmp_path):
    config["studies"]["tiny"]["populations"] = [100000]
    config["tasks"]["cycle"]["steps"] = 1000
    assert "is 100,000,000 agent-steps in one episode; the limit is 10,000,000" in problems_of(config, tmp_path)
    config["studies"]["tiny"]["populations"] = [3]
    config["studies"]["tiny"]["seeds"] = 1000000
    config["methods"]["random"]["seeds_per_job"] = 1
    assert "the config expands to 1,200,000 jobs; the limit is 100,000" in problems_of(config, tmp_path)


def test_the_size_bounds_count_the_jobs_and_cells_the_workflow_makes(config):
    from hivebench.config import _matrix_size, resolved_task_params

    config["studies"]["tiny"]["method_seeds"] = {"random": [0, 3, 7, 12]}
    config["tasks"]["k3"] = {"kind": "coloring", "graph": {"edges": [[0, 1], [1, 2], [0, 2]]}}
    config["studies"]["tiny"]["tasks"].append("k3")
    filled = validate(config, "x.yaml")
    blocks = all_blocks(filled, REPO)["tiny"]
    resolved = {name: resolved_task_params(task, REPO) for name, task in filled["tasks"].items()}
    assert (
        _matrix_size(filled, filled["studies"]["tiny"], resolved)
        == (len(blocks), sum(len(b.seeds) for b in blocks))
        == (15, 42)
    )


def test_a_name_snakemake_would_take_for_a_runaway_wildcard(config, tmp_path):
    config["methods"]["ab" * 20] = {"kind": "random"}
    assert "the name ends in 'ab' repeated 20 times" in problems_of(config, tmp_path)


def test_repeated_keys_are_refused_with_file_and_line(tmp_path):
    text = yaml.safe_dump(tiny_config_dict(), sort_keys=False)
    path = tmp_path / "twice.yaml"
    path.write_text(text + "studies:\n  other: {tasks: [cycle], methods: [random], populations: [3], seeds: 1}\n")
    with pytest.raises(ConfigError) as info:
        load(path)
    lines = text.splitlines()
    first = lines.index("studies:") + 1
    assert f"the key 'studies' is given a second time (first on line {first})" in str(info.value)
    assert f'in "{path}", line {len(lines) + 1}' in str(info.value)


def tiny_config_dict():
    from conftest import tiny_config

    return tiny_config()


def test_undecodable_bytes_are_named_not_a_traceback(config, tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(yaml.safe_dump(config).encode() + b"# caf\xe9\n")
    with pytest.raises(
        ConfigError, match=r"not valid YAML: unacceptable character #x00e9: invalid continuation byte"
    ) as info:
        load(path)
    assert str(path) in str(info.value)
    (tmp_path / "g.txt").write_bytes(b"0 1\n1 2\n\xff\xfe 0\n")
    config["tasks"]["g"] = {"kind": "coloring", "graph": {"edges_file": "g.txt"}}
    assert "tasks.g.graph: " + str(tmp_path / "g.txt") + ": not UTF-8 text (byte 8)" in problems_of(config, tmp_path)


def test_an_edges_file_that_is_a_folder_or_holds_secrets(config, tmp_path):
    (tmp_path / "edges").mkdir()
    config["tasks"]["g"] = {"kind": "coloring", "graph": {"edges_file": "edges"}}
    assert "is not a regular file" in problems_of(config, tmp_path)
    (tmp_path / "edges.txt").write_text("API_KEY=sk-secret-value\n")
    config["tasks"]["g"]["graph"] = {"edges_file": "edges.txt"}
    message = problems_of(config, tmp_path)
    assert "edges.txt:1: expected two node numbers" in message and "sk-secret" not in message
    (tmp_path / "edges.txt").write_text("0 1\n1 100000\n")
    assert "edges.txt:2: node 100000 is above the largest node number, 99999" in problems_of(config, tmp_path)


def test_an_anchors_file_that_is_not_a_mapping(config, tmp_path):
    (tmp_path / "anchors.yaml").write_text("- 6.2\n")
    config["anchors"] = "anchors.yaml"
    assert "anchors: " + str(tmp_path / "anchors.yaml") + ": the top level must map suites" in problems_of(
        config, tmp_path
    )
    (tmp_path / "anchors.yaml").write_text("swarmbench: {pursuit: {8: {value: .nan, provenance: x}}}\n")
    assert "swarmbench.pursuit.8.value: must be a positive finite number" in problems_of(config, tmp_path)


@pytest.mark.parametrize(
    ("history", "message"),
    [
        (3.0, "3.0 is not an integer (write 3)"),
        (-1, "-1 is less than the minimum of 0"),
        ("ful", "'full' was expected"),
    ],
)
def test_a_value_matching_no_alternative_is_told_about_the_closest_one(config, tmp_path, history, message):
    """`history` is "full" or a count: a number is told what is wrong with it as a number, a string
    is told the name it may have misspelt."""
    config["methods"]["api"] = {
        "kind": "llm",
        "backend": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "history": history,
    }
    assert f"methods.api.history: {message}" in problems_of(config, tmp_path)


def test_llm_slots_never_names_a_snakemake_resource(config, tmp_path):
    for name in ("mem_mb", "_cores", "runtime", "threads"):
        config["methods"]["api"] = {
            "kind": "llm",
            "backend": "openai",
            "model": "m",
            "base_url": "http://127.0.0.1:1/v1",
            "llm_slots": name,
        }
        assert f"methods.api.llm_slots: '{name}' does not match" in problems_of(config, tmp_path)
    config["methods"]["api"]["llm_slots"] = "llm_slots_vllm"
    config["methods"]["api"]["base_url"] = "localhost:8000/v1"  # no scheme: the client would fail in every job
    assert "methods.api.base_url: 'localhost:8000/v1' does not match" in problems_of(config, tmp_path)


def test_initial_notes_from_a_file_that_is_not_an_episode(config, tmp_path):
    (tmp_path / "notes.parquet").write_text("not parquet")
    config["methods"]["llm"] = {
        "kind": "llm",
        "backend": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "initial_notes": {"episode": "notes.parquet"},
    }
    config["studies"]["tiny"]["methods"].append("llm")
    assert "methods.llm.initial_notes.episode: " + str(
        tmp_path / "notes.parquet"
    ) + " is not a readable Parquet file" in problems_of(config, tmp_path)
    (tmp_path / "notes.txt").write_bytes(b"\xff")
    config["methods"]["llm"]["initial_notes"] = {"file": "notes.txt"}
    assert "methods.llm.initial_notes.file: " + str(
        tmp_path / "notes.txt"
    ) + " is not UTF-8 text (byte 0)" in problems_of(config, tmp_path)


def test_every_command_takes_the_config_as_people_type_it(config, tmp_path):
    path = write_config(tmp_path / "my.yaml", config)
    for command in ("validate", "cells", "status", "estimate", "verify"):
        result = subprocess.run(
            [sys.executable, "-m", "hivebench", command, str(path)], capture_output=True, text=True, cwd=tmp_path
        )
        assert result.returncode == 0, (command, result.stderr)
    result = subprocess.run(
        [sys.executable, "-m", "hivebench", "validate", str(path), "-c", "other.yaml"], capture_output=True, text=True
    )
    assert result.returncode == 2 and "two config files given" in result.stderr


def test_yaml_aliases_that_expand_to_billions_of_values(tmp_path):
    lines = ["a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for level, name in enumerate("bcdefghi"):
        previous = "abcdefghi"[level]
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]")
    (tmp_path / "bomb.yaml").write_text("\n".join(lines) + "\n")  # 10^9 values in nine lines
    with pytest.raises(ConfigError, match="more than 5,000,000 values once YAML aliases are expanded"):
        load(tmp_path / "bomb.yaml")


@pytest.mark.slow  # ~8 s
def test_a_job_whose_cells_would_not_fit_on_its_command_line(config, tmp_path):
    from hivebench.cells import MAX_SPEC_CHARS, expand_jobs
    from hivebench.ids import canonical_json

    config["studies"]["tiny"]["seeds"] = list(range(4_000_000_000, 4_000_020_000))
    config["methods"]["random"]["seeds_per_job"] = 20_000
    path = write_config(tmp_path / "big.yaml", config)
    with pytest.raises(ConfigError) as info:
        expand_jobs(load(path), str(path))
    assert "a job of task 'cycle' and method 'random' would carry 220," in str(info.value)
    assert "lower methods.random.seeds_per_job" in str(info.value) and "soft_fp" not in str(info.value)
    result = subprocess.run([sys.executable, "-m", "hivebench", "validate", str(path)], capture_output=True, text=True)
    assert result.returncode == 2 and "would carry" in result.stderr
    config["methods"]["random"]["seeds_per_job"] = 8_000  # fits: and the estimate is an upper bound
    blocks = expand_jobs(load(write_config(tmp_path / "big.yaml", config)), str(path))
    assert max(len(canonical_json(b.spec())) for b in blocks["tiny"]) <= MAX_SPEC_CHARS


def test_a_nul_character_never_reaches_a_command_line(config, tmp_path):
    config["methods"]["llm"] = {
        "kind": "llm",
        "backend": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "initial_notes": {"text": "keep\x00colour"},
    }
    config["studies"]["tiny"]["methods"].append("llm")
    assert "methods.llm.initial_notes.text: contains a NUL character" in problems_of(config, tmp_path)
    (tmp_path / "notes.txt").write_bytes(b"keep\x00colour")
    config["methods"]["llm"]["initial_notes"] = {"file": "notes.txt"}
    assert f"methods.llm.initial_notes.file: {tmp_path / 'notes.txt'} contains a NUL character" in problems_of(
        config, tmp_path
    )


def test_a_yaml_alias_that_holds_itself(tmp_path):
    (tmp_path / "loop.yaml").write_text("tasks: &t {cycle: {kind: coloring, also: [*t]}}\nmethods: {}\nstudies: {}\n")
    with pytest.raises(ConfigError, match="a YAML alias refers to a mapping or list that holds it"):
        load(tmp_path / "loop.yaml")


def test_what_no_command_line_or_file_can_carry(config, tmp_path):
    from hivebench.cells import expand_jobs

    config["methods"]["random"]["kind"] = "llm"
    config["methods"]["random"].update({"backend": "openai", "model": "m\ud800", "base_url": "http://127.0.0.1:1/v1"})
    assert "methods.random.model: contains a lone surrogate" in problems_of(config, tmp_path)
    config["methods"]["random"]["model"] = "m"
    config["methods"]["random"]["initial_notes"] = {"text": "'" * 30_000}  # five bytes each once shell-quoted
    path = write_config(tmp_path / "quotes.yaml", config)
    with pytest.raises(ConfigError, match="a job of task 'cycle' and method 'random' would carry 1[0-9]{2},"):
        expand_jobs(load(path), str(path))
    config["methods"]["random"]["initial_notes"] = {"text": "\U0001f600" * 30_000}  # four bytes each in UTF-8
    path = write_config(tmp_path / "emoji.yaml", config)
    with pytest.raises(ConfigError, match="would carry 1[0-9]{2},"):
        expand_jobs(load(path), str(path))
    del config["methods"]["random"]
    config["studies"]["tiny"]["methods"] = ["soft_fp", "greedy"]
    config["methods"]["greedy"] = {"kind": "greedy"}
    config["studies"]["tiny"]["contrasts"] = {"pairs": [["greedy", "soft_fp"]] * 2}
    assert "studies.tiny.contrasts.pairs: " in problems_of(config, tmp_path)
