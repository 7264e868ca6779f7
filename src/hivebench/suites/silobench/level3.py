"""Level III, global shuffle (III-21 ... III-30): the data are dealt to agents at random, so the answer
needs nearly everything from nearly everyone."""

from __future__ import annotations

import heapq
from fractions import Fraction

import numpy as np

from hivebench.suites.silobench.problems import (
    Problem,
    deal,
    exact,
    flat,
    hundredths,
    rounded,
)


class DistributedSort(Problem):
    statement = "Each agent holds 20 integers. Sort all the agents' integers in ascending order."
    answer_format = (
        "your own 20 entries of the sorted list (agent i: positions 20 i ... 20 i + 19), as a list of integers"
    )
    whole_format = "all {items} integers sorted, as a list"

    def generate(self, n, rng):
        return deal(rng.integers(1, 1001, 20 * n).tolist(), n), {"items": 20 * n}

    def solve(self, shards, public):
        return sorted(flat(shards))


class MedianOfMedians(Problem):
    statement = (
        "Each agent holds 25 integers; there are {items} in all. Find the median: the entry at index {index} "
        "(counting from 0) of all the integers sorted in ascending order."
    )
    answer_format = "an integer"

    def generate(self, n, rng):
        return deal(rng.integers(1, 1001, 25 * n).tolist(), n), {"items": 25 * n, "index": 25 * n // 2}

    def solve(self, shards, public):
        values = sorted(flat(shards))
        return values[min(public["index"], len(values) - 1)]


def _draw_edges(rng: np.random.Generator, nodes: int, count: int, directed: bool) -> list[list[int]]:
    """`count` distinct edges without self-loops, in random order (u < v when undirected)."""
    seen: dict[tuple[int, int], None] = {}
    while len(seen) < count:
        for u, v in rng.integers(0, nodes, (count, 2)).tolist():
            key = (u, v) if directed else (min(u, v), max(u, v))
            if u != v and len(seen) < count:
                seen.setdefault(key)
    return [list(edge) for edge in seen]


def _sparse_graph(rng: np.random.Generator, n: int, directed: bool) -> tuple[list, dict]:
    """16 distinct edges per agent on 8 N nodes (III-24, III-28)."""
    return deal(_draw_edges(rng, 8 * n, 16 * n, directed), n), {"last_node": 8 * n - 1, "nodes": 8 * n}


class GraphComponents(Problem):
    statement = (
        "The agents hold the edges of one undirected graph on nodes 0 ... {last_node}, 20 edges each, as "
        "[u, v] pairs (an edge may be held twice). Count the graph's connected components (an isolated node "
        "is a component)."
    )
    answer_format = "an integer"

    def generate(self, n, rng):
        pairs = rng.integers(0, 10 * n, (20 * n, 2))
        pairs[:, 1] = np.where(pairs[:, 0] == pairs[:, 1], (pairs[:, 1] + 1) % (10 * n), pairs[:, 1])
        return deal(pairs.tolist(), n), {"last_node": 10 * n - 1, "nodes": 10 * n}

    def solve(self, shards, public):
        parent = list(range(public["nodes"]))

        def root(u: int) -> int:
            while parent[u] != u:
                parent[u] = parent[parent[u]]
                u = parent[u]
            return u

        components = public["nodes"]
        for u, v in flat(shards):
            a, b = root(u), root(v)
            if a != b:
                parent[a], components = b, components - 1
        return components


class BfsDistance(Problem):
    statement = (
        "The agents hold the edges of one undirected graph on nodes 0 ... {last_node}, 16 distinct edges "
        "each, as [u, v] pairs. Find every node's distance in hops from node 0 (-1 if it cannot be reached)."
    )
    answer_format = 'an object mapping every node id (as a string) to its distance, e.g. {{"0": 0, ...}}'

    def generate(self, n, rng):
        return _sparse_graph(rng, n, directed=False)

    def solve(self, shards, public):
        neighbours: list[list[int]] = [[] for _ in range(public["nodes"])]
        for u, v in flat(shards):
            neighbours[u].append(v)
            neighbours[v].append(u)
        distance = [-1] * public["nodes"]
        distance[0], frontier = 0, [0]
        while frontier:
            step = []
            for u in frontier:
                for v in neighbours[u]:
                    if distance[v] < 0:
                        distance[v] = distance[u] + 1
                        step.append(v)
            frontier = step
        return {str(node): d for node, d in enumerate(distance)}


class KMeansIteration(Problem):
    statement = (
        "Each agent holds 20 points [x, y]. Starting from the centroids {centroids}, run one k-means step: "
        "give each point to its nearest centroid (Euclidean distance; on a tie the first centroid), then move "
        "each centroid to the mean of its points (a centroid without points stays where it is)."
    )
    answer_format = (
        "the 3 new centroids in order, as a list of [x, y] pairs, each coordinate rounded to 2 decimal places "
        "(half to even)"
    )

    def generate(self, n, rng):
        points = hundredths(rng, 0, 100, (20 * n, 2)).tolist()
        return deal(points, n), {"centroids": hundredths(rng, 0, 100, (3, 2)).tolist()}

    def solve(self, shards, public):
        points = np.array([[round(c * 100) for c in point] for point in flat(shards)], dtype=np.int64).reshape(-1, 2)
        centroids = np.array([[round(c * 100) for c in centroid] for centroid in public["centroids"]], dtype=np.int64)
        nearest = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)  # exact integers
        moved = []
        for k, centroid in enumerate(public["centroids"]):
            mine = points[nearest == k]
            if len(mine) == 0:
                moved.append([rounded(exact(c), 2) for c in centroid])
            else:
                moved.append([rounded(Fraction(int(total), 100 * len(mine)), 2) for total in mine.sum(axis=0)])
        return moved


class GlobalDistinct(Problem):
    statement = (
        "Each agent holds 30 integers in [0, {top}], dealt at random. Count the distinct integers over all agents."
    )
    answer_format = "an integer"

    def generate(self, n, rng):
        values = rng.integers(0, 15 * n, 30 * n)
        return deal(values[rng.permutation(len(values))].tolist(), n), {"top": 15 * n - 1}

    def solve(self, shards, public):
        return len(set(flat(shards)))


class CollaborativeFiltering(Problem):
    statement = (
        "The agents hold {users} user vectors and {users} item vectors (5 numbers each), dealt at random, 6 "
        'per agent as {{"users": {{id: vector}}, "items": {{id: vector}}}}. Score every (user, item) pair '
        "by the dot product of their vectors and find the 3 highest-scoring pairs."
    )
    answer_format = (
        "a list of 3 [user id, item id, score] triples, highest score first (ties: lower user id, then lower "
        "item id first), ids as integers, scores rounded to 4 decimal places"
    )

    def generate(self, n, rng):
        vectors = hundredths(rng, 0, 1, (6 * n, 5)).tolist()
        tagged = [("users", k, v) for k, v in enumerate(vectors[: 3 * n])] + [
            ("items", k, v) for k, v in enumerate(vectors[3 * n :])
        ]
        dealt = [tagged[k] for k in rng.permutation(len(tagged))]
        shards = []
        for part in deal(dealt, n):
            shard: dict[str, dict[str, list[float]]] = {"users": {}, "items": {}}
            for kind, k, vector in part:
                shard[kind][str(k)] = vector
            shards.append(shard)
        return shards, {"users": 3 * n}

    def solve(self, shards, public):
        users = {int(k): v for shard in shards for k, v in shard["users"].items()}
        items = {int(k): v for shard in shards for k, v in shard["items"].items()}
        if not users or not items:
            return []
        user_ids, item_ids = sorted(users), sorted(items)
        best = top_pairs(_hundredths(users, user_ids), _hundredths(items, item_ids), 3)
        return [[user_ids[u], item_ids[i], score / 10000] for score, u, i in best]


PAIR_BLOCK = 1 << 20  # scores held at once by top_pairs (8 MiB): its memory is O(N) whatever N


def _hundredths(table: dict[int, list[float]], ids: list[int]) -> np.ndarray:
    return np.array([[round(c * 100) for c in table[k]] for k in ids], dtype=np.int64).reshape(len(ids), -1)


def top_pairs(users: np.ndarray, items: np.ndarray, k: int, block: int = PAIR_BLOCK) -> list[tuple[int, int, int]]:
    """The k best (score, user row, item row) by the dot product of integer vectors: highest score
    first, ties by lower user row, then lower item row (exact integers). The score matrix is made a
    block of user rows at a time (about `block` scores), users by falling norm, and the search stops
    once no user left can reach the k-th score (Cauchy-Schwarz, in exact integers)."""
    rows = max(1, block // len(items))
    user_norms, item_norms = (users * users).sum(axis=1), (items * items).sum(axis=1)
    top_item = int(item_norms.max())
    by_norm = np.argsort(-user_norms, kind="stable")
    best: list[tuple[int, int, int]] = []  # (-score, user, item), in order, at most k
    for start in range(0, len(by_norm), rows):
        chosen = np.sort(by_norm[start : start + rows])
        if len(best) == k and -best[-1][0] > 0 and int(user_norms[chosen].max()) * top_item < best[-1][0] ** 2:
            break  # every user left scores below the k-th pair (users come by falling norm)
        scores = users[chosen] @ items.T
        flat_scores = scores.ravel()
        # the block's k-th score: a pair below it has k better ones in this block alone
        kth = (
            np.partition(flat_scores, len(flat_scores) - k)[len(flat_scores) - k]
            if len(flat_scores) > k
            else flat_scores.min()
        )
        u, i = np.nonzero(scores >= kth)  # by user row, then item: a stable sort by score keeps the ties' order
        candidates = scores[u, i]
        first = np.argsort(-candidates, kind="stable")[:k]
        best = sorted(best + [(-int(candidates[j]), int(chosen[u[j]]), int(i[j])) for j in first])[:k]
    return [(-s, u, i) for s, u, i in best]


class PageRankStep(Problem):
    statement = (
        "The agents hold the edges of one directed graph on nodes 0 ... {last_node}, 16 distinct edges each, "
        "as [from, to] pairs. Starting from rank 1/{nodes} at every node, run one PageRank step with damping "
        "0.85: each node's new rank is 0.15/{nodes} plus 0.85 times the sum, over the edges into it, of the "
        "source's rank divided by the source's out-degree (the rank of a node without out-edges is lost)."
    )
    answer_format = (
        "an object mapping every node id (as a string) to its new rank rounded to 6 decimal places (half to even)"
    )

    def generate(self, n, rng):
        return _sparse_graph(rng, n, directed=True)

    def solve(self, shards, public):
        nodes = public["nodes"]
        edges = flat(shards)
        out_degree = [0] * nodes
        for u, _ in edges:
            out_degree[u] += 1
        inflow = [Fraction(0)] * nodes
        for u, v in edges:
            inflow[v] += Fraction(1, out_degree[u])
        return {str(v): rounded((Fraction(15, 100) + Fraction(85, 100) * inflow[v]) / nodes, 6) for v in range(nodes)}


class LoadBalance(Problem):
    statement = (
        'The agents hold {tasks} jobs, 20 each, as {{"id": job, "duration": time}}, dealt at random. '
        "Schedule them on {machines} machines by longest processing time first: take the jobs by duration, "
        "longest first (ties: lower id first), and give each to the machine with the least load so far "
        "(ties: lower machine number)."
    )
    answer_format = (
        'an object {{"max_load": integer, "min_load": integer, "variance": the population variance of the '
        "{machines} machine loads rounded to 2 decimal places (half to even)}}"
    )

    def generate(self, n, rng):
        ids = np.arange(20 * n)
        durations = np.where(ids % 10 == 0, rng.integers(50, 101, len(ids)), rng.integers(1, 11, len(ids)))
        jobs = [{"id": int(i), "duration": int(d)} for i, d in zip(ids, durations)]
        return deal([jobs[k] for k in rng.permutation(len(jobs))], n), {"tasks": 20 * n, "machines": n}

    def solve(self, shards, public):
        machines = public["machines"]
        loads = [0] * machines
        least = [(0, m) for m in range(machines)]  # a heap: the least load, then the lowest machine, first
        for job in sorted(flat(shards), key=lambda j: (-j["duration"], j["id"])):
            load, m = heapq.heappop(least)
            loads[m] = load + job["duration"]
            heapq.heappush(least, (loads[m], m))
        total = sum(loads)
        variance = Fraction(sum((machines * load - total) ** 2 for load in loads), machines**3)
        return {"max_load": max(loads), "min_load": min(loads), "variance": rounded(variance, 2)}


class MatrixMultiply(Problem):
    statement = (
        "Two {dim} x {dim} integer matrices A and B: agent i holds row i of A and row i of B as "
        '{{"row": i, "a": [...], "b": [...]}}. Compute the product C = A B.'
    )
    answer_format = "C as a list of {dim} rows, each a list of {dim} integers"

    def generate(self, n, rng):
        a, b = rng.integers(1, 11, (n, n)).tolist(), rng.integers(1, 11, (n, n)).tolist()
        return [{"row": i, "a": a[i], "b": b[i]} for i in range(n)], {"dim": n}

    def solve(self, shards, public):
        dim = public["dim"]
        a, b = np.zeros((dim, dim), dtype=np.int64), np.zeros((dim, dim), dtype=np.int64)  # rows not held count as 0
        for shard in shards:
            a[shard["row"]], b[shard["row"]] = shard["a"], shard["b"]
        return (a @ b).tolist()


PROBLEMS: dict[str, Problem] = {
    "III-21": DistributedSort(),
    "III-22": MedianOfMedians(),
    "III-23": GraphComponents(),
    "III-24": BfsDistance(),
    "III-25": KMeansIteration(),
    "III-26": GlobalDistinct(),
    "III-27": CollaborativeFiltering(),
    "III-28": PageRankStep(),
    "III-29": LoadBalance(),
    "III-30": MatrixMultiply(),
}
