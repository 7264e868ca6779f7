"""The five AgentsNet problems: each agent's valid final answers and the per-instance score.

Answers are strings, one per agent, None where an agent gave no valid answer. Scores follow the
AgentsNet reference code; `solved` is score == 1. Every score is defined for every answer vector
(the reference divides by zero in vertex cover when nobody says "Yes": that scores 0 here).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hivebench.suites.agentsnet.graphs import Instance

PROBLEMS = ("coloring", "vertex_cover", "matching", "leader_election", "consensus")
YES, NO, NONE = "Yes", "No", "None"


def options(problem: str, graph: Instance, agent: int) -> list[str]:
    """The answers agent `agent` may give."""
    if problem == "coloring":
        return [f"Group {k + 1}" for k in range(graph.max_degree + 1)]  # the reference's Δ + 1 groups
    if problem in ("vertex_cover", "leader_election"):
        return [YES, NO]
    if problem == "matching":
        return [graph.names[u] for u in graph.neighbours(agent)] + [NONE]
    if problem == "consensus":
        return ["0", "1"]
    raise ValueError(f"unknown AgentsNet problem {problem!r}")


def valid(problem: str, graph: Instance, answers: Sequence[str | None]) -> list[bool]:
    """Per agent: whether its answer is one of its options."""
    return [a is not None and a in options(problem, graph, v) for v, a in enumerate(answers)]


def score(problem: str, graph: Instance, answers: Sequence[str | None], valid: list[bool]) -> float:
    """The per-instance score in [0, 1]; `valid` from `valid()`."""
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    if problem == "coloring":
        if not all(valid):
            return 0.0
        codes = np.array([int(a.split()[1]) for a in answers])  # type: ignore[union-attr]  # all valid
        return float(np.mean(codes[u] != codes[v]))
    if problem == "vertex_cover":
        yes = np.array([a == YES for a in answers])  # an invalid answer counts as "No", as in the reference
        if not yes.any():
            return 0.0
        covered = yes[u] | yes[v]
        coverage = float(covered.mean())
        if coverage < 1.0:
            minimal = int(yes.sum())  # removing any coordinator leaves the cover incomplete
        else:
            # a coordinator is needed iff some neighbour is not one (that edge relies on it)
            lonely = np.zeros(graph.n, dtype=bool)
            np.logical_or.at(lonely, u, ~yes[v])
            np.logical_or.at(lonely, v, ~yes[u])
            minimal = int((yes & lonely).sum())
        return coverage * minimal / int(yes.sum())
    if problem == "matching":
        return _matching_score(graph, answers, valid)
    if problem == "leader_election":
        return float(all(valid) and sum(a == YES for a in answers) == 1)
    if problem == "consensus":
        return float(all(valid) and len(set(answers)) == 1)
    raise ValueError(f"unknown AgentsNet problem {problem!r}")


def _matching_score(graph: Instance, answers: Sequence[str | None], valid: list[bool]) -> float:
    """Fraction of consistent agents: one that names a neighbour who names it back, or says "None"
    while no neighbour says "None" (maximality). An invalid answer is inconsistent for its agent only."""
    index = {name: v for v, name in enumerate(graph.names)}
    consistent = 0
    for v, answer in enumerate(answers):
        if not valid[v]:
            continue
        if answer == NONE:
            consistent += all(answers[w] != NONE for w in graph.neighbours(v))
        else:
            consistent += answers[index[answer]] == graph.names[v]  # type: ignore[index]  # valid: a neighbour's name
    return consistent / graph.n


def paper_rounds(problem: str, n: int, diameter: int) -> int:
    """Message rounds R by the AgentsNet rule: 2 * diameter + 1 for consensus and leader election and
    for every problem when n > 16, otherwise 4 / 5 / 6 for n = 4 / 8 / 16 (hivebench: n <= 4, <= 8,
    <= 16, the paper runs only those three sizes)."""
    if problem in ("consensus", "leader_election") or n > 16:
        return 2 * diameter + 1
    return 4 if n <= 4 else 5 if n <= 8 else 6
