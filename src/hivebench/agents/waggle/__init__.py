"""The `waggle` method: a model as the local controller on the Waggle runtime (hivebench.waggle.runtime):
each live agent's six-part local view put to the model (controller.py, asked as prompt.py says), its
replies admitted by the ladder (ladder.py), its cells estimated (estimate.py); its settings in
schema.yaml. See README.md.

This module is standard library only: the Snakefile reads the declaration at parse time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.method import CellEstimate, Method, MethodImpl
from hivebench.models.hooks import ModelHooks
from hivebench.waggle.runtime.hooks import WaggleHooks


class ControllerHooks(ModelHooks, WaggleHooks):
    """A model's settings (ModelHooks) on the suites with a Waggle adapter (WaggleHooks), and its
    estimate (estimate.py)."""

    def problems(self, entry: dict[str, Any], base: Path) -> Iterator[str]:
        yield from ModelHooks.problems(self, entry, base)
        yield from WaggleHooks.problems(self, entry, base)

    def estimate(self, shared: dict[str, Any], seeds: int) -> CellEstimate:
        from hivebench.agents.waggle.estimate import cell_estimate

        return cell_estimate(shared, seeds)

    def job_memory_mb(self, shared: dict[str, Any], seeds: int) -> int | None:
        """A local model's job (once its folder is there); a server's or a script's: not known."""
        if shared["method"]["params"]["backend"] != "transformers":
            return None  # before importing the estimate: it loads numpy and pyarrow, at parse time
        from hivebench.agents.waggle.estimate import block_memory_mb
        from hivebench.ids import canonical_json

        return block_memory_mb(canonical_json(shared), seeds)


METHOD = Method(
    name="waggle",
    impl=MethodImpl(
        "hivebench.agents.waggle.controller:Controller",
        version=2,
        calls_models=True,
        adapted=True,
        classical_messages=True,  # its proposal's, where a record's action sends them
        tables=("traces", "views"),
        hooks=ControllerHooks(),
    ),
    schema="schema.yaml",
)
