"""The LLM agent of every suite: one model call per agent per decision round, private feed-forward
notes, checked decisions.

The suite's text view renders each agent's observation as a chat and names the fields of its reply;
this agent adds the private notes (returned in every reply, shown to the agent alone in its next
prompt, recorded at every step), asks the model for all agents in one batch through the response
cache, validates each reply against the JSON Schema, repairs once, and falls back (the view's
documented default action, the agent's previous notes), counting each outcome.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hivebench.models import ChatRequest, Message, Sampling, Usage
from hivebench.models.cache import ResponseCache
from hivebench.models.decide import FALLBACK, REPAIRED, VALID, Decider, Decision
from hivebench.models.open import backend_for
from hivebench.seeding import Streams

log = logging.getLogger("hivebench.llm")


class TextView(Protocol):
    """A suite's observations as an LLM agent reads them (one per suite, `Suite.text_view`)."""

    def agents(self, observation: Any) -> int:
        """How many agents decide this round."""

    def reply_schema(self, observation: Any, agent: int) -> dict[str, Any]:
        """JSON Schema properties of this agent's reply this round, all required (`notes` is added)."""

    def messages(self, observation: Any, agent: int, notes: str, window: int | None, chars: int) -> tuple[Message, ...]:
        """One agent's chat: its local view, its last `window` rounds of history (None: all), its notes."""

    def actions(self, observation: Any, replies: list[dict[str, Any] | None]) -> Any:
        """The batch of actions from every agent's valid reply, or its fallback where the reply is None."""


# `tagged_notes: true`: the paper's figures show notes as tagged lines; this asks for them.
TAGGED_NOTES = (
    " Write your notes as lines that each start with a tag: [NEW] for something you add, [MODIFIED] for "
    "something you change, [KEPT] for something you keep as it was, [REMOVED] for something you drop."
)
FILLER = "Round 4: both neighbours matched me again, so I hold my colour for one round. "


def with_tags(messages: tuple[Message, ...], tagged: bool) -> tuple[Message, ...]:
    """A view's chat, with the request for tagged notes added to its system message where it is on."""
    if not tagged:
        return messages
    return ({**messages[0], "content": messages[0]["content"] + TAGGED_NOTES}, *messages[1:])


def history_window(params: dict[str, Any]) -> int | None:
    """Rounds of history in a prompt: None for all ("full"), else the last K."""
    return None if params["history"] == "full" else int(params["history"])


def decision_schema(reply: dict[str, Any], notes_chars: int) -> dict[str, Any]:
    """The JSON Schema of one reply: the view's fields, then the notes."""
    properties = {**reply, "notes": {"type": "string", "maxLength": notes_chars}}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def initial_notes(spec: dict[str, Any] | None, n: int) -> list[str]:
    """Every agent's notes before round 1: none, a given text, or another episode's final notes
    (agent v gets the source episode's agent v mod its size)."""
    if spec is None:
        return [""] * n
    if "text" in spec:
        return [spec["text"]] * n
    table = pq.read_table(spec["episode"], columns=["step", "agent", "notes"]).to_pydict()
    last = max(table["step"])
    final = {a: s for t, a, s in zip(table["step"], table["agent"], table["notes"]) if t == last}
    return [final[v % len(final)] or "" for v in range(n)]


class LLMAgent:
    """Decides a round by asking the model once per agent, all agents in one batch."""

    def __init__(self, params: dict[str, Any], rng: Streams, cache_path: str | Path, view: TextView):
        self.rng = rng
        self.view = view
        self.window = history_window(params)
        self.chars = int(params["notes_chars"])
        self.sampling = Sampling(float(params["temperature"]), float(params["top_p"]), int(params["max_tokens"]))
        self.decider = Decider(backend_for(params), ResponseCache(cache_path))
        self.initial = params.get("initial_notes")
        self.tagged = bool(params["tagged_notes"])
        self.label = str(cache_path)
        self.notes: list[list[str]] = []  # every agent's notes in force after each step (0: initial)
        self.rounds: list[list[Decision]] = []

    def requests(self, observation: Any) -> list[ChatRequest]:
        n = self.view.agents(observation)
        if not self.notes:
            self.notes.append(initial_notes(self.initial, n))
        samples = self.rng.integers(0, 2**31 - 1, (n,))  # one draw per agent per round, whatever the cache holds
        return [
            ChatRequest(
                self.chat(observation, v),
                decision_schema(self.view.reply_schema(observation, v), self.chars), self.sampling, int(samples[v]),
            )  # fmt: skip
            for v in range(n)
        ]

    def chat(self, observation: Any, agent: int) -> tuple[Message, ...]:
        return with_tags(self.view.messages(observation, agent, self.notes[-1][agent], self.window, self.chars), self.tagged)

    @staticmethod
    def estimate_episode(
        task: Any, view: TextView, params: dict[str, Any], count: Callable[[list[Message]], int]
    ) -> tuple[int, int]:
        """(calls, input tokens) of one episode of `task` (reset): every prompt rendered for real, on
        a run where every agent takes the fallback action and carries notes of the full length."""
        window, chars = history_window(params), params["notes_chars"]
        notes = (FILLER * (1 + chars // len(FILLER)))[:chars]
        calls = tokens = 0
        while not task.done:
            observation = task.observe()
            n = view.agents(observation)
            calls += n
            chats = (with_tags(view.messages(observation, v, notes, window, chars), params["tagged_notes"]) for v in range(n))
            tokens += sum(count(list(chat)) for chat in chats)
            task.step(view.actions(observation, [None] * n))
        return calls, tokens

    def decide(self, observation: Any) -> Any:
        decisions = self.decider.decide(self.requests(observation))
        # A fallback keeps the agent's old notes; its action is the view's default.
        self.notes.append([self.notes[-1][v] if d.value is None else d.value["notes"] for v, d in enumerate(decisions)])
        self.rounds.append(decisions)
        self._progress(observation.horizon)
        return self.view.actions(observation, [d.value for d in decisions])

    def _progress(self, steps: int) -> None:
        totals = self.summary()
        log.info(
            "%s: round %d/%d, %d calls (%d made, %d from cache), %d input / %d output tokens, %d retries, %d fallbacks",
            self.label, len(self.rounds), steps, totals["llm_calls"], self.decider.calls_made,
            self.decider.cache.hits, totals["input_tokens"], totals["output_tokens"], totals["retries"], totals["fallback"],
        )  # fmt: skip

    def columns(self) -> dict[str, pa.Array]:
        """Per (step, agent) row, in the episode table's order: the notes in force after that step and
        the decision that produced it (step 0 holds the initial notes and no decision)."""
        n = len(self.notes[0])
        decisions: list[Decision | None] = [None] * n + [d for round_ in self.rounds for d in round_]

        def usage(field: str) -> list[Any]:
            return [None if d is None else getattr(d.usage, field) for d in decisions]

        return {
            "decision": pa.array([None if d is None else d.status for d in decisions], pa.string()),
            "calls": pa.array([None if d is None else d.calls for d in decisions], pa.int32()),
            "input_tokens": pa.array(usage("input_tokens"), pa.int32()),
            "output_tokens": pa.array(usage("output_tokens"), pa.int32()),
            "latency_s": pa.array(usage("latency_s"), pa.float64()),
            "retries": pa.array(usage("retries"), pa.int32()),
            "notes": pa.array([text for step in self.notes for text in step], pa.string()),
        }

    def summary(self) -> dict[str, Any]:
        decisions = [d for round_ in self.rounds for d in round_]
        usage = [d.usage for d in decisions] or [Usage()]
        revisions = sum(a != b for before, after in zip(self.notes, self.notes[1:]) for a, b in zip(before, after))
        return {
            "note_revisions": revisions,  # (agent, round) pairs whose notes changed
            "llm_calls": sum(d.calls for d in decisions),
            "input_tokens": sum(u.input_tokens for u in usage),
            "output_tokens": sum(u.output_tokens for u in usage),
            "latency_s": round(sum(u.latency_s for u in usage), 6),
            "retries": sum(u.retries for u in usage),
            **{status: sum(d.status == status for d in decisions) for status in (VALID, REPAIRED, FALLBACK)},
        }
