"""A validated config expanded into cells and job blocks (the matrix), with their canonical JSON and
hashes (hivebench.ids); where they are written is hivebench.paths, what of them is damaged
hivebench.damage.

A cell is (study, suite, task, method, population, seed) with every parameter resolved and the
implementation versions of its task and method, the method's replicate where it has replicates, and
the perturbation it runs under where it has one (hivebench.perturb).
Its canonical JSON is its identity. A block is the cells of one (study, task, method, replicate,
perturbation, population) whose seeds fall in one aligned range of `seeds_per_job` seeds: one Snakemake job, one
process, one Parquet file per cell.

Standard library only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hivebench.agents.mixed import MIXED
from hivebench.config import (
    Config,
    ConfigError,
    method_populations,
    replicate_entries,
    resolved_task_params,
    task_sizes,
    tasks_per_job,
)
from hivebench.ids import canonical_json, digest
from hivebench.models.adapter import with_adapter_digest
from hivebench.paths import BLOCK_RECORD, BLOCK_SUMMARY, path_fields
from hivebench.perturb import NONE
from hivebench.perturb import resolved as resolved_perturbation
from hivebench.registry import METHODS, TASK_KINDS, task_kind, task_suite

CELL_FORMAT = 1


@dataclass(frozen=True)
class Block:
    """The cells of one (study, task, method, replicate, population) in one aligned seed range:
    everything but the seed is shared."""

    shared: dict[str, Any]  # study, suite, task, method, population, format (and replicate)
    seeds: tuple[int, ...]
    first: int  # the aligned seed range this block covers
    last: int

    def spec(self) -> dict[str, Any]:
        return {**self.shared, "seeds": list(self.seeds)}

    def cells(self) -> Iterator[dict[str, Any]]:
        return (make_cell(self.shared, seed) for seed in self.seeds)


@dataclass(frozen=True)
class Job:
    """One Snakemake job (one process): one block, or the blocks of several of a study's tasks that
    share the rest (suite, method, replicate, population, seed range), played one after another so
    that a job's start-up (Snakemake's, the imports) is paid once for them all (`tasks_per_job`)."""

    blocks: tuple[Block, ...]

    @property
    def shared(self) -> dict[str, Any]:
        """The first block's shared part: every key but the task is the job's."""
        return self.blocks[0].shared

    @property
    def seeds(self) -> tuple[int, ...]:
        return self.blocks[0].seeds

    @property
    def first(self) -> int:
        return self.blocks[0].first

    @property
    def last(self) -> int:
        return self.blocks[0].last

    @property
    def task_folder(self) -> str:
        """The task part of the job's paths: its task, or its first and last tasks (`a..b`)."""
        names = [block.shared["task"]["name"] for block in self.blocks]
        return names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"

    def _path(self, pattern: str) -> str:
        fields = {**path_fields(self.shared), "task": self.task_folder}
        return pattern.format(**fields, first=self.first, last=self.last)

    @property
    def summary_path(self) -> str:
        return self._path(BLOCK_SUMMARY)

    @property
    def record_path(self) -> str:
        return self._path(BLOCK_RECORD)

    def spec(self) -> dict[str, Any]:
        """What the episode job receives (and Snakemake compares as params): a block's spec, or
        {"blocks": [...]} for several."""
        if len(self.blocks) == 1:
            return self.blocks[0].spec()
        return {"blocks": [block.spec() for block in self.blocks]}

    def cells(self) -> Iterator[dict[str, Any]]:
        return (cell for block in self.blocks for cell in block.cells())


def block_specs(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The block specs a job's spec holds."""
    return spec["blocks"] if "blocks" in spec else [spec]


def job_cells(spec: dict[str, Any]) -> dict[str, Any]:
    """What a job's record keeps of the cells it ran: its seeds (every block's), the spec's hash, and
    each cell's hash in the job's order (`damage.job_damage` checks each cell file holds its own)."""
    hashes = []
    for block in block_specs(spec):
        shared, seeds = split_spec(block)
        hashes += [digest(make_cell(shared, seed)) for seed in seeds]
    return {"seeds": seeds, "spec": digest(spec), "hashes": hashes}


# A job's cells travel on its command line (Snakemake runs `bash -c "<command>"`), and Linux takes at
# most 131,072 bytes in one argument: what is left once paths and flags are there (bytes, shell-quoted).
MAX_SPEC_CHARS = 100_000


def oversized_jobs(jobs: dict[str, list[Job]]) -> Iterator[str]:
    """A problem for each (study, task, method) whose largest job's cells would not fit on a command
    line: too many seeds or tasks per job, or parameters that are long by themselves (an inline edge
    list, initial notes)."""
    largest: dict[tuple[str, str, str], tuple[int, Job]] = {}
    shared_chars: dict[int, int] = {}
    for study, study_jobs in jobs.items():
        for job in study_jobs:
            chars = 12
            for block in job.blocks:
                if id(block.shared) not in shared_chars:  # one shared part per population: measure it once
                    # as the command line carries it: shell-quoted, in UTF-8 bytes
                    shared_chars[id(block.shared)] = len(shlex.quote(canonical_json(block.shared)).encode())
                # At most this many characters of seeds: each as long as the block's last, and a comma.
                chars += shared_chars[id(block.shared)] + len(block.seeds) * (len(str(block.last)) + 1) + 12
            key = (study, job.task_folder, job.shared["method"]["name"])
            if chars > largest.get(key, (0, job))[0]:
                largest[key] = (chars, job)
    for (study, task, method), (chars, job) in largest.items():
        if chars > MAX_SPEC_CHARS:
            yield (
                f"studies.{study}: a job of task {task!r} and method {method!r} would carry {chars:,} characters "
                f"of cells on its command line ({len(job.blocks)} tasks, {len(job.seeds)} seeds; the limit is "
                f"{MAX_SPEC_CHARS:,}): lower methods.{method}.seeds_per_job or tasks_per_job, or shorten what "
                "the task and method inline (edge lists, notes)"
            )


class CellError(ValueError):
    """A cell (or block spec) given by hand that lacks what a cell needs."""


CELL_KEYS = {"format", "study", "suite", "task", "method", "population", "seed"}


def check_cell(cell: Any) -> dict[str, Any]:
    """A cell read from JSON: the keys `hivebench cells --json` prints, a known task and method kind."""
    if not isinstance(cell, dict):
        raise CellError("a cell must be a JSON object")
    missing = CELL_KEYS - set(cell)
    if missing:
        raise CellError(f"the cell lacks {', '.join(sorted(missing))} (see `hivebench cells --json`)")
    kinds = [part.get("kind") if isinstance(part, dict) else None for part in (cell["task"], cell["method"])]
    if kinds[0] not in TASK_KINDS or kinds[1] not in METHODS:
        raise CellError(f"unknown task or method kind in the cell: {kinds[0]!r}, {kinds[1]!r}")
    if not isinstance(cell["seed"], int) or cell["seed"] < 0:
        raise CellError(f"seed must be a non-negative integer, got {cell['seed']!r}")
    return cell


def make_cell(shared: dict[str, Any], seed: int) -> dict[str, Any]:
    """A cell: its block's shared part (with the digest of the adapter its method names, as trained
    now) and its seed."""
    return {**with_adapter_digest(shared), "seed": int(seed)}


def split_spec(spec: dict[str, Any]) -> tuple[dict[str, Any], list[int]]:
    """Split an episode job's spec into its shared part and its seeds."""
    shared = {k: v for k, v in spec.items() if k != "seeds"}
    return shared, [int(s) for s in spec["seeds"]]


def seed_list(seeds: int | list[int]) -> list[int]:
    return list(range(seeds)) if isinstance(seeds, int) else sorted(seeds)


def resolved_task(config: Config, name: str, base: Path) -> dict[str, Any]:
    task = config["tasks"][name]
    params = resolved_task_params(task, base)
    return {"name": name, "kind": task["kind"], "version": task_kind(task["kind"]).version, "params": params}


def resolved_methods(config: Config, name: str, suite: str, base: Path) -> list[tuple[str | None, dict[str, Any]]]:
    """A method as it runs a task of `suite` (its version is that suite's implementation's; its
    parameters as its kind's hooks resolve them): (replicate label, resolved method) of each of its
    replicates, or (None, resolved method) for a method without."""
    method = config["methods"][name]
    impl = METHODS[method["kind"]].impl(suite)
    if method["kind"] == MIXED:  # its members, each as it would run alone
        members = [
            {"method": resolved_methods(config, member, suite, base)[0][1], "share": share}
            for member, share in method["members"].items()
        ]
        return [(None, {"name": name, "kind": MIXED, "version": impl.version, "params": {"members": members}})]
    return [
        (
            label,
            {"name": name, "kind": method["kind"], "version": impl.version, "params": impl.hooks.resolve(entry, base)},
        )
        for label, entry in replicate_entries(method)
    ]


def shared_part(
    study: str,
    task: dict[str, Any],
    method: dict[str, Any],
    population: int,
    replicate: str | None = None,
    perturbation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything that identifies a cell except its seed, from a resolved task and method; a
    replicate's label only where the method has replicates, a perturbation only where the cell runs
    under one (a cell without either keeps its identity)."""
    shared = {
        "format": CELL_FORMAT,
        "study": study,
        "suite": task_suite(task["kind"]),
        "task": task,
        "method": method,
        "population": int(population),
    }
    if replicate is not None:
        shared["replicate"] = replicate
    return shared if perturbation is None else {**shared, "perturbation": perturbation}


def study_perturbations(config: Config, study: dict[str, Any], base: Path) -> list[dict[str, Any] | None]:
    """A study's perturbations as its cells hold them (None: unperturbed), in its order."""
    return [
        None if name == NONE else resolved_perturbation(name, config["perturbations"][name], base)
        for name in study["perturbations"]
    ]


def study_blocks(config: Config, study_name: str, base: Path) -> list[Block]:
    """Every job block of one study, in a stable order (tasks, methods, perturbations, populations)."""
    study = config["studies"][study_name]
    seed_blocks: dict[str, dict[int, list[int]]] = {}  # method -> aligned seed ranges of its jobs
    for method_name in study["methods"]:
        per_job = config["methods"][method_name]["seeds_per_job"]
        by_block = seed_blocks.setdefault(method_name, {})
        for seed in seed_list(study.get("method_seeds", {}).get(method_name, study["seeds"])):
            by_block.setdefault(seed // per_job, []).append(seed)
    methods: dict[tuple[str, str], list[tuple[str | None, dict[str, Any]]]] = {}  # resolved once (files read)
    perturbations = study_perturbations(config, study, base)
    blocks = []
    for task_name in study["tasks"]:
        task = resolved_task(config, task_name, base)
        suite = task_suite(task["kind"])
        for method_name in study["methods"]:
            if (method_name, suite) not in methods:
                methods[(method_name, suite)] = resolved_methods(config, method_name, suite, base)
            per_job = config["methods"][method_name]["seeds_per_job"]
            sizes = task_sizes(config["tasks"][task_name], task["params"], method_populations(study, method_name))
            for replicate, method in methods[(method_name, suite)]:
                for perturbation in perturbations:
                    for population in sizes or []:
                        shared = shared_part(study_name, task, method, population, replicate, perturbation)
                        for index, members in sorted(seed_blocks[method_name].items()):
                            blocks.append(Block(shared, tuple(members), index * per_job, (index + 1) * per_job - 1))
    return blocks


def study_jobs(config: Config, blocks: list[Block]) -> list[Job]:
    """A study's blocks gathered into jobs: those that differ only in their task, up to the method's
    `tasks_per_job` (in the study's task order), each job where its first block was."""
    gathered: dict[tuple[Any, ...], list[list[Block]]] = {}
    for block in blocks:
        shared = block.shared
        method = shared["method"]["name"]
        perturbation = shared.get("perturbation", {}).get("name")
        key = (shared["suite"], method, shared.get("replicate"), perturbation, shared["population"], block.first)
        runs = gathered.setdefault(key, [[]])
        if len(runs[-1]) == tasks_per_job(config["methods"][method], shared["suite"]):
            runs.append([])
        runs[-1].append(block)
    jobs = [Job(tuple(run)) for runs in gathered.values() for run in runs]
    order = {id(block): i for i, block in enumerate(blocks)}
    return sorted(jobs, key=lambda job: order[id(job.blocks[0])])


def all_blocks(config: Config, base: Path) -> dict[str, list[Block]]:
    return {name: study_blocks(config, name, base) for name in config["studies"]}


def all_jobs(config: Config, base: Path) -> dict[str, list[Job]]:
    return {name: study_jobs(config, blocks) for name, blocks in all_blocks(config, base).items()}


def expand_jobs(config: Config, source: str) -> dict[str, list[Job]]:
    """Every study's jobs of a validated config read from `source`; ConfigError naming the source for
    a job too large to start."""
    jobs = all_jobs(config, Path(source).parent)
    problems = list(oversized_jobs(jobs))
    if problems:
        raise ConfigError(source, problems)
    return jobs
