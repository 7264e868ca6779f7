"""`hivebench verify`: every finished file read back in full, for damage that leaves file times and
Parquet's framing intact (a disk error, a file restored with its old time), which the check Snakemake
makes on every run (`Block.damage`) cannot see. A damaged block's summary is removed, so the next
`snakemake` run redoes exactly its damaged cells."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hivebench.cells import Block, cell_path, digest
from hivebench.store import read_verified, verified_summary


def deep_damage(block: Block) -> dict[str, str]:
    """`Block.damage`, plus every file of a finished block that does not read back whole (page
    checksums) or whose cell file holds another cell (its hash)."""
    damage = block.damage()
    if not Path(block.summary_path).exists():
        return damage
    if block.summary_path not in damage:
        try:
            read_verified(block.summary_path)
        except (OSError, pa.ArrowException):
            damage[block.summary_path] = "does not read back whole"
    for cell in block.cells():
        path = cell_path(cell)
        if path not in damage and verified_summary(path, digest(cell)) is None:
            damage[path] = "does not read back whole, or holds another cell"
    return damage
