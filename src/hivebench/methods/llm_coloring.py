"""The LoopBench LLM agent: one model call per agent per round, with private feed-forward notes.

Each agent's prompt holds the task, its id, its own and its neighbours' colours, its local history
(all earlier rounds, as in the paper, or the last K) and the notes it wrote last round. The reply is a
JSON object {color, notes}; the notes come back in the agent's next prompt and are recorded in the
episode at every step. An agent whose reply stays invalid after one repair keeps its current colour
and its previous notes (the documented fallback).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hivebench.models import ChatRequest, Sampling, Usage
from hivebench.models.cache import ResponseCache
from hivebench.models.decide import FALLBACK, REPAIRED, VALID, Decider, Decision
from hivebench.models.open import backend_for
from hivebench.tasks.coloring import ColoringViews

log = logging.getLogger("hivebench.llm")

SYSTEM = (
    "You are agent {agent}, one of {n} agents. Each agent controls one node of a graph and every round "
    "picks one of {c} colours, numbered 0 to {top}. All agents choose at the same time and cannot talk "
    "to each other. An edge whose two nodes have the same colour is a conflict; together the agents "
    "should reach as few conflicts as possible and stay there. You see only your own colour, your "
    "neighbours' colours and your own history. You also keep private notes: whatever you write in "
    "\"notes\" is shown to you, and only you, next round. Use them to record what you observe and the "
    "strategy you follow."
)
REPLY = (
    'Reply with only a JSON object: {{"color": <an integer from 0 to {top}>, "notes": "<your private '
    'notes for next round, at most {chars} characters>"}}'
)


def decision_schema(colors: int, notes_chars: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "color": {"type": "integer", "minimum": 0, "maximum": colors - 1},
            "notes": {"type": "string", "maxLength": notes_chars},
        },
        "required": ["color", "notes"],
        "additionalProperties": False,
    }


def history_lines(views: ColoringViews, agent: int, window: int | None) -> list[str]:
    """Earlier rounds, oldest first: this agent's colour, then its neighbours' (the paper's H_t(v))."""
    neighbours = views.neighbors_of(agent)
    first = 0 if window is None else max(0, views.step - window)
    return [
        f"  {'start' if t == 0 else f'after round {t}'}: you {views.history[t, agent]}; neighbours "
        + ", ".join(str(views.history[t, u]) for u in neighbours)
        for t in range(first, views.step)
    ]


def user_prompt(views: ColoringViews, agent: int, notes: str, window: int | None, chars: int) -> str:
    neighbours = views.neighbors_of(agent)
    lines = [
        f"Round {views.step + 1} of {views.horizon}.",
        f"Your colour now: {views.colors[agent]}.",
        "Your neighbours' colours now: "
        + ", ".join(f"agent {u}: {views.colors[u]}" for u in neighbours)
        + f" ({int(views.own_conflicts[agent])} of them conflict with you).",
    ]
    history = history_lines(views, agent, window)
    if history:
        label = "all earlier rounds" if window is None else f"the last {len(history)} rounds"
        lines += [f"History ({label}, oldest first):", *history]
    lines += ["Your notes from last round:", notes if notes else "(none yet)", "", REPLY.format(top=views.num_colors - 1, chars=chars)]
    return "\n".join(lines)


def agent_messages(views: ColoringViews, agent: int, notes: str, window: int | None, chars: int) -> tuple[dict[str, str], ...]:
    """The chat an agent gets in a round: the task as the system message, its local view as the user's."""
    n, c = len(views.colors), views.num_colors
    return (
        {"role": "system", "content": SYSTEM.format(agent=agent, n=n, c=c, top=c - 1)},
        {"role": "user", "content": user_prompt(views, agent, notes, window, chars)},
    )


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


class LLMColorer:
    """Decides a round by asking the model once per agent, all agents in one batch."""

    uses_models = True

    def __init__(self, params: dict[str, Any], rng: np.random.Generator, cache_path: str | Path):
        self.rng = rng
        self.window = None if params["history"] == "full" else int(params["history"])
        self.chars = int(params["notes_chars"])
        self.sampling = Sampling(float(params["temperature"]), float(params["top_p"]), int(params["max_tokens"]))
        self.decider = Decider(backend_for(params), ResponseCache(cache_path))
        self.initial = params.get("initial_notes")
        self.label = str(cache_path)
        self.notes: list[list[str]] = []  # every agent's notes in force after each step (0: initial)
        self.rounds: list[list[Decision]] = []

    def requests(self, views: ColoringViews) -> list[ChatRequest]:
        n = len(views.colors)
        if not self.notes:
            self.notes.append(initial_notes(self.initial, n))
        schema = decision_schema(views.num_colors, self.chars)
        samples = self.rng.integers(0, 2**31 - 1, size=n)  # one draw per agent per round, whatever the cache holds
        return [
            ChatRequest(
                agent_messages(views, v, self.notes[-1][v], self.window, self.chars), schema, self.sampling, int(samples[v])
            )
            for v in range(n)
        ]

    def decide(self, views: ColoringViews) -> np.ndarray:
        decisions = self.decider.decide(self.requests(views))
        colors, notes = views.colors.copy(), list(self.notes[-1])
        for v, decision in enumerate(decisions):
            if decision.value is not None:  # fallback: keep the current colour and the old notes
                colors[v] = decision.value["color"]
                notes[v] = decision.value["notes"]
        self.rounds.append(decisions)
        self.notes.append(notes)
        self._progress(views.horizon)
        return colors

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
        return {
            "llm_calls": sum(d.calls for d in decisions),
            "input_tokens": sum(u.input_tokens for u in usage),
            "output_tokens": sum(u.output_tokens for u in usage),
            "latency_s": round(sum(u.latency_s for u in usage), 6),
            "retries": sum(u.retries for u in usage),
            **{status: sum(d.status == status for d in decisions) for status in (VALID, REPAIRED, FALLBACK)},
        }
