"""An oracle for every Silo-Bench task, written from the task's statement alone (brute force, the
standard library, numpy, networkx), never from hivebench's solvers or their helpers. Each task's
solver must agree with it exactly on generated instances (several N and seeds) and on hand-worked
instances that hit each stated rule: ties, rounding half to even at an exact .xx5, indices, edges.

Numbers in the data carry two decimals: the oracle reads them as the decimals they print as
(`Fraction(repr(x))`) and rounds with `decimal`'s ROUND_HALF_EVEN, so a rounded answer is compared
equal, not approximately."""

from __future__ import annotations

import heapq
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from decimal import ROUND_HALF_EVEN, Context, Decimal, localcontext
from fractions import Fraction
from functools import cache
from itertools import chain, groupby
from typing import Any

import networkx as nx
import numpy as np
import pytest

from hivebench.suites.silobench.catalogue import TASKS
from hivebench.suites.silobench.instances import PROBLEMS, instance
from hivebench.suites.silobench.problems import Instance

Oracle = Callable[[list, dict], Any]
ORACLES: dict[str, Oracle] = {}


def oracle(*tasks: str) -> Callable[[Oracle], Oracle]:
    def register(function: Oracle) -> Oracle:
        for task in tasks:
            ORACLES[task] = function
        return function

    return register


def items(shards: list) -> list:
    return list(chain.from_iterable(shards))


def decimal(value: Fraction) -> Decimal:
    """Exact whenever `value` is a terminating decimal of up to 100 digits (every rounding tie here
    is); call it inside `precise`."""
    return Decimal(value.numerator) / value.denominator


def precise() -> AbstractContextManager[Context]:
    return localcontext(Context(prec=100))


def half_even(value: Fraction | Decimal, places: int) -> float:
    """`value` rounded half to even to `places` decimals, as the nearest double."""
    with precise():
        d = value if isinstance(value, Decimal) else decimal(value)
        return float(d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))


def two_decimals(x: float) -> Fraction:
    """A data number as the decimal it prints as (1.01 is 101/100)."""
    return Fraction(repr(x))


@oracle("I-01")
def global_max(shards: list, public: dict) -> int:
    return int(np.max(items(shards)))


@oracle("I-02")
def word_frequency(shards: list, public: dict) -> int:
    return Counter(items(shards))["apple"]


@oracle("I-03")
def distributed_vote(shards: list, public: dict) -> str:
    counts = Counter(items(shards))
    most = max(counts.values())
    return sorted(name for name, count in counts.items() if count == most)[0]


@oracle("I-04")
def any_match(shards: list, public: dict) -> bool:
    return any(re.match("ERROR", line) for line in items(shards))


@oracle("I-05")
def range_count(shards: list, public: dict) -> int:
    values = np.array(items(shards))
    return int(np.count_nonzero((values >= public["low"]) & (values <= public["high"])))


@oracle("I-06")
def xor_checksum(shards: list, public: dict) -> int:
    return int(np.bitwise_xor.reduce(np.array(items(shards))))


@oracle("I-07")
def average(shards: list, public: dict) -> float:
    return half_even(statistics.mean(map(two_decimals, items(shards))), 2)


@oracle("I-08", "III-26")  # the same statement: count the distinct integers
def distinct(shards: list, public: dict) -> int:
    return len(np.unique(items(shards)))


@oracle("I-09")
def top_k(shards: list, public: dict) -> list[int]:
    return heapq.nlargest(public["k"], items(shards))


@oracle("I-10")
def std_dev(shards: list, public: dict) -> float:
    variance = statistics.pvariance([two_decimals(x) for x in items(shards)])  # a Fraction, exactly
    with precise():  # a root that is a tie is a terminating decimal, so is its square: both exact here
        return half_even(decimal(variance).sqrt(), 2)


@oracle("II-11")
def prefix_sum(shards: list, public: dict) -> list[int]:
    return np.cumsum(items(shards)).tolist()


@oracle("II-12")
def moving_average(shards: list, public: dict) -> list[float]:
    x = items(shards)
    return [half_even(Fraction(sum(window), 3), 2) for window in zip(x, x[1:], x[2:])]


@oracle("II-13")
def longest_palindrome(shards: list, public: dict) -> int:
    text = "".join(shards)
    return max(j - i for i in range(len(text)) for j in range(i + 1, len(text) + 1) if text[i:j] == text[i:j][::-1])


@oracle("II-14")
def life_game(shards: list, public: dict) -> list[int]:
    cells = np.array(items(shards))
    for _ in range(public["steps"]):
        padded = np.pad(cells, 1)  # cells beyond either end count as 0
        cells = (padded[:-2] + padded[1:-1] + padded[2:] == 1).astype(int)
    return cells.tolist()


@oracle("II-15")
def pattern_search(shards: list, public: dict) -> int:
    return len(re.findall("A.*?B.*?C", "".join(shards)))  # leftmost A, then the first B, then the first C


@oracle("II-16")
def trapping_rain_water(shards: list, public: dict) -> int:
    h = items(shards)
    return sum(max(0, min(max(h[: j + 1]), max(h[j:])) - h[j]) for j in range(len(h)))


@oracle("II-17")
def difference_array(shards: list, public: dict) -> list[int]:
    return np.diff(items(shards)).tolist()


@oracle("II-18")
def list_ranking(shards: list, public: dict) -> dict[str, int]:
    links = nx.DiGraph((node["id"], node["next"]) for node in items(shards) if node["next"] >= 0)
    links.add_node(public["head"])
    return {str(node): rank for node, rank in nx.single_source_shortest_path_length(links, public["head"]).items()}


@oracle("II-19")
def merge_neighbours(shards: list, public: dict) -> list[int]:
    return [value for value, _ in groupby(items(shards))]


@oracle("II-20")
def pipeline_hash(shards: list, public: dict) -> list[int]:
    hashes, h = [], 0
    for block in items(shards):
        h = ((sum(block.encode("ascii")) % 10000) ^ h) % 10000
        hashes.append(h)
    return hashes


@oracle("III-21")
def distributed_sort(shards: list, public: dict) -> list[int]:
    return np.sort(items(shards)).tolist()


@oracle("III-22")
def median(shards: list, public: dict) -> int:
    return sorted(items(shards))[public["index"]]


def undirected(shards: list, public: dict) -> nx.Graph:
    graph = nx.Graph(map(tuple, items(shards)))
    graph.add_nodes_from(range(public["nodes"]))
    return graph


@oracle("III-23")
def graph_components(shards: list, public: dict) -> int:
    return nx.number_connected_components(undirected(shards, public))


@oracle("III-24")
def bfs_distance(shards: list, public: dict) -> dict[str, int]:
    hops = nx.single_source_shortest_path_length(undirected(shards, public), 0)
    return {str(node): hops.get(node, -1) for node in range(public["nodes"])}


@oracle("III-25")
def kmeans_iteration(shards: list, public: dict) -> list[list[float]]:
    centroids = [[two_decimals(c) for c in centroid] for centroid in public["centroids"]]
    groups: list[list[list[Fraction]]] = [[] for _ in centroids]
    for point in items(shards):
        p = [two_decimals(c) for c in point]
        distances = [(p[0] - c[0]) ** 2 + (p[1] - c[1]) ** 2 for c in centroids]
        groups[distances.index(min(distances))].append(p)  # index(): the first centroid on a tie
    moved = [
        [statistics.mean(axis) for axis in zip(*group)] if group else centroid
        for group, centroid in zip(groups, centroids)
    ]
    return [[half_even(c, 2) for c in centroid] for centroid in moved]


@oracle("III-27")
def collaborative_filtering(shards: list, public: dict) -> list[list]:
    def vectors(kind: str) -> dict[int, list[Decimal]]:
        return {int(k): [Decimal(repr(c)) for c in v] for shard in shards for k, v in shard[kind].items()}

    users, goods = vectors("users"), vectors("items")
    scored = [(sum(a * b for a, b in zip(users[u], goods[i])), u, i) for u in users for i in goods]
    best = sorted(scored, key=lambda s: (-s[0], s[1], s[2]))[:3]
    return [[u, i, float(score.quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN))] for score, u, i in best]


@oracle("III-28")
def pagerank_step(shards: list, public: dict) -> dict[str, float]:
    nodes, edges = public["nodes"], items(shards)
    out = Counter(u for u, _ in edges)
    start = Fraction(1, nodes)
    new = {v: Fraction(15, 100) / nodes for v in range(nodes)}
    for u, v in edges:
        new[v] += Fraction(85, 100) * start / out[u]
    return {str(v): half_even(rank, 6) for v, rank in new.items()}


@oracle("III-29")
def load_balance(shards: list, public: dict) -> dict[str, Any]:
    loads = [0] * public["machines"]
    for job in sorted(items(shards), key=lambda j: (-j["duration"], j["id"])):
        least = min(range(len(loads)), key=lambda m: (loads[m], m))
        loads[least] += job["duration"]
    # the stated tie rules (lower id, lower machine) cannot change the loads, only which machine holds which
    variance = statistics.pvariance([Fraction(load) for load in loads])
    return {"max_load": max(loads), "min_load": min(loads), "variance": half_even(variance, 2)}


@oracle("III-30")
def matrix_multiply(shards: list, public: dict) -> list[list[int]]:
    dim = public["dim"]
    a, b = [[0] * dim for _ in range(dim)], [[0] * dim for _ in range(dim)]
    for shard in shards:
        a[shard["row"]], b[shard["row"]] = shard["a"], shard["b"]
    return [[sum(a[i][k] * b[k][j] for k in range(dim)) for j in range(dim)] for i in range(dim)]


IDS = [entry.id for entry in TASKS]
SHARE = {
    "II-11": 15,
    "II-14": 10,
    "II-20": 5,
    "III-21": 20,
}  # the entries of its own answer each segmented statement names


@cache
def _whole(task: str, n: int, seed: int) -> str:
    inst = instance(task, n, seed)
    return as_json(ORACLES[task](list(inst.shards), inst.public))


def oracle_answer(task: str, n: int, seed: int) -> Any:
    """The oracle's global answer to the instance of (task, N, seed)."""
    return json.loads(_whole(task, n, seed))


def stated_answers(task: str, n: int, seed: int) -> list:
    """What each of the N agents must answer by its statement: the global answer, or on a segmented
    task its own SHARE entries of it (agent i: positions SHARE i ... SHARE (i + 1) - 1)."""
    whole = oracle_answer(task, n, seed)
    share = SHARE.get(task)
    return [whole[share * v : share * (v + 1)] if share else whole for v in range(n)]


def as_json(answer: Any) -> str:
    """Compared as JSON text, answers must have the same types (an integer answer is an int) and the
    same floats to the last digit."""
    return json.dumps(answer, sort_keys=True)


def test_every_task_has_an_oracle():
    assert sorted(ORACLES) == sorted(IDS)


@pytest.mark.parametrize("task", IDS)
def test_the_solver_agrees_with_the_oracle_on_generated_instances(task):
    for n in (2, 5, 8, 16):
        for seed in range(3):
            inst = instance(task, n, seed)
            assert as_json(inst.answer) == _whole(task, n, seed), (task, n, seed)
            if inst.segmented:
                assert [inst.expected(v) for v in range(n)] == stated_answers(task, n, seed), (task, n, seed)


def _public(n: int) -> dict[str, dict]:
    return {
        "I-05": {"low": 100, "high": 500},
        "I-08": {"top": 15 * n - 1},
        "I-09": {"k": 10},
        "II-11": {"items": 15 * n},
        "II-12": {"items": 15 * n - 2},
        "II-14": {"steps": 5, "items": 10 * n},
        "II-17": {"items": 15 * n - 1},
        "II-18": {"nodes": 8 * n},
        "II-20": {"items": 5 * n},
        "III-21": {"items": 20 * n},
        "III-22": {"items": 25 * n, "index": 25 * n // 2},
        "III-23": {"last_node": 10 * n - 1, "nodes": 10 * n},
        "III-24": {"last_node": 8 * n - 1, "nodes": 8 * n},
        "III-26": {"top": 15 * n - 1},
        "III-27": {"users": 3 * n},
        "III-28": {"last_node": 8 * n - 1, "nodes": 8 * n},
        "III-29": {"tasks": 20 * n, "machines": n},
        "III-30": {"dim": n},
    }


@pytest.mark.parametrize("n", [2, 5])
def test_the_public_facts_are_the_readmes(n):
    """The facts a statement quotes (the range, k, the median's index, the node count, ...) are those
    Silo-Bench's README's table gives (none for the other tasks); III-22's index is the median of its 25 N
    integers."""
    drawn = {"II-18": "head", "III-25": "centroids"}  # per instance
    for task in IDS:
        public = dict(instance(task, n, 0).public)
        public.pop(drawn.get(task, ""), None)
        assert public == _public(n).get(task, {}), task
    inst = instance("III-22", n, 0)
    assert inst.answer == statistics.median_high(items(inst.shards))  # the middle one, or the upper of two


A, B, C, D = (f"Candidate_{letter}" for letter in "ABCD")
PAGE_96 = {str(v): 0.001562 for v in range(96)}  # 0.15 / 96 = 0.0015625 exactly: half to even, 0.001562
LONE = ["q" * 16, "@" * 128]  # character sums 1808 and 8192: 8192 XOR 1808 = 10000, so the last mod matters
USERS = {"users": {"2": [1.0, 0, 0, 0, 0], "10": [1.0, 0, 0, 0, 0]}, "items": {}}
ITEMS = {"users": {}, "items": {"7": [0.5, 0, 0, 0, 0], "3": [0.5, 0, 0, 0, 0], "1": [0.25, 0.12, 0, 0, 0]}}
KM = {"centroids": [[0.0, 0.0], [2.0, 0.0], [10.0, 10.0]]}
LPT_16 = [[{"id": 0, "duration": 1}, {"id": 1, "duration": 6}], [{"id": 2, "duration": 1}]] + [[]] * 14
# (task, shards, public, the answer worked by hand, the rule it hits)
CASES = [
    ("I-01", [[-5, -3], [-7, -1]], {}, -1, "every value negative"),
    ("I-02", [["apple", "Apple", "apples"], ["apple", "banana"]], {}, 2, "exactly apple"),
    ("I-03", [[C, B], [B, C, A]], {}, B, "a tie: the first alphabetically, not the first seen"),
    ("I-03", [[D, A, D], [A, B]], {}, A, "a tie of A and D"),
    ("I-03", [[D, D, A], [B, D]], {}, D, "the most votes before the alphabet"),
    ("I-04", [["INFO: ok"], ["WARNING: ERROR later", "error: lower case"]], {}, False, "starts with ERROR"),
    ("I-04", [["INFO: ok"], ["ERROR: critical failure detected"]], {}, True, "one error line"),
    ("I-05", [[99, 100, 300], [500, 501]], {"low": 100, "high": 500}, 3, "both ends inclusive"),
    ("I-06", [[1, 2], [3, 255]], {}, 255, "1 ^ 2 ^ 3 = 0"),
    ("I-06", [[7, 7], [9]], {}, 9, "pairs cancel"),
    ("I-07", [[0.0], [0.01]], {}, 0.0, "0.005: half to even gives 0.00 (a float rounds it up)"),
    ("I-07", [[1.01], [1.04]], {}, 1.02, "1.025: half to even gives 1.02, half up 1.03"),
    ("I-07", [[0.01], [0.02]], {}, 0.02, "0.015: half to even gives 0.02 (a float rounds it down)"),
    ("I-07", [[1.0, 2.0], [2.0]], {}, 1.67, "5/3"),
    ("I-08", [[1, 2, 2], [2, 3, 1]], {"top": 3}, 3, "repeats within and across shards"),
    ("I-09", [[5, 1, 5], [3, 5]], {"k": 3}, [5, 5, 5], "repeated values kept"),
    ("I-09", [[1, 9], [4, 7, 2]], {"k": 3}, [9, 7, 4], "largest first"),
    ("I-10", [[0.0], [2.03]], {}, 1.02, "1.015: half to even gives 1.02 (a float rounds it down)"),
    ("I-10", [[0.0], [2.05]], {}, 1.02, "1.025: half to even gives 1.02, half up 1.03"),
    ("I-10", [[0.0, 1.0], [2.0]], {}, 0.82, "population, not sample (0.816..., sample 1.00)"),
    ("II-11", [[1, 2], [3]], {}, [1, 3, 6], "inclusive prefix sums"),
    ("II-12", [[1, 2], [4, 8]], {}, [2.33, 4.67], "j = 1 ... L - 2, each window centred on x_j"),
    ("II-13", ["xab", "bay"], {}, 4, "an even palindrome across a boundary"),
    ("II-13", ["qracecar", "z"], {}, 7, "an odd palindrome"),
    ("II-14", [[1, 0, 0], [0, 0, 1]], {"steps": 1}, [1, 1, 0, 0, 1, 1], "cells beyond the ends are 0, no wrap"),
    ("II-14", [[0, 1, 0], [0, 0]], {"steps": 2}, [0, 0, 0, 1, 0], "two steps"),
    ("II-15", ["AXBCAB", "CABC"], {}, 3, "a match across a boundary"),
    ("II-15", ["CBA", "BAC"], {}, 1, "a C or B before its A is skipped; an A while seeking B is skipped"),
    ("II-15", ["ACBC", "AB"], {}, 1, "a C before the B is skipped; an unfinished match does not count"),
    ("II-16", [[3, 0, 2], [0, 4]], {}, 7, "water across a boundary"),
    ("II-16", [[0, 1, 0], [2, 1, 0, 1, 3]], {}, 5, "bounded by the lower side"),
    ("II-17", [[5, 3], [10]], {}, [-2, 7], "x_j - x_{j-1}, not its negative"),
    (
        "II-18",
        [[{"id": 0, "next": 1}], [{"id": 1, "next": -1}, {"id": 2, "next": 0}]],
        {"head": 2, "nodes": 3},
        {"2": 0, "0": 1, "1": 2},
        "ranks from the head, not from the ids",
    ),
    ("II-19", [[1, 1], [1, 2, 2], [3]], {}, [1, 2, 3], "runs across boundaries"),
    ("II-20", [["ab"], ["c"]], {}, [195, 195 ^ 99], "h starts at 0, XOR with the previous"),
    ("II-20", [[LONE[0]], [LONE[1]]], {}, [1808, 0], "the outer mod 10000 (8192 XOR 1808 = 10000)"),
    ("III-21", [[3, 1], [2, 2]], {}, [1, 2, 2, 3], "ascending, repeats kept"),
    ("III-22", [[4, 1], [3, 2]], {"index": 2}, 3, "the entry at index 2 of 4: the upper middle"),
    ("III-22", [[5, 1], [3]], {"index": 1}, 3, "the entry at index 1 of 3"),
    ("III-23", [[[0, 1], [1, 0]], [[2, 3]]], {"nodes": 5}, 3, "an edge held twice; an isolated node counts"),
    (
        "III-24",
        [[[1, 0], [2, 1]], [[3, 4]]],
        {"nodes": 6},
        {"0": 0, "1": 1, "2": 2, "3": -1, "4": -1, "5": -1},
        "undirected; -1 unreachable",
    ),
    (
        "III-25",
        [[[1.0, 0.0], [0.01, 0.01]], [[9.99, 10.0]]],
        KM,
        [[0.5, 0.0], [2.0, 0.0], [9.99, 10.0]],
        "[1, 0] is as near centroid 1 as 0 (it goes to 0); means 0.505, 0.005 go half to even; centroid 1 stays",
    ),
    ("III-26", [[1, 1], [2, 1, 2]], {"top": 2}, 2, "repeats within and across shards"),
    (
        "III-27",
        [USERS, ITEMS],
        {"users": 2},
        [[2, 3, 0.5], [2, 7, 0.5], [10, 3, 0.5]],
        "four pairs score 0.5: lower user id (2 before 10, as numbers), then lower item id",
    ),
    (
        "III-27",
        [{"users": {"0": [0.12, 0.5, 0, 0, 0]}, "items": {}}, ITEMS],
        {"users": 1},
        [[0, 1, 0.09], [0, 3, 0.06], [0, 7, 0.06]],
        "scores 0.09 (0.03 + 0.06), 0.06, 0.06: highest first",
    ),
    ("III-28", [[[0, 1]]], {"nodes": 2}, {"0": 0.075, "1": 0.5}, "the rank of a node without out-edges is lost"),
    ("III-28", [[], []], {"nodes": 96}, PAGE_96, "0.0015625: half to even gives 0.001562, half up 0.001563"),
    (
        "III-28",
        [[[0, 1], [0, 2]], [[2, 1]]],
        {"nodes": 3},
        {"0": 0.05, "1": 0.475, "2": 0.191667},
        "0.05 + 0.85 (1/6 + 1/3) for node 1, 0.05 + 0.85 / 6 = 0.1916666... for node 2",
    ),
    (
        "III-29",
        [[{"id": 0, "duration": 1}, {"id": 1, "duration": 1}], [{"id": 2, "duration": 2}]],
        {"machines": 2},
        {"max_load": 2, "min_load": 2, "variance": 0.0},
        "longest first: 2, then 1 and 1 on the other machine",
    ),
    (
        "III-29",
        LPT_16,
        {"machines": 16},
        {"max_load": 6, "min_load": 0, "variance": 2.12},
        "loads 6, 1, 1 and 13 zeros: variance 2.125, half to even 2.12",
    ),
    (
        "III-30",
        [{"row": 1, "a": [3, 4], "b": [7, 8]}, {"row": 0, "a": [1, 2], "b": [5, 6]}],
        {"dim": 2},
        [[19, 22], [43, 50]],
        "rows placed by their number, C = A B not B A",
    ),
]


@pytest.mark.parametrize(
    ("task", "shards", "public", "expected", "rule"), CASES, ids=[f"{c[0]}: {c[4]}" for c in CASES]
)
def test_each_rule_on_a_hand_worked_instance(task, shards, public, expected, rule):
    assert as_json(ORACLES[task](shards, public)) == as_json(expected), "the oracle"
    assert as_json(PROBLEMS[task].solve(shards, public)) == as_json(expected), "the solver"


def test_every_task_has_a_hand_worked_instance():
    assert {case[0] for case in CASES} == set(IDS)


@pytest.mark.parametrize(
    ("task", "shards", "public", "owns"),
    [
        ("II-11", [[1, 2], [3], [4, 5]], {}, [[1, 3], [6], [10, 15]]),
        ("II-14", [[0, 1, 0], [0, 0]], {"steps": 1}, [[1, 1, 1], [0, 0]]),
        ("II-20", [["ab"], ["c"]], {}, [[195], [195 ^ 99]]),
        ("III-21", [[3, 1], [2, 2]], {}, [[1, 2], [2, 3]]),
    ],
)
def test_a_segmented_task_expects_from_each_agent_its_own_shards_positions(task, shards, public, owns):
    inst = Instance(task, len(shards), tuple(shards), public, PROBLEMS[task].solve(shards, public))
    assert [inst.expected(v) for v in range(len(shards))] == owns
