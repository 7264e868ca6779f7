"""Silo-Bench: N agents each hold one private shard of the data and must all output the global answer
of one of 30 distributed-computation tasks (aggregation, mesh, global shuffle) after R rounds of
point-to-point messages, broadcasts or a shared key-value store (arXiv 2603.01045). Parse-time part:
standard library only."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from hivebench import compat
from hivebench.compat import Difference
from hivebench.method import MethodImpl
from hivebench.suite import Metric, Suite, TaskHooks, TaskKind, message_cap_problems, sends_classical_messages
from hivebench.suites.silobench.catalogue import BY_ID, selected
from hivebench.suites.silobench.widest import classical_message_chars

PACKAGE = "hivebench.suites.silobench"
# The most agents an episode may have, by what the protocol and topology cost. p2p and broadcast on the
# complete topology: a round can carry N (N - 1) messages, each marking which of the N shards it holds
# (N^3 bytes: 1.7 GB and 20 s a round at N = 800, p2p). The store (always complete) has no such term:
# every agent writes its shards once and every agent tracks which of the N shards it holds (N^2 bytes
# each, as on regular3: 1.3 GB and 20 s at N = 5,000, measured). Degree-three ports: every agent
# tracks every shard's holder (8 N^2 bytes) and the exact diameter is a search from every node. III-30
# holds and multiplies two N x N matrices, also as an oracle.
LARGEST = {"complete": 500, "regular3": 5_000, "store": 5_000}
LARGEST_MATRIX = 500
# the methods that route their own messages to any agent (SwarmSys: to each event's participants), on
# p2p over the complete topology, and need an explorer, a worker and a validator
ROUTERS = ("swarmsys",)
CHANGEABLE = ("III-26",)  # the tasks whose shard the late-counterevidence intervention changes (`change_at`)
# Bytes per episode of `distributed` and `random`, rounded up from their peak memory (3.5 N^3 at N = 300
# on the complete topology, p2p, one round; 155 N^2 at N = 1,500 on regular3, 9 rounds): N^3 for the
# shard rows of a complete round's deliveries, N^2 for an adjacency and every agent's holdings and per
# round for the shard rows kept for the record, and the recorded text: every pass of a shard from one
# agent to another, at the widest shard's characters.
CUBE_BYTES, SQUARE_BYTES, ROUND_BYTES = 4, 64, 16
# Bytes per agent of N of one instance (its shards, public facts and answer) and its recorded answer,
# rounded up from the largest traced peak of generating and solving one (7 KB at N = 5,000 and 20,000:
# III-25, III-27, III-29); every episode holds its instance, an oracle cell nothing else.
INSTANCE_BYTES = 16_384
# Where hivebench's Silo-Bench departs from the reference (arXiv 2603.01045 and its code): each a task
# parameter; `compat: reference` takes the reference's side of every one (the README's table).
DIFFERENCES = (
    Difference(
        "submission",
        "end",
        "any_round",
        "the reference's agents may submit their answer in any round and then stop; hivebench asks every "
        "agent for its answer after round R",
    ),
    Difference(
        "received",
        "window",
        "all",
        "the reference's agents keep their whole conversation; with the LLM method's `history: K` "
        "hivebench's prompt drops what arrived more than K rounds ago",
    ),
    Difference(
        "store_view",
        "whole",
        "calls",
        "the reference's agents list and read the store by tool calls; hivebench shows an LLM agent the "
        "whole store every round",
    ),
)


def applicable(params: dict[str, Any]) -> tuple[Difference, ...]:
    """The differences that can act on a task: none on an oracle (it answers at once), store_view on
    the store alone."""
    if params["oracle"]:
        return ()
    return tuple(d for d in DIFFERENCES if d.key != "store_view" or params["protocol"] == "store")


def idle_rule(params: dict[str, Any], key: str) -> str:
    """Why a difference is refused on a task it cannot act on (`applicable`)."""
    if params["oracle"]:
        return "an oracle answers at once, without rounds (oracle: true)"
    return f"how an LLM agent reads the shared store: it applies to protocol: store (not {params['protocol']})"


def behaviour(params: dict[str, Any]) -> str:
    """A task's rules as its report rows name them (`compat.behaviour`)."""
    return compat.behaviour(params, applicable(params))


class SiloHooks(TaskHooks):
    text_settings = ("received", "store_view")  # an LLM agent's prompt: classical methods read the store directly

    def resolve(self, params: dict[str, Any], base: Path) -> dict[str, Any]:
        """The differences (`compat`) as the cell stores them, less those that cannot act on it (so an
        oracle cell is the same in both modes; one of them given is refused)."""
        return compat.resolve(params, DIFFERENCES, applicable(params), partial(idle_rule, params))

    def members(self, params: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
        """`task: I-01` is one task; a list, a level or `all` one member per ID, named by it."""
        if isinstance(params["task"], str) and selected(params["task"]) == [params["task"]]:
            return None
        return {task: {**params, "task": task} for task in selected(params["task"])}

    def problems(self, params: dict[str, Any]) -> Iterator[str]:
        if params["protocol"] == "store" and params["topology"] != "complete" and not params["oracle"]:
            yield "topology: the shared store reaches every agent; a topology (regular3) applies to p2p and broadcast"
        if "change_at" in params:
            if params["task"] not in CHANGEABLE or params["protocol"] != "p2p" or params["oracle"]:
                where = f"{params['task']}, protocol {params['protocol']}{', oracle' if params['oracle'] else ''}"
                yield f"change_at: the shard change runs {', '.join(CHANGEABLE)} on p2p ports (not {where})"
            elif params["change_at"] >= params["rounds"]:
                last = params["rounds"] - 1
                yield f"change_at: {params['change_at']} is not a communication round after the first (1 .. {last})"
            elif compat.settings(params, DIFFERENCES)["submission"] != "end":
                yield "change_at: needs submission: end (an answer given before the change would never see it)"

    def population_problems(self, params: dict[str, Any], n: int) -> Iterator[str]:
        if params["task"] == "III-30" and n > LARGEST_MATRIX:
            yield f"III-30 multiplies two N x N matrices: at most {LARGEST_MATRIX} agents, got {n:,}"
        if params["oracle"]:
            return
        if n < 2:
            yield f"a Silo-Bench episode needs at least 2 agents, got {n} (single-agent cells: oracle: true)"
        elif params["topology"] == "regular3" and (n < 4 or n % 2):
            yield f"a 3-regular topology needs an even number of agents, at least 4, got {n}"
        elif n > largest(params):
            yield _too_many(params, n)

    def episode_bytes(self, params: dict[str, Any], method: str, n: int) -> int:
        instance = INSTANCE_BYTES * n
        if params["oracle"]:
            return instance  # one agent holding the instance (III-30's matrices are bounded by N)
        if not sends_classical_messages(method, "silobench"):  # whole shards (the Waggle methods pass on the flood's)
            return instance + SQUARE_BYTES * n**2
        protocol, complete, rounds = params["protocol"], params["topology"] == "complete", params["rounds"]
        # shard passes: each agent's own once (store, a complete broadcast), once to each other agent
        # (complete p2p), or every shard once to each of at most 3 neighbours (regular3); and no more
        # text than full messages every round
        passes = (
            n if protocol == "store" or (complete and protocol == "broadcast") else n * n if complete else 3 * n * n
        )
        messages = n * (n - 1) if complete and protocol == "p2p" else 3 * n if protocol == "p2p" else n
        text = min(passes * classical_message_chars(params["task"], n), rounds * messages * params["message_chars"])
        rows = CUBE_BYTES * n**3 if complete and protocol != "store" else 0
        return instance + rows + (SQUARE_BYTES + ROUND_BYTES * rounds) * n**2 + text

    def method_problems(self, params: dict[str, Any], method: str, sizes: list[int]) -> Iterator[str]:
        from hivebench.registry import METHODS  # the registry imports this package: not at import time

        impl = METHODS[method].impl("silobench")
        if "change_at" in params and (impl.reads_text or (impl.calls_models and not impl.classical_messages)):
            # the baselines' holdings carry each shard's version and a newer one replaces the older; a
            # model's words (an LLM agent's messages, SwarmSys's posts) keep a shard as first written
            yield (
                f"change_at: a {method} method passes shards on as text its model writes, which shows them as "
                "they were at first (the change reaches methods whose messages are the baselines' holdings)"
            )
            return
        if method in ROUTERS:
            if params["oracle"] or params["protocol"] != "p2p" or params["topology"] != "complete":
                setting = (
                    "oracle: true"
                    if params["oracle"]
                    else f"protocol: {params['protocol']}, topology: {params['topology']}"
                )
                yield f"{setting}: a {method} method routes its own messages to any agent (p2p, complete topology)"
            elif min(sizes) < 3:
                roles = "an explorer, a worker and a validator"
                yield f"a {method} method needs at least 3 agents ({roles}), got {min(sizes)}"
            return
        if METHODS[method].impl("silobench").adapted and (params["oracle"] or params["protocol"] != "p2p"):
            setting = "oracle: true" if params["oracle"] else f"protocol: {params['protocol']}"
            yield f"{setting}: the Waggle runtime runs Silo-Bench on p2p ports (a method of kind {method} cannot)"
            return
        if params["oracle"]:
            return
        task = params["task"]
        what = f"a {method} message needs to carry one whole shard of {task} ({BY_ID[task].name})"
        need = partial(classical_message_chars, task)
        yield from message_cap_problems(params["message_chars"], method, "silobench", sizes, need, what)

    def agent_steps(self, params: dict[str, Any], n: int) -> int:
        return 1 if params["oracle"] else n * (params["rounds"] + 1)


def largest(params: dict[str, Any]) -> int:
    """The most agents of an episode under the task's protocol and topology (LARGEST)."""
    return LARGEST["store" if params["protocol"] == "store" else params["topology"]]


def _too_many(params: dict[str, Any], n: int) -> str:
    """N over the limit, named by the settings it follows in the config's words (the store's, whose
    topology is always complete; else the protocol's on the topology), with what runs more agents."""
    protocol, topology = params["protocol"], params["topology"]
    if protocol == "store":
        setting, others = "protocol: store", ""
    else:
        setting = f"protocol: {protocol} on topology: {topology}" + (" (the default)" if topology == "complete" else "")
        others = (
            f"; topology: regular3 runs up to {LARGEST['regular3']:,}, protocol: store up to {LARGEST['store']:,}"
            if topology == "complete"
            else ""
        )
    return f"{setting} runs at most {largest(params):,} agents, got {n:,} (docs/limits.md{others})"


SUITE = Suite(
    name="silobench",
    tasks={
        "silobench": TaskKind(
            f"{PACKAGE}.task:SiloTask", version=2, hooks=SiloHooks(), tables=("messages",), medium=True
        )
    },
    methods={
        "distributed": MethodImpl(f"{PACKAGE}.baselines:Distributed", version=1, classical_messages=True),
        "local": MethodImpl(f"{PACKAGE}.baselines:LocalOnly", version=1),
        "random": MethodImpl(f"{PACKAGE}.baselines:RandomGossip", version=1, classical_messages=True),
    },
    metrics=(Metric("exact"), Metric("success"), Metric("partial")),
    schema="schema.yaml",
    text_view=f"{PACKAGE}.text:SiloView",
    adversary=f"{PACKAGE}.adversary:SiloAdversary",
    agent_metrics=("exact", "partial"),
    example={
        "task": {"kind": "silobench", "task": "III-24", "protocol": "broadcast", "rounds": 2},
        "method": "random",
        "population": 8,
    },
    report=f"{PACKAGE}.report:render",
    viewer=f"{PACKAGE}.view:scene",
    report_files=(
        "silobench.csv",
        "silobench.md",
        "silobench.tex",
        "silobench_tasks.csv",
        "silobench_scaling.html",
        "silobench_scaling.png",
    ),
    population_tables=("populations",),
    waggle=f"{PACKAGE}.waggle:SiloAdapter",
)
