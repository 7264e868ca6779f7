"""The model calls and tokens of a `swarmsys` method's cells, before running them.

One episode of the cell's task (seed 0) is played by the real organisation, matching included, with
every reply a valid one of full length (posts and profiles at their caps, every sub-task an explorer
may open opened, nothing terminated, so every role acts to the last round), and every prompt it asks
is counted: with the model's own tokenizer where it is a local folder that exists, else as characters
/ 4 (marked "~"). Output tokens are given as the cap (max_tokens); repairs are in the bound alone (each
call, its answer requests' too, at most one), with the resends a remote backend may make
(`CellEstimate.bound`). The job's memory is not estimated.
"""

from __future__ import annotations

import json
from typing import Any

from hivebench.agents.llm.estimate import token_counter
from hivebench.agents.swarmsys.agent import SwarmSys
from hivebench.agents.swarmsys.prompts import ROLE_RULES
from hivebench.cells import make_cell
from hivebench.engine.loop import make_task, run
from hivebench.method import CellEstimate, again_tokens, resends, served
from hivebench.models import ChatRequest, ChatResult, OnResult, Usage
from hivebench.models.decide import repair_request
from hivebench.seeding import Streams


def full_reply(request: ChatRequest) -> dict[str, Any]:
    """A valid reply as long as its schema allows, keeping the agent's role and terminating nothing."""
    role = next((r for r, rule in ROLE_RULES.items() if rule in request.messages[0]["content"]), "worker")
    reply: dict[str, Any] = {}
    for key, spec in (request.schema or {})["properties"].items():
        if key == "role":
            reply[key] = role
        elif key == "subevents":
            reply[key] = ["x" * spec["items"]["maxLength"]] * spec["maxItems"]
        elif spec.get("type") == "string":
            reply[key] = "x" * spec["maxLength"]
        else:  # accepted: none; terminate: no; an answer: none yet
            reply[key] = {"accepted": [], "terminate": False}.get(key)
    return reply


class FullReplies:
    name, model, cacheable = "estimate", "estimate", False

    def __init__(self) -> None:
        self.asked: list[ChatRequest] = []

    def complete(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        results = []
        for index, request in enumerate(requests):
            self.asked.append(request)
            results.append(ChatResult(json.dumps(full_reply(request)), Usage(), mode="scripted"))
            on_result(index, results[-1])
        return results


def cell_estimate(shared: dict[str, Any], seeds: int) -> CellEstimate:
    params = shared["method"]["params"]
    count, approximate = token_counter(params["backend"], params["model"])
    backend = FullReplies()
    policy = SwarmSys(
        params, Streams([0], "policy"), ["unused.calls.jsonl"], backend
    )  # answers every call: no cache read
    task = make_task(make_cell(shared, 0))
    task.reset([0])
    run(task, policy)
    max_tokens = params["max_tokens"]
    again = again_tokens(count, backend.asked, repair_request, max_tokens)
    return CellEstimate(
        params["model"],
        len(backend.asked),
        sum(count(list(request.messages)) for request in backend.asked),
        len(backend.asked) * max_tokens,
        approximate,
        None,
        again,
        resends(params),
        served(params),
    )
