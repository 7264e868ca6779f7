"""LLM decisions per second and prompt sizes, each against a named baseline.

1. transformers backend, SmolLM2-135M-Instruct (bfloat16 as in the default study, or --dtype), one
   LoopBench round of 11 agents (C11, round 8, history 3): one batched `generate` for all 11 vs one
   call per agent (the baseline).
2. OpenAI-compatible backend against vLLM's CPU build serving the tiny random model (tests/
   tiny_model.py; needs `make vllm`): the same 11 requests at concurrency 11 vs concurrency 1.
3. Prompt tokens per decision over a 15-round C11 episode (SmolLM2's tokenizer): full history
   (the paper) vs the last 3 rounds.
Every request has its own sample index, so no call is answered twice and no cache is involved.
Usage: python benchmarks/bench_llm.py [--rounds N] [--skip-server]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from hivebench.cells import study_blocks  # noqa: E402
from hivebench.config import validate  # noqa: E402
from hivebench.estimate import episode_estimate, token_counter  # noqa: E402
from hivebench.agents.llm import LLMAgent  # noqa: E402
from hivebench.suites.loopbench.text import ColoringView  # noqa: E402
from hivebench.models import ChatRequest  # noqa: E402
from hivebench.models.builtin import folder, prepare  # noqa: E402
from hivebench.seeding import Streams  # noqa: E402
from hivebench.suites.loopbench.task import ColoringTask  # noqa: E402

SMOLLM2 = "SmolLM2-135M-Instruct"


def round_requests(model: str, backend: str, sample_base: int, **extra: str) -> list[ChatRequest]:
    """The 11 requests of round 8 of a C11 episode where agents alternate colours as they go."""
    config = validate(
        {
            "tasks": {"cycle": {"kind": "coloring", "steps": 15}},
            "methods": {"m": {"kind": "llm", "backend": backend, "model": model, "history": 3, "notes_chars": 40, "max_tokens": 64, **extra}},
            "studies": {"s": {"tasks": ["cycle"], "methods": ["m"], "populations": [11], "seeds": 1}},
        },
        "bench",
    )  # fmt: skip
    cell = next(study_blocks(config, "s", Path("."))[0].cells())
    task = ColoringTask(cell["task"]["params"], 11)
    task.reset([0])
    for t in range(7):
        task.step((task.observe().colors + (t % 2)) % 2)
    with tempfile.TemporaryDirectory() as scratch:
        method = LLMAgent(cell["method"]["params"], Streams([sample_base], "policy"), [Path(scratch) / "calls.jsonl"], ColoringView())
        method.notes = [["Neighbours flip with me every round; wait one round."] * 11]
        return method.requests(task.observe(), np.arange(11))


def decisions_per_second(backend, requests_for, rounds: int, one_by_one: bool) -> float:
    backend.complete(requests_for(-1)[:1], lambda i, r: None)  # warm-up: load the model / connect
    started = time.perf_counter()
    decisions = 0
    for r in range(rounds):
        requests = requests_for(r)
        batches = [[q] for q in requests] if one_by_one else [requests]
        for batch in batches:
            backend.complete(batch, lambda i, res: None)
        decisions += len(requests)
    return decisions / (time.perf_counter() - started)


def bench_transformers(rounds: int, dtype: str) -> None:
    from hivebench.models.local import TransformersBackend

    path = folder(SMOLLM2)
    if not (path / "config.json").is_file():
        path = prepare(SMOLLM2, Path(tempfile.mkdtemp()) / SMOLLM2)
    backend = TransformersBackend(SMOLLM2, str(path), threads=1, dtype=dtype)
    requests_for = lambda r: round_requests(SMOLLM2, "transformers", 100 + r)  # noqa: E731
    batched = decisions_per_second(backend, requests_for, rounds, one_by_one=False)
    single = decisions_per_second(backend, requests_for, rounds, one_by_one=True)
    print(f"transformers, {SMOLLM2}, {dtype}, 1 thread, {rounds} rounds of 11 agents:")
    print(f"  one call per agent (baseline): {single:6.2f} decisions/s")
    print(f"  one batched generate per round: {batched:6.2f} decisions/s  ({batched / single:.2f}x)")


def bench_server(rounds: int) -> None:
    from servers import VLLM_PYTHON, start_vllm
    from tiny_model import build

    from hivebench.models.remote import OpenAIBackend

    if not VLLM_PYTHON.exists():
        print(f"server backend: skipped, no vLLM at {VLLM_PYTHON} (make vllm)")
        return
    scratch = Path(tempfile.mkdtemp())
    process, url = start_vllm(build(scratch / "tiny"), "tiny", scratch / "vllm.log")
    try:
        requests_for = lambda r: round_requests("tiny", "openai", 100 + r, base_url=url + "/v1")  # noqa: E731
        results = {}
        for concurrency in (1, 11):
            backend = OpenAIBackend("tiny", url + "/v1", None, concurrency=concurrency)
            results[concurrency] = decisions_per_second(backend, requests_for, rounds, one_by_one=False)
    finally:
        process.terminate()
        process.wait(timeout=60)
    print(f"openai-compatible backend, vLLM CPU build, tiny random model, {rounds} rounds of 11 agents:")
    print(f"  concurrency 1 (baseline): {results[1]:6.2f} decisions/s")
    print(f"  concurrency 11:           {results[11]:6.2f} decisions/s  ({results[11] / results[1]:.2f}x)")


def bench_prompt_tokens() -> None:
    path = folder(SMOLLM2)
    print("prompt tokens per decision, C11, 15 rounds, 40-character notes:")
    sizes = {}
    for history in ("full", 3):
        config = validate(
            {
                "tasks": {"cycle": {"kind": "coloring", "steps": 15}},
                "methods": {"m": {"kind": "llm", "backend": "transformers", "model": str(path) if path.exists() else SMOLLM2, "history": history, "notes_chars": 40}},
                "studies": {"s": {"tasks": ["cycle"], "methods": ["m"], "populations": [11], "seeds": 1}},
            },
            "bench",
        )  # fmt: skip
        block = study_blocks(config, "s", Path("."))[0]
        count, approximate = token_counter(block.shared["method"]["params"])
        calls, tokens = episode_estimate(block.shared, count)
        sizes[history] = tokens / calls
        print(f"  history {history!s:>4}: {sizes[history]:7.1f}{' (chars/4)' if approximate else ''}")
    print(f"  full / last 3: {sizes['full'] / sizes[3]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16"], help="SmolLM2 weights")
    args = parser.parse_args()
    bench_prompt_tokens()
    bench_transformers(args.rounds, args.dtype)
    if not args.skip_server:
        bench_server(args.rounds)


if __name__ == "__main__":
    main()
