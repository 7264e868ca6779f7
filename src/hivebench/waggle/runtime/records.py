"""The Waggle decision record (the paper's canonical schema), for a block's agents at once, its
canonical JSON form and its validator.

    {"task_action": string,
     "response": string | null,
     "deposits": [{channel, claim, novelty, support, conflict, ttl, direction?}],
     "commit": {claim, confidence_bin} | null,
     "execution_intent": "PRIVATE" | "FIELD" | "WAIT"}     (omitted: AUTO)

"Numeric trace components use five bins (0-4); TTL uses 1-8; confidence uses 0-4. Canonical
serialization includes execution_intent only for a non-AUTO request." A record holds at most one
deposit ("at most one outbound trace per local decision"). `channel` 0 writes on every incident
channel, another handle on that channel alone. `direction` is a compass point (N, NE, ... NW), the
writer's bearing to what it claims.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

TRACE_PARTS = ("channel", "claim", "novelty", "support", "conflict", "ttl", "direction")
CHANNEL, CLAIM, NOVELTY, SUPPORT, CONFLICT, TTL, DIRECTION = range(len(TRACE_PARTS))
NONE = -1  # an absent deposit, commitment or direction
BIN_MAX, TTL_MAX = 4, 8
CLAIM_MAX = (1 << 31) - 1  # claim handles are positive 32-bit integers (hivebench.waggle.runtime.claims)
COMPASS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
INTENTS = ("AUTO", "PRIVATE", "FIELD", "WAIT")
AUTO, PRIVATE, FIELD, WAIT = range(len(INTENTS))
# For analysis only: "the validator assigns the first matching label in the precedence order"
MODES = ("challenge", "synthesize", "relay", "deposit", "wait", "private")
CHALLENGE, SYNTHESIZE, RELAY, DEPOSIT, WAITING, PRIVATE_WORK = range(len(MODES))


@dataclass
class Decisions:
    """One round's records of every agent of a block, as arrays (an agent without a decision this
    round holds a record all the same: its proposal, nothing written)."""

    action: np.ndarray  # (agents,) an index into the suite's native action names
    deposit: np.ndarray  # (agents, 7) TRACE_PARTS; a row of NONE: no deposit
    commit: np.ndarray  # (agents, 2) claim, confidence bin; NONE: none
    intent: np.ndarray  # (agents,) an index into INTENTS
    response: pa.StringArray | None = None  # (agents,) a task-native message (null: none); None: nobody's

    @staticmethod
    def private(action: np.ndarray) -> Decisions:
        """Every agent does its private work and writes nothing."""
        agents = len(action)
        return Decisions(
            action.astype(np.int64),
            np.full((agents, len(TRACE_PARTS)), NONE, dtype=np.int64),
            np.full((agents, 2), NONE, dtype=np.int64),
            np.zeros(agents, dtype=np.int64),
        )

    def put(self, agent: int, parts: tuple[int, list[int], list[int], int, str | None]) -> None:
        """One agent's record from its parsed parts (`parse`): action, deposit, commitment and intent
        (its response is the caller's to keep)."""
        self.action[agent], self.deposit[agent], self.commit[agent], self.intent[agent] = parts[:4]

    @property
    def deposits(self) -> np.ndarray:
        """(agents,) who writes a trace."""
        return self.deposit[:, CLAIM] != NONE

    def to_json(self, agent: int, actions: tuple[str, ...]) -> dict[str, Any]:
        """The agent's record in its canonical form."""
        record: dict[str, Any] = {
            "task_action": actions[int(self.action[agent])],
            "response": None if self.response is None else self.response[agent].as_py(),
            "deposits": [],
            "commit": None,
        }
        if self.deposit[agent, CLAIM] != NONE:
            trace = {part: int(v) for part, v in zip(TRACE_PARTS[:DIRECTION], self.deposit[agent])}
            if self.deposit[agent, DIRECTION] != NONE:
                trace["direction"] = COMPASS[int(self.deposit[agent, DIRECTION])]
            record["deposits"] = [trace]
        if self.commit[agent, 0] != NONE:
            record["commit"] = {"claim": int(self.commit[agent, 0]), "confidence_bin": int(self.commit[agent, 1])}
        if self.intent[agent] != AUTO:
            record["execution_intent"] = INTENTS[int(self.intent[agent])]
        return record


# Keys that would tell an agent who it is, who else there is, how many, or the global state: refused
# at any depth of a local view or a record ("Recursive schema validation rejects identity, roster,
# population-size, non-neighbor, global-state, and global-transcript keys")
FORBIDDEN = frozenset(
    {
        "id",
        "agent",
        "agent_id",
        "identity",
        "name",
        "index",
        "rank",
        "roster",
        "members",
        "population",
        "population_size",
        "n",
        "agents",
        "neighbors",
        "neighbours",
        "non_neighbors",
        "global_state",
        "world",
        "positions",
        "transcript",
        "global_transcript",
        "history",
    }
)


def forbidden_keys(value: Any, path: str = "") -> list[str]:
    """Every key at any depth of `value` that would tell an agent who it is, who else there is, how
    many, or the global state (paths like `private_state.agents`)."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if str(key).lower() in FORBIDDEN:
                found.append(where)
            found += forbidden_keys(item, where)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found += forbidden_keys(item, f"{path}[{i}]")
    return found


# Why a record is refused: a code per rejection, as the validator names it (the schema's here, the
# local view's in hivebench.waggle.runtime.admit)
CODES = {
    "object": "the reply is not one JSON object",
    "forbidden": "a key naming an identity, a roster, the population size, a non-neighbour, global state or a "
    "global transcript",
    "keys": "a key the record does not have, or one it needs missing",
    "action": "a task action the agent may not take",
    "response": "a response that is neither text nor null",
    "deposits": "more than one deposit, or a deposit that is not a trace",
    "range": "a bin, TTL, confidence, claim or direction out of its range",
    "intent": "an execution intent other than PRIVATE, FIELD or WAIT",
}


class RecordError(ValueError):
    """A record that is not the canonical schema: `code` (CODES) and what, naming the field."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def _bin(value: Any, top: int, low: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= top:
        raise RecordError(f"{what}: expected an integer from {low} to {top}, got {value!r}", "range")
    return value


def parse(record: Any, actions: tuple[str, ...]) -> tuple[int, list[int], list[int], int, str | None]:
    """One JSON record's parts: (action, deposit, commit, intent, response), checked against the schema
    (a RecordError with its code where it is not)."""
    if not isinstance(record, dict):
        raise RecordError(f"a record is a JSON object, got {type(record).__name__}", "object")
    forbidden = forbidden_keys(record)
    if forbidden:
        raise RecordError(f"forbidden keys {forbidden}", "forbidden")
    extra = set(record) - {"task_action", "response", "deposits", "commit", "execution_intent"}
    if extra or "task_action" not in record:
        raise RecordError(f"unknown keys {sorted(extra)}" if extra else "task_action: missing", "keys")
    if record["task_action"] not in actions:
        raise RecordError(f"task_action: expected one of {list(actions)}, got {record['task_action']!r}", "action")
    response = record.get("response")
    if response is not None and not isinstance(response, str):
        raise RecordError("response: expected a string or null", "response")
    deposits = record.get("deposits", [])
    if not isinstance(deposits, list) or len(deposits) > 1:
        raise RecordError(
            "deposits: expected a list of at most one trace (one outbound trace per decision)", "deposits"
        )
    deposit = [NONE] * len(TRACE_PARTS)
    for trace in deposits:
        if not isinstance(trace, dict) or set(trace) - set(TRACE_PARTS) or set(TRACE_PARTS[:DIRECTION]) - set(trace):
            raise RecordError(f"deposits: a trace has the keys {list(TRACE_PARTS)} (direction optional)", "deposits")
        deposit[CHANNEL] = _bin(trace["channel"], CLAIM_MAX, 0, "deposits.channel")
        deposit[CLAIM] = _bin(trace["claim"], CLAIM_MAX, 1, "deposits.claim")
        for part in (NOVELTY, SUPPORT, CONFLICT):
            deposit[part] = _bin(trace[TRACE_PARTS[part]], BIN_MAX, 0, f"deposits.{TRACE_PARTS[part]}")
        deposit[TTL] = _bin(trace["ttl"], TTL_MAX, 1, "deposits.ttl")
        if "direction" in trace:
            if trace["direction"] not in COMPASS:
                raise RecordError(f"deposits.direction: expected one of {list(COMPASS)}", "range")
            deposit[DIRECTION] = COMPASS.index(trace["direction"])
    commit = [NONE, NONE]
    if record.get("commit") is not None:
        c = record["commit"]
        if not isinstance(c, dict) or set(c) != {"claim", "confidence_bin"}:
            raise RecordError("commit: expected {claim, confidence_bin} or null", "keys")
        commit = [
            _bin(c["claim"], CLAIM_MAX, 1, "commit.claim"),
            _bin(c["confidence_bin"], BIN_MAX, 0, "commit.confidence_bin"),
        ]
    intent = record.get("execution_intent", "AUTO")
    if intent not in INTENTS[1:] and "execution_intent" in record:
        raise RecordError(f"execution_intent: expected one of {list(INTENTS[1:])} or omitted", "intent")
    return actions.index(record["task_action"]), deposit, commit, INTENTS.index(intent), response


def from_json(records: list[Any], actions: tuple[str, ...], fallback: np.ndarray) -> tuple[Decisions, list[str | None]]:
    """A block's decisions from JSON records; a record that is not the schema becomes its agent's
    private proposal (`fallback`) with nothing written, and why is returned in its place."""
    decisions = Decisions.private(fallback)
    texts: list[str | None] = [None] * len(records)
    errors: list[str | None] = [None] * len(records)
    for agent, record in enumerate(records):
        if record is None:
            continue
        try:
            parts = parse(record, actions)
        except RecordError as error:
            errors[agent] = str(error)
            continue
        decisions.put(agent, parts)
        texts[agent] = parts[4]
    if any(text is not None for text in texts):
        decisions.response = pa.array(texts, pa.string())
    return decisions, errors
