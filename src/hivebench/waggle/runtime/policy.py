"""The Waggle runtime: everything around the local controller, fixed across a study. Each round it
asks the suite's adapter for every agent's private proposal and own evidence, delivers the trace
field's staged writes over the contacts after the environment update, has the law (a control's rule,
or a controller reading six-part local views) decide one record per agent, admits the records
(hivebench.waggle.runtime.admit), compiles them into native actions, stages their deposits and keeps
each agent's commitment.

"The runtime deterministically resolves the concrete native move from the validated record and local
state" (the fixed native action compilation):

- WAIT: the wait action; PRIVATE: the record's task action;
- FIELD: along the heading of the agent's commitment on its incident channels (the support-weighted
  sum of their directions), or the task action where there is none or the way is shut;
- AUTO (no intent): FIELD when the agent holds a commitment and its proposal follows no evidence of its
  own, else the task action.

A commitment decays: its confidence falls by one every `commitment.decay_rounds` rounds after the
round it was made or last renewed, and it ends when it would fall below zero. Verified conflict on its
claim reopens it at once: the agent's own view refuting the claim, or a challenge trace on one of its
channels (the validator admits a challenge only from a writer that verified it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.api import Policy
from hivebench.engine.block import Block
from hivebench.ids import canonical_json
from hivebench.seeding import Streams
from hivebench.waggle.runtime import gate as gates
from hivebench.waggle.runtime.adapter import Adapter, Evidence, Proposal
from hivebench.waggle.runtime.admit import Admitted, admit, keys
from hivebench.waggle.runtime.field import WIDTH, WRITTEN, Incident, TraceField
from hivebench.waggle.runtime.formal import COUNTERS as FORMAL_COUNTERS
from hivebench.waggle.runtime.formal import Formal, Settings, Writes
from hivebench.waggle.runtime.records import (
    AUTO,
    CHALLENGE,
    CLAIM,
    COMPASS,
    CONFLICT,
    FIELD,
    MODES,
    NONE,
    WAIT,
    Decisions,
    from_json,
)
from hivebench.waggle.runtime.view import budget_bin, local_view

# The paper's Table 11 counters, in its order (the formal system counts them, and the round what it kept)
TABLE_11 = (
    "candidate_writes",
    "writes_kept",
    "deposit_candidates",
    "spatial_repeats_blocked",
    "refreshes",
    "challenges",
    "unverified_challenge_candidates",
    "unverified_challenges_blocked",
    "relay_candidates_route_active",
    "relays_silenced",
)
# The telemetry every episode's summary holds: Table 11's, the formal system's other counts, the round's
COUNTERS = (
    *TABLE_11,
    *(name for name in FORMAL_COUNTERS if name not in TABLE_11),
    "verified_challenges",
    "commits",
    "reopenings",
    "commitments_expired",
    "invalid_records",
    "native_deliveries",
    "delivered_frames",
)
# What an episode with the late-counterevidence intervention also counts, from its round on
AFTER_INTERVENTION = ("stale_traces_held", "post_conflict_frames")


class Context:
    """What a law decides from in one round (every agent of the block)."""

    def __init__(
        self,
        runtime: WaggleRuntime,
        observation: Any,
        proposal: Proposal,
        evidence: Evidence,
        incident: Incident,
        running: np.ndarray,
    ):
        self.runtime, self.observation = runtime, observation
        self.proposal, self.evidence, self.incident = proposal, evidence, incident
        self.live = runtime.adapter.live(observation)
        self.running = running  # (episodes,) whose episode this round belongs to
        self.step, rounds = runtime.adapter.budget(observation)
        self.rounds = np.broadcast_to(np.asarray(rounds), self.live.shape)  # per agent
        self.frames = np.zeros(0, dtype=np.int64)  # delivered this round: sender * agents + receiver

    def refutes(self, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """Per (agent, claim): whether the agent's own view refutes the claim (verified conflict)."""
        if not len(agent):
            return np.zeros(0, dtype=bool)
        return self.runtime.adapter.refutes(self.observation, agent, claim)

    def count(self, name: str, agents: np.ndarray | list[int]) -> None:
        """Add one to an episode's counter for each of `agents` (block agents, repeats counted; a mixed
        population's member counts its own agents alone)."""
        agents = np.asarray(agents, dtype=np.int64)
        if self.runtime.own is not None:
            agents = agents[self.runtime.own[agents]]
        self.runtime.counters[name] += self.runtime.block.per_episode(agents=agents)


@dataclass(frozen=True)
class Draft:
    """What a law proposes in one round: the records (their deposits aside) and the candidate writes,
    each agent's in its order of preference (a record's deposit, for a law that writes one)."""

    decisions: Decisions
    writes: Writes


class WaggleRuntime(Policy):
    """A method on the Waggle runtime, talking through `medium`: silent, native (the task's own
    messages) or field (the trace field); `law` makes each round's records."""

    medium = "silent"

    @property
    def field(self) -> bool:
        return self.medium == "field"

    # what a perturbation sets (hivebench.perturb): adversarial agents' forged traces, an unreliable field
    forger: Any = None
    make_field: Any = TraceField
    # what a mixed population sets (hivebench.agents.mixed): the agents this member plays, (agents,) bool
    own: np.ndarray | None = None
    block_summary = ("intervention_round",)  # the block's, not its agents': a mixed population keeps one

    def __init__(self, params: dict[str, Any], rng: Streams, adapter: Adapter):
        self.params, self.rng, self.adapter = params, rng, adapter
        self.block: Block | None = None

    def law(self, context: Context) -> Decisions:
        return Decisions.private(context.proposal.action)

    def draft(self, context: Context) -> Draft:
        """The round's records and candidate writes: by default the law's records, each one's deposit
        its only candidate."""
        decisions = self.law(context)
        return Draft(decisions, Writes.of(decisions))

    def _start(self, observation: Any) -> None:
        agents = len(self.adapter.live(observation))
        self.block = Block(agents // len(self.rng), len(self.rng))
        self.adapter.start(observation, self.rng.seeds, self.rng.child("adapter"), self.params)
        self.trace_field = (
            self.make_field(self.block, self.rng.child("field"), self.adapter.most_contacts(observation))
            if self.field
            else None
        )
        self.formal = Formal(Settings.of(self.params["formal"])) if self.field else None
        self.commitment = np.full((agents, 2), NONE, dtype=np.int64)  # claim, confidence
        self.renewed = np.zeros(agents, dtype=np.int64)  # the round the commitment was last made or renewed
        self.counters = {name: np.zeros(self.block.episodes, dtype=np.int64) for name in COUNTERS + AFTER_INTERVENTION}
        self.intervention = self.adapter.intervention(observation)
        self.sent_intent = np.zeros(agents, dtype=np.int64)  # each agent's proposal in the round it last sent
        self.modes: list[np.ndarray] = []  # per round, each agent's mode (-1: no decision)
        self.incident_sizes: list[np.ndarray] = []
        self.running: list[np.ndarray] = []  # per round, (episodes,) whose episode it belongs to

    def decide(self, observation: Any) -> Any:
        if self.block is None:
            self._start(observation)
        adapter = self.adapter
        proposal = adapter.proposal(observation, self.medium)
        evidence = adapter.evidence(observation)
        running = adapter.running(observation)
        incident = self._update(observation, running)
        context = Context(self, observation, proposal, evidence, incident, running)
        self._count_deliveries(context)
        if self.intervened(context):  # traces written before the counterevidence, still held
            context.count("stale_traces_held", incident.receiver[incident.rows[:, WRITTEN] < self.intervention])
        self._reopen(context)
        decisions = self._formal(context, self.draft(context))
        if self.forger is not None:  # an adversary's forged traces (hivebench.waggle.runtime.forger)
            decisions = self.forger.forge(context, decisions)
        admitted = self._admit(context, decisions)
        action = self._compile(context, admitted.decisions)
        self._commit(context, admitted.decisions)
        live = context.live
        mode = np.where(live, admitted.mode, -1)
        self.modes.append(mode)
        self.running.append(context.running)
        self.incident_sizes.append(np.bincount(incident.receiver, minlength=len(live)).astype(np.int16))
        d = admitted.decisions
        writers = np.flatnonzero(d.deposits & live)
        context.count("writes_kept", writers)
        challengers = writers[admitted.mode[writers] == CHALLENGE]  # a relayed one too: its label
        context.count("challenges", challengers)
        context.count("verified_challenges", challengers[context.refutes(challengers, d.deposit[challengers, CLAIM])])
        context.count("invalid_records", np.flatnonzero(admitted.invalid & live))
        if self.trace_field is not None:
            self.trace_field.send(context.step, (writers, d.deposit[writers]))
        messages = d.response if self.medium == "native" else None
        if messages is not None:
            messages = pa.array(np.where(live, messages.to_numpy(zero_copy_only=False), None), pa.string())
        self.sent_intent = proposal.action.copy()  # what this round's frames carry to their receivers
        return adapter.act(observation, action, messages, incident)

    def _formal(self, context: Context, draft: Draft) -> Decisions:
        """The draft's records with the formal system applied: each agent's one trace, the first of its
        candidates that passes, and its commitment where the gate and its own view let it through (no
        trace field: the records as drafted)."""
        decisions = draft.decisions
        if self.formal is None:
            return decisions
        decisions = replace(
            decisions, deposit=self.formal.choose(context, draft.writes), commit=decisions.commit.copy()
        )
        self.formal.commitment(context, decisions)
        return decisions

    def _count_deliveries(self, context: Context) -> None:
        """Receiver-delivered messages this round, none to an episode that has ended: the task's own,
        and frames (a sender's task message and trace to one receiver in one round are one frame), kept
        as `context.frames` (sender * agents + receiver, sorted) for the views that list them."""
        sender, receiver = self.adapter.heard(context.observation)
        mine = context.running[receiver // self.block.n]
        sender, receiver = sender[mine], receiver[mine]
        context.count("native_deliveries", receiver)
        if self.trace_field is not None:
            arrived = self.trace_field.arrived
            sender = np.concatenate([sender, arrived[:, 1]])
            receiver = np.concatenate([receiver, arrived[:, 0]])
        context.frames = np.unique(sender.astype(np.int64) * self.block.agents + receiver)
        context.count("delivered_frames", context.frames % self.block.agents)
        if 0 <= self.intervention < context.step:  # sent once the counterevidence was there to see
            context.count("post_conflict_frames", context.frames % self.block.agents)

    def intervened(self, context: Context) -> bool:
        """Whether this round has the task's late counterevidence (from its intervention round on)."""
        return 0 <= self.intervention <= context.step

    def _update(self, observation: Any, running: np.ndarray) -> Incident:
        """The field after this local update (empty without one)."""
        if self.trace_field is None:
            return Incident(np.zeros((0, WIDTH), dtype=np.int64))
        return self.trace_field.deliver(self.adapter.contacts(observation), running)

    def _holds(self, agent: np.ndarray, handle: np.ndarray) -> np.ndarray:
        """Per (agent, handle): whether the agent holds a channel of that handle."""
        if self.trace_field is None:
            return np.zeros(len(agent), dtype=bool)
        field, agents = self.trace_field, self.block.agents
        return np.isin(keys(agent, handle), keys(field.pairs // agents, field.handles))

    def _admit(self, context: Context, decisions: Decisions) -> Admitted:
        return admit(
            decisions,
            context.proposal.action,
            self.adapter.legal(context.observation),
            context.evidence,
            context.incident,
            lambda agent, claim: self.adapter.refutes(context.observation, agent, claim),
            self._holds,
        )

    def _reopen(self, context: Context) -> None:
        """Verified conflict on a commitment reopens it; one for a claim the agent would no longer move
        for ends."""
        held = self._held(context)
        if not len(held):
            return
        claim = self.commitment[held, 0]
        rows, challenged = context.incident.traces, context.incident.traces[:, CONFLICT] > 0
        conflicted = np.isin(keys(held, claim), keys(context.incident.receiver[challenged], rows[challenged, CLAIM]))
        refuted = self.adapter.refutes(context.observation, held, claim) | conflicted
        unwanted = ~self.adapter.wants(context.observation, held, claim)
        context.count("reopenings", held[refuted])
        self.commitment[held[refuted | unwanted]] = NONE

    def _held(self, context: Context) -> np.ndarray:
        """The agents that hold a commitment, in episodes that go on (an ended one's stay as they were)."""
        held = np.flatnonzero(self.commitment[:, 0] != NONE)
        return held[context.running[held // self.block.n]]

    def _commit(self, context: Context, d: Decisions) -> None:
        """The round's commitments made or renewed; every other one decays, and ends below zero."""
        committing = (d.commit[:, 0] != NONE) & context.live
        new = np.flatnonzero(committing & (self.commitment[:, 0] != d.commit[:, 0]))
        context.count("commits", new)
        self.commitment[committing] = d.commit[committing]
        self.renewed[committing] = context.step
        held = np.setdiff1d(self._held(context), np.flatnonzero(committing))
        if not len(held):
            return
        decay = int(self.params["commitment"]["decay_rounds"])
        falls = held[(context.step - self.renewed[held]) % decay == 0]
        self.commitment[falls, 1] -= 1
        ended = falls[self.commitment[falls, 1] < 0]
        context.count("commitments_expired", ended)
        self.commitment[ended] = NONE

    def _compile(self, context: Context, d: Decisions) -> np.ndarray:
        """The native actions of the admitted records (the fixed compilation)."""
        action = d.action.copy()
        action[d.intent == WAIT] = self.adapter.wait
        commitment = np.where((d.commit[:, 0] != NONE)[:, None], d.commit, self.commitment)
        field = (d.intent == FIELD) | ((d.intent == AUTO) & (commitment[:, 0] != NONE) & ~context.proposal.route)
        field &= commitment[:, 0] != NONE
        movers = np.flatnonzero(field)
        if len(movers):
            heading = self._heading(context.incident, movers, commitment[movers, 0])
            towards = self.adapter.towards(context.observation, movers, heading)
            towards = np.where((heading == 0).all(axis=1), -1, towards)
            action[movers] = np.where(towards >= 0, towards, action[movers])
        return action

    @staticmethod
    def _heading(incident: Incident, agents: np.ndarray, claims: np.ndarray) -> np.ndarray:
        """(agents, 2): the support-weighted sum of the directions of each agent's incident traces of its claim."""
        grouped = gates.claims(incident.receiver, incident.traces)
        out = np.zeros((len(agents), 2))
        if not len(grouped.agent):
            return out
        found = np.searchsorted(keys(grouped.agent, grouped.claim), keys(agents, claims))
        found = np.minimum(found, len(grouped.agent) - 1)
        hit = (grouped.agent[found] == agents) & (grouped.claim[found] == claims)
        out[hit] = grouped.heading[found[hit]]
        return out

    def own_rounds(self, per_round: Any, episode: int) -> list[Any]:
        """One episode's agents' part of each round it ran in (`per_round[t]`: the block's agents)."""
        own = slice(episode * self.block.n, (episode + 1) * self.block.n)
        return [values[own] for values, running in zip(per_round, self.running) if running[episode]]

    def columns(self, episode: int) -> dict[str, Any]:
        """Per (state, agent): the mode of the record that led to the state ("" at state 0 and for an
        agent without a decision) and how many traces it held when it decided; with the field, how
        many traces it wrote in that round and how many of that round's traces reached it."""
        n = self.block.n

        def by_state(per_round: Any, first: int, dtype: type) -> np.ndarray:
            return np.concatenate([np.full(n, first, dtype), *self.own_rounds(per_round, episode)]).astype(dtype)

        modes = by_state(self.modes, -1, np.int32)
        columns: dict[str, Any] = {
            "mode": pa.DictionaryArray.from_arrays(pa.array(modes + 1), pa.array(["", *MODES])),
            "incident": by_state(self.incident_sizes, 0, np.int16),
        }
        if self.trace_field is not None:
            traffic = self.trace_field.traffic(len(self.running))
            columns["traces_sent"] = by_state(traffic["sent"], 0, np.int16)
            columns["traces_heard"] = by_state(traffic["received"], 0, np.int16)
        return columns

    def summary(self, episode: int) -> dict[str, Any]:
        n = self.block.n
        counts = {name: int(values[episode]) for name, values in self.counters.items() if name in COUNTERS}
        if self.intervention >= 0:  # per agent, from the intervention round on
            counts |= {
                "intervention_round": self.intervention,
                "stale_field_burden": float(self.counters["stale_traces_held"][episode] / n),
                "post_conflict_traffic": float(self.counters["post_conflict_frames"][episode] / n),
            }
        if self.trace_field is not None:
            counts |= self.trace_field.counts(episode)
        if self.forger is not None:
            counts |= self.forger.summary(episode)
        own = self.own_rounds(self.modes, episode)
        decided = np.concatenate(own) if own else np.zeros(0, dtype=np.int64)
        per_mode = np.bincount(decided[decided >= 0], minlength=len(MODES))
        return {
            **counts,
            **{f"mode_{mode}": int(count) for mode, count in zip(MODES, per_mode)},  # records by derived mode
            "delivered_per_agent": counts["delivered_frames"] / self.block.n,
            "model_calls": 0,
            "model_tokens": 0,
        }

    def tables(self, episode: int) -> dict[str, Any]:
        return self.trace_field.tables(episode) if self.trace_field is not None else {}


def private_evidence(context: Context) -> dict[int, list[dict[str, Any]]]:
    """Per agent, its own evidence as its view shows it: each claim it sees ({claim, direction?},
    nearest of what it wants first), then each incident claim its own view refutes ({claim, refuted})."""
    out: dict[int, list[dict[str, Any]]] = {}
    ev = context.evidence
    for agent, claim, direction in zip(ev.agent.tolist(), ev.claim.tolist(), ev.direction.tolist()):
        item: dict[str, Any] = {"claim": claim}
        if direction != NONE:
            item["direction"] = COMPASS[direction]
        out.setdefault(agent, []).append(item)
    held = np.unique(np.stack([context.incident.receiver, context.incident.traces[:, CLAIM]], axis=1), axis=0)
    if len(held):
        refuted = context.runtime.adapter.refutes(context.observation, held[:, 0], held[:, 1])
        for agent, claim in held[refuted].tolist():
            out.setdefault(agent, []).append({"claim": claim, "refuted": True})
    return out


VIEWS_SCHEMA = pa.schema(
    [
        ("step", pa.int32()),
        ("agent", pa.int32()),
        ("actions", pa.string()),
        ("view", pa.string()),
        ("record", pa.string()),
    ]
)


class ViewRuntime(WaggleRuntime):
    """A law that reads each live agent's six-part local view (hivebench.waggle.runtime.view) and
    returns its record as JSON (a controller): `reply` maps the round's views to records, one per
    view; a record that is not the canonical schema becomes its agent's private proposal, counted as
    invalid. With `keep_views` every view shown is kept: the `views` side table (a view set's source),
    one row per (round, agent asked) with the action names, the view's canonical JSON and the record
    the runtime admitted (after the formal system and the validator: what the agent did; stage two's
    transitions read it), canonical JSON too (without it the table is empty: views take memory, about
    1 kB each)."""

    medium = "field"

    def __init__(self, params: dict[str, Any], rng: Streams, adapter: Adapter):
        super().__init__(params, rng, adapter)
        self.keep = bool(params.get("keep_views", False))
        self.shown: list[tuple[int, np.ndarray, list[str]]] = []  # per round: step, agents, their views (keep_views)
        self.admitted: dict[int, list[str]] = {}  # step -> the shown agents' admitted records (keep_views)

    def tables(self, episode: int) -> dict[str, Any]:
        n = self.block.n
        rows = [
            (step, agent % n, view, record)
            for step, agents, views in self.shown
            for agent, view, record in zip(agents.tolist(), views, self.admitted[step])
            if agent // n == episode
        ]
        step, agent, view, record = zip(*rows) if rows else ((), (), (), ())
        actions = json.dumps(list(self.adapter.actions))
        columns = [list(step), list(agent), [actions] * len(rows), list(view), list(record)]
        return {**super().tables(episode), "views": pa.table(columns, schema=VIEWS_SCHEMA)}

    def reply(self, views: list[dict[str, Any]]) -> list[Any]:
        raise NotImplementedError

    def local_views(self, context: Context) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """The live agents (block indices) and each one's local view this round."""
        adapter, obs = self.adapter, context.observation
        live = np.flatnonzero(context.live)
        starts = np.searchsorted(context.incident.receiver, live)
        stops = np.searchsorted(context.incident.receiver, live, side="right")
        evidence = private_evidence(context)
        frames = self.frame_intents(context) if getattr(adapter, "frame_intent", False) else None
        views = [
            local_view(
                adapter.contract(obs, agent),
                {
                    **adapter.private_state(obs, agent),
                    "evidence": evidence.get(agent, []),
                    **({} if frames is None else {"frames": frames.get(agent, [])}),
                },
                adapter.actions[int(context.proposal.action[agent])],
                context.incident.traces[start:stop],
                self.commitment[agent],
                budget_bin(context.step, int(context.rounds[agent])),
            )
            for agent, start, stop in zip(live.tolist(), starts.tolist(), stops.tolist())
        ]
        if self.keep:
            self.shown.append((context.step, live, [canonical_json(view) for view in views]))
        return live, views

    def _admit(self, context: Context, decisions: Decisions) -> Admitted:
        admitted = super()._admit(context, decisions)
        if self.keep:  # the agents this round's views were shown to
            step, shown, _ = self.shown[-1]
            assert step == context.step, "a round's records admitted before its views were built"
            actions = self.adapter.actions
            self.admitted[step] = [canonical_json(admitted.decisions.to_json(a, actions)) for a in shown.tolist()]
        return admitted

    def frame_intents(self, context: Context) -> dict[int, list[dict[str, Any]]]:
        """Per receiver, the frames delivered to it this round, by channel: each with the proposal intent
        its sender carried ("a directed frame jointly carries one compact trace, proposal intent, and one
        task snapshot"): the native action the sender's private proposal named when it sent."""
        assert self.trace_field is not None
        agents = self.block.agents
        sender, receiver = context.frames // agents, context.frames % agents
        channel = self.trace_field.channel(receiver, sender)  # every contact has had one since it first met
        out: dict[int, list[dict[str, Any]]] = {}
        order = np.lexsort((channel, receiver))  # by channel: the handles carry no sender order
        for r, c, s in zip(receiver[order].tolist(), channel[order].tolist(), sender[order].tolist()):
            out.setdefault(r, []).append({"channel": c, "intent": self.adapter.actions[self.sent_intent[s]]})
        return out

    def law(self, context: Context) -> Decisions:
        live, views = self.local_views(context)
        records: list[Any] = [None] * len(context.live)
        for agent, record in zip(live.tolist(), self.reply(views)):
            records[agent] = record
        decisions, errors = from_json(records, self.adapter.actions, context.proposal.action)
        context.count("invalid_records", [a for a, e in enumerate(errors) if e is not None])
        return decisions
