"""What a fault probe found accepted and then broken with a traceback or without the key: a plug-in
that cannot be registered, a view-set controller in no study with a missing replies file, a
replicate's own missing model folder, and a scripted replies file no episode can play. Each is now
refused by `hivebench validate` and `snakemake -n` naming the entry point or the config key, or (a
file too short for its episodes, known only as they play) fails in the job naming the key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import snakemake_command, tiny_config, write_config

from hivebench.cells import all_blocks
from hivebench.cli import main
from hivebench.config import ConfigError, load, validate
from hivebench.engine.loop import play_block
from hivebench.models import BackendError

GOOD_REPLY = {"task_action": "STAY", "response": None, "deposits": [], "commit": None}  # a Waggle record


def refusal(config: dict[str, Any], folder: Path) -> str:
    """The ConfigError message of `config`, written to folder/config.yaml and loaded."""
    path = write_config(folder / "config.yaml", config)
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(path) in str(info.value)
    return str(info.value)


def dry_run(folder: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`snakemake -n` on folder/config.yaml."""
    return subprocess.run(snakemake_command(folder, "-n"), capture_output=True, text=True, env=env)


def assert_clean_workflow_error(run: subprocess.CompletedProcess[str], message: str) -> None:
    """Snakemake stopped at parse time with hivebench's message and no Python frames of its own (a
    dry run logs to standard output)."""
    said = run.stdout + run.stderr
    assert run.returncode != 0 and message in said, said[-3000:]
    assert "WorkflowError" in said and "Traceback" not in said
    assert "Exception" not in said and "src/hivebench" not in said, said[-3000:]


# 1. A plug-in that cannot be registered


def plugin_site(folder: Path, group: str, name: str, package: str, source: str) -> dict[str, str]:
    """An environment whose PYTHONPATH holds one installed distribution, `broken` 0.1, with a single
    entry point `name = package` in `group` and the package as one module."""
    info = folder / "broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {package}\n")
    (folder / f"{package}.py").write_text(source)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}


OTHER_NAME = "from hivebench.method import Method, MethodImpl\nMETHOD = Method('other', MethodImpl('m:C', version=1))\n"


@pytest.mark.parametrize(
    ("group", "name", "package", "source", "problem"),
    [
        (
            "hivebench.methods",
            "mine",
            "plug_a",
            "import not_a_module_anywhere\n",
            "cannot be imported: ModuleNotFoundError: No module named 'not_a_module_anywhere'",
        ),
        ("hivebench.methods", "mine", "plug_b", "X = 1\n", "declares no METHOD (hivebench.method.Method)"),
        ("hivebench.methods", "llm", "plug_c", "X = 1\n", "takes a name already registered by hivebench.agents.llm"),
        ("hivebench.methods", "mine", "plug_d", OTHER_NAME, "plug_d declares 'other', registered as 'mine'"),
        ("hivebench.suites", "mine", "plug_e", "X = 1\n", "declares no SUITE (hivebench.suite.Suite)"),
    ],
    ids=["import error", "no declaration", "a built-in's name", "another name", "a suite without SUITE"],
)
def test_a_broken_plugin_is_one_paragraph_naming_its_entry_point(group, name, package, source, problem, tmp_path):
    env = plugin_site(tmp_path / "site", group, name, package, source)
    write_config(tmp_path / "config.yaml", tiny_config())
    point = f"registry: the entry point {name!r} = {package!r} (group {group}, installed by broken 0.1)"

    run = subprocess.run(
        [sys.executable, "-m", "hivebench.cli", "validate", str(tmp_path / "config.yaml")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 2, run.stderr[-3000:]
    paragraph = run.stderr.strip()
    assert "\n" not in paragraph and paragraph.startswith(point) and problem in paragraph, run.stderr[-3000:]

    assert_clean_workflow_error(dry_run(tmp_path, env), paragraph)


# 2. A view-set controller in no study, with a replies file that is not there


def viewset_config(controller: dict[str, Any]) -> dict[str, Any]:
    """A scripted controller's Foraging study, and a view set whose one controller, `ctl`, is in no study."""
    return {
        "tasks": {"forage": {"kind": "swarmbench", "task": "foraging", "rounds": 5}},
        "methods": {"rule": {"kind": "scripted_controller", "keep_views": True}, "ctl": controller},
        "studies": {"w": {"tasks": ["forage"], "methods": ["rule"], "populations": [4], "seeds": 1}},
        "viewsets": {"v": {"study": "w", "method": "rule", "views": 4, "controllers": ["ctl"]}},
    }


def test_a_viewset_controller_in_no_study_with_a_missing_replies_file_is_a_config_error(tmp_path):
    config = viewset_config({"kind": "waggle", "backend": "scripted", "model": "missing.jsonl"})
    message = f"methods.ctl.model: no such file: {tmp_path / 'missing.jsonl'}"
    assert message in refusal(config, tmp_path)
    assert_clean_workflow_error(dry_run(tmp_path), message)  # no InputFunctionException
    (tmp_path / "missing.jsonl").write_text(json.dumps(GOOD_REPLY) + "\n")  # there: the set plans
    assert dry_run(tmp_path).returncode == 0


# 3. A replicate's own model folder


def replicated(base_model: Path, replicates: dict[str, Any]) -> dict[str, Any]:
    method = {"kind": "llm", "backend": "transformers", "model": str(base_model), "replicates": replicates}
    return {
        "tasks": {"cycle": {"kind": "coloring", "graph": "cycle", "steps": 3}},
        "methods": {"m": method},
        "studies": {"s": {"tasks": ["cycle"], "methods": ["m"], "populations": [3], "seeds": 1}},
    }


def model_folder(path: Path) -> Path:
    """A folder the validation takes for a transformers model (it has a config.json)."""
    path.mkdir()
    (path / "config.json").write_text("{}")
    return path


def test_a_replicates_missing_model_folder_is_refused_naming_its_key_path(tmp_path):
    model = model_folder(tmp_path / "model")
    missing = tmp_path / "seed1"
    message = refusal(replicated(model, {"seed0": {}, "seed1": {"model": str(missing)}}), tmp_path)
    assert f"methods.m.replicates.seed1.model: {str(missing)!r} is neither a builtin model" in message
    assert "seed0" not in message and message.count("  - ") == 1  # the one that inherits the folder is fine
    model_folder(missing)
    validate(replicated(model, {"seed0": {}, "seed1": {"model": str(missing)}}), str(tmp_path / "config.yaml"))


def test_a_missing_base_model_folder_is_named_once_not_again_by_each_replicate(tmp_path):
    message = refusal(replicated(tmp_path / "nowhere", {"seed0": {}, "seed1": {}}), tmp_path)
    assert "methods.m.model: " in message and "methods.m.replicates" not in message and message.count("  - ") == 1


# 4. A scripted replies file no episode can play


def scripted(model: str, **method: Any) -> dict[str, Any]:
    return {
        "tasks": {"cycle": {"kind": "coloring", "graph": "cycle", "steps": 2}},
        "methods": {"m": {"kind": "llm", "backend": "scripted", "model": model, **method}},
        "studies": {"s": {"tasks": ["cycle"], "methods": ["m"], "populations": [3], "seeds": 1}},
    }


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "{path}: no replies (the file is empty or blank)"),
        (b"\n   \n\n", "{path}: no replies (the file is empty or blank)"),
        (b'{"color": 1, "notes": ""}\nnot json\n', "{path}:2: not a JSON value (Expecting value)"),
        (b'{"color": 1, "notes": ""}\n\n{"color": 2,\n', "{path}:3: not a JSON value (Expecting"),
        (b'{"color": 1, "notes": "\xff"}\n', "{path}: not UTF-8 text (an invalid byte at offset 23)"),
    ],
    ids=["empty", "blank lines", "a line not JSON", "a truncated line after a blank one", "not UTF-8"],
)
def test_a_replies_file_no_episode_can_play_is_refused_at_validation(content, problem, tmp_path):
    (tmp_path / "replies.jsonl").write_bytes(content)
    message = refusal(scripted("replies.jsonl"), tmp_path)
    assert f"methods.m.model: {problem.format(path=tmp_path / 'replies.jsonl')}" in message


def test_snakemake_n_refuses_a_replies_file_with_a_line_that_is_not_json(tmp_path):
    (tmp_path / "replies.jsonl").write_text('{"color": 1, "notes": ""}\nnot json\n')
    write_config(tmp_path / "config.yaml", scripted("replies.jsonl"))
    assert_clean_workflow_error(
        dry_run(tmp_path), f"methods.m.model: {tmp_path / 'replies.jsonl'}:2: not a JSON value (Expecting value)"
    )


def played_blocks(config: dict[str, Any], folder: Path) -> None:
    """Play every block of a config's study `s`."""
    for block in all_blocks(validate(config, str(folder / "config.yaml")), folder)["s"]:
        play_block(list(block.cells()))


def test_a_replies_file_too_short_fails_in_the_job_naming_the_key_and_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    reply = json.dumps({"color": 1, "notes": ""}) + "\n"
    (tmp_path / "long.jsonl").write_text(reply * 6)  # C3, 2 rounds: 6 requests, all valid
    (tmp_path / "short.jsonl").write_text(reply)
    played_blocks(scripted("long.jsonl"), tmp_path)  # validated and played: enough
    with pytest.raises(BackendError) as info:
        played_blocks(scripted("short.jsonl"), tmp_path)
    assert str(info.value) == "methods.m.model: short.jsonl: 1 scripted replies, and request 2 needs one more"
    with pytest.raises(BackendError) as info:
        played_blocks(scripted("long.jsonl", replicates={"a": {}, "b": {"model": "short.jsonl"}}), tmp_path)
    assert str(info.value).startswith("methods.m.model (replicate b): short.jsonl: 1 scripted replies")


def test_a_replies_file_too_short_for_a_view_set_fails_naming_the_controllers_key(tmp_path, capsys):
    from test_waggle_viewset import view_set

    views = view_set(tmp_path, 3)
    views.to_parquet(tmp_path / "views.parquet")
    (tmp_path / "short.jsonl").write_text(json.dumps(GOOD_REPLY) + "\n")
    params = {"backend": "scripted", "model": str(tmp_path / "short.jsonl"), "temperature": 0.0, "top_p": 1.0}
    out = tmp_path / "results/viewsets/v/ctl/views.parquet"  # where the workflow puts controller ctl's records
    argv = ["viewset-decide", "--params", json.dumps({**params, "max_tokens": 64}), "--views"]
    assert main([*argv, str(tmp_path / "views.parquet"), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    expected = f"methods.ctl.model: {tmp_path / 'short.jsonl'}: 1 scripted replies, and request 2 needs one more"
    assert error == f"hivebench viewset-decide: error: {expected}"
