"""Silo-Bench instances: one per (task, N, seed), each from its own named stream of the seed, so an
instance depends on nothing else (the reference draws every instance from one stream seeded once)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hivebench.engine.block import carried
from hivebench.seeding import stream
from hivebench.suites.silobench import level1, level2, level3
from hivebench.suites.silobench.catalogue import BY_ID
from hivebench.suites.silobench.problems import Instance, Problem, segment

PROBLEMS: dict[str, Problem] = {**level1.PROBLEMS, **level2.PROBLEMS, **level3.PROBLEMS}
assert list(PROBLEMS) == list(BY_ID), "every catalogue entry has its problem, in order"
assert all(bool(PROBLEMS[e].whole_format) == BY_ID[e].segmented for e in BY_ID), (
    "segmented tasks state the whole answer too"
)


def instance(task: str, n: int, seed: int) -> Instance:
    problem = PROBLEMS[task]
    shards, public = problem.generate(n, stream(seed, f"silobench instance {task} N{n}"))
    return Instance(task, n, tuple(shards), public, problem.solve(shards, public))


CHANGE_DRAWS = 1000  # instances drawn for a changed shard before giving up on changing the answer


def changed(inst: Instance, seed: int) -> tuple[int, Instance]:
    """The late-counterevidence intervention's instance: one owner, drawn from the seed, holds the shard
    it holds in the first of further instances drawn from the seed that changes the answer (counter-
    evidence that changes nothing would be none); the answer is solved anew. (owner, instance)"""
    problem = PROBLEMS[inst.task]
    owner = int(stream(seed, f"silobench change {inst.task} N{inst.n}").integers(inst.n))
    for draw in range(CHANGE_DRAWS):
        other, _ = problem.generate(inst.n, stream(seed, f"silobench changed shard {inst.task} N{inst.n} {draw}"))
        shards = list(inst.shards)
        shards[owner] = other[owner]
        answer = problem.solve(shards, inst.public)
        if answer != inst.answer:
            return owner, Instance(inst.task, inst.n, tuple(shards), inst.public, answer)
    raise ValueError(f"{inst.task} N{inst.n} seed {seed}: no changed shard of agent {owner} changes the answer")


def relabelled(inst: Instance, sigma: np.ndarray) -> Instance:
    """The instance with agent sigma(i) holding agent i's shard (and the answer solved anew: where it
    names agents, it names them by their new indices)."""
    shards = carried(inst.shards, sigma)
    return Instance(inst.task, inst.n, shards, inst.public, PROBLEMS[inst.task].solve(list(shards), inst.public))


def whole_answer(inst: Instance, known: Sequence[int]) -> Any:
    """The global answer computed from the shards an agent holds (`known`: their owners, ascending) as
    if they were all the data."""
    return (
        inst.answer if len(known) == inst.n else PROBLEMS[inst.task].solve([inst.shards[k] for k in known], inst.public)
    )


def own_answer(inst: Instance, whole: Any, known: Sequence[int], agent: int) -> Any:
    """What agent `agent` answers from that global answer: on a segmented task its own shard's slice."""
    if not inst.segmented:
        return whole
    return segment(whole, [inst.shards[k] for k in known], list(known).index(agent))


def facts(inst: Instance) -> dict[str, Any]:
    """What every agent is told: the population and the task's public facts."""
    return {"agents": inst.n, "last": inst.n - 1, **inst.public}


def statement(inst: Instance, whole: bool = False) -> tuple[str, str]:
    """The task and its answer format, as an LLM agent reads them; `whole`: the format of the whole
    answer (one agent holding all the data gives it, also on a segmented task)."""
    problem = PROBLEMS[inst.task]
    answer = problem.whole_format if whole and problem.whole_format else problem.answer_format
    return problem.statement.format(**facts(inst)), answer.format(**facts(inst))
