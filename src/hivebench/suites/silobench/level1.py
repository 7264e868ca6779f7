"""Level I, aggregation (I-01 ... I-10): a commutative reduction of every agent's items; every agent
answers the one global value."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from functools import reduce
from operator import xor

from hivebench.suites.silobench.problems import (
    Problem,
    deal,
    exact,
    flat,
    hundredths,
    rounded,
)

WORDS = ["apple", "banana", "cherry", "date", "elderberry", "fig", "grape"]
CANDIDATES = ["Candidate_A", "Candidate_B", "Candidate_C", "Candidate_D"]
LOG_LINES = [
    "INFO: service started",
    "DEBUG: cache warmed",
    "WARNING: disk usage at 80%",
    "SUCCESS: batch committed",
    "TRACE: heartbeat ok",
]
ERROR_LINE = "ERROR: critical failure detected"


class GlobalMax(Problem):
    statement = "Each agent holds 20 integers. Find the largest integer held by any agent."
    answer_format = "an integer"

    def generate(self, n, rng):
        return deal(rng.integers(-1000, 1001, 20 * n).tolist(), n), {}

    def solve(self, shards, public):
        return max(flat(shards))


class WordFrequency(Problem):
    statement = 'Each agent holds 30 words. Count how many of all the agents\' words are exactly "apple".'
    answer_format = "an integer"

    def generate(self, n, rng):
        return deal([WORDS[i] for i in rng.integers(0, len(WORDS), 30 * n)], n), {}

    def solve(self, shards, public):
        return flat(shards).count("apple")


class DistributedVote(Problem):
    statement = (
        "Each agent holds 25 votes, each for one of Candidate_A, Candidate_B, Candidate_C, Candidate_D. "
        "Find the candidate with the most votes over all agents (on a tie, the first in alphabetical order)."
    )
    answer_format = 'a candidate\'s name as a string, e.g. "Candidate_B"'

    def generate(self, n, rng):
        return deal([CANDIDATES[i] for i in rng.integers(0, len(CANDIDATES), 25 * n)], n), {}

    def solve(self, shards, public):
        counts = Counter(flat(shards))
        return min(counts, key=lambda name: (-counts[name], name)) if counts else CANDIDATES[0]


class AnyMatch(Problem):
    statement = (
        'Each agent holds 15 log lines. Decide whether any agent holds a line that starts with "ERROR" '
        "(there is at most one)."
    )
    answer_format = "true or false"

    def generate(self, n, rng):
        lines = [LOG_LINES[i] for i in rng.integers(0, len(LOG_LINES), 15 * n)]
        if rng.random() < 0.5:  # half the instances hide one error line
            lines[int(rng.integers(0, len(lines)))] = ERROR_LINE
        return deal(lines, n), {}

    def solve(self, shards, public):
        return any(line.startswith("ERROR") for line in flat(shards))


class RangeCount(Problem):
    statement = (
        "Each agent holds 30 integers. Count how many of all the agents' integers lie in [{low}, {high}] (inclusive)."
    )
    answer_format = "an integer"

    def generate(self, n, rng):
        return deal(rng.integers(0, 1001, 30 * n).tolist(), n), {"low": 100, "high": 500}

    def solve(self, shards, public):
        return sum(public["low"] <= x <= public["high"] for x in flat(shards))


class XorChecksum(Problem):
    statement = "Each agent holds 20 integers in [0, 255]. Compute the bitwise XOR of all the agents' integers."
    answer_format = "an integer in [0, 255]"

    def generate(self, n, rng):
        return deal(rng.integers(0, 256, 20 * n).tolist(), n), {}

    def solve(self, shards, public):
        return reduce(xor, flat(shards), 0)


class Average(Problem):
    statement = "Each agent holds 25 numbers. Compute the mean of all the agents' numbers."
    answer_format = "a number rounded to 2 decimal places (half to even)"

    def generate(self, n, rng):
        return deal(hundredths(rng, 0, 100, 25 * n).tolist(), n), {}

    def solve(self, shards, public):
        values = [exact(x) for x in flat(shards)]
        return rounded(sum(values, Fraction(0)) / max(len(values), 1), 2)


class SetUnionSize(Problem):
    statement = "Each agent holds 30 integers in [0, {top}]. Count the distinct integers over all agents."
    answer_format = "an integer"

    def generate(self, n, rng):
        return deal(rng.integers(0, 15 * n, 30 * n).tolist(), n), {"top": 15 * n - 1}

    def solve(self, shards, public):
        return len(set(flat(shards)))


class TopK(Problem):
    statement = "Each agent holds 30 integers. Find the {k} largest of all the agents' integers."
    answer_format = "a list of {k} integers, largest first, repeated values kept"

    def generate(self, n, rng):
        return deal(rng.integers(1, 1001, 30 * n).tolist(), n), {"k": 10}

    def solve(self, shards, public):
        return sorted(flat(shards), reverse=True)[: public["k"]]


class StdDev(Problem):
    statement = "Each agent holds 30 numbers. Compute the population standard deviation of all the agents' numbers."
    answer_format = "a number rounded to 2 decimal places (half to even)"

    def generate(self, n, rng):
        return deal(hundredths(rng, 0, 100, 30 * n).tolist(), n), {}

    def solve(self, shards, public):
        values = [round(x * 100) for x in flat(shards)]  # hundredths, exact
        if not values:
            return 0.0
        count, total = len(values), sum(values)
        # variance in hundredths^2, exactly: (count * sum(x^2) - total^2) / count^2
        numerator = count * sum(v * v for v in values) - total * total
        return rounded(_root(numerator) / count / 100, 2)


def _root(value: int) -> Fraction:
    """The square root of an integer: exact when it is a square, else to 20 decimals (an irrational
    root is never a rounding tie)."""
    root = math.isqrt(value)
    return Fraction(root) if root * root == value else Fraction(math.isqrt(value * 10**40), 10**20)


PROBLEMS: dict[str, Problem] = {
    "I-01": GlobalMax(),
    "I-02": WordFrequency(),
    "I-03": DistributedVote(),
    "I-04": AnyMatch(),
    "I-05": RangeCount(),
    "I-06": XorChecksum(),
    "I-07": Average(),
    "I-08": SetUnionSize(),
    "I-09": TopK(),
    "I-10": StdDev(),
}
