"""`hivebench estimate`: the model calls and tokens a study's LLM cells need, before running them.

The policy is asked (`estimate_episode`): the LLM agent renders its prompts for real, round by round,
on an episode of the cell's task where every agent takes the suite's fallback action and carries
plain-English notes of the full allowed length: the input tokens of a run whose agents use their
whole notes budget (shorter notes cost less; odd characters can cost more per character). Tokens are counted with the model's own tokenizer when it is a local folder
that exists, else as characters / 4 (marked "~"). Output tokens are given as the cap (max_tokens).
Repairs are not included: each costs at most one more call. For a local `transformers` model the
peak memory of a job comes with it (hivebench.models.memory), from its longest prompt, the replies'
cap and the rows it decodes at once (`batch_rows`, at most every agent of the job's seeds).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

from hivebench.cells import Block
from hivebench.models import token_cost
from hivebench.models.memory import memory_mb, model_config
from hivebench.models.open import local_path
from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind
from hivebench.suite import load


@dataclass
class Estimate:
    task: str
    method: str
    model: str
    population: int
    cells: int
    calls: int
    input_tokens: int
    output_tokens_max: int
    approximate: bool
    memory_mb: int | None  # a job's peak, for a local model whose folder is there

    def cost(self, prices: dict[str, dict[str, float]]) -> float | None:
        price = prices.get(self.model)
        if price is None:
            return None
        return token_cost(price, self.input_tokens, self.output_tokens_max)


def token_counter(params: dict[str, Any]) -> tuple[Callable[[list[dict[str, str]]], int], bool]:
    """A function counting a chat's prompt tokens, and whether it is only approximate."""
    folder = local_path(params["model"]) if params["backend"] == "transformers" else None
    if folder is not None and (folder / "tokenizer_config.json").is_file():
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(folder)
        def count(messages: list[dict[str, str]]) -> int:  # as the local backend tokenizes a prompt
            text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            return len(tokenizer(text, add_special_tokens=False)["input_ids"])

        return count, False
    return lambda messages: sum(len(m["content"]) for m in messages) // 4 + 4 * len(messages), True


def episode_estimate(shared: dict[str, Any], count: Callable[[list[dict[str, str]]], int]) -> tuple[int, int, int]:
    """(calls, input tokens, longest prompt) of one episode of a block's cells, as the method's policy
    estimates them."""
    task = task_kind(shared["task"]["kind"]).load()(shared["task"]["params"], shared["population"])
    task.reset([0])
    policy = METHODS[shared["method"]["kind"]].impl(shared["suite"]).load()
    view = load(SUITE_OBJECTS[shared["suite"]].text_view)()
    return policy.estimate_episode(task, view, shared["method"]["params"], count)


def job_memory_mb(shared: dict[str, Any], seeds: int, longest: int, config: dict[str, Any]) -> int:
    """The peak memory of a job of `seeds` cells of a local model with this `config.json`."""
    params = shared["method"]["params"]
    rows = min(params["batch_rows"], seeds * shared["population"])
    full = params["history"] == "full"
    # A batch is as wide as its longest reused part plus its longest new part: with full history a
    # row without a kept cache (after a repair, a cache hit, an eviction) beside one with it, up to
    # twice the longest prompt.
    width = longest * (2 if full else 1) + params["max_tokens"]
    return memory_mb(config, params["dtype"], rows, width, full)


def local_model_config(shared: dict[str, Any]) -> dict[str, Any] | None:
    """The `config.json` of a block's local model (None: not a local model, or its folder is not
    there yet)."""
    params = shared["method"]["params"]
    if not METHODS[shared["method"]["kind"]].calls_models or params["backend"] != "transformers":
        return None
    return model_config(local_path(params["model"]))


def generous_count(messages: list[dict[str, str]]) -> int:
    """More tokens than a chat has (a token of a usual tokenizer holds two characters or more), with
    no tokenizer to load: the workflow sizes jobs with it."""
    return sum(len(m["content"]) for m in messages) // 2 + 8 * len(messages)


@cache
def block_memory_mb(shared_json: str, seeds: int) -> int | None:
    """`job_memory_mb` of a job block (its shared spec as canonical JSON), its prompts rendered and
    counted generously; None where the method is not a local model whose folder is there."""
    shared = json.loads(shared_json)
    config = local_model_config(shared)
    if config is None:
        return None
    _, _, longest = episode_estimate(shared, generous_count)
    return job_memory_mb(shared, seeds, longest, config)


def estimate(blocks: list[Block]) -> list[Estimate]:
    """One row per (task, LLM method, population) of the given blocks."""
    per_cell: dict[tuple[str, str, int], tuple[str, int, int, int, bool, int | None]] = {}
    cells: Counter[tuple[str, str, int]] = Counter()
    counters: dict[str, tuple[Callable[[list[dict[str, str]]], int], bool]] = {}
    for block in blocks:
        method, n = block.shared["method"], block.shared["population"]
        if not METHODS[method["kind"]].calls_models:
            continue
        key = (block.shared["task"]["name"], method["name"], n)
        cells[key] += len(block.seeds)
        if key not in per_cell:
            params = method["params"]
            if method["name"] not in counters:
                counters[method["name"]] = token_counter(params)
            count, approximate = counters[method["name"]]
            calls, tokens, longest = episode_estimate(block.shared, count)
            config = local_model_config(block.shared)
            memory = None if config is None else job_memory_mb(block.shared, len(block.seeds), longest, config)
            per_cell[key] = (params["model"], calls, tokens, calls * params["max_tokens"], approximate, memory)
    rows = []
    for (task, name, n), (model, calls, tokens, output, approximate, memory) in per_cell.items():
        k = cells[(task, name, n)]
        rows.append(Estimate(task, name, model, n, k, calls * k, tokens * k, output * k, approximate, memory))
    return rows


def table(rows: list[Estimate], prices: dict[str, dict[str, float]]) -> str:
    lines = ["task\tmethod\tmodel\tN\tcells\tcalls\tinput tokens\toutput tokens (max)\tcost USD (max)\tjob memory MB"]
    for r in rows:
        mark = "~" if r.approximate else ""
        cost = r.cost(prices)
        lines.append(
            f"{r.task}\t{r.method}\t{r.model}\t{r.population}\t{r.cells}\t{r.calls}\t{mark}{r.input_tokens}\t"
            f"{r.output_tokens_max}\t{'-' if cost is None else f'{mark}{cost:.4f}'}\t{r.memory_mb or '-'}"
        )
    return "\n".join(lines)
