"""The model calls, tokens and memory of an `llm` method's cells, before running them.

The policy is asked (`LLMAgent.estimate_requests`): it renders its prompts for real, round by round,
on an episode of the cell's task where every agent takes the suite's fallback action and carries
plain-English notes of the full allowed length: the input tokens of a run whose agents use their
whole notes budget (shorter notes cost less; odd characters can cost more per character). Tokens are
counted with the model's own tokenizer when it is a local folder that exists, else as characters / 4
(marked "~"). Output tokens are given as the cap (max_tokens). Repairs are in the bound alone (each
call at most one, its chat the call's with the refused reply and the error that asks again), with the
resends a remote backend may make (`CellEstimate.bound`). For a local `transformers` model the peak
memory of a job comes with it (hivebench.models.memory), from its longest prompt, the replies' cap and
the rows it decodes at once (`batch_rows`, at most every agent of the job's seeds).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from hivebench.agents.llm.agent import LLMAgent, prompt_protocol
from hivebench.method import CellEstimate, again_tokens, resends, served
from hivebench.models import ChatRequest, approximate_count
from hivebench.models.decide import repair_request
from hivebench.models.memory import memory_mb, model_config
from hivebench.models.open import local_path
from hivebench.registry import SUITE_OBJECTS, task_kind
from hivebench.suite import load

Count = Callable[[list[dict[str, str]]], int]


@cache  # a tokenizer loads once per process
def token_counter(backend: str, model: str) -> tuple[Count, bool]:
    """A function counting a chat's prompt tokens, and whether it is only approximate."""
    folder = local_path(model) if backend == "transformers" else None
    if folder is not None and (folder / "tokenizer_config.json").is_file():
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(folder)

        def count(messages: list[dict[str, str]]) -> int:  # as the local backend tokenizes a prompt
            text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            return len(tokenizer(text, add_special_tokens=False)["input_ids"])

        return count, False
    return approximate_count, True


def episode_estimate(shared: dict[str, Any], count: Count) -> tuple[int, int, int]:
    """(calls, input tokens, longest prompt) of one episode of a block's cells."""
    counts = [count(list(request.messages)) for request in episode_requests(shared)]
    return len(counts), sum(counts), max(counts, default=0)


def episode_requests(shared: dict[str, Any]) -> list[ChatRequest]:
    """Every request of one episode of a block's cells (`LLMAgent.estimate_requests`)."""
    task = task_kind(shared["task"]["kind"]).load()(shared["task"]["params"], shared["population"])
    task.reset([0])
    view = load(SUITE_OBJECTS[shared["suite"]].text_view)()
    return list(LLMAgent.estimate_requests(task, view, shared["method"]["params"]))


def chats_grow(shared: dict[str, Any]) -> bool:
    """Every agent's chat only grows, its KV cache kept from round to round: the JSON protocol with
    full history, or a reference protocol whose chat grows (AgentsNet's; SwarmBench's has no earlier
    turns)."""
    view = load(SUITE_OBJECTS[shared["suite"]].text_view)()
    return prompt_protocol(view, shared["method"]["params"]).grows


def job_memory_mb(shared: dict[str, Any], seeds: int, longest: int, config: dict[str, Any]) -> int:
    """The peak memory of a job of `seeds` cells of a local model with this `config.json`."""
    params = shared["method"]["params"]
    rows = min(params["batch_rows"], seeds * shared["population"])
    grows = chats_grow(shared)
    # A batch is as wide as its longest reused part plus its longest new part: with a growing chat a
    # row without a kept cache (after a repair, a cache hit, an eviction) beside one with it, up to
    # twice the longest prompt.
    width = longest * (2 if grows else 1) + params["max_tokens"]
    return memory_mb(config, params["dtype"], rows, width, grows)


def local_model_config(params: dict[str, Any]) -> dict[str, Any] | None:
    """The `config.json` of a local model (None: not a local model, or its folder is not there yet)."""
    return model_config(local_path(params["model"])) if params["backend"] == "transformers" else None


def generous_count(messages: list[dict[str, str]]) -> int:
    """More tokens than a chat has (a token of a usual tokenizer holds two characters or more), with
    no tokenizer to load: the workflow sizes jobs with it."""
    return sum(len(m["content"]) for m in messages) // 2 + 8 * len(messages)


@cache
def block_memory_mb(shared_json: str, seeds: int) -> int | None:
    """`job_memory_mb` of a job block (its shared spec as canonical JSON), its prompts rendered and
    counted generously; None where the method is not a local model whose folder is there."""
    shared = json.loads(shared_json)
    config = local_model_config(shared["method"]["params"])
    if config is None:
        return None
    _, _, longest = episode_estimate(shared, generous_count)
    return job_memory_mb(shared, seeds, longest, config)


def cell_estimate(shared: dict[str, Any], seeds: int) -> CellEstimate:
    """One cell of a block, counted with the model's tokenizer where it can be, and a job of `seeds`
    such cells' memory; each call's repair (at most one) counted in its bound."""
    params = shared["method"]["params"]
    count, approximate = token_counter(params["backend"], params["model"])
    requests = episode_requests(shared)
    counts = [count(list(request.messages)) for request in requests]
    max_tokens = params["max_tokens"]
    again = again_tokens(count, requests, repair_request, max_tokens)
    config = local_model_config(params)
    memory = None if config is None else job_memory_mb(shared, seeds, max(counts, default=0), config)
    calls = len(counts)
    return CellEstimate(
        params["model"],
        calls,
        sum(counts),
        calls * max_tokens,
        approximate,
        memory,
        again,
        resends(params),
        served(params),
    )
