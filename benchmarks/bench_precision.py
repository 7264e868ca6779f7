"""SmolLM2-135M-Instruct's forward pass in float32 against bfloat16 (the baseline: float32), one thread:
the passes the default study's model cells are made of. What `dtype: auto` decides from
(hivebench.models.precision): a CPU with bf16 instructions (avx512_bf16, amx_bf16) runs bfloat16 in
hardware, one without emulates it.

- decode: one new token for each of 1, 10 and 22 rows (22: a C11 block of two seeds) after a
  90-token prompt, the KV cache kept;
- pre-fill: 10 rows of 90 tokens.
Each pass is timed five times after a warm one; the median is printed.
Usage: python benchmarks/bench_precision.py   (SmolLM2 converted into models/ first, if missing)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch

from hivebench.models.builtin import prepare
from hivebench.models.local import load_model
from hivebench.models.precision import BF16_FLAGS, cpu_flags, machine_dtype

REPO = Path(__file__).resolve().parents[1]
MODEL = "SmolLM2-135M-Instruct"
PROMPT = 90


def median_seconds(run: Callable[[], object], repeats: int = 5) -> float:
    run()  # warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def passes(folder: Path, dtype: str) -> dict[str, float]:
    model = load_model(str(folder), 1, dtype)[0]  # as a job loads it: hivebench's attention, one thread
    generator = torch.Generator().manual_seed(0)
    timings = {}
    with torch.inference_mode():
        for rows in (1, 10, 22):
            ids = torch.randint(0, model.config.vocab_size, (rows, PROMPT), generator=generator)
            cache = model(ids, use_cache=True).cache
            step = torch.randint(0, model.config.vocab_size, (rows, 1), generator=generator)

            def decode(step: torch.Tensor = step, cache: object = cache) -> None:
                model(step, cache=cache, use_cache=True)
                cache.crop(-1)  # the next pass decodes the same position again

            timings[f"decode, {rows} row{'s' * (rows > 1)}"] = median_seconds(decode)
        prompt = torch.randint(0, model.config.vocab_size, (10, PROMPT), generator=generator)
        timings[f"pre-fill, 10 rows of {PROMPT} tokens"] = median_seconds(lambda: model(prompt, use_cache=True))
    return timings


def main() -> None:
    folder = REPO / "models" / MODEL
    if not (folder / "config.json").is_file():
        prepare(MODEL, folder)
    print(f"{MODEL}, one thread; bf16 instructions: {sorted(BF16_FLAGS & cpu_flags()) or 'none'}")
    print(f"dtype: auto picks {machine_dtype()} here")
    single, half = passes(folder, "float32"), passes(folder, "bfloat16")
    print(f"{'pass':34} {'float32':>9} {'bfloat16':>9} {'bf16/fp32':>9}")
    for name, seconds in single.items():
        print(f"{name:34} {seconds * 1e3:7.0f}ms {half[name] * 1e3:7.0f}ms {half[name] / seconds:8.2f}x")


if __name__ == "__main__":
    main()
