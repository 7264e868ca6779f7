"""One chat interface for every model backend.

A backend takes a batch of requests and returns a batch of results in the same order. Each request
carries its messages, the JSON Schema its reply must satisfy (or none: free text, which its reader
parses), its sampling parameters and a sample index (which draw of the model's distribution this is;
hivebench derives it from the cell's seed), so the request alone determines the reply and can key a
response cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from hivebench.ids import digest

Message = dict[str, str]  # {"role": ..., "content": ...}


@dataclass(frozen=True)
class Sampling:
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 128

    @classmethod
    def of(cls, params: dict[str, Any]) -> Sampling:
        """A method's sampling parameters (`temperature`, `top_p`, `max_tokens`)."""
        return cls(float(params["temperature"]), float(params["top_p"]), int(params["max_tokens"]))


@dataclass(frozen=True)
class Reader:
    """How a free-text reply is read: `parse` gives its value and None, or None and what is wrong with
    it; `again` the user message that asks once more, given what was wrong."""

    parse: Callable[[str], tuple[dict[str, Any] | None, str | None]]
    again: Callable[[str], str]


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[Message, ...]
    schema: dict[str, Any] | None  # None: free text (no constraint), read by `reader`
    sampling: Sampling
    sample: int  # the sample index: distinct draws of the same prompt differ only here
    # A hint, not part of the key: the agent's next request extends this chat with its reply (full
    # history), so a local backend keeps the KV cache for it.
    keep_state: bool = False
    reader: Reader | None = None  # a free-text reply's reader (not part of the key: it reads, it asks nothing)

    def key(self, backend: str, model: str) -> str:
        """The content address of this request's reply for one backend and model."""
        return digest(
            {
                "backend": backend,
                "model": model,
                "messages": list(self.messages),
                "schema": self.schema,
                "sampling": asdict(self.sampling),
                "sample": self.sample,
            }
        )


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0


MALFORMED = "malformed"  # a server's answer that was not a chat completion (a body that is not JSON, no choices)


@dataclass(frozen=True)
class ChatResult:
    text: str
    usage: Usage = field(default_factory=Usage)
    # how the schema was enforced: json_schema, json_object, constrained; text (free text); or MALFORMED
    mode: str = "json_schema"

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "usage": asdict(self.usage), "mode": self.mode}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChatResult:
        return cls(text=data["text"], usage=Usage(**data["usage"]), mode=data["mode"])


def approximate_count(messages: Sequence[Message]) -> int:
    """A chat's prompt tokens where no tokenizer is at hand: characters / 4, and 4 per message."""
    return sum(len(m["content"]) for m in messages) // 4 + 4 * len(messages)


def token_cost(price: dict[str, float], input_tokens: int, output_tokens: int) -> float:
    """USD for some tokens at a `prices` entry ({input, output}: USD per million tokens)."""
    return (input_tokens * price["input"] + output_tokens * price["output"]) / 1e6


class BackendError(RuntimeError):
    """A call that failed for good (retries spent, or an error retrying cannot mend)."""


OnResult = Callable[[int, ChatResult], None]


class Backend(Protocol):
    name: str  # part of the cache key: "openai" or "transformers"
    model: str

    def complete(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        """Answer every request; call `on_result(index, result)` as each one finishes."""
        ...
