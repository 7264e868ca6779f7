"""The LLM agent of every suite: one model call per agent per decision round, private feed-forward
notes, checked decisions.

The suite's text view renders each agent's observation as a chat and names the fields of its reply;
this agent adds the private notes (returned in every reply, shown to the agent alone in its next
prompt, recorded at every step), asks the model for every live agent of every episode of its job
block in one batch, each episode through its own cell's response cache, validates each reply against
the JSON Schema, repairs once, and falls back (the view's documented default action, the agent's
previous notes), counting each outcome. An episode that has ended drops out of the batch.

That is `prompt_protocol: json` (hivebench's, the default). `prompt_protocol: reference` asks in the
prompt protocol of the benchmark the suite reproduces instead (the view's `reference`): its prompts
and memory, free-text replies read by its parser, no notes; they are repaired and fall back the same
way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hivebench.engine.api import Policy, TextView
from hivebench.models import ChatRequest, Message, Reader, Sampling, Usage
from hivebench.models.decide import FALLBACK, Decision, totals
from hivebench.models.open import decider_for
from hivebench.seeding import Streams

log = logging.getLogger("hivebench.llm")


# The agent's memory as every suite's prompt shows it: the rule in the task statement, the notes in force
# and the reply's `notes` field in each round's message.
NOTES_RULE = (
    'You also keep private notes: whatever you write in "notes" is shown to you, and only you, next round. '
    "Use them to record what you observe and the strategy you follow."
)
# `tagged_notes: true`: the paper's figures show notes as tagged lines; this asks for them.
TAGGED_NOTES = (
    " Write your notes as lines that each start with a tag: [NEW] for something you add, [MODIFIED] for "
    "something you change, [KEPT] for something you keep as it was, [REMOVED] for something you drop."
)
FILLER = "Round 4: both neighbours matched me again, so I hold my colour for one round. "
CHARS_PER_TOKEN = 4  # about, in English: an estimate's free-text replies fill max_tokens at this rate


def filler_text(chars: int) -> str:
    """Plain English of `chars` characters: the notes and replies of an estimate's agents."""
    return (FILLER * (1 + chars // len(FILLER)))[:chars]


class Chats:
    """Every agent's prompt: the suite's text view renders the task and the agent's local view, and
    names the reply's fields; the agent adds its memory (the notes rule, its notes, the `notes` field).
    The reply's format closes the system message as the agent's first round has it; a round whose
    fields differ (AgentsNet's and Silo-Bench's answer round) restates it at the end of its message.
    With `history: K` it is the task statement and one user message holding the agent's last K rounds;
    with `history: full` it grows as a chat, append-only: each round adds the round's user message and
    the agent's reply (as the model gave it), so a local model keeps the agent's KV cache and pre-fills
    only the new turn."""

    def __init__(self, view: TextView, params: dict[str, Any]):
        self.view = view
        self.window = None if params["history"] == "full" else int(params["history"])
        self.grows = self.window is None  # every agent's chat only grows (full history)
        self.chars = int(params["notes_chars"])
        self.tagged = bool(params["tagged_notes"])
        self.reasoning = int(params.get("reasoning_chars", 0))  # `reasoning` first in every reply (0: none)
        self.earlier: dict[int, list[Message]] = {}  # full history: each agent's earlier turns and replies
        self.asked: dict[int, Message] = {}  # each agent's user message of the round being decided
        self.first: dict[int, str] = {}  # each agent's reply format in its first round (its system message's)

    def reply_line(self, fields: str) -> str:
        reasoning = ""
        if self.reasoning:
            reasoning = f'"reasoning": "<reason step by step first: at most {self.reasoning} characters>", '
        return f'Reply with only a JSON object: {{{reasoning}{fields}, "notes": "<at most {self.chars} characters>"}}'

    def chat(self, observation: Any, agent: int, notes: str) -> tuple[Message, ...]:
        fields = self.view.reply_format(observation, agent)
        first = self.first.setdefault(agent, fields)
        tagged = TAGGED_NOTES if self.tagged else ""
        system = f"{self.view.system(observation, agent)}\n{NOTES_RULE}{tagged}\n{self.reply_line(first)}"
        lines = [
            self.view.turn(observation, agent, self.window or 0),
            f"Your notes from last round: {notes or '(none yet)'}",
        ]
        if fields != first:
            lines.append(self.reply_line(fields))
        turn = {"role": "user", "content": "\n".join(lines)}
        if self.window is not None:
            return ({"role": "system", "content": system}, turn)
        self.asked[agent] = turn
        return ({"role": "system", "content": system}, *self.earlier.get(agent, ()), turn)

    def replied(self, agent: int, text: str) -> None:
        """The agent's reply to this round's chat (full history keeps both in its chat)."""
        if self.grows:
            self.earlier.setdefault(agent, []).extend((self.asked.pop(agent), {"role": "assistant", "content": text}))

    def request(self, observation: Any, agent: int, notes: str, sampling: Sampling, sample: int) -> ChatRequest:
        schema = decision_schema(self.view.reply_schema(observation, agent), self.chars, self.reasoning)
        chat = self.chat(observation, agent, notes)
        return ChatRequest(chat, schema, sampling, sample, keep_state=self.grows)

    def answered(self, observation: Any, agent: int, decision: Decision) -> None:
        self.replied(agent, decision.text)

    def filler(self) -> tuple[str, str]:
        """The notes and the reply an estimate gives every agent: notes of the full length."""
        notes = filler_text(self.chars)
        return notes, json.dumps({"notes": notes})  # as long as a reply's notes (full history keeps replies)


class ReferenceChats:
    """`prompt_protocol: reference`: the prompt protocol of the benchmark the suite reproduces, as its
    view offers it (`TextView.reference`): its own prompts and memory, a free-text reply read by its
    parser (`reference_quirks`: with the parser's oddities), its own message asking again. No notes."""

    def __init__(self, view: TextView, params: dict[str, Any]):
        offer = getattr(view, "reference", None)
        if offer is None:
            raise ValueError(
                f"prompt_protocol: reference: the llm method has no reference prompt protocol for this suite (its text "
                f"view, {type(view).__module__}.{type(view).__qualname__}, offers none): use prompt_protocol: json"
            )
        self.reference = offer(bool(params["reference_quirks"]))
        self.grows = self.reference.grows
        self.reply_chars = CHARS_PER_TOKEN * int(params["max_tokens"])

    def request(self, observation: Any, agent: int, notes: str, sampling: Sampling, sample: int) -> ChatRequest:
        reader = Reader(
            partial(self.reference.parse, observation, agent), partial(self.reference.again, observation, agent)
        )
        chat = self.reference.chat(observation, agent)
        return ChatRequest(chat, None, sampling, sample, keep_state=self.grows, reader=reader)

    def answered(self, observation: Any, agent: int, decision: Decision) -> None:
        turns = (*decision.repair, {"role": "assistant", "content": decision.text})
        self.reference.replied(observation, agent, turns, decision.value)

    def filler(self) -> tuple[str, str]:
        """No notes, and a reply as long as max_tokens allows."""
        return "", filler_text(self.reply_chars)


def prompt_protocol(view: TextView, params: dict[str, Any]) -> Chats | ReferenceChats:
    """The agent's prompts and replies: hivebench's JSON protocol, or the suite's reference protocol."""
    return ReferenceChats(view, params) if params.get("prompt_protocol") == "reference" else Chats(view, params)


def decision_schema(reply: dict[str, Any], notes_chars: int, reasoning_chars: int = 0) -> dict[str, Any]:
    """The JSON Schema of one reply: the reasoning (where asked for), the view's fields, then the notes."""
    reasoning = {"reasoning": {"type": "string", "maxLength": reasoning_chars}} if reasoning_chars else {}
    properties = {**reasoning, **reply, "notes": {"type": "string", "maxLength": notes_chars}}
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


class LLMAgent(Policy):
    """Decides a round by asking the model once per live agent, every episode of the block in one batch."""

    def __init__(self, params: dict[str, Any], rng: Streams, cache_paths: list[str | Path], view: TextView):
        self.rng = rng
        self.view = view
        self.protocol = prompt_protocol(view, params)
        self.sampling = Sampling.of(params)
        self.decider = decider_for(params, cache_paths)
        self.initial = params.get("initial_notes")
        self.label = str(cache_paths[0]) + (f" and {len(cache_paths) - 1} more cells" if len(cache_paths) > 1 else "")
        self.notes: list[list[str]] = []  # every agent's notes in force after each step (0: initial)
        self.rounds: list[list[Decision | None]] = []  # None: the agent was not asked
        self.running: list[np.ndarray] = []  # each round's (episodes,) whose episode still ran

    def requests(self, observation: Any, agents: np.ndarray) -> list[ChatRequest]:
        """The requests of `agents` this round."""
        total = self.view.agents(observation)
        if not self.notes:
            self.n = total // len(self.rng)  # agents per episode
            self.notes.append([note for _ in range(len(self.rng)) for note in initial_notes(self.initial, self.n)])
        samples = self.rng.integers(0, 2**31 - 1, (total,))  # one draw per agent per round, whatever the cache holds
        return [
            self.protocol.request(observation, v, self.notes[-1][v], self.sampling, int(samples[v]))
            for v in agents.tolist()
        ]

    @staticmethod
    def estimate_requests(task: Any, view: TextView, params: dict[str, Any]) -> Iterator[ChatRequest]:
        """Every request of one episode of `task` (reset), rendered for real, on a run where every
        agent takes the fallback action and carries notes of the full length (its protocol's `filler`)."""
        protocol, sampling = prompt_protocol(view, params), Sampling()
        notes, reply = protocol.filler()
        fallback = Decision(None, reply, FALLBACK, 1, Usage())
        while not task.done:
            observation = task.observe()
            live = np.flatnonzero(view.live(observation)).tolist()
            for v in live:
                yield protocol.request(observation, v, notes, sampling, 0)
            for v in live:
                protocol.answered(observation, v, fallback)
            task.step(view.actions(observation, [None] * view.agents(observation)))

    def decide(self, observation: Any) -> Any:
        asked = self.view.live(observation)
        live = np.flatnonzero(asked)
        requests = self.requests(observation, live)
        decisions: list[Decision | None] = [None] * len(self.notes[0])
        for v, decision in zip(live.tolist(), self.decider.decide(requests, (live // self.n).tolist())):
            decisions[v] = decision
            self.protocol.answered(observation, v, decision)
        # A fallback keeps the agent's old notes (as does every reply of a protocol without notes); its
        # action is the view's default.
        self.notes.append(
            [
                old if d is None or d.value is None else d.value.get("notes", old)
                for old, d in zip(self.notes[-1], decisions)
            ]
        )
        self.rounds.append(decisions)
        # An episode runs while any of its agents is asked, unless its view says otherwise (SwarmBench
        # Transport: on to the last round once every agent has left the map).
        running = getattr(self.view, "running", None)
        self.running.append(asked.reshape(-1, self.n).any(axis=1) if running is None else running(observation))
        self._progress(observation.horizon)
        return self.view.actions(observation, [None if d is None else d.value for d in decisions])

    def call_seconds(self) -> np.ndarray:
        """The seconds each agent's call of the last round took (NaN: not asked), as recorded: a call
        replayed from the cache takes the time it took when it was made (hivebench.perturb.clocks)."""
        return np.array([np.nan if d is None else d.usage.latency_s for d in self.rounds[-1]], dtype=np.float64)

    def _progress(self, steps: int) -> None:
        done = totals([d for round_ in self.rounds for d in round_ if d is not None])
        log.info(
            "%s: round %d/%d, %d calls (%d made, %d from cache), %d input / %d output tokens, %d retries, %d fallbacks",
            self.label,
            len(self.rounds),
            steps,
            done["llm_calls"],
            self.decider.calls_made,
            self.decider.hits,
            done["input_tokens"],
            done["output_tokens"],
            done["retries"],
            done["fallback"],
        )

    def _episode(self, episode: int) -> tuple[list[list[str]], list[list[Decision]]]:
        """One episode's notes after each of its states and decisions of each of its rounds."""
        own = slice(episode * self.n, (episode + 1) * self.n)
        # the rounds in which the episode ran (an agent that answered early, or left, is not asked)
        rounds = [round_[own] for round_, running in zip(self.rounds, self.running) if running[episode]]
        return [step[own] for step in self.notes[: len(rounds) + 1]], rounds  # type: ignore[misc]

    def columns(self, episode: int) -> dict[str, pa.Array]:
        """Per (step, agent) row of one episode, in its table's order: the notes in force after that
        step and the decision that produced it (step 0 holds the initial notes and no decision): its
        outcome, usage, the reply as the model gave it (the repair's, after a repair) and its calls'
        keys in the cell's response cache (where the chat asked lies: the episode viewer's prompt)."""
        notes, rounds = self._episode(episode)
        decisions: list[Decision | None] = [None] * len(notes[0]) + [d for round_ in rounds for d in round_]

        def usage(field: str) -> list[Any]:
            return [None if d is None else getattr(d.usage, field) for d in decisions]

        return {
            "decision": pa.array([None if d is None else d.status for d in decisions], pa.string()),
            "calls": pa.array([None if d is None else d.calls for d in decisions], pa.int32()),
            "input_tokens": pa.array(usage("input_tokens"), pa.int32()),
            "output_tokens": pa.array(usage("output_tokens"), pa.int32()),
            "latency_s": pa.array(usage("latency_s"), pa.float64()),
            "retries": pa.array(usage("retries"), pa.int32()),
            "notes": pa.array([text for step in notes for text in step], pa.string()),
            "reply": pa.array([None if d is None else d.text for d in decisions], pa.string()),
            "call_keys": pa.array([None if d is None else list(d.keys) for d in decisions], pa.list_(pa.string())),
        }

    def summary(self, episode: int) -> dict[str, Any]:
        notes, rounds = self._episode(episode)
        revisions = sum(a != b for before, after in zip(notes, notes[1:]) for a, b in zip(before, after))
        # (agent, round) pairs whose notes changed
        decisions = [d for round_ in rounds for d in round_ if d is not None]
        return {"note_revisions": revisions, **totals(decisions), **self.decider.recorded()}
