"""How one agent's answer is judged: exact (S counts it), its partial credit q (P is the mean), and
the reason it is wrong. Any JSON value is judged, never raising: a wrong type or size is wrong, with
the reason recorded.

Equality is on JSON values: numbers by value (5 equals 5.0; a boolean is not a number), strings,
lists entry by entry, objects key by key. Partial credit by level, as in the paper:
- I: a number within 1 % of the answer (exactly, when the answer is 0); anything else only when exact;
- II: the fraction of the answer's entries (a list's positions, an object's keys) given right;
- III: a list: the longest common subsequence of the given list and the answer (the most entries
  given in the answer's order) over the answer's length; an object: the fraction of its keys given
  right; a scalar only when exact.
A fraction's denominator is the longer of the two (a list's entries; an object's keys, its extra keys
counted), so an answer of the wrong size never reaches 1: the paper's "its segment" and "length"
leave an over-long answer open, and one that pads the right entries with more is not right.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Hashable
from fractions import Fraction
from typing import Any

TOLERANCE = 0.01  # Level I, relative

NO_ANSWER = "no answer"


def key(value: Any) -> Hashable:
    """A JSON value as a hashable key, equal exactly when the values are equal."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)  # 5 == 5.0 with one hash; a huge integer stays exact
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(key(v) for v in value))
    if isinstance(value, dict):
        return ("d", tuple(sorted((str(k), key(v)) for k, v in value.items())))
    return ("?", repr(value))


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def judge(answer: Any, expected: Any, level: str, given: bool = True) -> tuple[bool, float, str | None]:
    """(exact, partial credit q in [0, 1], why it is wrong or None); `given` False: no answer at all."""
    if not given:
        return False, 0.0, NO_ANSWER
    if answer is expected or key(answer) == key(expected):
        return True, 1.0, None
    if kind(answer) != kind(expected):
        return False, 0.0, f"wrong type: expected {_described(expected)}, got {kind(answer)}"
    if isinstance(expected, list):
        size = "" if len(answer) == len(expected) else f"wrong size: {len(answer)} entries, expected {len(expected)}; "
        longer = max(len(answer), len(expected), 1)
        if level == "II":
            q = sum(key(a) == key(e) for a, e in zip(answer, expected)) / longer
        elif level == "III":
            q = ordered_overlap(answer, expected) / longer
        else:
            q = 0.0
        return False, q, size + "wrong entries"
    if isinstance(expected, dict):
        given = {str(k): v for k, v in answer.items()}
        right = sum(str(k) in given and key(given[str(k)]) == key(v) for k, v in expected.items())
        missing = len(set(map(str, expected)) - set(given))
        extra = len(given) - (len(expected) - missing)  # keys the answer has that the expected does not
        parts = ([f"{missing} of {len(expected)} keys missing"] if missing else []) + (
            [f"{extra} extra key{'s' * (extra > 1)}"] if extra else []
        )
        size = f"wrong size: {', '.join(parts)}; " if parts else ""
        q = right / max(len(expected) + extra, 1) if level in ("II", "III") else 0.0
        return False, q, size + "wrong entries"
    if level == "I" and kind(expected) == "number" and _close(answer, expected):
        return False, 1.0, "wrong value, within the 1 % tolerance"
    return False, 0.0, "wrong value"


def _described(value: Any) -> str:
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"an object of {len(value)} keys"
    return f"a {kind(value)}"


def _close(answer: float, expected: float) -> bool:
    """Within the tolerance, exactly (a huge or infinite answer is not)."""
    try:
        a, e = Fraction(answer), Fraction(expected)
    except (OverflowError, ValueError):
        return False
    return a == e if e == 0 else abs(a - e) <= Fraction(TOLERANCE) * abs(e)


def ordered_overlap(answer: list, expected: list) -> int:
    """The length of the longest common subsequence of answer and expected: the most entries given in
    the answer's order (Hunt and Szymanski: per answer entry, its value's positions in expected,
    last first, each extending the longest increasing run it can)."""
    positions: dict[Hashable, list[int]] = defaultdict(list)
    for index, value in enumerate(expected):
        positions[key(value)].append(index)
    tails: list[int] = []  # tails[k]: the least last position of a common subsequence of length k + 1
    for value in answer:
        for position in reversed(positions.get(key(value), [])):
            at = bisect_left(tails, position)
            tails[at : at + 1] = [position]
    return len(tails)
