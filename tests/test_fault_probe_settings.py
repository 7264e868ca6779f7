"""Settings the fault probe found accepted and then broken, dropped or kept without a word: a message cap
below what the Waggle controls send on AgentsNet, the landing page of a study without populations,
and task settings that cannot act on the cells they would be in. Each is now refused by validation
with the key named (or handled)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write_config
from test_config_faults import refusal

from hivebench.cells import all_blocks
from hivebench.config import load, validate
from hivebench.engine.loop import play_block
from hivebench.report.landing import render_landing
from hivebench.suites.agentsnet import classical_message_chars


def study(tasks: dict[str, Any], methods: dict[str, Any], **settings: Any) -> dict[str, Any]:
    return {
        "tasks": tasks,
        "methods": {name: {"seeds_per_job": 100, **method} for name, method in methods.items()},
        "studies": {"s": {"tasks": list(tasks), "methods": list(methods), "seeds": 1, **settings}},
    }


# 1. A message cap below what the Waggle controls send on AgentsNet


def coloring(cap: int) -> dict[str, Any]:
    return {"t": {"kind": "agentsnet", "problem": "coloring", "family": "barabasi_albert", "message_chars": cap}}


@pytest.mark.parametrize("kind", ["nativemsg", "fixedswarm", "scripted_controller"])
def test_an_agentsnet_cap_below_the_messages_a_waggle_method_sends_is_refused_naming_the_key(kind, tmp_path):
    """The controls that talk send the distributed algorithm's messages: the same check as
    `distributed`'s, with the same least cap."""
    minimum = classical_message_chars("coloring", 8)
    message = refusal(study(coloring(minimum - 1), {"m": {"kind": kind}}, populations=[8]), tmp_path)
    assert f"tasks.t.message_chars: {minimum - 1} is below the {minimum} characters" in message
    assert f"at N = 8; raise it to at least {minimum} (study 's', method 'm')" in message
    distributed = refusal(study(coloring(minimum - 1), {"m": {"kind": "distributed"}}, populations=[8]), tmp_path)
    assert f"raise it to at least {minimum} (study 's', method 'm')" in distributed
    # at the least cap every round plays, and no message is longer
    filled = validate(study(coloring(minimum), {"m": {"kind": kind}}, populations=[8], seeds=2), "x.yaml")
    for block in all_blocks(filled, Path("."))["s"]:
        for record in play_block(list(block.cells())):
            sizes = record.tables["messages"]
            sizes = sizes() if callable(sizes) else sizes
            assert 0 < sizes.num_rows and max(sizes.column("size").to_pylist()) <= minimum


def test_nocomm_sends_nothing_so_any_agentsnet_cap_will_do():
    validate(study(coloring(1), {"m": {"kind": "nocomm"}}, populations=[8]), "x.yaml")


# 2. The landing page of a study on a fixed graph, without populations


def test_the_landing_page_of_a_study_without_populations_names_the_fixed_graphs_size(tmp_path):
    triangle = {"kind": "coloring", "graph": {"edges": [[0, 1], [1, 2], [2, 0]]}}
    square = {"kind": "coloring", "graph": {"edges": [[0, 1], [1, 2], [2, 3], [3, 0]]}}
    config = study({"a": triangle, "b": square}, {"m": {"kind": "random"}})
    config["studies"]["cycles"] = {"tasks": ["a", "c"], "methods": ["m"], "populations": [5], "seeds": 1}
    config["tasks"]["c"] = {"kind": "coloring", "graph": "cycle"}
    path = write_config(tmp_path / "study.yaml", config)
    page = render_landing(load(path), str(path), tmp_path / "reports" / "index.html", tmp_path).read_text()
    rows = page.split("<tr>")[2:]
    assert "<td>3, 4</td>" in rows[0] and "not collected yet" in rows[0]  # study s: the graphs' own sizes
    assert "<td>3, 5</td>" in rows[1]  # a fixed graph beside a cycle at the study's populations


# 3. Settings that cannot act on the task, or on any method of the study


@pytest.mark.parametrize(
    ("task", "key", "value", "only"),
    [
        ("flocking", "prey_danger", "reference", "Pursuit"),
        ("flocking", "prey_pushable", "first", "Pursuit"),
        ("pursuit", "flocking_level", "fixed", "Flocking"),
        ("transport", "foraging_maze", "reference", "Foraging"),
    ],
)
def test_a_swarmbench_setting_of_another_task_is_refused_naming_the_key(task, key, value, only, tmp_path):
    entry = {"kind": "swarmbench", "task": task, "rounds": 5}
    message = refusal(study({"t": {**entry, key: value}}, {"m": {"kind": "random"}}, populations=[8]), tmp_path)
    assert f"tasks.t.{key}: only {only} has this rule (task: {task})" in message
    # compat: reference sets what acts on the task, and nothing else
    validate(study({"t": {**entry, "compat": "reference"}}, {"m": {"kind": "random"}}, populations=[8]), "x.yaml")


def silo(**settings: Any) -> dict[str, Any]:
    return {"t": {"kind": "silobench", "task": "I-01", "rounds": 3, **settings}}


def test_store_view_off_the_store_and_settings_of_rounds_on_an_oracle_are_refused(tmp_path):
    distributed = {"m": {"kind": "distributed"}}
    message = refusal(study(silo(protocol="p2p", store_view="calls"), distributed, populations=[4]), tmp_path)
    assert "tasks.t.store_view: how an LLM agent reads the shared store: it applies to protocol: store" in message
    message = refusal(study(silo(oracle=True, submission="any_round"), distributed, populations=[4]), tmp_path)
    assert "tasks.t.submission: an oracle answers at once, without rounds (oracle: true)" in message
    # an entry of several tasks is refused once, by the name written
    message = refusal(
        study({"all": {**silo(store_view="calls")["t"], "task": "I"}}, distributed, populations=[4]), tmp_path
    )
    assert message.count("tasks.all.store_view:") == 1 and "tasks.all.I-01" not in message


CONTROLS = {"nocomm": {"kind": "nocomm"}, "nativemsg": {"kind": "nativemsg"}, "fixedswarm": {"kind": "fixedswarm"}}
LLM = {"kind": "llm", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}


@pytest.mark.parametrize(("key", "value", "protocol"), [("received", "all", "p2p"), ("store_view", "calls", "store")])
def test_a_prompt_setting_in_a_study_of_methods_that_read_no_prompt_is_refused(key, value, protocol, tmp_path):
    """`received` and `store_view` change what an LLM agent's prompt shows: on classical methods alone they
    would only change the cells' identity."""
    methods = CONTROLS if protocol == "p2p" else {"distributed": {"kind": "distributed"}}
    topology = {"topology": "regular3"} if protocol == "p2p" else {}
    tasks = silo(protocol=protocol, **topology, **{key: value})
    message = refusal(study(tasks, methods, populations=[4]), tmp_path)
    assert f"tasks.t.{key}: acts only on methods that read the task as text (llm, replay)" in message
    assert f"study 's' runs none of them ({', '.join(methods)})" in message
    # beside a method that reads it, it acts: the classical cells share the task's identity
    validate(study(tasks, {**methods, "llm": LLM}, populations=[4]), "x.yaml")
    # compat: reference sets it with the reference's other rules, for every method
    filled = validate(study(silo(compat="reference"), CONTROLS, populations=[4]), "x.yaml")
    cells = [cell for block in all_blocks(filled, Path("."))["s"] for cell in block.cells()]
    assert cells and all(cell["task"]["params"]["received"] == "all" for cell in cells)
