"""Cells: canonical identity, hashes, and job blocks."""

import subprocess
import sys
from pathlib import Path

import numpy as np

from hivebench.cells import all_jobs, seed_list
from hivebench.config import validate
from hivebench.ids import canonical_json, digest


def cells_by_method(config):
    blocks = all_jobs(validate(config, "x.yaml"), Path("."))["tiny"]
    cells = {}
    for block in blocks:
        for cell in block.cells():
            cells.setdefault(cell["method"]["name"], {})[(cell["population"], cell["seed"])] = digest(cell)
    return blocks, cells


def test_a_cell_is_fully_resolved_with_versions(config):
    del config["methods"]["soft_fp"]["p"]  # left to its default
    blocks, _ = cells_by_method(config)
    cell = next(b for b in blocks if b.shared["method"]["name"] == "soft_fp").cells().__next__()
    assert cell["method"] == {"name": "soft_fp", "kind": "soft_fp", "version": 1, "params": {"p": 0.3}}
    assert cell["task"]["params"] == {
        "graph": "cycle",
        "colors": 2,
        "init": "same",
        "steps": 15,
        "metric_window": "full",
    }
    assert cell["task"]["version"] == 3 and cell["suite"] == "loopbench"


def test_changing_one_method_parameter_changes_only_that_methods_cells(config):
    _, before = cells_by_method(config)
    config["methods"]["soft_fp"]["p"] = 0.5
    _, after = cells_by_method(config)
    assert after["random"] == before["random"]
    assert all(after["soft_fp"][k] != before["soft_fp"][k] for k in before["soft_fp"])


def test_seeds_per_job_is_not_part_of_a_cell(config):
    _, before = cells_by_method(config)
    config["methods"]["random"]["seeds_per_job"] = 3
    blocks, after = cells_by_method(config)
    assert after == before
    assert [b.seeds for b in blocks if b.shared["method"]["name"] == "random"][:4] == [
        (0, 1, 2),
        (3, 4, 5),
        (6, 7, 8),
        (9,),
    ]


def test_blocks_are_aligned_so_adding_seeds_keeps_the_full_blocks(config):
    blocks, _ = cells_by_method(config)
    config["studies"]["tiny"]["seeds"] = 20
    more, _ = cells_by_method(config)
    old = {b.summary_path: b.spec() for b in blocks}
    new = {b.summary_path: b.spec() for b in more}
    assert all(new[path] == spec for path, spec in old.items())  # same jobs, same params
    assert len(new) == 2 * len(old)
    assert {b.summary_path.rsplit("/", 1)[1] for b in more} == {
        "block0-4.parquet",
        "block5-9.parquet",
        "block10-14.parquet",
        "block15-19.parquet",
    }


def test_numpy_scalars_hash_like_plain_numbers():
    plain = {"p": 0.3, "n": 5}
    assert canonical_json({"p": np.float64(0.3), "n": np.int64(5)}) == canonical_json(plain)
    assert digest({"n": np.int32(5), "p": np.float32(0.5)}) == digest({"n": 5, "p": 0.5})


def test_canonical_json_sorts_keys():
    assert canonical_json({"b": 1, "a": [2, {"d": 1, "c": 2}]}) == '{"a":[2,{"c":2,"d":1}],"b":1}'


def test_seed_list():
    assert seed_list(3) == [0, 1, 2]
    assert seed_list([7, 2]) == [2, 7]


def test_what_the_snakefile_imports_stays_light():
    """Every Snakemake job (every SLURM job) re-parses the workflow: no numpy, pandas or model stacks."""
    import subprocess
    import sys

    code = (
        "import sys, hivebench.cells, hivebench.config, hivebench.report, hivebench.models.builtin; "
        "print(','.join(m for m in ('numpy', 'pandas', 'pyarrow', 'scipy', 'torch', 'openai', 'transformers') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_the_models_get_their_ids_without_the_config_or_the_suites():
    """`hivebench.ids` is standard library only: a model backend hashing its requests loads neither the
    config, the registry nor any suite."""
    code = "import sys, hivebench.models, hivebench.models.local; print(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "hivebench.ids" in loaded
    assert not [
        m
        for m in loaded
        if m in ("hivebench.config", "hivebench.registry", "hivebench.cells") or m.startswith("hivebench.suites")
    ]
