"""The admission ladder of a controller's replies: how each reply becomes the record the runtime
executes, and which rung it took.

"Across the 72 Waggle cells in the core matrix, 85,129 of 85,344 first decodes were executable
(99.75%). Of the 215 remaining first decodes, one was envelope-normalized, 207 were repaired by one
validator-code-conditioned regeneration, and seven were conservatively projected; the
no-communication fallback was never invoked. Wrapper operations are limited to deleting invalid
content or reusing the local private proposal; social content remains controller-authored."

The rungs, in order, each tried on the replies the one before left:

1. executable: the reply parses as one JSON object, is the canonical record (records.parse) and the
   local view refuses none of it (admit);
2. normalised: the record inside an envelope around it (a code fence, text before or after it, a
   list holding it alone, an object holding it under one key) is;
3. repaired: one regeneration, asked with the validator's code and reason, is (itself normalised
   where it needs to be);
4. projected: the last record that parsed, its invalid content deleted: keys the record does not
   have or that name what no agent may know, every deposit after the first and any deposit or
   commitment that is not the schema, an unknown intent; then what the local view refuses (admit
   deletes it, and an action the agent may not take becomes its private proposal);
5. fallback: no record parsed: the agent's private proposal, nothing written, nothing committed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.waggle.runtime.admit import REFUSALS, Admitted
from hivebench.waggle.runtime.records import Decisions, RecordError, forbidden_keys, parse

RUNGS = ("executable", "normalised", "repaired", "projected", "fallback")
FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
RECORD_KEYS = ("task_action", "response", "deposits", "commit", "execution_intent")


@dataclass(frozen=True)
class Reading:
    """One reply read: the record (or None) and, where it is not admissible as it stands, the code
    (records.CODES, admit.REFUSALS, or "json") and why."""

    record: dict[str, Any] | None
    code: str | None
    why: str


def decode(text: str) -> tuple[Any, str | None]:
    """The reply's JSON value and None, or None and why it is no JSON."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at character {exc.pos})"


def unwrap(text: str) -> Any:
    """The record inside an envelope, or None: a fenced block, the outermost {...} of the text, a list
    of one object, an object holding one object under a single key."""
    candidates = [m.group(1) for m in FENCE.finditer(text)]
    start, stop = text.find("{"), text.rfind("}")
    if 0 <= start < stop:
        candidates.append(text[start : stop + 1])
    for candidate in candidates:
        value, _ = decode(candidate)
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, dict) and len(value) == 1 and "task_action" not in value:
            (inner,) = value.values()
            value = inner
        if isinstance(value, dict) and "task_action" in value:
            return value
    return None


def project(record: dict[str, Any]) -> dict[str, Any]:
    """The record with its invalid content deleted (and nothing else changed): unknown or forbidden
    keys, deposits after the first, a deposit or commitment that is not the schema, an unknown intent."""
    kept: dict[str, Any] = {k: v for k, v in record.items() if k in RECORD_KEYS and not forbidden_keys({k: v})}
    deposits = kept.get("deposits")
    if not isinstance(deposits, list):
        deposits = []
    kept["deposits"] = [t for t in deposits[:1] if isinstance(t, dict) and _trace_ok(t)]
    if kept.get("commit") is not None and not _commit_ok(kept["commit"]):
        kept["commit"] = None
    if not isinstance(kept.get("response"), str | None):
        kept["response"] = None
    if kept.get("execution_intent") not in ("PRIVATE", "FIELD", "WAIT"):
        kept.pop("execution_intent", None)
    return kept


def _trace_ok(trace: dict[str, Any]) -> bool:
    return _parses({"task_action": "", "deposits": [trace]})


def _commit_ok(commit: Any) -> bool:
    return _parses({"task_action": "", "commit": commit})


def _parses(record: dict[str, Any]) -> bool:
    try:
        parse(record, ("",))
    except RecordError:
        return False
    return True


Check = Callable[[Decisions], Admitted]  # the local view's validator over a block's decisions (admit)
Regenerate = Callable[[list[int], list[str]], list[str]]  # (agents, what was wrong) -> their new replies


class Ladder:
    """Admits a block's replies (`texts[agent]`, None for an agent that does not decide) rung by rung:
    `check` admits a block's decisions (hivebench.waggle.runtime.admit, bound to this round's views),
    `regenerate(agents, notes)` asks those agents once more, each with the validator's code and
    reason, and returns their new replies."""

    def __init__(self, actions: tuple[str, ...], proposal: np.ndarray, check: Check):
        self.actions, self.proposal, self.check = actions, proposal, check

    def read(self, values: dict[int, tuple[Any, str | None]]) -> dict[int, Reading]:
        """Each agent's decoded reply (its JSON value, or None and why it is no JSON) checked against
        the schema and, together, against the local view."""
        readings: dict[int, Reading] = {}
        decisions = Decisions.private(self.proposal)
        for agent, (value, no_json) in values.items():
            if no_json is not None:
                readings[agent] = Reading(None, "json", no_json)
                continue
            try:
                decisions.put(agent, parse(value, self.actions))
            except RecordError as error:
                record = value if isinstance(value, dict) else None
                readings[agent] = Reading(record, error.code, str(error))
                continue
            readings[agent] = Reading(value, None, "")
        codes = self.check(decisions).codes
        for agent, reading in readings.items():
            if reading.code is None and codes[agent] is not None:
                code = codes[agent]
                readings[agent] = Reading(reading.record, code, REFUSALS[code])
        return readings

    def admit(
        self, texts: list[str | None], regenerate: Regenerate
    ) -> tuple[Admitted, list[str | None], list[str | None]]:
        """The block's admitted decisions, each deciding agent's rung (RUNGS), and the code of its
        first reply where that was not executable."""
        rungs: list[str | None] = [None] * len(texts)
        first: list[str | None] = [None] * len(texts)
        final: dict[int, dict[str, Any]] = {}  # the record each agent's decision is made of
        parsed: dict[int, dict[str, Any]] = {}  # each agent's last reply that was a JSON object

        def settle(values: dict[int, tuple[Any, str | None]], rung: str) -> dict[int, Reading]:
            """Admit the agents whose reply passes at this rung; the readings of the others."""
            left = {}
            for agent, reading in self.read(values).items():
                if reading.code is None:
                    final[agent], rungs[agent] = reading.record, rung  # type: ignore[assignment]
                    continue
                if reading.record is not None:
                    parsed[agent] = reading.record
                left[agent] = reading
            return left

        left = settle({a: decode(text) for a, text in enumerate(texts) if text is not None}, "executable")
        for agent, reading in left.items():
            first[agent] = reading.code
        wrapped = {a: unwrap(texts[a] or "") for a in left}
        retried = settle({a: (value, None) for a, value in wrapped.items() if value is not None}, "normalised")
        left = {a: retried.get(a, reading) for a, reading in left.items() if rungs[a] is None}
        if left:
            agents = list(left)
            again = regenerate(agents, [f"{left[a].code}: {left[a].why}" for a in agents])
            replies = {a: decode(text) for a, text in zip(agents, again)}
            replies = {
                a: (value, error) if isinstance(value, dict) else _unwrapped(text, value, error)
                for (a, (value, error)), text in zip(replies.items(), again)
            }
            settle(replies, "repaired")
        for agent in left:
            if rungs[agent] is None:
                if agent in parsed:
                    final[agent], rungs[agent] = project(parsed[agent]), "projected"
                else:
                    rungs[agent] = "fallback"
        return self._decide(final), rungs, first

    def _decide(self, final: dict[int, dict[str, Any]]) -> Admitted:
        """The block's decisions from the records admitted or projected (a projected record whose
        action is missing or not the agent's takes its private proposal's), their responses kept,
        through the local view once more: what it refuses is deleted."""
        decisions = Decisions.private(self.proposal)
        responses: list[str | None] = [None] * len(self.proposal)
        for agent, record in final.items():
            if record.get("task_action") not in self.actions:
                record = {**record, "task_action": self.actions[int(self.proposal[agent])]}
            parts = parse(record, self.actions)
            decisions.put(agent, parts)
            responses[agent] = parts[4]
        if any(text is not None for text in responses):
            decisions.response = pa.array(responses, pa.string())
        return self.check(decisions)


def _unwrapped(text: str, value: Any, error: str | None) -> tuple[Any, str | None]:
    """A regenerated reply that is no bare record: the record inside it, else what it decoded to."""
    inner = unwrap(text)
    return (inner, None) if inner is not None else (value, error)
