"""Suites and methods from installed packages: the `ring` suite (tests/plugins/hivebench-ring) and the
`coin` method (tests/plugins/hivebench-coin) are installed with pip into a folder of their own, found
through their entry points, and run a study through the real workflow, the coin method on every
suite (the ring too) and the ring under the package's conformance checks; no file of src/hivebench
names either."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, snakemake_command, write_config

from hivebench import registry
from hivebench.method import Method

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the plugins are installed into (pip builds copies: the source tree stays clean)."""
    sources = shutil.copytree(PLUGINS, tmp_path_factory.mktemp("source") / "plugins")
    site = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    for name in ("hivebench-coin", "hivebench-ring"):
        subprocess.run([*pip, "--target", str(site), str(sources / name)], check=True, capture_output=True)
    return site


def with_site(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


def plugin_config() -> dict:
    return {
        "tasks": {
            "cycle": {"kind": "coloring", "steps": 6},
            "consensus": {"kind": "agentsnet", "problem": "consensus", "family": "delaunay", "rounds": 2},
            "flocking": {"kind": "swarmbench", "task": "flocking", "rounds": 5},
            "silo": {"kind": "silobench", "task": "I-09", "rounds": 3},
            "ring": {"kind": "ring_majority", "rounds": 6},
        },
        "methods": {
            "coin": {"kind": "coin", "p": 0.8, "seeds_per_job": 2},
            "random": {"kind": "random", "seeds_per_job": 2},
            "majority": {"kind": "majority", "seeds_per_job": 2},
        },
        "studies": {
            "plug": {
                "tasks": ["cycle", "consensus", "flocking", "silo", "ring"],
                "methods": ["random", "coin"],
                "populations": [4],
                "seeds": 2,
            },
            "ring": {"tasks": ["ring"], "methods": ["majority", "random", "coin"], "populations": [5, 9], "seeds": 4},
        },
        "report": {"bootstrap_resamples": 200},
    }


def test_hivebench_itself_does_not_name_the_plugins():
    names = ["-e", "coin", "-e", "hivebench_ring", "-e", "ring_majority", "-e", "hivebench_coin"]
    named = subprocess.run(
        ["grep", "-rlw", *names, str(REPO / "src" / "hivebench"), str(REPO / "rules")], capture_output=True, text=True
    )
    assert named.stdout == "" and "coin" not in registry.METHODS and "ring" not in registry.SUITE_OBJECTS


@pytest.mark.workflow
def test_an_installed_suite_and_method_run_their_studies_through_the_workflow(site, tmp_path):
    write_config(tmp_path / "config.yaml", plugin_config())
    command = snakemake_command(tmp_path, "--cores", "2")
    run = subprocess.run(command, capture_output=True, text=True, env=with_site(site))
    assert run.returncode == 0, run.stderr[-3000:]
    episodes = pd.read_parquet(tmp_path / "results/plug/episodes.parquet")
    coin = episodes[episodes["method"] == "coin"]
    assert sorted(coin["suite"].unique()) == ["agentsnet", "loopbench", "ring", "silobench", "swarmbench"]
    assert len(coin) == 5 * 2 and (coin["coin_replies"] > 0).all()  # tasks x seeds, each with replies
    # its resources hook sized the jobs: 5 minutes, where a classical job asks for 30
    assert "runtime=5" in run.stderr and "runtime=30" in run.stderr
    ring = pd.read_parquet(tmp_path / "results/ring/episodes.parquet")
    assert len(ring) == 3 * 2 * 4 and ring["agreement"].between(0.5, 1).all()
    # on a ring of 5 or 9 the local majority settles on one bit or on stable blocks, never worse than half
    scores = pd.read_parquet(tmp_path / "results/ring/scores.parquet")
    assert set(scores["method"]) == {"majority", "random", "coin"} and "agreement" in set(scores["metric"])
    for study, sections in (("plug", 5), ("ring", 1)):
        page = (tmp_path / f"reports/{study}/index.html").read_text()
        assert page.count("<section id=") == sections and ("<h2>Ring</h2>" in page)


@pytest.mark.slow  # installs the plugins (about 10 s)
def test_an_installed_suite_passes_the_conformance_checks_hivebench_ships(site):
    check = "from hivebench.engine.conformance import check_suite; check_suite('ring'); print('conforms')"
    run = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=with_site(site))
    assert run.returncode == 0 and run.stdout.strip() == "conforms", run.stderr[-3000:]


@pytest.mark.slow  # installs the plugins (about 10 s)
def test_its_parameters_are_validated_by_its_own_schema_fragment(site, tmp_path):
    config = plugin_config()
    config["methods"]["coin"]["p"] = 1.5
    write_config(tmp_path / "config.yaml", config)
    run = subprocess.run(
        [sys.executable, "-m", "hivebench.cli", "validate", str(tmp_path / "config.yaml")],
        capture_output=True,
        text=True,
        env=with_site(site),
    )
    assert run.returncode != 0 and "methods.coin.p: 1.5 is greater than the maximum of 1" in run.stderr


def test_an_entry_point_that_takes_a_registered_name_is_refused(tmp_path, monkeypatch):
    info = tmp_path / "impostor-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: impostor\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hivebench.methods]\nllm = impostor\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        RuntimeError, match="the entry point 'llm' = 'impostor' .* already registered by hivebench.agents.llm"
    ):
        registry._packages(registry.METHOD_PACKAGES, registry.METHOD_GROUP, entry_points())


@pytest.mark.parametrize(
    ("package", "source", "problem"),
    [
        ("plug_a", "X = 1\n", "plug_a (registered as 'mine') declares no METHOD (hivebench.method.Method)"),
        (
            "plug_b",
            "from hivebench.method import Method, MethodImpl\nMETHOD = Method('other', MethodImpl('m:C', version=1))\n",
            "plug_b declares 'other', registered as 'mine'",
        ),
        (
            "plug_c",
            "import not_a_module_anywhere\n",
            "plug_c (registered as 'mine') cannot be imported: ModuleNotFoundError",
        ),
    ],
    ids=["no declaration", "another name", "import error"],
)
def test_a_plugin_package_that_declares_no_method_of_its_name_is_named(package, source, problem, tmp_path, monkeypatch):
    (tmp_path / f"{package}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match=re.escape(problem)):
        registry._declarations({"mine": package}, "METHOD", Method)
