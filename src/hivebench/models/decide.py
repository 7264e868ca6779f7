"""Schema-checked decisions from a backend, through the response cache, with one repair attempt.

Every reply is parsed and validated against its request's schema, whatever the backend promised. An
invalid reply gets one repair request that quotes the validator's error; if the repair fails too the
decision is a fallback (`value` is None) and the caller applies its documented default.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from hivebench.models import MALFORMED, Backend, ChatRequest, ChatResult, Usage
from hivebench.models.cache import ResponseCache

VALID, REPAIRED, FALLBACK = "valid", "repaired", "fallback"
log = logging.getLogger("hivebench.llm")


@dataclass(frozen=True)
class Decision:
    value: dict[str, Any] | None  # the schema-valid reply, or None for a fallback
    status: str  # valid | repaired | fallback
    calls: int  # 1, or 2 with a repair
    usage: Usage  # summed over the calls


def check(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed reply and None, or None and what is wrong with it."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at character {exc.pos})"
    error = next(iter(Draft202012Validator(schema).iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return None, f"{where}: {error.message}"
    return value, None


def repair_request(request: ChatRequest, reply: str, error: str) -> ChatRequest:
    note = (
        f"Your reply was rejected: {error}. Answer again with only a JSON object that satisfies this "
        f"JSON Schema: {json.dumps(request.schema, separators=(',', ':'))}"
    )
    messages = (*request.messages, {"role": "assistant", "content": reply}, {"role": "user", "content": note})
    return ChatRequest(messages, request.schema, request.sampling, request.sample)


def add(a: Usage, b: Usage) -> Usage:
    return Usage(
        a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens, a.latency_s + b.latency_s, a.retries + b.retries
    )


class Decider:
    """Answers batches of requests from the cache where it can and from the backend otherwise."""

    def __init__(self, backend: Backend, cache: ResponseCache):
        self.backend = backend
        self.cache = cache
        self.calls_made = 0  # replies paid for in this process (cache hits are not calls)

    def complete(self, requests: list[ChatRequest]) -> list[ChatResult]:
        if not getattr(self.backend, "cacheable", True):  # a scripted backend: replies in request order
            results = self.backend.complete(requests, lambda index, result: None)
            self.calls_made += len(results)
            return results
        keys = [r.key(self.backend.name, self.backend.model) for r in requests]
        results: list[ChatResult | None] = [self.cache.get(k) for k in keys]
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:

            def store(index: int, result: ChatResult) -> None:
                self.cache.put(keys[missing[index]], result)
                self.calls_made += 1

            fresh = self.backend.complete([requests[i] for i in missing], store)
            for i, result in zip(missing, fresh):
                results[i] = result
                if result.mode == MALFORMED:
                    server = getattr(self.backend, "base_url", self.backend.name)
                    cell = str(self.cache.path).removesuffix(".calls.jsonl")
                    log.warning("cell %s: %s answered with a malformed response: counted as an invalid reply", cell, server)
        return results  # type: ignore[return-value]  # every slot is filled above

    def decide(self, requests: list[ChatRequest]) -> list[Decision]:
        results = self.complete(requests)
        checked = [check(r.text, q.schema) for r, q in zip(results, requests)]
        bad = [i for i, (_, error) in enumerate(checked) if error is not None]
        repairs = self.complete([repair_request(requests[i], results[i].text, checked[i][1] or "") for i in bad])
        decisions = [Decision(value, VALID, 1, result.usage) for (value, _), result in zip(checked, results)]
        for i, repaired in zip(bad, repairs):
            value, error = check(repaired.text, requests[i].schema)
            status = REPAIRED if error is None else FALLBACK
            decisions[i] = Decision(value, status, 2, add(results[i].usage, repaired.usage))
        return decisions
