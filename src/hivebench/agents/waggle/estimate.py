"""The model calls and tokens of a `waggle` method's cells, before running them.

One episode of the cell's task (seed 0) is played with the scripted controller in the controller's
slot (hivebench.agents.scripted_controller.rule: it writes, relays and commits, so the incident fields fill as
a controller's would), and the controller's prompt is rendered for every view it was shown. Tokens
are counted with the model's own tokenizer when it is a local folder that exists, else as
characters / 4 (marked "~"); output tokens are given as the cap (max_tokens). Regenerations are in the
bound alone (each view at most one, its chat the view's with the refused reply and the validator's
note), with the resends a remote backend may make (`CellEstimate.bound`). A local model's job memory
is sized from the longest prompt, with a regeneration's refused reply and note, the reply's cap and the
rows it decodes at once (`batch_rows`, at most every agent of the job's seeds); the workflow asks for it
(`block_memory_mb`).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hivebench.agents.llm.estimate import generous_count, local_model_config, token_counter
from hivebench.agents.scripted_controller.rule import ScriptedController
from hivebench.agents.waggle.controller import again as regeneration
from hivebench.agents.waggle.prompt import messages, record_schema
from hivebench.cells import make_cell
from hivebench.engine.loop import make_task, run
from hivebench.ids import canonical_json
from hivebench.method import CellEstimate, again_tokens, resends, served
from hivebench.models import ChatRequest, Sampling, approximate_count
from hivebench.models.memory import memory_mb
from hivebench.registry import SUITE_OBJECTS
from hivebench.seeding import Streams
from hivebench.suite import load


def shown_views(shared: dict[str, Any]) -> tuple[tuple[str, ...], list[dict[str, Any]]]:
    """The action names and every view a scripted controller is shown in one episode (seed 0)."""
    task = make_task(make_cell(shared, 0))
    task.reset([0])
    adapter = load(SUITE_OBJECTS[shared["suite"]].waggle)()
    policy = ScriptedController({**shared["method"]["params"], "keep_views": True}, Streams([0], "policy"), adapter)
    run(task, policy)
    return policy.adapter.actions, [json.loads(view) for _, _, views in policy.shown for view in views]


def job_memory(config: dict[str, Any], params: dict[str, Any], rows: int, longest: int) -> int:
    """A local model's peak for `rows` agents decoded at once (at most `batch_rows`) whose longest
    prompt is `longest` tokens: a regeneration holds the prompt, the refused reply, the validator's
    note (generously 64 tokens) and its own reply."""
    width = longest + 2 * params["max_tokens"] + 64
    return memory_mb(config, params["dtype"], min(params["batch_rows"], rows), width, False)


def cell_estimate(shared: dict[str, Any], seeds: int) -> CellEstimate:
    params = shared["method"]["params"]
    _, approximate = token_counter(params["backend"], params["model"])
    # what the prompts depend on: not the study, the replicate, nor the model where no tokenizer counts
    episode = {key: value for key, value in shared.items() if key not in ("study", "replicate")}
    episode["method"] = {**shared["method"], "params": {k: v for k, v in params.items() if k != "model"}}
    model = None if approximate else params["model"]
    max_tokens = params["max_tokens"]
    views, tokens, longest, again = prompt_tokens(canonical_json(episode), params["backend"], model, max_tokens)
    config = local_model_config(params)
    rows = seeds * shared["population"]
    memory = None if config is None else job_memory(config, params, rows, longest)
    return CellEstimate(
        params["model"], views, tokens, views * max_tokens, approximate, memory, again, resends(params), served(params)
    )


@cache  # replicates that differ only by their model (LoRA adapters), and a cell in several studies, count once
def prompt_tokens(episode: str, backend: str, model: str | None, max_tokens: int) -> tuple[int, int, int, int]:
    """(views shown, their prompts' tokens, the longest prompt's, at most their regenerations'
    tokens) in one episode of a cell (`episode`: the canonical JSON of its shared part), counted with
    `model`'s tokenizer, or approximately (None)."""
    count = approximate_count if model is None else token_counter(backend, model)[0]
    actions, views = shown_views(json.loads(episode))
    schema = record_schema(list(actions))
    requests = [ChatRequest(messages(view, list(actions)), schema, Sampling(), 0) for view in views]
    tokens = [count(list(request.messages)) for request in requests]
    again = again_tokens(count, requests, regeneration, max_tokens)
    return len(views), sum(tokens), max(tokens, default=0), again


@cache
def block_memory_mb(shared_json: str, seeds: int) -> int | None:
    """A job's peak memory (its block's shared spec as canonical JSON): the prompts counted generously,
    with no tokenizer to load; None where the model is not a local folder that is there."""
    shared = json.loads(shared_json)
    params = shared["method"]["params"]
    config = local_model_config(params)
    if config is None:
        return None
    actions, views = shown_views(shared)
    longest = max((generous_count(list(messages(view, list(actions)))) for view in views), default=0)
    return job_memory(config, params, seeds * shared["population"], longest)
