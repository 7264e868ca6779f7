"""Where a suite differs from the benchmark it reproduces: each difference a named task parameter, and
`compat: reference` choosing the reference's behaviour for every one at once (standard library only).

A suite declares its differences (`Difference`); its task hooks' `resolve` calls `resolve` here and
its task reads the values back with `settings`. A cell stores only the differences that depart from
hivebench's own behaviour (and the parameters older than this scheme, `kept`), and only those that can
act on its task, so a cell's identity names exactly the reference behaviour it uses, `compat:
reference` and the same settings spelt out give one cell, and adding a difference leaves every
existing cell's identity as it was. A difference given on a task it cannot act on is refused (it
would be dropped without a word).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hivebench.suite import TaskParamError

COMPAT = "compat"
MODES = ("hivebench", "reference")


@dataclass(frozen=True)
class Difference:
    key: str  # the task parameter
    ours: Any  # hivebench's value: its behaviour when the parameter is not given
    reference: Any  # the value that gives the reference's behaviour
    why: str  # what the reference does, and why hivebench differs (one sentence)
    kept: bool = False  # stored even at hivebench's value (a parameter older than `compat`)


def resolve(
    params: Mapping[str, Any],
    differences: Sequence[Difference],
    acting: Sequence[Difference] | None = None,
    why_idle: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Parameters as a cell stores them: each difference that can act on the task (`acting`, a subset
    of `differences`; all when None) and is not given takes the value of the `compat` mode (absent:
    hivebench); `compat` itself, the differences at hivebench's value (but for the `kept` ones) and
    those that cannot act on the task are left out. A difference given that cannot act on the task is
    a TaskParamError naming it (`why_idle(key)` says why; the mode sets only those that act)."""
    mode = params.get(COMPAT, "hivebench")
    if mode not in MODES:
        raise TaskParamError(COMPAT, f"compat: expected one of {', '.join(MODES)}, got {mode!r}")
    acting_keys = {d.key for d in (differences if acting is None else acting)}
    idle = {d.key for d in differences} - acting_keys
    given = [d.key for d in differences if d.key in idle and d.key in params]
    if given:
        raise TaskParamError(given[0], why_idle(given[0]) if why_idle else "cannot act on this task")
    stored = {key: value for key, value in params.items() if key != COMPAT and key not in idle}
    for difference in differences:
        if difference.key in idle:
            continue
        value = stored.get(difference.key, difference.reference if mode == "reference" else difference.ours)
        if value == difference.ours and not difference.kept:
            stored.pop(difference.key, None)
        else:
            stored[difference.key] = value
    return stored


def settings(params: Mapping[str, Any], differences: Sequence[Difference]) -> dict[str, Any]:
    """Every difference's value in stored parameters (hivebench's where the cell leaves it out)."""
    return {d.key: params.get(d.key, d.ours) for d in differences}


def behaviour(params: Mapping[str, Any], acting: Sequence[Difference]) -> str:
    """What the differences that act on a task add up to, as a report labels its rows: "hivebench",
    "reference", or the settings on the reference's side ("submission: any_round, received: all"). A
    value that is neither side's (`message_chars: 24`) is a setting of hivebench's rules."""
    values = settings(params, acting)
    theirs = [f"{d.key}: {values[d.key]}" for d in acting if values[d.key] == d.reference]
    if not theirs:
        return "hivebench"
    return "reference" if len(theirs) == len(acting) else ", ".join(theirs)
