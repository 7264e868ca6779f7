"""What every Silo-Bench task is: a seeded generator of private shards (a constant share per agent,
so the global size grows with N), the facts every agent is told, an exact solver, and the statement
and answer format an LLM agent reads.

Answers are plain JSON values (int, float, str, bool, lists, objects with string keys). Floats in the
data carry two decimals; every rounded answer is computed exactly (fractions) and rounded half to even
to the stated places, so a correct answer is one number, whatever the order of an agent's sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate
from typing import Any

import numpy as np

from hivebench.suites.silobench.catalogue import BY_ID


def exact(value: float) -> Fraction:
    """A data float of two decimals as the fraction it stands for."""
    return Fraction(round(value * 100), 100)


def rounded(value: Fraction, places: int) -> float:
    """Rounded half to even to `places` decimals, exactly (then the nearest double)."""
    return float(round(value, places))


def hundredths(rng: np.random.Generator, low: int, high: int, size: int | tuple[int, ...]) -> np.ndarray:
    """Floats in [low, high] with two decimals."""
    return rng.integers(low * 100, high * 100 + 1, size=size) / 100


def flat(shards: Sequence[list]) -> list:
    return [item for shard in shards for item in shard]


def deal(items: list, n: int) -> list[list]:
    """Items split into n equal consecutive shards (len(items) is a multiple of n)."""
    share = len(items) // n
    return [items[i * share : (i + 1) * share] for i in range(n)]


class Problem:
    """One task's rules. `generate` gets the instance's own random stream; `solve` gets the shards an
    agent holds, in agent order (all of them: the true answer)."""

    statement: str  # the task for an LLM agent, formatted with the public facts
    answer_format: str  # what the answer must be, with its rounding
    whole_format = ""  # segmented tasks: the whole answer's format (one agent holding all the data gives it)

    def generate(self, n: int, rng: np.random.Generator) -> tuple[list[Any], dict[str, Any]]:
        raise NotImplementedError

    def solve(self, shards: list[Any], public: dict[str, Any]) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Instance:
    task: str
    n: int
    shards: tuple[Any, ...]  # agent i's private data
    public: dict[str, Any]  # what every agent is told
    answer: Any  # the global answer y*

    @property
    def segmented(self) -> bool:
        return BY_ID[self.task].segmented

    def expected(self, agent: int) -> Any:
        """What agent `agent` must answer: the whole answer, or on a segmented task its own slice."""
        return segment(self.answer, list(self.shards), agent) if self.segmented else self.answer


def segment(answer: list, shards: list[list], mine: int) -> list:
    """Shard `mine`'s slice of an answer laid out as the shards' items are (one entry per item)."""
    offsets = [0, *accumulate(len(shard) for shard in shards)]
    return answer[offsets[mine] : offsets[mine + 1]]
