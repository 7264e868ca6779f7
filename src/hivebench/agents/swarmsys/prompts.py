"""What a SwarmSys agent is asked in its role, and the JSON Schema of its reply.

The role instructions restate the paper's role descriptions (arXiv 2510.10047, §1, Table 2, A.1) in
hivebench's words: its prompts are not released. Every reply also rewrites the agent's own profile
(its abilities and working status, and a role switch), as the paper's agents do after each round:
hivebench asks for it in the same call instead of another.
"""

from __future__ import annotations

import json
from typing import Any

ROLES = ("explorer", "worker", "validator")
ROLE_RULES = {
    "explorer": (
        "You are an Explorer: interpret the whole problem, open the event with its context and progress, and "
        "propose a plan: how it breaks into subproblems and where to start. You may switch to a role under more "
        "pressure."
    ),
    "worker": (
        "You are a Worker: solve the part of the event your data allows, say why, and share it with the event's "
        "other agents; defend or revise it when they disagree."
    ),
    "validator": (
        "You are a Validator: check each worker's contribution, settle disagreements and summarise the consensus. "
        "Accept the contributions that are correct. When the event is solved, terminate it; for the whole task, "
        "give the final answer then. If nothing waits for you and other roles are under pressure, you may switch."
    ),
}
SYSTEM = (
    "You are agent {agent} of {n} in a swarm with no central coordinator, working on one task. Each agent holds "
    "a private part of the data; no one sees another's part unless it is sent. The swarm works in events (the "
    "whole task, and sub-tasks an explorer proposes): in each, an explorer opens, workers contribute, a "
    "validator checks and summarises. {role}\nTask: {task}\nThe answer: {answer}."
)
ANSWERING = (
    "You are agent {agent} of {n} in a swarm with no central coordinator that worked on one task. Each agent "
    "held a private part of the data.\nTask: {task}\nGive the answer: {answer}."
)
PROFILE_FIELDS = (
    '"ability": "<your abilities, as you now judge them>", "status": "<your working status>", '
    '"role": "<explorer, worker or validator: the role you take next>"'
)
REPLIES = {
    "explorer": '"post": "<your opening: context, progress, plan>"',
    "worker": '"post": "<your contribution>"',
    "validator": (
        '"summary": "<the consensus so far>", "accepted": [<ids of the agents whose contribution is correct>], '
        '"terminate": <true when the event is solved>'
    ),
}
SUBEVENTS = ', "subevents": ["<a sub-task to open as an event of its own>", ...]'
FINAL = ', "answer": <the answer when you terminate the whole task, else null>'


def reply_schema(role: str, n: int, chars: tuple[int, int], subevents: int, whole: bool, answer: str) -> dict[str, Any]:
    """A role's reply: its contribution (`subevents`: how many sub-tasks an explorer of the whole task
    may still open; `whole`: the event is the whole task, whose validator gives the answer) and the
    agent's profile; `chars`: the most characters of a post (or summary) and of a profile field."""
    # a post longer than a message is cut by the medium and counted; the cap ends a constrained decode
    text = {"type": "string", "maxLength": chars[0]}
    profile = {"type": "string", "maxLength": chars[1]}
    if role == "validator":
        ids = {"type": "integer", "minimum": 0, "maximum": n - 1}
        fields = {
            "summary": text,
            "accepted": {
                "type": "array",
                "items": ids,
                "maxItems": n,
            },  # repeats count once (grammars lack uniqueItems)
            "terminate": {"type": "boolean"},
        }
        if whole:
            fields["answer"] = {"description": f"{answer}; null: not terminating"}
    else:
        fields = {"post": text}
        if role == "explorer" and subevents:
            fields["subevents"] = {
                "type": "array",
                "items": {"type": "string", "maxLength": 200},
                "maxItems": subevents,
            }
    fields |= {"ability": profile, "status": profile, "role": {"enum": list(ROLES)}}
    return {"type": "object", "properties": fields, "required": list(fields), "additionalProperties": False}


def reply_format(role: str, subevents: int, whole: bool) -> str:
    extra = SUBEVENTS if role == "explorer" and subevents else FINAL if role == "validator" and whole else ""
    return f"Reply with only a JSON object: {{{REPLIES[role]}{extra}, {PROFILE_FIELDS}}}"


def answer_schema(answer: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"answer": {"description": answer}},
        "required": ["answer"],
        "additionalProperties": False,
    }


def heard_lines(heard: list[tuple[int, str]]) -> list[str]:
    return [f"  from agent {sender}: {text}" for sender, text in heard] or ["  none"]


def shard_line(shard: Any) -> str:
    return f"Your data: {json.dumps(shard)}"
