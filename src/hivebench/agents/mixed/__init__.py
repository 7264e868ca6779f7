"""The `mixed` method: a population of other configured methods, each playing its share (or its
list) of every episode's agents, drawn from the cell's seed (policy.py). A cell holds every member
resolved as it would run alone (`members`), so a change to a member reruns the mixed cells too.

Standard library only: the Snakefile reads this declaration at parse time.
"""

from __future__ import annotations

from typing import Any

from hivebench.method import CellEstimate, Method, MethodHooks, MethodImpl

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

    def estimate(self, shared: dict[str, Any], seeds: int) -> CellEstimate | None:
        """Each member's estimate as if it played every agent, scaled by the share it plays (so
        approximate); None where no member calls a model."""
        from hivebench.registry import METHODS

        parts = []
        for member in shared["method"]["params"]["members"]:
            method = member["method"]
            one = METHODS[method["kind"]].hooks.estimate({**shared, "method": method}, seeds)
            if one is not None:
                parts.append(
                    (one, share_of(member["share"], shared["method"]["params"]["members"], shared["population"]))
                )
        if not parts:
            return None
        return CellEstimate(
            model=", ".join(dict.fromkeys(one.model for one, _ in parts)),
            calls=sum(round(one.calls * share) for one, share in parts),
            input_tokens=sum(round(one.input_tokens * share) for one, share in parts),
            output_tokens_max=sum(round(one.output_tokens_max * share) for one, share in parts),
            approximate=True,
            memory_mb=max((one.memory_mb for one, _ in parts if one.memory_mb is not None), default=None),
            again_input_tokens=sum(round(one.again_input_tokens * share) for one, share in parts),
            resends=max(one.resends for one, _ in parts),
            server=any(one.server for one, _ in parts),
        )


def member_cell(cell: dict[str, Any], member: dict[str, Any]) -> dict[str, Any]:
    """A member's cell within a mixed population's: the member's method, named `<mixed>/<member>` (its
    response cache lies in a folder of that name beside the mixed cell's)."""
    method = member["method"]
    return {**cell, "method": {**method, "name": f"{cell['method']['name']}/{method['name']}"}}


def members_of(cell: dict[str, Any]) -> list[dict[str, Any]]:
    """A cell's members' cells, none for a method that is not a mixed population."""
    if cell["method"]["kind"] != MIXED:
        return []
    return [member_cell(cell, member) for member in cell["method"]["params"]["members"]]


def share_of(share: Any, members: list[dict[str, Any]], n: int) -> float:
    """The part of an episode's agents a member plays: its share, its listed agents, or the rest."""
    if isinstance(share, (int, float)):
        return float(share)
    if share != "rest":
        return len(share) / n
    return 1 - sum(len(m["share"]) for m in members if m["share"] != "rest") / n


METHOD = Method(
    name=MIXED,
    impl=MethodImpl("hivebench.agents.mixed.policy:MixedPopulation", version=2, hooks=MixedHooks()),
    schema="schema.yaml",
)
