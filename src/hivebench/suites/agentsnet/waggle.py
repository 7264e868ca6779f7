"""AgentsNet's Waggle adapter: what the Waggle runtime and its controls need of an AgentsNet block.

- Contacts: the graph's edges.
- Private proposal: the problem's distributed algorithm (hivebench.suites.agentsnet.baselines, each
  agent's next messages and, at its round R, its answer). NativeMsg and FixedSwarm send its messages;
  NoComm's agents send nothing and answer at round R what the algorithm answers from its first state
  (each agent its own leader, its own bit, its first colour, undecided in the independent set and so
  in the cover, unmatched). The
  independent set breaks a tie of priorities by a node-indexed random key, not by the agents'
  indices (`AnonymousIndependentSet`), and draws its priorities round by round.
- Actions: SEND and HOLD in the message rounds, ANSWER in round R.
- Evidence, as claims: the answer an agent would give now. Consensus: the greatest (name, bit) it
  has seen; leader election: the greatest name it has seen (each by its rank among the episode's
  names); colouring: its colour once settled; vertex cover: being in the independent set; matching:
  none. Two consensus or leader claims contradict each other, and an agent refutes one below the
  greatest it has seen.
- Compilation: the messages of the agents that SEND, the proposal's answers. Nothing reads the field:
  the algorithms are exact given their rounds; the field carries the claims, for the record.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.seeding import Streams
from hivebench.suites.agentsnet.baselines import (
    MEMBER,
    PROTOCOLS,
    Coloring,
    Edges,
    Flooding,
    IndependentSet,
    Matching,
    _independent_set_texts,
)
from hivebench.suites.agentsnet.task import NetActions, NetViews
from hivebench.waggle.runtime.adapter import Evidence, GraphContacts, Proposal
from hivebench.waggle.runtime.claims import ClaimCodes
from hivebench.waggle.runtime.field import Incident
from hivebench.waggle.runtime.records import NONE

ACTIONS = ("SEND", "HOLD", "ANSWER")
SEND, HOLD, ANSWER = range(len(ACTIONS))
RANKED = ("consensus", "leader_election")  # claims of the greatest (name, ...) seen: kind 0


class AnonymousIndependentSet(IndependentSet):
    """Luby's independent set with each round's priorities drawn that round and ties broken by a
    node-indexed random key."""

    def __init__(self, views: NetViews, rng: Streams):
        agents = views.block.agents
        self.edges = Edges(views.block)
        self.per_episode = views.block.n
        self.texts = _independent_set_texts(self.per_episode)
        self.state = np.zeros(agents, dtype=np.int64)
        self.draws = rng.child("priorities")
        keys = rng.child("order").random((agents,))
        self.order = np.empty(agents, dtype=np.int64)
        self.order[np.argsort(keys, kind="stable")] = np.arange(
            agents
        )  # ranks in key order (compared within an episode)
        self.last = np.zeros(agents, dtype=np.int64)

    def priority(self, step: int) -> np.ndarray:
        return self.draws.integers(0, self.per_episode, (self.edges.n,))


class NetAdapter(GraphContacts):
    actions = ACTIONS
    wait = HOLD

    def start(self, views: NetViews, seeds: list[int], rng: Streams, params: dict[str, Any]) -> None:
        self.n = views.block.n
        self.codes = ClaimCodes(seeds, self.n)
        self.rng = rng
        self.protocol: Any = None
        self.proposed: NetActions | None = None

    def live(self, views: NetViews) -> np.ndarray:
        return views.agent_rounds >= views.step

    def running(self, views: NetViews) -> np.ndarray:
        return views.rounds >= views.step

    def legal(self, views: NetViews) -> np.ndarray:
        legal = np.zeros((views.block.agents, len(ACTIONS)), dtype=bool)
        answering = views.answering
        legal[answering, ANSWER] = True
        legal[~answering, SEND] = legal[~answering, HOLD] = True
        return legal

    def heard(self, views: NetViews) -> tuple[np.ndarray, np.ndarray]:
        return views.inbox.sender, views.inbox.receiver

    def budget(self, views: NetViews) -> tuple[int, np.ndarray]:
        return views.step, views.agent_rounds + 1

    def intervention(self, views: NetViews) -> int:
        return -1  # AgentsNet has no late-counterevidence intervention

    def proposal(self, views: NetViews, medium: str) -> Proposal:
        if self.protocol is None:
            kind = AnonymousIndependentSet if views.problem == "vertex_cover" else PROTOCOLS[views.problem]
            self.protocol = kind(views, self.rng.child("proposal"))
        if medium == "silent":  # the algorithm's first state, every round: nothing heard
            views = replace(views, step=0, agent_rounds=np.where(views.answering, 0, -1))
        self.proposed = self.protocol.act(views)
        action = np.where(views.answering, ANSWER, HOLD if medium == "silent" else SEND)
        return Proposal(action, np.zeros(len(action), dtype=bool))

    def _claim(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every agent's claim now (agent, kind, which), where it has one."""
        p, agents = self.protocol, np.arange(self.protocol.edges.n)
        if isinstance(p, Flooding):  # rank (and bit) offset by the episode within the block
            which = p.best - agents // self.n * self.n * (2 if p.bits else 1)
            return agents, np.zeros(len(agents), dtype=np.int64), which
        if isinstance(p, Coloring):
            settled = np.flatnonzero(p.settled)
            return settled, 1 + p.color[settled], np.zeros(len(settled), dtype=np.int64)
        if isinstance(p, IndependentSet):
            member = np.flatnonzero(p.state == MEMBER)
            return member, np.ones(len(member), dtype=np.int64), np.zeros(len(member), dtype=np.int64)
        none = np.zeros(0, dtype=np.int64)
        return none, none, none

    def evidence(self, views: NetViews) -> Evidence:
        agent, kind, which = self._claim()
        agent_live = self.live(views)[agent]
        agent, kind, which = agent[agent_live], kind[agent_live], which[agent_live]
        claim = self.codes.encode(agent, kind, which)
        return Evidence(agent, claim, np.full(len(agent), NONE), np.full(len(agent), views.problem in RANKED))

    def refutes(self, views: NetViews, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        kind, which = self.codes.decode(agent, claim)
        if not isinstance(self.protocol, Flooding):
            return np.zeros(len(agent), dtype=bool)
        best = self.protocol.best[agent] - agent // self.n * self.n * (2 if self.protocol.bits else 1)
        return (kind == 0) & (which < best)

    def wants(self, views: NetViews, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """A commitment to an answer stands while the agent's view does not refute it (nothing moves on
        AgentsNet: a commitment changes no action)."""
        return ~self.refutes(views, agent, claim)

    def kind(self, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        return self.codes.decode(agent, claim)[0]

    def act(
        self, views: NetViews, action: np.ndarray, messages: pa.StringArray | None, incident: Incident
    ) -> NetActions:
        assert self.proposed is not None
        outbox = self.proposed.outbox
        assert outbox is not None
        sending = np.flatnonzero(action[outbox.sender] == SEND)
        return NetActions(outbox.take(sending) if len(sending) < len(outbox.sender) else outbox, self.proposed.answers)

    def contract(self, views: NetViews, agent: int) -> dict[str, Any]:
        legal = [ACTIONS[a] for a in np.flatnonzero(self.legal(views)[agent])]
        return {
            "benchmark": "AgentsNet",
            "problem": views.problem,
            "rounds": int(views.agent_rounds[agent]),
            "actions": legal,
        }

    def private_state(self, views: NetViews, agent: int) -> dict[str, Any]:
        p = self.protocol
        if isinstance(p, Flooding):
            best = int(p.best[agent])
            if p.bits:
                return {"bit": best % 2}
            return {"leading": bool(best == p.rank[agent])}
        if isinstance(p, Coloring):
            return {"color": int(p.color[agent]), "settled": bool(p.settled[agent])}
        if isinstance(p, IndependentSet):
            return {"independent_set": ["undecided", "in", "out"][int(p.state[agent])]}
        assert isinstance(p, Matching)
        return {"matched": bool(p.partner[agent] >= 0)}
