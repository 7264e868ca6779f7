"""The one synchronous round loop of every suite: a job block's cells played in lockstep, with the
method's policy built as its implementation asks."""

from __future__ import annotations

from functools import partial
from typing import Any

from hivebench.agents.mixed import MIXED
from hivebench.agents.mixed.policy import add_members, mixed_policy
from hivebench.engine.api import EpisodeRecord, Policy
from hivebench.models.scripted import RepliesError
from hivebench.paths import calls_path
from hivebench.perturb import in_transit
from hivebench.perturb.agents import Gate, GatedPolicy, GatedView, add_columns
from hivebench.perturb.membership import Membership
from hivebench.perturb.transit import UnreliableMedium
from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind
from hivebench.seeding import Streams
from hivebench.suite import load
from hivebench.waggle.runtime.forger import Forger
from hivebench.waggle.runtime.lossy import LossyField


def make_policy(
    cells: list[dict[str, Any]],
    streams: Streams | None = None,
    target: Any = None,
    gate: Gate | None = None,
    live: Any = None,
    forge: Gate | None = None,
) -> Policy:
    """The cells' method as it runs their suite, with one random stream per cell (`streams`, made from
    their seeds unless given); a method that calls models also gets each cell's response cache, one
    that reads text the suite's text view, one on the Waggle runtime the suite's adapter. `target`: a
    policy class to build in the method's place, with what the method is given (a check's controller).
    `gate`: the cells' faulty and sleeping agents (hivebench.perturb.agents), held to the idle action;
    `live`: who of the agents the method's view or adapter shows it as live (a mixed population's member:
    its own agents); `forge`: the gate whose adversaries forge traces on the Waggle runtime (`gate`'s
    unless given). A mixed population builds each member's policy so (hivebench.agents.mixed)."""
    first = cells[0]
    if first["method"]["kind"] == MIXED and target is None:
        return gated(mixed_policy(cells, gate, make_policy), cells, gate)
    live, forge = live or gate, forge or gate
    impl = METHODS[first["method"]["kind"]].impl(first["suite"])
    extra: dict[str, Any] = {}
    if impl.calls_models:
        extra["cache_paths"] = [calls_path(cell) for cell in cells]
    text_view = load(SUITE_OBJECTS[first["suite"]].text_view)
    if impl.reads_text:
        extra["view"] = text_view() if live is None else GatedView(text_view(), live)
    if impl.adapted:
        adapter = SUITE_OBJECTS[first["suite"]].waggle
        if adapter is None:
            raise ValueError(
                f"{first['method']['kind']} runs on the Waggle runtime, which has no adapter for {first['suite']}"
            )
        extra["adapter"] = load(adapter)() if live is None else GatedView(load(adapter)(), live)
    streams = streams or Streams([cell["seed"] for cell in cells], policy_stream(first))
    policy = (target or impl.load())(first["method"]["params"], streams, **extra)
    if not isinstance(policy, Policy):  # before the block plays, rather than when its records are made
        raise TypeError(f"{target or impl.target} is not a hivebench.engine.api.Policy (decide, columns, summary)")
    medium = first.get("perturbation", {}).get("medium")
    if medium is not None and impl.adapted and (medium["loss"] or medium.get("expiry")):
        policy.make_field = partial(
            LossyField, settings=medium, streams=Streams([c["seed"] for c in cells], "perturbation/medium/field")
        )
    if impl.adapted and getattr(live, "mine", None) is not None:  # a mixed population's member on the runtime
        policy.own = live.mine
    if forge is not None and forge.adversarial and impl.adapted:  # on the Waggle runtime: forged traces
        policy.forger = Forger(lambda: forge.now.adversarial, len(cells), first["population"])
    return gated(policy, cells, gate)


def gated(policy: Policy, cells: list[dict[str, Any]], gate: Gate | None) -> Policy:
    """The policy with the gate's idle, stuck, random and adversarial agents (the suite's adversary)."""
    if gate is None:
        return policy
    suite = SUITE_OBJECTS[cells[0]["suite"]]
    adversary = None
    if gate.adversarial and suite.adversary is not None:
        adversary = load(suite.adversary)(gate.streams.child("faults/adversary"))
    return GatedPolicy(policy, gate, load(suite.text_view)(), adversary)


def policy_stream(cell: dict[str, Any]) -> str:
    """The name of a cell's policy stream: each replicate of a method draws its own numbers (the
    task's streams, its initial state among them, are the seed's alone, so replicates stay matched)."""
    return "policy" if "replicate" not in cell else f"policy/replicate-{cell['replicate']}"


def play_block(cells: list[dict[str, Any]]) -> list[EpisodeRecord]:
    """Play cells that differ only in their seed to the end, in lockstep: each round, observe every
    agent of every episode, decide for all at once, apply. One record per cell. Under a perturbation
    the task's medium and the method's policy are wrapped (hivebench.perturb), drawing from the
    streams `perturbation/...` of the cells' seeds."""
    first, seeds = cells[0], [cell["seed"] for cell in cells]
    task = make_task(first)
    task.reset(seeds)
    perturbation = first.get("perturbation", {})
    streams = Streams(seeds, "perturbation")
    if in_transit(perturbation):
        if not hasattr(task, "medium"):
            raise ValueError(f"perturbation {perturbation['name']!r}: task {first['task']['name']!r} has no medium")
        task.medium = UnreliableMedium(task.medium, perturbation["medium"], streams.child("medium"))
    gated_parts = {"faults", "activation", "clocks", "churn"} & set(perturbation)
    gate = Gate(perturbation, task.n, streams) if gated_parts else None
    if gate is not None and gate.churn and hasattr(task, "medium"):
        task.medium = Membership(task.medium, gate)  # nothing reaches an agent away from the swarm
    try:
        records = run(task, make_policy(cells, gate=gate))
    except RepliesError as exc:  # a scripted file too short: named by its config key too
        raise RepliesError(f"{model_key(first)}: {exc}") from None
    if gate is not None:
        add_columns(records, gate)
    if first["method"]["kind"] == MIXED:
        add_members(records, cells, SUITE_OBJECTS[first["suite"]].agent_metrics)
    return records


def model_key(cell: dict[str, Any]) -> str:
    """The config key of a cell's model: its method's, with the replicate where it has one."""
    key = f"methods.{cell['method']['name']}.model"
    return key if "replicate" not in cell else f"{key} (replicate {cell['replicate']})"


def make_task(cell: dict[str, Any]) -> Any:
    """The cell's task, not yet reset."""
    return task_kind(cell["task"]["kind"]).load()(cell["task"]["params"], cell["population"])


def run(task: Any, policy: Policy) -> list[EpisodeRecord]:
    """Play a reset task's episodes to the end under the policy: one record per episode, with the
    policy's columns, summary fields and side tables."""
    while not task.done:
        task.step(policy.decide(task.observe()))
    records = task.record()
    for episode, record in enumerate(records):
        record.agents.update(policy.columns(episode))
        record.summary.update(policy.summary(episode))
        record.tables.update(policy.tables(episode))
    return records


def play(cell: dict[str, Any]) -> EpisodeRecord:
    """Play one cell to the end."""
    return play_block([cell])[0]
