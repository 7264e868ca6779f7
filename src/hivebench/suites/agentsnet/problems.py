"""The five AgentsNet problems: each agent's valid final answers and the per-instance score,
computed for every episode of a block at once.

Answers are strings, one per agent, None where an agent gave no valid answer. Scores follow the
AgentsNet reference code; `solved` is score == 1. Every score is defined for every answer vector
(the reference divides by zero in vertex cover when nobody says "Yes": that scores 0 here).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hivebench.suites.agentsnet.graphs import Block, Instance

PROBLEMS = ("coloring", "vertex_cover", "matching", "leader_election", "consensus")
YES, NO, NONE = "Yes", "No", "None"


def groups(count: int) -> list[str]:
    """The colouring answers Group 1 .. Group `count`."""
    return [f"Group {k + 1}" for k in range(count)]


def options(problem: str, graph: Instance, agent: int) -> list[str]:
    """The answers agent `agent` may give."""
    if problem == "coloring":
        return groups(graph.max_degree + 1)  # the reference's Δ + 1 groups
    if problem in ("vertex_cover", "leader_election"):
        return [YES, NO]
    if problem == "matching":
        return [graph.names[u] for u in graph.neighbours(agent)] + [NONE]
    if problem == "consensus":
        return ["0", "1"]
    raise ValueError(f"unknown AgentsNet problem {problem!r}")


def scores(problem: str, block: Block, answers: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """Per episode of the block its score in [0, 1], and per agent whether its answer is one of its
    options; `answers` holds one answer (or null) per agent of the block."""
    if problem == "coloring":
        return _coloring(block, answers)
    if problem == "vertex_cover":
        return _vertex_cover(block, answers)
    if problem == "matching":
        return _matching(block, answers)
    if problem in ("leader_election", "consensus"):
        valid = _is_in(answers, options(problem, block.graphs[0], 0))
        # leader election: exactly one Yes; consensus: every answer "1", or none (all "0")
        hits = block.per_episode(_is_in(answers, [YES if problem == "leader_election" else "1"]))
        agreed = hits == 1 if problem == "leader_election" else (hits == 0) | (hits == block.n)
        return ((block.per_episode(~valid) == 0) & agreed).astype(float), valid
    raise ValueError(f"unknown AgentsNet problem {problem!r}")


def _is_in(answers: pa.StringArray, values: list[str]) -> np.ndarray:
    return pc.is_in(answers, value_set=pa.array(values, pa.string())).fill_null(False).to_numpy(zero_copy_only=False)


def _coloring(block: Block, answers: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """The fraction of properly coloured edges, 0 where any answer is invalid."""
    colors = np.array([g.max_degree + 1 for g in block.graphs])
    code = (
        pc.index_in(answers, value_set=pa.array(groups(int(colors.max())))).fill_null(-1).to_numpy(zero_copy_only=False)
    )
    valid = (code >= 0) & (code < np.repeat(colors, block.n))
    u, v = block.edges[:, 0], block.edges[:, 1]
    proper = block.per_episode(code[u] != code[v], u) / block.edge_counts
    return np.where(block.per_episode(~valid) == 0, proper, 0.0), valid


def _vertex_cover(block: Block, answers: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """Coverage times the fraction of coordinators that are needed (a coordinator is needed iff some
    neighbour is not one); an invalid answer counts as "No", as in the reference; nobody saying "Yes"
    scores 0."""
    yes = _is_in(answers, [YES])
    u, v = block.edges[:, 0], block.edges[:, 1]
    coverage = block.per_episode(yes[u] | yes[v], u) / block.edge_counts
    lonely = np.zeros(block.agents, dtype=bool)
    np.logical_or.at(lonely, u, ~yes[v])
    np.logical_or.at(lonely, v, ~yes[u])
    coordinators = block.per_episode(yes)
    # with an incomplete cover every coordinator is needed: removing one leaves it incomplete
    needed = np.where(coverage < 1.0, coordinators, block.per_episode(yes & lonely))
    score = coverage * needed / np.maximum(coordinators, 1)
    return np.where(coordinators > 0, score, 0.0), _is_in(answers, [YES, NO])


def _matching(block: Block, answers: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """Fraction of consistent agents: one that names a neighbour who names it back, or says "None"
    while no neighbour says "None" (maximality). An invalid answer is inconsistent for its agent only."""
    src = np.repeat(np.arange(block.agents), block.degrees)
    names = pa.array(block.names, pa.string())
    # edge (v, u) where v's answer is u's name: names are unique within an episode
    named = pc.equal(answers.take(pa.array(src)), names.take(pa.array(block.indices))).fill_null(False)
    hits = np.flatnonzero(named.to_numpy(zero_copy_only=False))
    partner = np.full(block.agents, -1)
    partner[src[hits]] = block.indices[hits]
    none = _is_in(answers, [NONE])
    mutual = (partner >= 0) & (partner[np.maximum(partner, 0)] == np.arange(block.agents))
    beside_none = np.logical_or.reduceat(none[block.indices], block.indptr[:-1])
    valid = (partner >= 0) | none
    return block.per_episode(mutual | (none & ~beside_none)) / block.n, valid


def paper_rounds(problem: str, n: int, diameter: int) -> int:
    """Message rounds R by the AgentsNet rule: 2 * diameter + 1 for consensus and leader election and
    for every problem when n > 16, otherwise 4 / 5 / 6 for n = 4 / 8 / 16 (hivebench: n <= 4, <= 8,
    <= 16, the paper runs only those three sizes)."""
    if problem in ("consensus", "leader_election") or n > 16:
        return 2 * diameter + 1
    return 4 if n <= 4 else 5 if n <= 8 else 6
