"""`dtype: auto`: a local model's weight precision chosen for the CPU a job runs on.

bfloat16 halves the memory traffic of every matrix product, but only CPUs with bf16 instructions
(AVX512-BF16, AMX) compute in it at speed; elsewhere torch emulates it, several times slower than
float32. The cell keeps `auto` (its identity does not depend on the machine); the job resolves it, and
the precision it ran in goes into the response cache's keys and the episode's summary (`model_dtype`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})  # /proc/cpuinfo's names
CPUINFO = Path("/proc/cpuinfo")


def cpu_flags(cpuinfo: Path | None = None) -> frozenset[str]:
    """The first CPU's feature flags (none where there is no /proc/cpuinfo: not Linux)."""
    try:
        lines = (cpuinfo or CPUINFO).read_text().splitlines()
    except OSError:
        return frozenset()
    return next((frozenset(line.split(":", 1)[1].split()) for line in lines if line.startswith("flags")), frozenset())


def machine_dtype(flags: Iterable[str] | None = None) -> str:
    """bfloat16 where the CPU has bf16 instructions, float32 elsewhere."""
    return "bfloat16" if BF16_FLAGS & set(cpu_flags() if flags is None else flags) else "float32"


def resolve(dtype: str, recorded: Iterable[str] = ()) -> str:
    """The precision a job runs `dtype` in. For `auto`: the one its cells' response caches were
    filled in, if they were (so a replay on another machine repeats the replies it stored rather
    than asking again in another precision), else this machine's."""
    if dtype != "auto":
        return dtype
    return next(iter(sorted(set(recorded))), None) or machine_dtype()
