"""The `ring` suite: n agents on a cycle, each holding a bit, see their own and their two neighbours'
bits and should end on one bit. Declared with the standard library alone, as hivebench asks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hivebench.method import MethodImpl
from hivebench.suite import Metric, Suite, TaskHooks, TaskKind


class RingHooks(TaskHooks):
    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        if n < 3:
            yield f"a ring needs at least 3 agents, got {n}"

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        return n * params["rounds"]


SUITE = Suite(
    name="ring",
    tasks={"ring_majority": TaskKind("hivebench_ring.task:RingTask", version=1, hooks=RingHooks())},
    methods={
        "majority": MethodImpl("hivebench_ring.baselines:Majority", version=1),
        "random": MethodImpl("hivebench_ring.baselines:RandomBits", version=1),
    },
    metrics=(Metric("agreement"),),
    schema="schema.yaml",
    text_view="hivebench_ring.text:RingView",
    report="hivebench_ring.report:render",
    example={"task": {"kind": "ring_majority", "rounds": 4}, "method": "random", "population": 6},
)
