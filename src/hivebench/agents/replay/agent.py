"""The `replay` method: every agent's replies read from a file instead of asked of a model, through
the suite's text view: for tests, and for replaying an episode recorded elsewhere.

`file` (relative to the config file) is JSON Lines, one reply per line:
{"step": t, "agent": v, "reply": {...}}, where the reply has the fields an LLM agent's reply has in
that suite and round (LoopBench {"color": 1}; AgentsNet {"messages": {...}} or {"answer": "Yes"};
`notes` optional). A reply checked invalid against the round's JSON Schema, or missing, gets the
view's fallback, and is counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from jsonschema import Draft202012Validator

from hivebench.agents.llm.agent import decision_schema
from hivebench.engine.api import Policy, TextView
from hivebench.seeding import Streams

REPLAYED, MISSING, INVALID = range(3)  # columns of the counts


def read_script(path: str | Path) -> dict[tuple[int, int], dict[str, Any]]:
    """(step, agent) -> reply; ValueError naming the file and line of a malformed line."""
    script = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            script[(int(entry["step"]), int(entry["agent"]))] = dict(entry["reply"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(f'{path}:{number}: expected {{"step": t, "agent": v, "reply": {{...}}}}') from None
    return script


class ReplayAgent(Policy):
    """Every episode of a block replays the same file; agent v of an episode reads its lines of agent v."""

    def __init__(self, params: dict[str, Any], rng: Streams, view: TextView):
        self.view = view
        self.episodes = len(rng)
        self.script = read_script(params["file"])
        self.counts = np.zeros((self.episodes, 3), dtype=np.int64)  # per episode: replayed, missing, invalid

    def decide(self, observation: Any) -> Any:
        total = self.view.agents(observation)
        n = total // self.episodes
        live = self.view.live(observation)
        replies: list[dict[str, Any] | None] = [None] * total
        for agent in np.flatnonzero(live).tolist():
            reply = self.script.get((observation.step, agent % n))
            outcome = MISSING
            if reply is not None:
                reply = {"notes": "", **reply}
                schema = decision_schema(self.view.reply_schema(observation, agent), notes_chars=10**6)
                valid = next(Draft202012Validator(schema).iter_errors(reply), None) is None
                outcome = REPLAYED if valid else INVALID
                replies[agent] = reply if valid else None
            self.counts[agent // n, outcome] += 1
        return self.view.actions(observation, replies)

    def summary(self, episode: int) -> dict[str, Any]:
        return dict(zip(("replayed", "missing", "invalid"), self.counts[episode].tolist()))
