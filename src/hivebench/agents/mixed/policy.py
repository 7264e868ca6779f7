"""A mixed population at run time: which member plays each agent (drawn from the cell's seed, stream
`mixed`), each member's own policy built as it would run alone but live only on its agents (a model
member still asks all its agents in one batch per round), and their actions combined agent by agent
(hivebench.perturb.actions). Members on the Waggle trace field share one field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.agents.mixed import member_cell
from hivebench.engine.api import EpisodeRecord, Policy
from hivebench.perturb.actions import merge
from hivebench.seeding import Streams
from hivebench.waggle.runtime.shared import share_field

REST = "rest"


def owners(members: list[dict[str, Any]], n: int, streams: Streams) -> np.ndarray:
    """(episodes * n,) the member playing each agent: shares rounded to whole agents by largest
    remainder and dealt out in an order drawn per episode, or the agents each member lists (and the
    others to the member that says `rest`)."""
    shares = [m["share"] for m in members]
    episodes = len(streams)
    if all(isinstance(s, (int, float)) for s in shares):
        exact = np.array(shares, dtype=float) * n
        counts = np.floor(exact).astype(int)
        counts[np.argsort(-(exact - counts), kind="stable")[: n - counts.sum()]] += 1
        order = np.argsort(streams.random((episodes * n,)).reshape(episodes, n), axis=1, kind="stable")
        owner = np.empty((episodes, n), dtype=np.int64)
        np.put_along_axis(owner, order, np.repeat(np.arange(len(members)), counts)[None, :], axis=1)
        return owner.ravel()
    owner = np.full(n, -1, dtype=np.int64)
    for i, share in enumerate(shares):
        if share != REST:
            if max(share) >= n:
                raise ValueError(
                    f"members.{members[i]['method']['name']}: agent {max(share)} is not one of the {n} agents"
                )
            owner[share] = i
    if REST in shares:
        owner[owner < 0] = shares.index(REST)
    if (owner < 0).any():
        raise ValueError(
            f"members: agents {np.flatnonzero(owner < 0).tolist()} of {n} are nobody's (give one member `rest`)"
        )
    return np.tile(owner, episodes)


def add_members(records: list[EpisodeRecord], cells: list[dict[str, Any]], metrics: tuple[str, ...]) -> None:
    """Each episode's `member` column (the member playing each agent, over its own states) and, for
    each of the suite's per-agent `metrics`, its mean over each member's agents at the last state
    (`<metric>@<member>` in the summary)."""
    members = cells[0]["method"]["params"]["members"]
    n = cells[0]["population"]
    owner = owners(members, n, Streams([cell["seed"] for cell in cells], "mixed")).reshape(len(cells), n)
    names = np.array([m["method"]["name"] for m in members])
    for own, record in zip(owner, records):
        states = len(record.agents["step"]) // n
        record.agents["member"] = pa.array(names[np.tile(own, states)])
        for metric in metrics:
            last = np.asarray(
                pa.array(record.agents[metric]).slice((states - 1) * n, n).to_numpy(zero_copy_only=False), dtype=float
            )
            for i, name in enumerate(names):
                record.summary[f"{metric}@{name}"] = float(np.nanmean(last[own == i])) if (own == i).any() else None


class Members:
    """Who is live for one member's policy: its agents, among those a perturbation lets act."""

    def __init__(self, mine: np.ndarray, n: int, outer: Any):
        self.mine, self.n, self.outer = mine, n, outer

    @property
    def acting(self) -> np.ndarray:
        return self.mine if self.outer is None else self.mine & self.outer.acting

    @property
    def lost(self) -> np.ndarray | None:
        """Its agents' pending calls lost this round (hivebench.perturb.agents.Gate.lost)."""
        lost = None if self.outer is None else self.outer.lost
        return None if lost is None else lost & self.mine


def mixed_policy(cells: list[dict[str, Any]], gate: Any, build: Callable[..., Policy]) -> Policy:
    """The cells' mixed population (`build`: hivebench.engine.loop.make_policy)."""
    first, seeds = cells[0], [cell["seed"] for cell in cells]
    members = first["method"]["params"]["members"]
    n = first["population"]
    owner = owners(members, n, Streams(seeds, "mixed"))
    policies = []
    for i, member in enumerate(members):
        method = member["method"]
        own = [member_cell(cell, member) for cell in cells]
        # A counterfactual's member that plays the cell's own method keeps the stream it drew from alone.
        stream = member.get("stream") or ("policy" if len(members) == 1 else f"policy/{method['name']}")
        policies.append(build(own, Streams(seeds, stream), live=Members(owner == i, n, gate), forge=gate))
    share_field(policies, Streams(seeds, "policy").child("field"))  # members on the trace field read one another's
    return MixedPopulation(policies, [m["method"]["name"] for m in members], owner, n)


class MixedPopulation(Policy):
    """Each member's policy decides; each agent takes its own member's action."""

    def __init__(self, policies: list[Policy], names: list[str], owner: np.ndarray, n: int):
        self.policies, self.names, self.owner, self.n = policies, names, owner, n

    def decide(self, observation: Any) -> Any:
        actions = None
        for i, policy in enumerate(self.policies):
            decided = policy.decide(observation)
            actions = decided if actions is None else merge(actions, decided, self.owner == i)
        return actions

    def columns(self, episode: int) -> dict[str, Any]:
        """Each member's columns on its own agents (null on the others)."""
        own = self.owner[episode * self.n : (episode + 1) * self.n]
        parts = [policy.columns(episode) for policy in self.policies]
        columns: dict[str, Any] = {}
        for name in dict.fromkeys(key for part in parts for key in part):
            values = [part.get(name) for part in parts]
            if len(values) == 1:
                columns[name] = values[0]
                continue
            combined: list[Any] = [None] * len(next(v for v in values if v is not None))
            for i, value in enumerate(values):
                if value is not None:
                    given = value.to_pylist() if isinstance(value, (pa.Array, pa.ChunkedArray)) else list(value)
                    for row in np.flatnonzero(np.tile(own == i, len(combined) // self.n)).tolist():
                        combined[row] = given[row]
            columns[name] = pa.array(combined)
        return columns

    def summary(self, episode: int) -> dict[str, Any]:
        """The members' summaries: a count two members both keep (calls, tokens, counted over each
        one's own agents) is their sum; a field of the block's own (a policy's `block_summary`) the
        first member's."""
        summary: dict[str, Any] = {}
        for policy in self.policies:
            shared = getattr(policy, "block_summary", ())
            for key, value in policy.summary(episode).items():
                both = key in summary and isinstance(value, (int, float)) and isinstance(summary[key], (int, float))
                summary[key] = summary[key] + value if both and key not in shared else summary.get(key, value)
        return summary

    def tables(self, episode: int) -> dict[str, Any]:
        tables: dict[str, Any] = {}
        for policy in self.policies:
            for name, table in policy.tables(episode).items():
                tables.setdefault(name, []).append(table)
        return {name: parts[0] if len(parts) == 1 else _concat(parts) for name, parts in tables.items()}


def _concat(parts: list[Any]) -> Callable[[], pa.Table]:
    return lambda: pa.concat_tables([p if isinstance(p, pa.Table) else p() for p in parts], promote_options="default")
