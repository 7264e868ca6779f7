"""Where hivebench keeps what it writes: the path patterns of cells, job blocks, their logs and
records and a study's tables (the Snakemake rules use them with wildcards, the code fills them in).

Standard library only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hivebench import perturb
from hivebench.agents.mixed import MIXED
from hivebench.registry import METHODS, task_kind

EPISODES_DIR = "results/episodes/{study}/{suite}/{task}/{method}/n{population}"
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


# A replicate's cells lie in a folder of their own under their method's (its arm's, for a perturbed
# cell: `<method>+<perturbation>`): the `method` path field.
REPLICATE_DIR = "{method}/replicate-{replicate}"
METHOD_FIELD = r"[^/]+(/replicate-[^/]+)?"  # its wildcard constraint (Snakefile)


def path_fields(shared: dict[str, Any]) -> dict[str, Any]:
    """The fields of a cell's (or block's) paths."""
    fields = table_fields(shared)
    return {**fields, "method": method_folder(fields["method"], shared.get("replicate"))}


def method_folder(method: str, replicate: str | None) -> str:
    """The method part of a cell's paths: its name, and its replicate's folder where it has one."""
    return method if replicate is None else REPLICATE_DIR.format(method=method, replicate=replicate)


def table_fields(shared: dict[str, Any]) -> dict[str, Any]:
    """What identifies a cell's row in a study's tables (with its seed): its method's arm (the method,
    or `<method>+<perturbation>`), the replicate only where the method has replicates, the
    perturbation only where the cell has one."""
    perturbation = shared.get("perturbation", {}).get("name")
    fields = {
        "study": shared["study"],
        "suite": shared["suite"],
        "task": shared["task"]["name"],
        "method": perturb.arm(shared["method"]["name"], perturbation),
        "population": shared["population"],
    }
    if "replicate" in shared:
        fields["replicate"] = shared["replicate"]
    return fields if perturbation is None else {**fields, "perturbation": perturbation}


def cell_path(cell: dict[str, Any]) -> str:
    return CELL_FILE.format(**path_fields(cell), seed=cell["seed"])


def cell_path_of(row: Any) -> str:
    """A cell's path from its row in a study's episodes table (a replicate's label in `replicate`)."""
    replicate = row.get("replicate")  # NaN (or None) in a row of a method without replicates
    fields = {key: row[key] for key in ("study", "suite", "task", "population", "seed")}
    return CELL_FILE.format(
        **fields, method=method_folder(row["method"], replicate if isinstance(replicate, str) else None)
    )


def side_path(path: str | Path, name: str) -> str:
    """Where a cell's side table `name` lies: s3.parquet -> s3.messages.parquet."""
    return str(path).removesuffix(".parquet") + f".{name}.parquet"


def cell_files(cell: dict[str, Any]) -> list[str]:
    """A cell's result files: its per-agent table, then its task's side tables, then its method's."""
    path = cell_path(cell)
    return [path, *(side_path(path, name) for name in side_tables(cell))]


def side_tables(cell: dict[str, Any]) -> tuple[str, ...]:
    """The side tables a cell writes as files of their own: its task's, then its method's."""
    return task_kind(cell["task"]["kind"]).tables + method_tables(cell["method"], cell["suite"])


def inline_tables(cell: dict[str, Any]) -> tuple[str, ...]:
    """The side tables a cell keeps in its per-agent file's metadata (`store.INLINE_KEY`): a few rows
    each, for which a file of their own would cost a small cell more than playing it (its
    perturbation's)."""
    return perturb.inline_tables(cell.get("perturbation"))


def method_tables(method: dict[str, Any], suite: str) -> tuple[str, ...]:
    """The side tables a (resolved) method writes: its kind's, or a mixed population's members'."""
    if method["kind"] == MIXED:
        return tuple(dict.fromkeys(t for m in method["params"]["members"] for t in method_tables(m["method"], suite)))
    return METHODS[method["kind"]].impl(suite).tables


def calls_path(cell: dict[str, Any]) -> str:
    return CALLS_FILE.format(**path_fields(cell), seed=cell["seed"])


def study_tables(study: str) -> list[str]:
    return [pattern.format(study=study) for pattern in STUDY_TABLES]
