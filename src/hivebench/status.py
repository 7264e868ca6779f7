"""`hivebench status`: how many cells of each study and method are done, pending or failed, and what
the finished LLM cells cost so far. Reads only file metadata (no trajectories), without Snakemake.

done:    the cell's Parquet exists with the cell's current hash;
failed:  not done, and its job's log exists and ends in an error (the last job of that block failed);
pending: the rest (never run, stale after a parameter change, or running now).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from hivebench.cells import BLOCK_LOG, Block, cell_path, digest, path_fields
from hivebench.models import token_cost
from hivebench.store import stored_summary

COLUMNS = ("study", "method", "cells", "done", "pending", "failed", "llm_calls", "input_tokens", "output_tokens", "cost_usd")


def block_log(block: Block) -> Path:
    return Path(BLOCK_LOG.format(**path_fields(block.shared), first=block.first, last=block.last))


def block_failed(block: Block) -> bool:
    log = block_log(block)
    if not log.is_file():
        return False
    tail = log.read_text(errors="replace")[-4000:]
    return "Traceback" in tail or "error:" in tail


def status(blocks: dict[str, list[Block]], prices: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: dict.fromkeys(COLUMNS[2:], 0))
    for study, study_blocks in blocks.items():
        for block in study_blocks:
            method = block.shared["method"]
            row = rows[(study, method["name"])]
            price = prices.get(method["params"].get("model", ""))
            failed = block_failed(block)
            for cell in block.cells():
                row["cells"] += 1
                summary = stored_summary(cell_path(cell), digest(cell))
                if summary is None:
                    row["failed" if failed else "pending"] += 1
                    continue
                row["done"] += 1
                for key in ("llm_calls", "input_tokens", "output_tokens"):
                    row[key] += summary.get(key, 0)
                if price and "input_tokens" in summary:
                    row["cost_usd"] += token_cost(price, summary["input_tokens"], summary["output_tokens"])
    return [{"study": s, "method": m, **counts} for (s, m), counts in rows.items()]


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["\t".join(COLUMNS)]
    for row in rows:
        cells = [f"{row[c]:.4f}" if c == "cost_usd" else str(row[c]) for c in COLUMNS]
        lines.append("\t".join(cells))
    return "\n".join(lines)
