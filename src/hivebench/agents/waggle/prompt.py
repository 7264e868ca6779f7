"""What a controller is asked: "All nodes use the same instruction. Benchmark-specific action names and
the serialized local view are appended mechanically." The instruction is the paper's, verbatim; the
action names and the six-part view (its canonical JSON: sorted keys, no spaces) follow it in one
user message. `record_schema` is the canonical record as a JSON Schema, for a server that enforces
one (the validator checks every reply all the same: hivebench.agents.waggle.ladder); its response is
capped at RESPONSE_CHARS, so that a constrained decoder's record ends.
"""

from __future__ import annotations

import json
from typing import Any

from hivebench.ids import canonical_json
from hivebench.models import Message
from hivebench.waggle.runtime.records import BIN_MAX, CLAIM_MAX, COMPASS, INTENTS, TTL_MAX

# The longest response the schema lets a constrained decoder write (SwarmBench's message cut), so that
# a decoder ends its record; the runtime sends responses only on a task's native medium.
RESPONSE_CHARS = 120

INSTRUCTION = (
    "You are one anonymous member of a changing local network. Use only the private proposal, private "
    "evidence, current commitment, and semantic traces on incident channels. Return one canonical JSON "
    "decision. Continue useful private work unless local evidence justifies a deposit, relay, challenge, "
    "or commitment. Treat repeated support as local evidence rather than global consensus. Fresh verified "
    "conflict may reopen a commitment. Do not infer an identity, role, roster, population size, or global "
    "transcript."
)


def messages(view: dict[str, Any], actions: list[str]) -> tuple[Message, ...]:
    """The chat a controller answers for one agent: the instruction, then the action names and the view."""
    return (
        {"role": "system", "content": INSTRUCTION},
        {"role": "user", "content": f"Actions: {json.dumps(actions)}\nLocal view: {canonical_json(view)}"},
    )


def _bin(top: int, low: int = 0) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": top}


def record_schema(actions: list[str]) -> dict[str, Any]:
    """The canonical record (records.py) as a JSON Schema, its task action one of `actions`."""
    trace = {
        "type": "object",
        "additionalProperties": False,
        "required": ["channel", "claim", "novelty", "support", "conflict", "ttl"],
        "properties": {
            "channel": _bin(CLAIM_MAX),
            "claim": _bin(CLAIM_MAX, 1),
            "novelty": _bin(BIN_MAX),
            "support": _bin(BIN_MAX),
            "conflict": _bin(BIN_MAX),
            "ttl": _bin(TTL_MAX, 1),
            "direction": {"enum": list(COMPASS)},
        },
    }
    commit = {
        "type": "object",
        "additionalProperties": False,
        "required": ["claim", "confidence_bin"],
        "properties": {"claim": _bin(CLAIM_MAX, 1), "confidence_bin": _bin(BIN_MAX)},
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["task_action", "response", "deposits", "commit"],
        "properties": {
            "task_action": {"enum": list(actions)},
            "response": {"type": ["string", "null"], "maxLength": RESPONSE_CHARS},
            "deposits": {"type": "array", "maxItems": 1, "items": trace},
            "commit": {"anyOf": [commit, {"type": "null"}]},
            "execution_intent": {"enum": list(INTENTS[1:])},
        },
    }
