"""What every registered suite must do on the one engine: the checks hivebench ships in
hivebench.engine.conformance (the same cell gives the same episode, alone, in lockstep with the other
seeds of its job block and at another place in another block; the per-agent table has one row per
(state, agent), state-major; the side tables and metrics are the declared ones; the seed reaches the
random streams; methods serve only the suites they declare), run here on each suite's example
(`Suite.example`) for every method kind it implements. The checks are shown to reject deliberately
broken tasks and policies. Beside them: each suite's report captions lie in its package, every cell
file a report section reads is an input of its rule, and a study spanning every suite runs through the
real workflow. A new suite declares its example in its `Suite`; nothing here needs to change."""

from __future__ import annotations

import copy
import dataclasses
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, write_config
from test_workflow import planned_jobs, snakemake

from hivebench import registry
from hivebench.cells import expand_jobs
from hivebench.cli import main
from hivebench.collect import collect
from hivebench.config import load
from hivebench.engine import conformance
from hivebench.engine.conformance import CHECKS, ConformanceError, example_cells
from hivebench.engine.jobs import run_job
from hivebench.registry import SUITE_OBJECTS, SUITE_PACKAGE_OF, task_kind
from hivebench.report import COMMON_FILES, caption_file, section_cells
from hivebench.suite import TaskHooks, TaskKind
from hivebench.suites.loopbench.baselines import RandomColorer
from hivebench.suites.loopbench.task import ColoringTask

CLASSICAL = [(suite, kind) for suite, s in SUITE_OBJECTS.items() for kind in s.methods]


@pytest.mark.parametrize("suite", list(SUITE_OBJECTS))
def test_every_suite_declares_an_example(suite):
    assert conformance.example_problems(SUITE_OBJECTS[suite]) == []
    assert len(example_cells(suite, seeds=2)) == 2


# Per method kind: the same episode played twice, alone and in lockstep with its block, in its block in
# order and in reverse order; one per-agent row per (state, agent), states 0..horizon, agents 0..N-1,
# state-major, the task kind's side tables and the suite's metrics in the summary.
@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize(("suite", "kind"), CLASSICAL)
def test_every_method_of_every_suite_passes_the_check(suite, kind, check):
    CHECKS[check](example_cells(suite, kind, seeds=conformance.LOCKSTEP_SEEDS))


@pytest.mark.parametrize("suite", list(SUITE_OBJECTS))
def test_the_seed_reaches_the_random_streams(suite):
    """Each suite's example method (its `random` baseline) plays differently on different seeds."""
    conformance.check_seed_matters(example_cells(suite, seeds=2))


@pytest.mark.parametrize("suite", list(SUITE_OBJECTS))
def test_a_method_runs_only_the_suites_it_serves(suite):
    conformance.check_refusals(suite)


def test_check_suite_runs_every_check_on_a_registered_suite():
    conformance.check_suite("silobench")
    conformance.check_suite(SUITE_OBJECTS["silobench"], methods=["random"])  # the declaration itself
    with pytest.raises(ConformanceError, match="not registered"):
        conformance.check_suite("no-such-suite")


# Deliberately broken tasks and a policy, which the checks must reject. Each plays the LoopBench
# example's cells under a task kind of its own, registered for the test.


class UnseededColoring(ColoringTask):
    """Draws the initial colours from an unseeded generator."""

    def reset(self, seeds):
        super().reset(seeds)
        self.trajectory[0] = np.random.default_rng().integers(0, self.num_colors, self.agents)
        self._count()


class BlockSeededColoring(ColoringTask):
    """Draws the initial colours from a generator seeded by the whole block: the same cell gives the
    same episode, but not alone and in lockstep with other seeds."""

    def reset(self, seeds):
        super().reset(seeds)
        self.trajectory[0] = np.random.default_rng(sum(seeds)).integers(0, self.num_colors, self.agents)
        self._count()


class NoStartStateColoring(ColoringTask):
    """Records states 1..T, without state 0."""

    def record(self):
        records = super().record()
        for record in records:
            record.agents = {name: values[self.n :] for name, values in record.agents.items()}
        return records


class SeedlessColorer(RandomColorer):
    """A random colourer whose draws ignore the seed."""

    def decide(self, views):
        draw = np.random.default_rng(views.step).integers(0, views.num_colors, views.n)
        return np.tile(draw, len(views.colors) // views.n)


@pytest.fixture
def broken(monkeypatch):
    """The LoopBench example's cells (40 agents: an unseeded draw cannot repeat) under a task kind
    played by one of the classes above."""

    def cells(name: str) -> list[dict]:
        kind = f"broken-{name}"
        monkeypatch.setitem(
            registry.TASK_KINDS, kind, ("loopbench", TaskKind(f"{__name__}:{name}", version=1, hooks=TaskHooks()))
        )
        found = copy.deepcopy(example_cells("loopbench", "random", seeds=conformance.LOCKSTEP_SEEDS, population=40))
        for cell in found:
            cell["task"]["kind"] = kind
        return found

    return cells


def test_the_checks_report_a_task_that_draws_from_an_unseeded_generator(broken):
    cells = broken("UnseededColoring")
    with pytest.raises(
        ConformanceError,
        match=r"the same cell gave two different episodes: .*kind broken-UnseededColoring.*column 'color' differs",
    ):
        conformance.check_same_episode(cells)
    problems = conformance.cell_problems(cells)
    assert any(p.startswith("the same cell gave two different episodes") for p in problems), problems
    conformance.check_record(cells)  # its shape is right: only the draw is wrong


def test_the_checks_report_a_task_whose_lockstep_block_differs_from_one_at_a_time(broken):
    cells = broken("BlockSeededColoring")
    conformance.check_same_episode(cells)  # deterministic
    with pytest.raises(
        ConformanceError,
        match=r"alone and in lockstep with its block of 5 seeds gave different episodes.*column 'color'",
    ):
        conformance.check_lockstep(cells)


def test_the_checks_report_a_record_without_its_first_state(broken):
    cells = broken("NoStartStateColoring")
    conformance.check_same_episode(cells)
    conformance.check_lockstep(cells)
    with pytest.raises(ConformanceError, match=r"240 per-agent rows, not \(horizon \+ 1\) x N = \(6 \+ 1\) x 40 = 280"):
        conformance.check_record(cells)


def test_check_suite_reports_a_method_that_ignores_the_seed(monkeypatch):
    impl = registry.METHODS["random"].impls["loopbench"]
    monkeypatch.setitem(
        registry.METHODS["random"].impls, "loopbench", dataclasses.replace(impl, target=f"{__name__}:SeedlessColorer")
    )
    with pytest.raises(ConformanceError, match=r"1 conformance problems:\n- seeds 0 and 1 gave the same episode"):
        conformance.check_suite("loopbench", methods=["random"])


# Report: captions beside the code that writes the files; every cell file a section reads an input of
# its rule.


def test_every_report_table_and_chart_has_its_caption_in_the_package_that_writes_it():
    owners = [
        ("hivebench.report", COMMON_FILES),
        *((SUITE_PACKAGE_OF[s], suite.report_files) for s, suite in SUITE_OBJECTS.items()),
    ]
    for package, names in owners:
        captioned = [name for name in names if name.endswith((".csv", ".png"))]
        assert captioned, package
        for name in captioned:
            assert caption_file(package, name).is_file(), (package, name)
        folder = caption_file(package, captioned[0]).parent
        assert {p.stem for p in folder.glob("*.rst")} == {n.rsplit(".", 1)[0] for n in captioned}  # none left over


@pytest.mark.slow
def test_the_swarmbench_section_reads_the_cells_its_rule_declares_and_no_other(tmp_path, monkeypatch):
    """The default config's SwarmBench study, played; its section rendered in a folder that holds only
    its rule's inputs: the episodes table, the anchors file and the cell files the suite declares
    (Suite.report_cells, what rules/common.smk's report_cells lists), which it reads, all of them."""
    source = str(REPO / "config/config.yaml")
    blocks = expand_jobs(load(source), source)["swarmbench"]
    declared = section_cells(SUITE_OBJECTS["swarmbench"], blocks)
    assert len(declared) == 5 and all(
        "/n8/s0.parquet" in path for path in declared
    )  # a frame per task: smallest N, first seed
    played = tmp_path / "played"
    played.mkdir()
    monkeypatch.chdir(played)
    for block in blocks:
        run_job(block.spec(), block.summary_path)
    collect([block.summary_path for block in blocks], "results/swarmbench/episodes.parquet")
    inputs = tmp_path / "inputs"
    for path in ["results/swarmbench/episodes.parquet", *declared]:
        (inputs / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, inputs / path)
    monkeypatch.chdir(inputs)
    read, read_parquet = [], pd.read_parquet
    monkeypatch.setattr(
        pd, "read_parquet", lambda path, *args, **kwargs: read.append(str(path)) or read_parquet(path, *args, **kwargs)
    )
    main(
        [
            "report-section",
            "--suite",
            "swarmbench",
            "--episodes",
            "results/swarmbench/episodes.parquet",
            "--anchors",
            str(REPO / "config/anchors.yaml"),
            "--out",
            "reports/swarmbench/swarmbench",
            "--resamples",
            "100",
        ]
    )
    assert (inputs / "reports/swarmbench/swarmbench/swarmbench_episodes.png").stat().st_size > 10_000
    assert sorted(path for path in read if path.startswith("results/episodes/")) == sorted(declared)


def rule_inputs(dry_run: str, rule: str) -> set[str]:
    """The input files of a rule's job in a dry run's output."""
    found = re.search(rf"^rule {rule}:\n    input: (.*)$", dry_run, re.M)
    assert found, f"no job of rule {rule} in the dry run"
    return set(found[1].split(", "))


@pytest.mark.workflow
def test_a_study_spanning_every_suite_runs_through_the_workflow(tmp_path):
    """`random` serves every suite: one study, one method, every suite's example task."""
    tasks = {suite: s.example["task"] for suite, s in SUITE_OBJECTS.items()}
    config = {
        "tasks": tasks,
        "methods": {"random": {"kind": "random", "seeds_per_job": 3}},
        "studies": {
            "all": {"tasks": list(tasks), "methods": ["random"], "populations": [5, 8], "seeds": 3},
        },
        "report": {"bootstrap_resamples": 200},
    }
    write_config(tmp_path / "config.yaml", config)
    snakemake(tmp_path)
    episodes = pd.read_parquet(tmp_path / "results/all/episodes.parquet")
    assert set(episodes["suite"]) == set(SUITE_OBJECTS) and len(episodes) == len(SUITE_OBJECTS) * 2 * 3
    page = (tmp_path / "reports/all/index.html").read_text()
    assert ("Across suites" in page) == (len(SUITE_OBJECTS) > 1)
    for suite in SUITE_OBJECTS:
        assert f'<section id="{suite}">' in page
        assert (tmp_path / f"reports/all/{suite}/section.html").is_file()
    for suite, task in tasks.items():  # each cell's side tables lie beside it
        for name in task_kind(task["kind"]).tables:
            assert next((tmp_path / f"results/episodes/all/{suite}").rglob(f"s0.{name}.parquet")).is_file()
    assert planned_jobs(tmp_path) == {}  # nothing left to do
    # the cell files each section reads are inputs of its rule (SwarmBench's episode frames)
    blocks = expand_jobs(load(tmp_path / "config.yaml"), str(tmp_path / "config.yaml"))["all"]
    dry_run = snakemake(tmp_path, "-n", "--forcerun", *(f"report_{suite}" for suite in SUITE_OBJECTS)).stdout
    for suite in SUITE_OBJECTS:
        cells = section_cells(SUITE_OBJECTS[suite], blocks)
        assert all((tmp_path / path).is_file() for path in cells)
        assert set(cells) <= rule_inputs(dry_run, f"report_{suite}"), suite
    assert section_cells(SUITE_OBJECTS["swarmbench"], blocks) == [
        "results/episodes/all/swarmbench/swarmbench/random/n5/s0.parquet"
    ]
    snakemake(tmp_path, "--report", str(tmp_path / "report.html"))  # every suite's files have captions
    page = (tmp_path / "report.html").read_text()
    owners = [
        ("hivebench.report", COMMON_FILES),
        *((SUITE_PACKAGE_OF[s], suite.report_files) for s, suite in SUITE_OBJECTS.items()),
    ]
    captions = [
        caption_file(package, name) for package, names in owners for name in names if name.endswith((".csv", ".png"))
    ]
    assert len(captions) > len(SUITE_OBJECTS)
    for caption in captions:
        words = max(re.findall(r"[\w ,]+", caption.read_text()), key=len)  # its longest plain run of words
        assert len(words) > 40 and words in page, f"{caption}: {words!r} not in the report"
    # a frame cell deleted by hand: its block is redone, then the section (no missing input stops the run)
    (tmp_path / section_cells(SUITE_OBJECTS["swarmbench"], blocks)[0]).unlink()
    planned = planned_jobs(tmp_path)
    assert planned["episodes"] == 1 and planned["report_cells"] == planned["report_swarmbench"] == 1
