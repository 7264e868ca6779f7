"""`hivebench estimate`: the model calls and tokens a study's cells need, before running them, as
each method kind estimates its cells (`MethodHooks.estimate`; the `llm` method's is in
hivebench.agents.llm.estimate). Methods that call no model have no rows."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from hivebench.cells import Block
from hivebench.method import CellEstimate
from hivebench.models import token_cost
from hivebench.registry import METHODS


@dataclass
class Estimate:
    task: str
    method: str
    model: str
    population: int
    cells: int
    calls: int
    input_tokens: int
    output_tokens_max: int
    approximate: bool
    memory_mb: int | None  # a job's peak, where the method knows it
    replicate: str | None = None  # a replicate's own row: its own model (a LoRA adapter) and price
    # at most (CellEstimate.bound): every call repaired or regenerated, every send resent and billed
    calls_bound: int = 0
    input_tokens_bound: int = 0
    output_tokens_bound: int = 0
    server: bool = False  # its model is called at a server (hivebench.spend counts its calls)

    @property
    def label(self) -> str:
        return self.method if self.replicate is None else f"{self.method} ({self.replicate})"

    def cost(self, prices: dict[str, dict[str, float]]) -> float | None:
        """The expected cost (every reply valid the first time, at its cap): None without a price."""
        price = prices.get(self.model)
        return None if price is None else token_cost(price, self.input_tokens, self.output_tokens_max)

    def cost_bound(self, prices: dict[str, dict[str, float]]) -> float | None:
        """What the row's cells can cost at most: None without a price."""
        price = prices.get(self.model)
        return None if price is None else token_cost(price, self.input_tokens_bound, self.output_tokens_bound)


def row_key(block: Block) -> tuple[str, str, str | None, int]:
    """The row a block's cells count in: its (task, method, replicate, population)."""
    shared = block.shared
    return (shared["task"]["name"], shared["method"]["name"], shared.get("replicate"), shared["population"])


def estimate(blocks: list[Block]) -> list[Estimate]:
    """One row per (task, method that calls models, replicate, population) of the given blocks."""
    per_cell: dict[tuple[str, str, str | None, int], CellEstimate | None] = {}
    cells: Counter[tuple[str, str, str | None, int]] = Counter()
    for block in blocks:
        method = block.shared["method"]
        key = row_key(block)
        if key not in per_cell:  # the first block's seeds size the job's memory
            per_cell[key] = METHODS[method["kind"]].hooks.estimate(block.shared, len(block.seeds))
        cells[key] += len(block.seeds)
    rows = []
    for (task, name, replicate, n), one in per_cell.items():
        if one is None:
            continue
        k = cells[(task, name, replicate, n)]
        bound = one.bound()
        rows.append(
            Estimate(
                task,
                name,
                one.model,
                n,
                k,
                one.calls * k,
                one.input_tokens * k,
                one.output_tokens_max * k,
                one.approximate,
                one.memory_mb,
                replicate,
                *(count * k for count in bound),
                one.server,
            )
        )
    return rows


def _cost(cost: float | None, mark: str, digits: int) -> str:
    return "-" if cost is None else f"{mark}{cost:.{digits}f}"


def table(rows: list[Estimate], prices: dict[str, dict[str, float]]) -> str:
    """A row per (task, method, N): the expected figure (every reply valid the first time, at its cap
    of output tokens) and the bound (every call repaired or regenerated, every send resent and billed)."""
    lines = [
        "task\tmethod\tmodel\tN\tcells\tcalls\tinput tokens\toutput tokens (max)\tcost USD (max)\t"
        "calls (bound)\tinput tokens (bound)\toutput tokens (bound)\tcost USD (bound)\tjob memory MB"
    ]
    for r in rows:
        mark = "~" if r.approximate else ""
        lines.append(
            f"{r.task}\t{r.label}\t{r.model}\t{r.population}\t{r.cells}\t{r.calls}\t{mark}{r.input_tokens}\t"
            f"{r.output_tokens_max}\t{_cost(r.cost(prices), mark, 4)}\t{r.calls_bound}\t{mark}{r.input_tokens_bound}\t"
            f"{r.output_tokens_bound}\t{_cost(r.cost_bound(prices), mark, 4)}\t{r.memory_mb or '-'}"
        )
    return "\n".join(lines)


def totals(rows: list[Estimate], prices: dict[str, dict[str, float]]) -> str:
    """Per method, the sum of its rows, its replicates' too (a cost where every row's model has a price)."""
    lines = [
        "method	cells	calls	input tokens	output tokens (max)	cost USD (max)	calls (bound)	"
        "input tokens (bound)	output tokens (bound)	cost USD (bound)"
    ]
    keys = (
        "cells",
        "calls",
        "input_tokens",
        "output_tokens_max",
        "calls_bound",
        "input_tokens_bound",
        "output_tokens_bound",
    )
    for method in dict.fromkeys(r.method for r in rows):
        mine = [r for r in rows if r.method == method]
        mark = "~" if any(r.approximate for r in mine) else ""
        costs = [r.cost(prices) for r in mine]
        bounds = [r.cost_bound(prices) for r in mine]
        cost = None if None in costs else sum(costs)  # type: ignore[arg-type]
        bound = None if None in bounds else sum(bounds)  # type: ignore[arg-type]
        sums = [sum(getattr(r, key) for r in mine) for key in keys]
        lines.append(
            f"{method}	{sums[0]}	{sums[1]}	{mark}{sums[2]}	{sums[3]}	{_cost(cost, mark, 2)}	{sums[4]}	"
            f"{mark}{sums[5]}	{sums[6]}	{_cost(bound, mark, 2)}"
        )
    return "\n".join(lines)
