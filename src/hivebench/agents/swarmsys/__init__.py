"""The `swarmsys` method: SwarmSys (arXiv 2510.10047), the Waggle study's broader Silo-Bench
organisational baseline, clean-room from its paper: explorers, workers and validators matched to
events by their profiles (matching.py), asked in their roles (prompts.py), posting to each event's
participants over Silo-Bench's point-to-point messages (agent.py). Its model calls and tokens are
counted apart from the messages the task delivers.

Standard library only: the Snakefile reads this declaration at parse time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hivebench.method import CellEstimate, Method, MethodImpl
from hivebench.models.hooks import ModelHooks

SUITE = "silobench"  # the one suite it runs: the Waggle study's organisational baseline there


class SwarmSysHooks(ModelHooks):
    def suite_problems(self, entry: dict[str, Any], suite: str) -> Iterator[str]:
        if suite != SUITE:
            yield f"kind: swarmsys is Silo-Bench's organisational baseline: it runs {SUITE} tasks only (not {suite})"

    def estimate(self, shared: dict[str, Any], seeds: int) -> CellEstimate:
        from hivebench.agents.swarmsys.estimate import cell_estimate

        return cell_estimate(shared, seeds)


METHOD = Method(
    name="swarmsys",
    impl=MethodImpl(
        "hivebench.agents.swarmsys.agent:SwarmSys",
        version=1,
        calls_models=True,
        tables=("events",),
        hooks=SwarmSysHooks(),
    ),
    schema="schema.yaml",
)
