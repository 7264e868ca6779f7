"""`dtype: auto`: the precision chosen for the CPU, recorded, and kept by a replay on another CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_llm_episodes import first_cell, llm_config, replayed_without_the_model

from hivebench.engine.writer import write_episode
from hivebench.models import precision
from hivebench.models.precision import cpu_flags, machine_dtype, resolve
from hivebench.paths import calls_path, cell_path
from hivebench.store import CELL_KEY

AVX2_ONLY = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n\nprocessor\t: 1\nflags\t\t: fpu sse2 avx avx2 fma\n"
WITH_BF16 = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_tile\n"


def test_the_cpu_flags_choose_the_precision(tmp_path):
    (tmp_path / "avx2").write_text(AVX2_ONLY)
    (tmp_path / "bf16").write_text(WITH_BF16)
    assert cpu_flags(tmp_path / "avx2") == {"fpu", "sse2", "avx", "avx2", "fma"}
    assert machine_dtype(cpu_flags(tmp_path / "avx2")) == "float32"
    assert machine_dtype(cpu_flags(tmp_path / "bf16")) == "bfloat16"
    assert machine_dtype(["amx_bf16"]) == "bfloat16"
    assert cpu_flags(tmp_path / "absent") == frozenset() and machine_dtype([]) == "float32"


def test_only_auto_is_resolved_and_a_filled_cache_decides_it():
    assert resolve("float32", ["bfloat16"]) == "float32" and resolve("bfloat16") == "bfloat16"
    assert resolve("auto", ["bfloat16"]) == "bfloat16" and resolve("auto", ["float32"]) == "float32"
    assert resolve("auto") == machine_dtype()


@pytest.fixture
def cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The /proc/cpuinfo the precision is chosen from, in a folder the test runs in."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(precision, "CPUINFO", tmp_path / "cpuinfo")
    return tmp_path / "cpuinfo"


def cache_models(cell) -> set[str]:
    return {json.loads(line)["model"] for line in Path(calls_path(cell)).read_text().splitlines()}


def test_auto_runs_in_the_cpus_precision_records_it_and_a_replay_elsewhere_keeps_the_replies(
    tiny_model, cpu, monkeypatch
):
    cpu.write_text(AVX2_ONLY)
    cell = first_cell(llm_config(tiny_model, dtype="auto"))
    assert write_episode(cell, cell_path(cell))["model_dtype"] == "float32"
    assert cache_models(cell) == {f"{tiny_model}:float32"}
    original = Path(cell_path(cell)).read_bytes()
    assert json.loads(pq.read_schema(cell_path(cell)).metadata[CELL_KEY])["method"]["params"]["dtype"] == "auto"

    # On a CPU with bf16 the same cell replays from its cache in the precision the cache was filled in.
    cpu.write_text(WITH_BF16)
    assert replayed_without_the_model(cell, monkeypatch) == original


def test_auto_on_a_bf16_cpu_runs_in_bfloat16(tiny_model, cpu):
    cpu.write_text(WITH_BF16)
    cell = first_cell(llm_config(tiny_model, dtype="auto", steps=2))
    assert write_episode(cell, cell_path(cell))["model_dtype"] == "bfloat16"
    assert cache_models(cell) == {f"{tiny_model}:bfloat16"}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_fixed_precision_is_never_resolved_away(tiny_model, cpu, dtype):
    cpu.write_text(WITH_BF16 if dtype == "float32" else AVX2_ONLY)  # the machine would choose the other
    cell = first_cell(llm_config(tiny_model, dtype=dtype, steps=2))
    assert write_episode(cell, cell_path(cell))["model_dtype"] == dtype
