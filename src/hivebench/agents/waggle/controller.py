"""The Waggle method: a model as the local controller on the Waggle runtime. Each round every live
agent's six-part local view is put to the model (prompt.py: the paper's instruction, the action
names, the view), every episode of the job block in one batch, each through its own cell's response
cache, and the replies are admitted by the ladder (ladder.py): executable, envelope-normalised,
repaired by one regeneration asked with the validator's code, conservatively projected, or the
no-communication fallback. The model is reached like any other (`backend`: transformers, openai,
scripted); Decision-only and other checkpoints are other configs of this method.

Each (state, agent) row records the rung its record took, the code of its first reply where that
was not executable, the calls and tokens it cost, and the admitted record (canonical JSON); each
episode's summary counts the rungs and the model's calls and tokens beside the runtime's telemetry.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from hivebench.agents.waggle.ladder import RUNGS, Ladder
from hivebench.agents.waggle.prompt import messages, record_schema
from hivebench.ids import canonical_json
from hivebench.models import ChatRequest, ChatResult, Sampling, Usage
from hivebench.models.decide import Decider, add
from hivebench.models.open import decider_for
from hivebench.seeding import Streams
from hivebench.waggle.runtime.adapter import Adapter
from hivebench.waggle.runtime.admit import Admitted
from hivebench.waggle.runtime.policy import Context, ViewRuntime
from hivebench.waggle.runtime.records import Decisions

# What a regeneration asks, after the refused reply: the validator's code and reason.
AGAIN = "The validator refused that decision ({note}). Return one corrected canonical JSON decision."


class Turn:
    """One agent's decision in one round: its rung, the code of its first reply (None: executable),
    its calls and usage, the record admitted; the model's last reply as given and its calls' keys in
    the response cache (the episode viewer's prompt and reply)."""

    __slots__ = ("rung", "first", "calls", "usage", "record", "reply", "keys")

    def __init__(self, usage: Usage, reply: str, key: str):
        self.rung: str | None = None
        self.first: str | None = None
        self.calls, self.usage = 1, usage
        self.record = ""
        self.reply = reply
        self.keys = [key] if key else []


def again(request: ChatRequest, reply: str, note: str) -> ChatRequest:
    """The regeneration of a refused reply: the chat goes on with it and the validator's code and reason."""
    asked = (
        *request.messages,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": AGAIN.format(note=note)},
    )
    return ChatRequest(asked, request.schema, request.sampling, request.sample)


def ask(
    decider: Decider,
    sampling: Sampling,
    views: dict[int, dict[str, Any]],
    actions: tuple[str, ...],
    draws: dict[int, tuple[int, int]],
    ladder: Ladder,
) -> tuple[Admitted, dict[int, Turn]]:
    """Ask the model about each agent's view (`views`: block agent -> view; `draws`: its sample index
    and its episode, whose response cache answers it) and admit the replies by `ladder`: the block's
    admitted decisions and each asked agent's turn."""
    schema = record_schema(list(actions))
    requests = {
        agent: ChatRequest(messages(view, list(actions)), schema, sampling, draws[agent][0])
        for agent, view in views.items()
    }
    results = decider.complete(list(requests.values()), [draws[a][1] for a in requests])
    keys = decider.keys(list(requests.values()))
    turns = {agent: Turn(result.usage, result.text, key) for agent, result, key in zip(requests, results, keys)}
    texts: list[str | None] = [None] * len(ladder.proposal)
    for agent, result in zip(requests, results):
        texts[agent] = result.text

    def regenerate(agents: list[int], notes: list[str]) -> list[str]:
        asked = [again(requests[a], texts[a] or "", note) for a, note in zip(agents, notes)]
        replies: list[ChatResult] = decider.complete(asked, [draws[a][1] for a in agents])
        for agent, result, key in zip(agents, replies, decider.keys(asked)):
            turn = turns[agent]
            turn.calls, turn.usage, turn.reply = 2, add(turn.usage, result.usage), result.text
            turn.keys += [key] if key else []
        return [result.text for result in replies]

    admitted, rungs, first = ladder.admit(texts, regenerate)
    for agent, turn in turns.items():
        turn.rung, turn.first = rungs[agent], first[agent]
        turn.record = canonical_json(admitted.decisions.to_json(agent, actions))
    return admitted, turns


class Controller(ViewRuntime):
    def __init__(self, params: dict[str, Any], rng: Streams, adapter: Adapter, cache_paths: list[str | Path]):
        super().__init__(params, rng, adapter)
        self.sampling = Sampling.of(params)
        self.decider = decider_for(params, cache_paths)
        self.samples = rng.child("samples")  # one draw per agent per round: the sample index of its request
        self.turns: list[list[Turn | None]] = []  # per round, per block agent (None: not asked)

    def law(self, context: Context) -> Decisions:
        live, views = self.local_views(context)
        samples = self.samples.integers(0, 2**31 - 1, (len(context.live),))
        agents = live.tolist()
        admitted, asked = ask(
            self.decider,
            self.sampling,
            dict(zip(agents, views)),
            self.adapter.actions,
            {a: (int(samples[a]), a // self.block.n) for a in agents},
            Ladder(self.adapter.actions, context.proposal.action, lambda d: self._admit(context, d)),
        )
        turns: list[Turn | None] = [None] * len(context.live)
        for agent, turn in asked.items():
            turns[agent] = turn
        self.turns.append(turns)
        context.count("invalid_records", [a for a, t in asked.items() if t.rung in ("projected", "fallback")])
        return admitted.decisions

    def _episode_turns(self, episode: int) -> list[Turn | None]:
        """The episode's turns by (state, agent) row: none at state 0, then its rounds."""
        rounds = self.own_rounds(self.turns, episode)
        return [None] * self.block.n + [turn for turns in rounds for turn in turns]

    def columns(self, episode: int) -> dict[str, Any]:
        turns = self._episode_turns(episode)

        def each(get: Any, kind: pa.DataType) -> pa.Array:
            return pa.array([None if t is None else get(t) for t in turns], kind)

        return {
            **super().columns(episode),
            "rung": pa.DictionaryArray.from_arrays(
                pa.array([0 if t is None else 1 + RUNGS.index(t.rung) for t in turns], pa.int8()),
                pa.array(["", *RUNGS]),
            ),
            "first_code": each(lambda t: t.first, pa.string()),
            "calls": each(lambda t: t.calls, pa.int32()),
            "input_tokens": each(lambda t: t.usage.input_tokens, pa.int32()),
            "output_tokens": each(lambda t: t.usage.output_tokens, pa.int32()),
            "latency_s": each(lambda t: t.usage.latency_s, pa.float64()),
            "record": each(lambda t: t.record, pa.string()),
            "reply": each(lambda t: t.reply, pa.string()),
            "call_keys": each(lambda t: t.keys, pa.list_(pa.string())),
        }

    def summary(self, episode: int) -> dict[str, Any]:
        turns = [t for t in self._episode_turns(episode) if t is not None]
        rungs = Counter(t.rung for t in turns)
        calls = sum(t.calls for t in turns)
        tokens_in = sum(t.usage.input_tokens for t in turns)
        tokens_out = sum(t.usage.output_tokens for t in turns)
        return {
            **super().summary(episode),
            **{f"ladder_{rung}": rungs[rung] for rung in RUNGS},
            "model_calls": calls,
            "model_tokens": tokens_in + tokens_out,
            "llm_calls": calls,  # the name hivebench status and costs read
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "latency_s": round(sum(t.usage.latency_s for t in turns), 6),
            **self.decider.recorded(),
        }
