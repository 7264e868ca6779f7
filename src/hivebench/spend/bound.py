"""What the cells still to run may cost at most at model servers: `hivebench estimate`'s bound on the
cells with no finished file, less what each unfinished cell's response cache already holds (those calls
are replayed, not paid again). The budgets' check before a run, and their lines in `status`."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

from hivebench.agents.mixed import MIXED, members_of
from hivebench.cells import Block
from hivebench.ids import digest
from hivebench.models import token_cost
from hivebench.models.cache import cache_records
from hivebench.paths import calls_path, cell_path
from hivebench.spend.ledger import AMOUNTS, Charge
from hivebench.store import stored_summary

Prices = dict[str, dict[str, float]]


def calls_server(method: dict[str, Any]) -> bool:
    """Whether a resolved method calls a model at a server (a mixed population's members too)."""
    if method["kind"] == MIXED:
        return any(calls_server(member["method"]) for member in method["params"]["members"])
    return method["params"].get("backend") == "openai"


def to_run(block: Block) -> Block | None:
    """The block's cells with no finished file (None where every one has)."""
    seeds = tuple(
        s for s, cell in zip(block.seeds, block.cells()) if stored_summary(cell_path(cell), digest(cell)) is None
    )
    return dataclasses.replace(block, seeds=seeds) if seeds else None


def dearest(models: str, prices: Prices) -> dict[str, float]:
    """The dearest price of an estimate row's models (a mixed population's row names them all, comma
    separated); a model without a price is a local one (the config check asks a price of every server
    model under a dollar budget), which costs nothing."""
    names = models.split(", ")
    return {k: max(prices.get(name, {}).get(k, 0.0) for name in names) for k in ("input", "output")}


def cached(cell: dict[str, Any], price: dict[str, float]) -> Charge:
    """What the calls in a cell's response caches (a mixed population's members' too) cost."""
    total = Charge()
    for path in [calls_path(cell), *(calls_path(member) for member in members_of(cell))]:
        for _, result in cache_records(path):
            tokens = (result.usage.input_tokens, result.usage.output_tokens)
            total += Charge(token_cost(price, *tokens), *tokens)
    return total


def bound(blocks: list[Block], prices: Prices) -> tuple[Charge, int]:
    """At most what some blocks' cells of methods that call servers (`calls_server`) will pay them
    (a mixed population's local members cost nothing), and how many cells those are."""
    from hivebench.estimate import estimate, row_key

    rows: dict[tuple[Any, ...], list[Block]] = defaultdict(list)
    for block in blocks:
        rows[row_key(block)].append(block)
    total, cells = Charge(), 0
    for row_blocks in rows.values():
        for row in estimate(row_blocks):  # one row: the blocks share task, method, replicate and N
            price = dearest(row.model, prices)
            tokens = (row.input_tokens_bound // row.cells, row.output_tokens_bound // row.cells)
            one = Charge(token_cost(price, *tokens), *tokens)
            for block in row_blocks:
                for cell in block.cells():
                    paid = cached(cell, price)
                    total += Charge(*(max(0, getattr(one, k) - getattr(paid, k)) for k in AMOUNTS))
            cells += row.cells
    return total, cells
