"""The `mixed` method: a population of other configured methods, each playing its share (or its
list) of every episode's agents, drawn from the cell's seed (policy.py). A cell holds every member
resolved as it would run alone (`members`), so a change to a member reruns the mixed cells too.

Standard library only: the Snakefile reads this declaration at parse time.
"""

from __future__ import annotations

from typing import Any

from hivebench.method import Method, MethodHooks, MethodImpl

MIXED = "mixed"


class MixedHooks(MethodHooks):
    """A job asks for what its most demanding member asks (each member's own hooks)."""

    def job_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        from hivebench.registry import METHODS

        asked = [METHODS[m["method"]["kind"]].hooks.job_resources(m["method"]["params"]) for m in params["members"]]
        return {key: max(a[key] for a in asked if key in a) for key in {k for a in asked for k in a}}

    def threads(self, params: dict[str, Any]) -> int:
        from hivebench.registry import METHODS

        return max(METHODS[m["method"]["kind"]].hooks.threads(m["method"]["params"]) for m in params["members"])

    def job_inputs(self, params: dict[str, Any]) -> list[str]:
        from hivebench.registry import METHODS

        return [
            path
            for m in params["members"]
            for path in METHODS[m["method"]["kind"]].hooks.job_inputs(m["method"]["params"])
        ]


METHOD = Method(
    name=MIXED,
    impl=MethodImpl("hivebench.agents.mixed.policy:MixedPopulation", version=1, hooks=MixedHooks()),
    schema="schema.yaml",
)
