"""The widest shard each Silo-Bench task's rules give an agent of N: every value at its widest in JSON
(the generators' ranges in level1.py ... level3.py, not any seed's draw). A classical message carries
whole shards, so one that does not fit `message_chars` is never sent: the config check refuses a cap
below it. Standard library only (read at parse time); tests/test_config_faults.py checks it against
generated shards."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _widest(*values: int) -> int:
    """Of these integers, the one written with the most characters."""
    return max(values, key=lambda v: len(str(v)))


HUNDREDTHS = 99.99  # a data float in [0, 100] with two decimals, at its widest ("100.0" is as wide)
UNIT = 0.99  # in [0, 1]

WIDEST: dict[str, Callable[[int], Any]] = {
    "I-01": lambda n: [-1000] * 20,
    "I-02": lambda n: ["elderberry"] * 30,
    "I-03": lambda n: ["Candidate_A"] * 25,
    "I-04": lambda n: (
        ["ERROR: critical failure detected"] + ["WARNING: disk usage at 80%"] * 14
    ),  # one ERROR line at most
    "I-05": lambda n: [1000] * 30,
    "I-06": lambda n: [255] * 20,
    "I-07": lambda n: [HUNDREDTHS] * 25,
    "I-08": lambda n: [15 * n - 1] * 30,
    "I-09": lambda n: [1000] * 30,
    "I-10": lambda n: [HUNDREDTHS] * 30,
    "II-11": lambda n: [50] * 15,
    "II-12": lambda n: [100] * 15,
    "II-13": lambda n: "a" * 15,
    "II-14": lambda n: [0] * 10,
    "II-15": lambda n: "A" * 20,
    "II-16": lambda n: [10] * 10,
    "II-17": lambda n: [100] * 15,
    "II-18": lambda n: [{"id": 8 * n - 1, "next": _widest(8 * n - 1, -1)}] * 8,
    "II-19": lambda n: [50] * 15,
    "II-20": lambda n: [f"Block_{5 * n - 1}_abcd"] * 5,
    "III-21": lambda n: [1000] * 20,
    "III-22": lambda n: [1000] * 25,
    "III-23": lambda n: [[10 * n - 1] * 2] * 20,
    "III-24": lambda n: [[8 * n - 1] * 2] * 16,
    "III-25": lambda n: [[HUNDREDTHS] * 2] * 20,
    "III-26": lambda n: [15 * n - 1] * 30,
    # the six vectors of one kind with the six largest ids (each kind's dict is there, maybe empty)
    "III-27": lambda n: {"users": {str(3 * n - 1 - k): [UNIT] * 5 for k in range(6)}, "items": {}},
    "III-28": lambda n: [[8 * n - 1] * 2] * 16,
    "III-29": lambda n: [{"id": 20 * n - 1, "duration": 100}] * 20,
    "III-30": lambda n: {"row": n - 1, "a": [10] * n, "b": [10] * n},
}


def classical_message_chars(task: str, n: int) -> int:
    """The characters of a message carrying the widest shard of agent N - 1 alone (ShardTexts.costs:
    '"owner": shard' and the braces)."""
    return len(f'"{n - 1}": {json.dumps(WIDEST[task](n))}') + 2
