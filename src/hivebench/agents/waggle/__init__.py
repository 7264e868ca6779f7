"""The Waggle runtime (the paper's fixed runtime around one anonymous local controller): the decision
record and its validator (records.py, admit.py), the trace field (field.py), the candidate-ready gate
(gate.py), the six-part local view (view.py), what a suite's adapter gives it (adapter.py) and the
round it runs (runtime.py). The interface-matched controls (hivebench.agents.nocomm, .nativemsg,
.fixedswarm) are methods on it, and so is the `waggle` method declared here: a model as the controller
(controller.py, asked as prompt.py says, its replies admitted by ladder.py; schema.yaml).

This module is standard library only: the Snakefile reads the declaration, and the controls'
declarations import `WaggleHooks`, at parse time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hivebench.method import CellEstimate, Method, MethodHooks, MethodImpl
from hivebench.models.hooks import ModelHooks


class WaggleHooks(MethodHooks):
    """A method on the Waggle runtime runs the suites with a Waggle adapter (`Suite.waggle`)."""

    def suite_problems(self, entry: dict[str, Any], suite: str) -> Iterator[str]:
        from hivebench.registry import SUITE_OBJECTS

        if SUITE_OBJECTS[suite].waggle is None:
            adapted = sorted(name for name, s in SUITE_OBJECTS.items() if s.waggle is not None)
            yield f"kind: the Waggle runtime has no adapter for {suite} (it runs {', '.join(adapted)})"


class ControllerHooks(ModelHooks, WaggleHooks):
    """A model's settings (ModelHooks) on the suites with a Waggle adapter (WaggleHooks), and its
    estimate (estimate.py)."""

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
        version=1,
        calls_models=True,
        adapted=True,
        classical_messages=True,  # its proposal's, where a record's action sends them
        tables=("traces", "views"),
        hooks=ControllerHooks(),
    ),
    schema="schema.yaml",
)
