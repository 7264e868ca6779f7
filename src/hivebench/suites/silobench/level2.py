"""Level II, mesh (II-11 ... II-20): the agents hold consecutive segments of one global sequence, agent
0 the first; the answer needs each segment's neighbours (or a pass along the chain)."""

from __future__ import annotations

from fractions import Fraction
from itertools import accumulate

from hivebench.suites.silobench.problems import Problem, deal, flat, rounded

LETTERS = "abcdefghijklmnopqrstuvwxyz"
PATTERN_ALPHABET = "ABCDXYZ"
SEQUENCE = "The agents hold consecutive segments of one sequence: agent 0 the first, agent {last} the last."


class PrefixSum(Problem):
    statement = SEQUENCE + " Each agent holds 15 integers. Compute the inclusive prefix sums of the whole sequence."
    answer_format = (
        "your own 15 entries of the global prefix sums, as a list of integers (position j holds x_0 + ... + x_j)"
    )
    whole_format = "the {items} prefix sums, as a list of integers (position j holds x_0 + ... + x_j)"

    def generate(self, n, rng):
        return deal(rng.integers(1, 51, 15 * n).tolist(), n), {"items": 15 * n}

    def solve(self, shards, public):
        return list(accumulate(flat(shards)))


class MovingAverage(Problem):
    statement = SEQUENCE + " Each agent holds 15 integers. Compute the 3-point moving average of the whole sequence."
    answer_format = (
        "the list of (x_{{j-1}} + x_j + x_{{j+1}}) / 3 for j = 1 ... L-2 over the whole sequence of L integers "
        "({items} entries), each rounded to 2 decimal places (half to even)"
    )

    def generate(self, n, rng):
        return deal(rng.integers(1, 101, 15 * n).tolist(), n), {"items": 15 * n - 2}

    def solve(self, shards, public):
        x = flat(shards)
        return [rounded(Fraction(x[j - 1] + x[j] + x[j + 1], 3), 2) for j in range(1, len(x) - 1)]


class LongestPalindrome(Problem):
    statement = (
        SEQUENCE + " Each agent holds a string of 15 lowercase letters; the whole text is their concatenation. "
        "Find the length of its longest palindromic substring."
    )
    answer_format = "an integer"

    def generate(self, n, rng):
        text = [LETTERS[i] for i in rng.integers(0, 26, 15 * n)]
        if len(text) >= 7:  # a palindrome of 7 hidden somewhere, often across a segment boundary
            start = int(rng.integers(0, len(text) - 6))
            text[start : start + 7] = "racecar"
        return ["".join(part) for part in deal(text, n)], {}

    def solve(self, shards, public):
        return _longest_palindrome("".join(shards))


def _longest_palindrome(text: str) -> int:
    """Manacher's algorithm: the longest palindromic substring's length in linear time."""
    padded = "^#" + "#".join(text) + "#$"
    radius = [0] * len(padded)
    centre = right = 0
    for i in range(1, len(padded) - 1):
        if i < right:
            radius[i] = min(right - i, radius[2 * centre - i])
        while padded[i + radius[i] + 1] == padded[i - radius[i] - 1]:
            radius[i] += 1
        if i + radius[i] > right:
            centre, right = i, i + radius[i]
    return max(radius, default=0)


class LifeGame(Problem):
    statement = (
        SEQUENCE + " Each agent holds 10 cells (0 or 1) of a one-dimensional automaton. Run {steps} steps of the "
        "rule: a cell becomes 1 exactly when it and its two neighbours hold one 1 between them (cells beyond "
        "either end count as 0)."
    )
    answer_format = "your own 10 cells after {steps} steps, as a list of 0s and 1s"
    whole_format = "all {items} cells after {steps} steps, as a list of 0s and 1s"

    def generate(self, n, rng):
        return deal(rng.integers(0, 2, 10 * n).tolist(), n), {"steps": 5, "items": 10 * n}

    def solve(self, shards, public):
        cells = flat(shards)
        for _ in range(public["steps"]):
            padded = [0, *cells, 0]
            cells = [int(padded[j] + padded[j + 1] + padded[j + 2] == 1) for j in range(len(cells))]
        return cells


class PatternSearch(Problem):
    statement = (
        SEQUENCE + " Each agent holds 20 letters from A B C D X Y Z. Scan the whole sequence from the start: "
        "look for an A, then a B after it, then a C after that; on the C count one match and start looking "
        "for an A again (other letters are skipped). Count the matches."
    )
    answer_format = "an integer"

    def generate(self, n, rng):
        text = [PATTERN_ALPHABET[i] for i in rng.integers(0, len(PATTERN_ALPHABET), 20 * n)]
        for _ in range(2):  # two planted A ... B ... C
            start = int(rng.integers(0, len(text) - 14))
            text[start], text[start + int(rng.integers(1, 6))], text[start + int(rng.integers(6, 11))] = "A", "B", "C"
        return ["".join(part) for part in deal(text, n)], {}

    def solve(self, shards, public):
        state = count = 0
        for letter in "".join(shards):
            if letter == "ABC"[state]:
                state += 1
                if state == 3:
                    state, count = 0, count + 1
        return count


class TrappingRainWater(Problem):
    statement = (
        SEQUENCE + " Each agent holds 10 bar heights. Compute how many units of rain water the whole row of "
        "bars traps (each position holds min(highest bar to its left, highest bar to its right) minus its own "
        "height, if positive)."
    )
    answer_format = "an integer"

    def generate(self, n, rng):
        heights = rng.integers(0, 11, 10 * n)
        heights[1::5] = rng.integers(0, 4, len(heights[1::5]))  # regular low bars: water to trap
        return deal(heights.tolist(), n), {}

    def solve(self, shards, public):
        heights = flat(shards)
        left, right = list(accumulate(heights, max)), list(accumulate(reversed(heights), max))[::-1]
        return sum(min(a, b) - h for a, b, h in zip(left, right, heights))


class DifferenceArray(Problem):
    statement = (
        SEQUENCE
        + " Each agent holds 15 integers. Compute the differences between neighbouring entries of the whole sequence."
    )
    answer_format = "the list of x_j - x_{{j-1}} for j = 1 ... L-1 over the whole sequence ({items} integers)"

    def generate(self, n, rng):
        return deal(rng.integers(1, 101, 15 * n).tolist(), n), {"items": 15 * n - 1}

    def solve(self, shards, public):
        x = flat(shards)
        return [b - a for a, b in zip(x, x[1:])]


class ListRanking(Problem):
    statement = (
        "One linked list of {nodes} nodes runs through all agents' data, starting at node {head}. Each agent "
        'holds 8 nodes as {{"id": node, "next": the following node, or -1 at the end}}. Find every node\'s '
        "rank: its distance from the start (node {head} has rank 0)."
    )
    answer_format = 'an object mapping every node id (as a string) to its rank, e.g. {{"{head}": 0, ...}}'

    def generate(self, n, rng):
        order = rng.permutation(8 * n).tolist()  # the list's order of node ids
        nodes = [{"id": node, "next": order[k + 1] if k + 1 < len(order) else -1} for k, node in enumerate(order)]
        dealt = [nodes[k] for k in rng.permutation(len(nodes))]  # to agents regardless of list order
        return deal(dealt, n), {"nodes": 8 * n, "head": order[0]}

    def solve(self, shards, public):
        following = {node["id"]: node["next"] for node in flat(shards)}
        ranks, node = {}, public["head"]
        while node in following and str(node) not in ranks:  # as far as the known nodes lead
            ranks[str(node)] = len(ranks)
            node = following[node]
        return ranks


class MergeNeighbours(Problem):
    statement = (
        SEQUENCE + " Each agent holds 15 integers; the whole sequence is sorted. Remove the repeats: keep one "
        "of each run of equal neighbouring values."
    )
    answer_format = "the whole sequence without repeats, as a list of integers in order"

    def generate(self, n, rng):
        return deal(sorted(rng.integers(1, 51, 15 * n).tolist()), n), {}

    def solve(self, shards, public):
        x = flat(shards)
        return [v for j, v in enumerate(x) if j == 0 or v != x[j - 1]]


class PipelineHash(Problem):
    statement = (
        SEQUENCE + " Each agent holds 5 text blocks. Hash the blocks in order: h starts at 0, and for each "
        "block h = (((sum of the block's character codes) mod 10000) XOR h) mod 10000."
    )
    answer_format = "the hash after each of your own 5 blocks, as a list of 5 integers"
    whole_format = "the hash after each of the {items} blocks, as a list of integers"

    def generate(self, n, rng):
        tags = rng.integers(0, 26, (5 * n, 4))
        blocks = [f"Block_{g}_{''.join(LETTERS[i] for i in tag)}" for g, tag in enumerate(tags)]
        return deal(blocks, n), {"items": 5 * n}

    def solve(self, shards, public):
        hashes, h = [], 0
        for block in flat(shards):
            h = ((sum(map(ord, block)) % 10000) ^ h) % 10000
            hashes.append(h)
        return hashes


PROBLEMS: dict[str, Problem] = {
    "II-11": PrefixSum(),
    "II-12": MovingAverage(),
    "II-13": LongestPalindrome(),
    "II-14": LifeGame(),
    "II-15": PatternSearch(),
    "II-16": TrappingRainWater(),
    "II-17": DifferenceArray(),
    "II-18": ListRanking(),
    "II-19": MergeNeighbours(),
    "II-20": PipelineHash(),
}
