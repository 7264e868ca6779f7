"""A validated config expanded into cells and job blocks (the matrix), with their canonical JSON and
hashes (hivebench.ids); where they are written is hivebench.paths, what of them is damaged
hivebench.damage.

A cell is (study, suite, task, method, population, seed) with every parameter resolved and the
implementation versions of its task and method, and the method's replicate where it has replicates.
Its canonical JSON is its identity. A block is the cells of one (study, task, method, replicate,
population) whose seeds fall in one aligned range of `seeds_per_job` seeds: one Snakemake job, one
process, one Parquet file per cell.

Standard library only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hivebench.config import (
    Config,
    ConfigError,
    replicate_entries,
    resolved_task_params,
    task_sizes,
)
from hivebench.ids import canonical_json, digest
from hivebench.paths import BLOCK_RECORD, BLOCK_SUMMARY, path_fields
from hivebench.registry import METHODS, TASK_KINDS, task_kind, task_suite

CELL_FORMAT = 1


@dataclass(frozen=True)
class Block:
    """The cells of one job: everything but the seed is shared."""

    shared: dict[str, Any]  # study, suite, task, method, population, format
    seeds: tuple[int, ...]
    first: int  # the aligned seed range this block covers
    last: int

    @property
    def summary_path(self) -> str:
        return BLOCK_SUMMARY.format(**path_fields(self.shared), first=self.first, last=self.last)

    @property
    def record_path(self) -> str:
        return BLOCK_RECORD.format(**path_fields(self.shared), first=self.first, last=self.last)

    def spec(self) -> dict[str, Any]:
        """What the episode job receives (and Snakemake compares as params)."""
        return {**self.shared, "seeds": list(self.seeds)}

    def cells(self) -> Iterator[dict[str, Any]]:
        return (make_cell(self.shared, seed) for seed in self.seeds)


def job_cells(spec: dict[str, Any]) -> dict[str, Any]:
    """What a job's record keeps of the cells it ran: the spec's hash, and each seed's cell hash
    (`damage.block_damage` checks each cell file holds its own)."""
    shared, seeds = split_spec(spec)
    return {"seeds": seeds, "spec": digest(spec), "hashes": [digest(make_cell(shared, seed)) for seed in seeds]}


# A job's cells travel on its command line (Snakemake runs `bash -c "<command>"`), and Linux takes at
# most 131,072 bytes in one argument: what is left once paths and flags are there (bytes, shell-quoted).
MAX_SPEC_CHARS = 100_000


def oversized_jobs(blocks: dict[str, list[Block]]) -> Iterator[str]:
    """A problem for each (study, task, method) whose largest job's cells would not fit on a command
    line: too many seeds per job, or parameters that are long by themselves (an inline edge list,
    initial notes)."""
    largest: dict[tuple[str, str, str], tuple[int, Block]] = {}
    shared_chars: dict[int, int] = {}
    for study, study_blocks in blocks.items():
        for block in study_blocks:
            if id(block.shared) not in shared_chars:  # one shared part per population: measure it once
                # as the command line carries it: shell-quoted, in UTF-8 bytes
                shared_chars[id(block.shared)] = len(shlex.quote(canonical_json(block.shared)).encode())
            # At most this many characters of seeds: each as long as the block's last, and a comma.
            chars = shared_chars[id(block.shared)] + len(block.seeds) * (len(str(block.last)) + 1) + 12
            key = (study, block.shared["task"]["name"], block.shared["method"]["name"])
            if chars > largest.get(key, (0, block))[0]:
                largest[key] = (chars, block)
    for (study, task, method), (chars, block) in largest.items():
        if chars > MAX_SPEC_CHARS:
            yield (
                f"studies.{study}: a job of task {task!r} and method {method!r} would carry {chars:,} characters "
                f"of cells on its command line ({len(block.seeds)} seeds; the limit is {MAX_SPEC_CHARS:,}): "
                f"lower methods.{method}.seeds_per_job, or shorten what the task and method inline (edge lists, notes)"
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
    return {**shared, "seed": int(seed)}


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
    return [
        (
            label,
            {"name": name, "kind": method["kind"], "version": impl.version, "params": impl.hooks.resolve(entry, base)},
        )
        for label, entry in replicate_entries(method)
    ]


def shared_part(
    study: str, task: dict[str, Any], method: dict[str, Any], population: int, replicate: str | None = None
) -> dict[str, Any]:
    """Everything that identifies a cell except its seed, from a resolved task and method; a
    replicate's label only where the method has replicates (a cell without keeps its identity)."""
    shared = {
        "format": CELL_FORMAT,
        "study": study,
        "suite": task_suite(task["kind"]),
        "task": task,
        "method": method,
        "population": int(population),
    }
    return shared if replicate is None else {**shared, "replicate": replicate}


def study_blocks(config: Config, study_name: str, base: Path) -> list[Block]:
    """Every job block of one study, in a stable order (tasks, then methods, then populations)."""
    study = config["studies"][study_name]
    seed_blocks: dict[str, dict[int, list[int]]] = {}  # method -> aligned seed ranges of its jobs
    for method_name in study["methods"]:
        per_job = config["methods"][method_name]["seeds_per_job"]
        by_block = seed_blocks.setdefault(method_name, {})
        for seed in seed_list(study.get("method_seeds", {}).get(method_name, study["seeds"])):
            by_block.setdefault(seed // per_job, []).append(seed)
    methods: dict[tuple[str, str], list[tuple[str | None, dict[str, Any]]]] = {}  # resolved once (files read)
    blocks = []
    for task_name in study["tasks"]:
        task = resolved_task(config, task_name, base)
        suite = task_suite(task["kind"])
        populations = task_sizes(config["tasks"][task_name], task["params"], study.get("populations")) or []
        for method_name in study["methods"]:
            if (method_name, suite) not in methods:
                methods[(method_name, suite)] = resolved_methods(config, method_name, suite, base)
            per_job = config["methods"][method_name]["seeds_per_job"]
            for replicate, method in methods[(method_name, suite)]:
                for population in populations:
                    shared = shared_part(study_name, task, method, population, replicate)
                    for index, members in sorted(seed_blocks[method_name].items()):
                        blocks.append(Block(shared, tuple(members), index * per_job, (index + 1) * per_job - 1))
    return blocks


def all_blocks(config: Config, base: Path) -> dict[str, list[Block]]:
    return {name: study_blocks(config, name, base) for name in config["studies"]}


def expand_blocks(config: Config, source: str) -> dict[str, list[Block]]:
    """Every study's job blocks of a validated config read from `source`; ConfigError naming the
    source for a job too large to start."""
    blocks = all_blocks(config, Path(source).parent)
    problems = list(oversized_jobs(blocks))
    if problems:
        raise ConfigError(source, problems)
    return blocks
