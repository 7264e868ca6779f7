"""Where a suite differs from the benchmark it reproduces: each difference a named task parameter, and
`compat: reference` choosing the reference's behaviour for every one at once (standard library only).

A suite declares its differences (`Difference`); its task hooks' `resolve` calls `resolve` here and
its task reads the values back with `settings`. A cell stores only the differences that depart from
hivebench's own behaviour (and the parameters older than this scheme, `kept`), so a cell's identity
names exactly the reference behaviour it uses, `compat: reference` and the same settings spelt out
give one cell, and adding a difference leaves every existing cell's identity as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

COMPAT = "compat"
MODES = ("hivebench", "reference")


@dataclass(frozen=True)
class Difference:
    key: str  # the task parameter
    ours: Any  # hivebench's value: its behaviour when the parameter is not given
    reference: Any  # the value that gives the reference's behaviour
    why: str  # what the reference does, and why hivebench differs (one sentence)
    kept: bool = False  # stored even at hivebench's value (a parameter older than `compat`)


def resolve(params: Mapping[str, Any], differences: Sequence[Difference]) -> dict[str, Any]:
    """Parameters as a cell stores them: each difference not given takes the value of the `compat`
    mode (absent: hivebench); `compat` itself and the differences at hivebench's value are left out
    (but for the `kept` ones)."""
    mode = params.get(COMPAT, "hivebench")
    if mode not in MODES:
        raise ValueError(f"compat: expected one of {', '.join(MODES)}, got {mode!r}")
    stored = {key: value for key, value in params.items() if key != COMPAT}
    for difference in differences:
        value = stored.get(difference.key, difference.reference if mode == "reference" else difference.ours)
        if value == difference.ours and not difference.kept:
            stored.pop(difference.key, None)
        else:
            stored[difference.key] = value
    return stored


def settings(params: Mapping[str, Any], differences: Sequence[Difference]) -> dict[str, Any]:
    """Every difference's value in stored parameters (hivebench's where the cell leaves it out)."""
    return {d.key: params.get(d.key, d.ours) for d in differences}
