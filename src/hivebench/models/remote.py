"""Any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, SGLang) through the official `openai` client.

All requests of a batch are in flight at once under a concurrency limit. Transient failures (429, 5xx,
timeouts, dropped connections) are retried with exponential backoff and full jitter, bounded by a
retry count and a total time per request. Structured outputs are asked for as a JSON Schema response
format; a server that refuses that is asked for JSON mode instead (the reply is validated either way).
A request without a schema asks for free text (no response format).
The API key is read from the environment variable the config names and is never stored anywhere.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from dataclasses import dataclass
from typing import Any

from hivebench.models import (
    MALFORMED,
    BackendError,
    ChatRequest,
    ChatResult,
    OnResult,
    Usage,
)
from hivebench.spend.ledger import Hold
from hivebench.spend.meter import Gate, current

log = logging.getLogger("hivebench.llm")

LAPSE_MARGIN_S = 60.0
RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
NO_KEY = "unused"  # servers started without --api-key accept any key; the client insists on one


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 10
    total_s: float = 300.0  # give up once this much time has passed since the first attempt
    base_s: float = 0.5
    cap_s: float = 60.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, or longer when the server says how long to wait."""
        backoff = rng.uniform(0, min(self.cap_s, self.base_s * 2**attempt))
        return max(backoff, min(retry_after, self.cap_s)) if retry_after is not None else backoff


def retry_after_s(exc: Exception) -> float | None:
    """The wait a 429/503 asks for (`retry-after-ms` or `retry-after` in seconds), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        try:
            return float(headers[name]) * scale
        except (KeyError, TypeError, ValueError):
            continue
    return None


def refuses_schema(exc: Exception) -> bool:
    """A 400 that says the server does not support JSON Schema response formats (not one that finds
    fault with a particular schema, which must surface as an error)."""
    text = str(exc).lower()
    names_it = "response_format" in text or "json_schema" in text
    return names_it and any(word in text for word in ("not supported", "unsupported", "does not support"))


class OpenAIBackend:
    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key_env: str | None,
        concurrency: int = 16,
        timeout_s: float = 120.0,
        retry: RetryPolicy = RetryPolicy(),  # frozen: one shared default is safe
        label: str | None = None,
        priced: str | None = None,
    ):
        self.served = model  # the name the requests ask for (a LoRA module's, where one is served)
        self.model = label or model  # what the replies are cached under (an adapter's digest with it)
        self.priced = priced or model  # its name in the config's `prices` (an adapter's base model)
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.retry = retry
        self.mode = "json_schema"  # becomes json_object for the rest of the run if the server refuses

    def _api_key(self) -> str:
        if self.api_key_env is None:
            return NO_KEY
        key = os.environ.get(self.api_key_env)
        if not key:
            raise BackendError(f"the environment variable {self.api_key_env} (the method's api_key_env) is not set")
        return key

    def complete(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        return asyncio.run(self._complete_all(requests, on_result))

    async def _complete_all(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        from openai import AsyncOpenAI

        key = self._api_key()
        client = AsyncOpenAI(base_url=self.base_url, api_key=key, max_retries=0, timeout=self.timeout_s)
        limit = asyncio.Semaphore(self.concurrency)
        meter = current()
        # A hold outlives its call only where the job died: it lapses after the call's longest time.
        lapse_s = self.retry.total_s + self.timeout_s + LAPSE_MARGIN_S
        gate = None if meter is None else meter.gate(self.base_url, self.served, self.priced, lapse_s)

        async def one(index: int, request: ChatRequest) -> ChatResult:
            async with limit:
                result = await self._call(client, request, gate)
            on_result(index, result)
            return result

        try:
            # Let every call finish (and reach the cache) before reporting a failure.
            outcomes = await asyncio.gather(*(one(i, r) for i, r in enumerate(requests)), return_exceptions=True)
        finally:
            await client.close()
        for outcome in outcomes:
            if isinstance(outcome, BaseException) and key != NO_KEY and key in str(outcome):
                raise BackendError(str(outcome).replace(key, "<api key>")) from None  # a server echoed it
            if isinstance(outcome, BaseException):
                raise outcome
        return list(outcomes)  # type: ignore[arg-type]  # no exceptions left

    def _arguments(self, request: ChatRequest, mode: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.served,
            "messages": list(request.messages),
            "temperature": request.sampling.temperature,
            # max_tokens is deprecated by OpenAI and refused by its reasoning models; vLLM takes both.
            "max_completion_tokens": request.sampling.max_tokens,
            "seed": request.sample,
        }
        if mode == "json_schema":
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "decision", "schema": request.schema, "strict": True},
            }
        elif mode == "json_object":
            arguments["response_format"] = {"type": "json_object"}
        if request.sampling.top_p < 1:  # sent only when set: reasoning models refuse the parameter
            arguments["top_p"] = request.sampling.top_p
        return arguments

    async def _call(self, client: Any, request: ChatRequest, gate: Gate | None) -> ChatResult:
        """The request's reply. Where the job has a meter (`gate`): paced at its endpoint's rate limit,
        then held against the budgets (so no hold waits in the queue), and settled in the ledger at
        what it cost: nothing where it failed for good, its worst case where it was cut off mid-call
        (a cancelled job: the server may have billed it)."""
        if gate is None:
            return await self._send(client, request, None, None)
        await gate.paced(request)
        hold = await gate.hold(request)
        try:
            result = await self._send(client, request, gate, hold)
        except BackendError:
            gate.release(hold)
            raise
        except BaseException:
            gate.settle(hold, None)
            raise
        gate.settle(hold, result.usage)
        return result

    async def _send(self, client: Any, request: ChatRequest, gate: Gate | None, hold: Hold | None) -> ChatResult:
        import openai

        rng = random.Random(request.sample)  # backoff jitter, reproducible per request
        started = time.perf_counter()
        retries = 0
        resent = False
        while True:
            mode = "text" if request.schema is None else self.mode
            if gate is not None and hold is not None and resent:  # each resend waits its turn too
                await gate.paced(request)
                gate.renew(hold)
            if gate is not None:
                await gate.unpaused()
            resent = True
            try:
                response = await client.chat.completions.create(**self._arguments(request, mode))
                break
            except json.JSONDecodeError:  # a body that is not JSON: an invalid reply, not a crash
                response = None
                break
            except openai.BadRequestError as exc:
                if mode == "json_schema" and refuses_schema(exc):
                    if self.mode == "json_schema":
                        log.warning("%s refuses JSON Schema response formats: JSON mode from now on", self.base_url)
                    self.mode = "json_object"
                    continue
                raise BackendError(f"{self.base_url}: request refused: {exc}") from exc
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                if status is not None and status not in RETRY_STATUS:
                    raise BackendError(f"{self.base_url}: {exc}") from exc
                elapsed = time.perf_counter() - started
                if retries >= self.retry.max_retries or elapsed >= self.retry.total_s:
                    raise BackendError(
                        f"{self.base_url}: gave up after {retries} retries in {elapsed:.1f} s: {exc}"
                    ) from exc
                asked = retry_after_s(exc)
                if gate is not None and asked is not None:
                    gate.hold_off(min(asked, self.retry.cap_s))  # every job's calls to the endpoint wait too
                wait = self.retry.delay(retries, rng, asked)
                await asyncio.sleep(min(wait, max(0.0, self.retry.total_s - elapsed)))
                retries += 1
        latency = time.perf_counter() - started
        if response is None or not response.choices or response.choices[0].message is None:
            # Counted as any invalid reply (repair, then fallback); the Decider names server and cell.
            return ChatResult(text="", usage=Usage(latency_s=round(latency, 6), retries=retries), mode=MALFORMED)
        usage = response.usage
        return ChatResult(
            text=response.choices[0].message.content or "",
            usage=Usage(
                input_tokens=usage.prompt_tokens if usage else 0,
                output_tokens=usage.completion_tokens if usage else 0,
                latency_s=round(latency, 6),
                retries=retries,
            ),
            mode=mode,
        )
