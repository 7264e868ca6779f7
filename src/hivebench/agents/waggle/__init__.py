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
from hivebench.models.adapter import manifest_path
from hivebench.models.hooks import ModelHooks
from hivebench.waggle.runtime.hooks import WaggleHooks


class ControllerHooks(ModelHooks, WaggleHooks):
    """A model's settings (ModelHooks) on the suites with a Waggle adapter (WaggleHooks), and its
    estimate (estimate.py)."""

    def resolve(self, entry: dict[str, Any], base: Path) -> dict[str, Any]:
        """Without an adapter, none of its settings (a cell keeps the identity it had before they
        existed); with one, the LoRA module's name only where a server is asked for it."""
        params = ModelHooks.resolve(self, entry, base)
        if not params.get("adapter"):
            unused: tuple[str, ...] = ("adapter", "adapter_seed", "lora_module")
        else:
            unused = () if params["backend"] == "openai" else ("lora_module",)
        return {k: v for k, v in params.items() if k not in unused}

    def job_inputs(self, params: dict[str, Any]) -> list[str]:
        """The model's folder, and the adapter's training (its manifest): a retrained adapter reruns
        the jobs that use it, which replay exactly the cells whose adapter digest changed."""
        trained = [str(manifest_path(params))] if params.get("adapter") else []
        return ModelHooks.job_inputs(self, params) + trained

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
