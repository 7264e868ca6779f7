"""LLM decisions per second, each against a named baseline measured in the same run.

1. transformers backend, SmolLM2-135M-Instruct (--dtype; default: what the default study's `auto` picks here), one
   thread: a LoopBench job block of --seeds C11 episodes played in lockstep through the engine (one
   batch per round for every agent of every episode, the shared system prefix pre-filled once, with
   full history each agent's KV cache kept across rounds, grammar-forced tokens fed unsampled) vs one
   call per agent, every prompt pre-filled whole (the baseline: the same requests, a sample of them,
   one at a time). With the share of pre-filling and decoding in a decision's time, for each, and
   how many of the sampled replies are the same alone as in the block (floating-point rounding
   differs between batch shapes). Both for `history: 3` (the default study) and `history: full`.
2. OpenAI-compatible backend against vLLM's CPU build serving the tiny random model (tests/
   tiny_model.py; needs `make vllm`): the same block at concurrency = every agent of the block vs
   concurrency 1 (the baseline).
Every request has its own sample index, so no call is answered twice; each run has its own empty
response cache.
Usage: python benchmarks/bench_llm.py [--seeds S] [--rounds T] [--skip-server]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from hivebench.cells import study_blocks  # noqa: E402
from hivebench.config import validate  # noqa: E402
from hivebench.engine.loop import play_block  # noqa: E402
from hivebench.models import ChatRequest  # noqa: E402
from hivebench.models.builtin import folder, prepare  # noqa: E402
from hivebench.models.open import backend_for  # noqa: E402
from hivebench.models.precision import machine_dtype  # noqa: E402

SMOLLM2 = "SmolLM2-135M-Instruct"
N = 11
BASELINE_SAMPLE = 24  # requests replayed one at a time for the baseline


def block_cells(method: dict[str, Any], seeds: int, rounds: int, scratch: Path) -> list[dict[str, Any]]:
    config = validate(
        {
            "tasks": {"cycle": {"kind": "coloring", "steps": rounds}},
            "methods": {"m": {"kind": "llm", "notes_chars": 32, "max_tokens": 64, "seeds_per_job": seeds, **method}},
            "studies": {"s": {"tasks": ["cycle"], "methods": ["m"], "populations": [N], "seeds": seeds}},
        },
        str(scratch / "config.yaml"),
    )
    return list(study_blocks(config, "s", scratch)[0].cells())


def play_recorded(cells: list[dict[str, Any]]) -> tuple[float, list[tuple[ChatRequest, str]]]:
    """Seconds to play the block, and every request its backend was asked with its reply."""
    backend = backend_for(cells[0]["method"]["params"])
    asked: list[tuple[ChatRequest, str]] = []
    complete = backend.complete

    def recording(requests: list[ChatRequest], on_result: Any) -> Any:
        results = complete(requests, on_result)
        asked.extend((request, result.text) for request, result in zip(requests, results))
        return results

    backend.complete = recording  # type: ignore[method-assign]
    home = os.getcwd()
    os.chdir(tempfile.mkdtemp())  # the cells' files, response caches included, in a folder of their own
    try:
        started = time.perf_counter()
        play_block(cells)
        elapsed = time.perf_counter() - started
    finally:
        os.chdir(home)
        del backend.complete
    return elapsed, asked


def shares(seconds: dict[str, float]) -> str:
    total = sum(seconds.values())
    return f"pre-fill {seconds['prefill'] / total:.0%}, decode {seconds['decode'] / total:.0%}"


def bench_transformers(seeds: int, rounds: int, dtype: str) -> None:
    from hivebench.models.local import TransformersBackend, load_model

    path = folder(SMOLLM2)
    if not (path / "config.json").is_file():
        path = prepare(SMOLLM2, Path(tempfile.mkdtemp()) / SMOLLM2)
    load_model(str(path), 1, dtype)  # loaded once, outside every timing
    print(f"transformers, {SMOLLM2}, {dtype}, 1 thread, C{N}, {seeds} seeds x {rounds} rounds:")
    for history in (3, "full"):
        scratch = Path(tempfile.mkdtemp())
        method = {"backend": "transformers", "model": str(path), "dtype": dtype, "history": history, "temperature": 1.0}
        cells = block_cells(method, seeds, rounds, scratch)
        backend = backend_for(cells[0]["method"]["params"])
        backend.seconds, backend.prefilled = {"prefill": 0.0, "decode": 0.0}, {"reused": 0, "computed": 0}
        elapsed, asked = play_recorded(cells)
        fast = len(asked) / elapsed
        reused = backend.prefilled["reused"] / sum(backend.prefilled.values())
        fast_shares = shares(backend.seconds)
        whole = TransformersBackend(SMOLLM2, str(path), threads=1, dtype=dtype, reuse=False)
        sample = random.Random(0).sample(asked, min(BASELINE_SAMPLE, len(asked)))
        started = time.perf_counter()
        alone = [whole.complete([request], lambda i, r: None)[0].text for request, _ in sample]
        single = len(sample) / (time.perf_counter() - started)
        same = sum(text == reply for (_, reply), text in zip(sample, alone))
        print(f"  history {history}:")
        print(f"    one call per agent, whole prompts (baseline): {single:6.2f} decisions/s  ({shares(whole.seconds)})")
        print(
            f"    lockstep block, KV caches reused:             {fast:6.2f} decisions/s  ({fast / single:.2f}x; "
            f"{fast_shares}; {reused:.0%} of prompt tokens reused)"
        )
        print(f"    replies the same alone and whole as in the block, sampled: {same} of {len(sample)}")


def bench_server(seeds: int, rounds: int) -> None:
    from servers import VLLM_PYTHON, start_vllm, stop_vllm
    from tiny_model import build

    if not VLLM_PYTHON.exists():
        print(f"server backend: skipped, no vLLM at {VLLM_PYTHON} (make vllm)")
        return
    scratch = Path(tempfile.mkdtemp())
    process, url = start_vllm(build(scratch / "tiny"), "tiny", scratch / "vllm.log")
    try:
        rates = {}
        for concurrency in (1, seeds * N):
            method = {"backend": "openai", "model": "tiny", "base_url": url + "/v1", "concurrency": concurrency}
            cells = block_cells(method, seeds, rounds, Path(tempfile.mkdtemp()))
            elapsed, asked = play_recorded(cells)
            rates[concurrency] = len(asked) / elapsed
    finally:
        stop_vllm(process)
    print(
        f"openai-compatible backend, vLLM CPU build, tiny random model, C{N}, "
        f"{seeds} seeds x {rounds} rounds in lockstep:"
    )
    print(f"  concurrency 1 (baseline): {rates[1]:6.2f} decisions/s")
    print(
        f"  concurrency {seeds * N}:          {rates[seeds * N]:6.2f} decisions/s  ({rates[seeds * N] / rates[1]:.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4, help="episodes in the job block")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per episode")
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--dtype", default=machine_dtype(), choices=["float32", "bfloat16"], help="SmolLM2 weights")
    args = parser.parse_args()
    if not args.skip_local:
        bench_transformers(args.seeds, args.rounds, args.dtype)
    if not args.skip_server:
        bench_server(args.seeds, args.rounds)


if __name__ == "__main__":
    main()
