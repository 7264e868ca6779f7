"""The Waggle runtime (the paper's fixed runtime around one anonymous local controller): the decision
record and its validator (records.py, admit.py), the trace field (field.py), the candidate-ready gate
(gate.py), the six-part local view (view.py), what a suite's adapter gives it (adapter.py) and the
round it runs (runtime.py). The interface-matched controls (hivebench.agents.nocomm, .nativemsg,
.fixedswarm) are methods on it.

This module is standard library only: the controls' declarations import `WaggleHooks` at parse time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hivebench.method import MethodHooks


class WaggleHooks(MethodHooks):
    """A method on the Waggle runtime runs the suites with a Waggle adapter (`Suite.waggle`)."""

    def suite_problems(self, entry: dict[str, Any], suite: str) -> Iterator[str]:
        from hivebench.registry import SUITE_OBJECTS

        if SUITE_OBJECTS[suite].waggle is None:
            adapted = sorted(name for name, s in SUITE_OBJECTS.items() if s.waggle is not None)
            yield f"kind: the Waggle runtime has no adapter for {suite} (it runs {', '.join(adapted)})"
