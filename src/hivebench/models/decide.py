"""Schema-checked decisions from a backend, through the response cache, with one repair attempt.

Every reply is parsed and validated against its request's schema, whatever the backend promised (a
free-text reply is parsed by its request's reader). An invalid reply gets one repair request that
quotes the validator's error (a reader's own message); if the repair fails too the decision is a
fallback (`value` is None) and the caller applies its documented default.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from hivebench.models import MALFORMED, Backend, ChatRequest, ChatResult, Message, Usage
from hivebench.models.cache import ResponseCache
from hivebench.spend.meter import current

VALID, REPAIRED, FALLBACK = "valid", "repaired", "fallback"
log = logging.getLogger("hivebench.llm")


@dataclass(frozen=True)
class Decision:
    value: dict[str, Any] | None  # the schema-valid reply, or None for a fallback
    text: str  # the reply as the model gave it (the repair's, after a repair)
    status: str  # valid | repaired | fallback
    calls: int  # 1, or 2 with a repair
    usage: Usage  # summed over the calls
    repair: tuple[Message, ...] = ()  # after a repair: the rejected reply and the message that asked again
    keys: tuple[str, ...] = ()  # its calls' response-cache keys (none from a backend that is not cached)


def check(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed reply and None, or None and what is wrong with it."""
    try:
        value = json.loads(text)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate ("\\ud800") is no text to store
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at character {exc.pos})"
    except UnicodeEncodeError:
        return None, "a string holds a lone surrogate escape, which is not text"
    error = next(iter(Draft202012Validator(schema).iter_errors(value)), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return None, f"{where}: {error.message}"
    return value, None


def read(request: ChatRequest, text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A reply as its request reads it: checked against its schema, or parsed by its reader."""
    return check(text, request.schema) if request.reader is None else request.reader.parse(text)


def repair_request(request: ChatRequest, reply: str, error: str) -> ChatRequest:
    if request.reader is None:
        note = (
            f"Your reply was rejected: {error}. Answer again with only a JSON object that satisfies this "
            f"JSON Schema: {json.dumps(request.schema, separators=(',', ':'))}"
        )
    else:
        note = request.reader.again(error)
    messages = (*request.messages, {"role": "assistant", "content": reply}, {"role": "user", "content": note})
    return ChatRequest(messages, request.schema, request.sampling, request.sample, reader=request.reader)


def add(a: Usage, b: Usage) -> Usage:
    return Usage(
        a.input_tokens + b.input_tokens,
        a.output_tokens + b.output_tokens,
        a.latency_s + b.latency_s,
        a.retries + b.retries,
    )


def totals(decisions: list[Decision]) -> dict[str, Any]:
    """The calls, tokens, latency, retries and outcomes of some decisions, as an episode's summary
    gives them (`llm_calls`: the name hivebench status and costs read)."""
    usage = [d.usage for d in decisions] or [Usage()]
    return {
        "llm_calls": sum(d.calls for d in decisions),
        "input_tokens": sum(u.input_tokens for u in usage),
        "output_tokens": sum(u.output_tokens for u in usage),
        "latency_s": round(sum(u.latency_s for u in usage), 6),
        "retries": sum(u.retries for u in usage),
        **{status: sum(d.status == status for d in decisions) for status in (VALID, REPAIRED, FALLBACK)},
    }


class Decider:
    """Answers batches of requests from the cache where it can and from the backend otherwise. A
    job block's episodes each have their own cell's cache: request i belongs to episode episodes[i]."""

    def __init__(self, backend: Backend, caches: list[ResponseCache]):
        self.backend = backend
        self.caches = caches
        # A scripted backend answers each episode from the top of its file: one copy per episode.
        self.scripted = None if getattr(backend, "cacheable", True) else [copy.copy(backend) for _ in caches]
        self.calls_made = 0  # replies paid for in this process (cache hits are not calls)

    def recorded(self) -> dict[str, str]:
        """What an episode's summary records of its model: the precision a local one ran in."""
        dtype = getattr(self.backend, "dtype", None)
        return {} if dtype is None else {"model_dtype": dtype}

    @property
    def hits(self) -> int:
        return sum(cache.hits for cache in self.caches)

    def complete(self, requests: list[ChatRequest], episodes: list[int]) -> list[ChatResult]:
        if self.scripted is not None:  # replies in request order, episode by episode
            results: list[ChatResult | None] = [None] * len(requests)
            for episode, backend in enumerate(self.scripted):
                mine = [i for i, e in enumerate(episodes) if e == episode]
                for i, result in zip(mine, backend.complete([requests[i] for i in mine], lambda index, result: None)):
                    results[i] = result
            self.calls_made += len(requests)
            return results  # type: ignore[return-value]  # every request belongs to one episode
        keys = self.keys(requests)
        results = [self.caches[e].get(k) for k, e in zip(keys, episodes)]
        missing = [i for i, r in enumerate(results) if r is None]
        meter = current()
        if meter is not None:
            meter.progress.tick(replayed=len(requests) - len(missing))
        if missing:

            def store(index: int, result: ChatResult) -> None:
                asked = missing[index]
                self.caches[episodes[asked]].put(keys[asked], result, self.backend.model, requests[asked].messages)
                self.calls_made += 1
                if meter is not None:
                    meter.progress.called(result.usage)

            fresh = self.backend.complete([requests[i] for i in missing], store)
            for i, result in zip(missing, fresh):
                results[i] = result
                if result.mode == MALFORMED:
                    server = getattr(self.backend, "base_url", self.backend.name)
                    cell = str(self.caches[episodes[i]].path).removesuffix(".calls.jsonl")
                    log.warning(
                        "cell %s: %s answered with a malformed response: counted as an invalid reply", cell, server
                    )
        return results  # type: ignore[return-value]  # every slot is filled above

    def keys(self, requests: list[ChatRequest]) -> list[str]:
        """The requests' response-cache keys ("" each where the backend is not cached)."""
        if self.scripted is not None:
            return [""] * len(requests)
        return [r.key(self.backend.name, self.backend.model) for r in requests]

    def decide(self, requests: list[ChatRequest], episodes: list[int]) -> list[Decision]:
        results = self.complete(requests, episodes)
        keys = [(key,) if key else () for key in self.keys(requests)]
        checked = [read(q, r.text) for r, q in zip(results, requests)]
        bad = [i for i, (_, error) in enumerate(checked) if error is not None]
        asked = [repair_request(requests[i], results[i].text, checked[i][1] or "") for i in bad]
        repairs = self.complete(asked, [episodes[i] for i in bad])
        decisions = [
            Decision(value, result.text, VALID, 1, result.usage, keys=key)
            for (value, _), result, key in zip(checked, results, keys)
        ]
        for i, ask, repaired, repair_key in zip(bad, asked, repairs, self.keys(asked)):
            value, error = read(requests[i], repaired.text)
            status = REPAIRED if error is None else FALLBACK
            usage = add(results[i].usage, repaired.usage)
            call_keys = (*keys[i], repair_key) if repair_key else keys[i]
            decisions[i] = Decision(value, repaired.text, status, 2, usage, ask.messages[-2:], call_keys)
        return decisions
