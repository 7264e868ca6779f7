"""A validated config expanded into cells and job blocks, with canonical JSON and hashes.

A cell is (study, suite, task, method, population, seed) with every parameter resolved and the
implementation versions of its task and method. Its canonical JSON is its identity. A block is the
cells of one (study, task, method, population) whose seeds fall in one aligned range of
`seeds_per_job` seeds: one Snakemake job, one process, one Parquet file per cell.

Standard library only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from hivebench.config import Config, ConfigError, resolved_task_params, task_sizes
from hivebench.ids import canonical_json, digest
from hivebench.registry import METHODS, TASK_KINDS, task_kind, task_suite

CELL_FORMAT = 1
EPISODES_DIR = "results/episodes/{study}/{suite}/{task}/{method}/n{population}"
# Path patterns: the Snakemake rule uses them with wildcards, the code fills them in.
BLOCK_SUMMARY = EPISODES_DIR + "/block{first}-{last}.parquet"
CELL_FILE = EPISODES_DIR + "/s{seed}.parquet"
# The job's log (standard error: progress and errors), and the record of its last run (state, host,
# pid, exit status, error line) that `hivebench status` reads.
BLOCK_LOG = "logs/" + BLOCK_SUMMARY.removeprefix("results/").removesuffix(".parquet") + ".log"
BLOCK_RECORD = BLOCK_LOG.removesuffix(".log") + ".job.json"
CALLS_FILE = EPISODES_DIR + "/s{seed}.calls.jsonl"  # an LLM cell's response cache, beside its result
EPISODES_TABLE = "results/{study}/episodes.parquet"  # a study's episodes, collected from its block summaries
SCORES_TABLE = "results/{study}/scores.parquet"
CONTRASTS_TABLE = "results/{study}/contrasts.parquet"
STUDY_TABLES = (EPISODES_TABLE, SCORES_TABLE, CONTRASTS_TABLE)
# Damage `hivebench verify` found in a study's tables (a block's goes into its job record).
TABLES_RECORD = "logs/collect/{study}.damage.json"
# Method config keys that are not parameters: the kind (stored beside them), job sizing and the
# scheduler resource a job holds (no effect on results).
METHOD_NON_PARAMS = ("kind", "seeds_per_job", "llm_slots", "resources")


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

    def record(self) -> dict[str, Any]:
        """The record of this block's last job run ({} when none, unreadable, or malformed: a record
        edited by hand is as good as none, rather than an error in every Snakemake run)."""
        try:
            record = json.loads(Path(self.record_path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return record if well_formed_record(record) else {}

    def damage(self) -> dict[str, str]:
        """What cannot be trusted of this block's finished output, as {path: what is wrong}: a cell
        file missing, changed after the job wrote the block summary, not a whole Parquet file, or
        holding another cell (its footer lacks the hash the job wrote), such a summary, and damage
        `hivebench verify` recorded since the summary was written. Judged from file times, Parquet's
        framing bytes and footers read as bytes (no file is parsed), so Snakemake can ask it on every
        run; {} for a block that has not run (no summary)."""
        try:
            written = os.stat(self.summary_path).st_mtime_ns
        except OSError:  # not there (or its folder is not a folder): the job has not finished
            return {}
        record = self.record()
        # found by `hivebench verify` in this very summary's output (a well-formed record's is {path: text})
        found = dict(record.get("damage", {})) if record.get("damage_summary_mtime_ns") == written else {}
        if self.summary_path not in found and parquet_problem(self.summary_path) is not None:
            found[self.summary_path] = NOT_WHOLE
        done = record.get("state") == "done"
        ran = set(record.get("seeds", ())) if done else None
        # The hashes the job wrote, if it ran exactly these cells (else the config changed since: the
        # params changed, and the stale cells are not damage).
        hashes: dict[int, str] = {}
        if done and record.get("spec") == digest(self.spec()):
            hashes = dict(zip(record.get("seeds", ()), record.get("hashes", ())))
        for cell in self.cells():
            for index, path in enumerate(cell_files(cell)):
                if path in found:
                    continue
                # the cell's own file (first) holds its hash; side tables do not
                problem = parquet_problem(path, hashes.get(cell["seed"]) if index == 0 else None, written)
                if problem == MISSING and ran is not None and cell["seed"] not in ran:
                    continue  # a seed the config has just added
                if problem:
                    found[path] = problem
        return found


# The types of what a job record holds (`hivebench episodes` and `hivebench verify` write them).
RECORD_TYPES: dict[str, type] = {
    "state": str, "spec": str, "host": str, "pid": int, "exit": int, "error": str, "damage_summary_mtime_ns": int,
}  # fmt: skip


def well_formed_record(record: Any) -> bool:
    """Whether a job record read from JSON holds what `Block.damage` and `hivebench status` use with
    the types they use it as: seeds a list of integers, hashes a list of strings, damage {path: text}."""

    def all_of(kind: type, values: Any) -> bool:
        return isinstance(values, list) and all(isinstance(v, kind) and not isinstance(v, bool) for v in values)

    if not isinstance(record, dict):
        return False
    if any(key in record and (not isinstance(record[key], kind) or isinstance(record[key], bool)) for key, kind in RECORD_TYPES.items()):
        return False
    damage = record.get("damage", {})
    return (
        all_of(int, record.get("seeds", []))
        and all_of(str, record.get("hashes", []))
        and isinstance(damage, dict)
        and all(isinstance(v, str) for v in damage.values())
    )


def job_cells(spec: dict[str, Any]) -> dict[str, Any]:
    """What a job's record keeps of the cells it ran: the spec's hash, and each seed's cell hash
    (`Block.damage` checks each cell file holds its own)."""
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


def study_damage(study: str, blocks: Iterable[Block]) -> dict[str, dict[str, str]]:
    """Damage in a study's finished output, by the output whose job must redo it: a block summary
    ({path: what is wrong} of `Block.damage`), or a study table (`table_damage`). Nothing is changed
    on disk."""
    found = {block.summary_path: damage for block in blocks if (damage := block.damage())}
    return {**found, **{table: {table: problem} for table, problem in table_damage(study).items()}}


def table_damage(study: str) -> dict[str, str]:
    """{table: what is wrong} of a study's tables that are not whole Parquet files, or that
    `hivebench verify` found damaged since they were written (a table not there yet is no damage)."""
    recorded = recorded_table_damage(study)
    found = {}
    for table in study_tables(study):
        if parquet_problem(table) == NOT_WHOLE:
            found[table] = NOT_WHOLE
        elif table in recorded:
            found[table] = recorded[table]
    return found


def study_tables(study: str) -> list[str]:
    return [pattern.format(study=study) for pattern in STUDY_TABLES]


def recorded_table_damage(study: str) -> dict[str, str]:
    """{table: what is wrong} that `hivebench verify` recorded of a study's tables, for each table
    not written again since."""
    try:
        record = json.loads(Path(TABLES_RECORD.format(study=study)).read_text(encoding="utf-8"))
        return {
            table: entry["problem"]
            for table, entry in record.items()
            if table in study_tables(study)  # (a path edited into the record by hand is none of ours)
            and isinstance(entry["problem"], str)
            and os.path.exists(table)
            and os.stat(table).st_mtime_ns == entry["mtime_ns"]
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


MISSING = "missing"
NOT_WHOLE = "not a whole Parquet file"


def parquet_problem(path: str, holds: str | None = None, written: int | None = None) -> str | None:
    """What is wrong with a Parquet file, judged from its time (changed after `written`), its framing
    bytes and, given `holds` (a cell's hash), whether its footer holds it; None when nothing. A few
    small reads: Snakemake asks this of every cell file on every run."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    except OSError:  # unreadable
        return NOT_WHOLE
    try:
        info = os.fstat(fd)
        if written is not None and info.st_mtime_ns > written:
            return "changed after its job finished"
        if info.st_size < 12:  # the two magic numbers and a footer length at least
            return NOT_WHOLE
        tail = os.pread(fd, 8, info.st_size - 8)
        if os.pread(fd, 4, 0) != b"PAR1" or tail[4:] != b"PAR1":
            return NOT_WHOLE
        if holds is None:
            return None
        length = min(int.from_bytes(tail[:4], "little"), info.st_size - 12)
        footer = os.pread(fd, length, info.st_size - 8 - length)
        return None if holds.encode() in footer else "holds another cell (its footer lacks the cell's hash)"
    except OSError:
        return NOT_WHOLE
    finally:
        os.close(fd)


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


def path_fields(shared: dict[str, Any]) -> dict[str, Any]:
    return {
        "study": shared["study"],
        "suite": shared["suite"],
        "task": shared["task"]["name"],
        "method": shared["method"]["name"],
        "population": shared["population"],
    }


def cell_path(cell: dict[str, Any]) -> str:
    return CELL_FILE.format(**path_fields(cell), seed=cell["seed"])


def side_path(path: str | Path, name: str) -> str:
    """Where a cell's side table `name` lies: s3.parquet -> s3.messages.parquet."""
    return str(path).removesuffix(".parquet") + f".{name}.parquet"


def cell_files(cell: dict[str, Any]) -> list[str]:
    """A cell's result files: its per-agent table, then its task's side tables."""
    path = cell_path(cell)
    return [path, *(side_path(path, name) for name in task_kind(cell["task"]["kind"]).tables)]


def calls_path(cell: dict[str, Any]) -> str:
    return CALLS_FILE.format(**path_fields(cell), seed=cell["seed"])


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


def file_param(path: str, base: Path) -> tuple[str, str]:
    """A file a method reads, as a cell holds it: its path relative to the working directory (given
    relative to the config file) and its content hash, so a changed file reruns the cell."""
    full = base / path
    return os.path.relpath(full), hashlib.sha256(full.read_bytes()).hexdigest()


def resolved_notes(spec: dict[str, str], base: Path) -> dict[str, str]:
    """Initial notes as they enter a cell: a file's text inline; another episode by its path (given
    relative to the config file, stored relative to the working directory) and its content hash, so a
    changed source reruns the cell. Both are read when the config is expanded: they must exist then."""
    if "file" in spec:
        return {"text": (base / spec["file"]).read_text(encoding="utf-8")}
    if "episode" in spec:
        path, sha256 = file_param(spec["episode"], base)
        return {"episode": path, "sha256": sha256}
    return spec


def resolved_method(config: Config, name: str, suite: str, base: Path) -> dict[str, Any]:
    """A method as it runs a task of `suite` (its version is that suite's implementation's)."""
    method = config["methods"][name]
    version = METHODS[method["kind"]].impl(suite).version
    params = {k: v for k, v in method.items() if k not in METHOD_NON_PARAMS}
    if "initial_notes" in params:
        params["initial_notes"] = resolved_notes(params["initial_notes"], base)
    if "file" in params:  # replay
        params["file"], params["file_sha256"] = file_param(params["file"], base)
    if params.get("backend") == "scripted":
        params["model"], params["model_sha256"] = file_param(params["model"], base)
    return {"name": name, "kind": method["kind"], "version": version, "params": params}


def shared_part(study: str, task: dict[str, Any], method: dict[str, Any], population: int) -> dict[str, Any]:
    """Everything that identifies a cell except its seed, from a resolved task and method."""
    return {
        "format": CELL_FORMAT,
        "study": study,
        "suite": task_suite(task["kind"]),
        "task": task,
        "method": method,
        "population": int(population),
    }


def study_blocks(config: Config, study_name: str, base: Path) -> list[Block]:
    """Every job block of one study, in a stable order (tasks, then methods, then populations)."""
    study = config["studies"][study_name]
    seed_blocks: dict[str, dict[int, list[int]]] = {}  # method -> aligned seed ranges of its jobs
    for method_name in study["methods"]:
        per_job = config["methods"][method_name]["seeds_per_job"]
        by_block = seed_blocks.setdefault(method_name, {})
        for seed in seed_list(study.get("method_seeds", {}).get(method_name, study["seeds"])):
            by_block.setdefault(seed // per_job, []).append(seed)
    methods: dict[tuple[str, str], dict[str, Any]] = {}  # (method, suite) -> resolved: files read once
    blocks = []
    for task_name in study["tasks"]:
        task = resolved_task(config, task_name, base)
        suite = task_suite(task["kind"])
        populations = task_sizes(config["tasks"][task_name], task["params"], study.get("populations")) or []
        for method_name in study["methods"]:
            if (method_name, suite) not in methods:
                methods[(method_name, suite)] = resolved_method(config, method_name, suite, base)
            per_job = config["methods"][method_name]["seeds_per_job"]
            for population in populations:
                shared = shared_part(study_name, task, methods[(method_name, suite)], population)
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
