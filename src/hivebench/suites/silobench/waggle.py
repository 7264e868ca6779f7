"""Silo-Bench's Waggle adapter: what the Waggle runtime and its controls need of a Silo-Bench block,
on p2p ports (the Waggle study's degree-three ports, `topology: regular3`).

- Contacts: each agent's ports (its neighbours). "A directed frame jointly carries one compact trace,
  proposal intent, and one task snapshot": what an agent sends a neighbour in a round (its trace, and
  the shards its proposal passes on) is one frame, one delivered message, and it carries the sender's
  proposal intent (SEND, HOLD or ANSWER, its private proposal that round): a controller's view lists
  the frames delivered to it in the round, each by its channel with that intent (`frames` in its
  private state).
- Private proposal: "the next send of the gather algorithm": the `distributed` baseline's flood
  (hivebench.suites.silobench.baselines): each round an agent passes on the shards it holds and has
  not passed on yet, and answers from what it holds at round R (or once it holds every shard and has
  nothing left to pass on, with `submission: any_round`); a shard that arrives on several ports in
  one round goes on to none of them (`AnonymousFlood`: the baseline's choice among them follows the
  agents' indices). NoComm's agents send nothing and answer from their own shard (the `local`
  baseline).
- Actions: SEND (the proposal's frames go out), HOLD (nothing goes out) and ANSWER (the proposal's
  answer; in a communication round with `submission: any_round`, its frames go out too); at round R
  only ANSWER.
- Evidence: an agent holding every shard sees the claim "complete" (one per episode: the claim that
  the agent which writes it holds the whole instance), stationary, without a direction.
- Compilation: a frame's shards do not go to a neighbour that has reported on that port, first hand
  (novelty 4 and no conflict: the validator admits novelty 4 on no relay), that it is complete: it
  holds them already. Nothing else reads the field: Silo-Bench has no spatial moves. A commitment to
  "complete" stands while the agent's own view does not refute it (it changes no action).
- The late-counterevidence intervention (`change_at`, III-26): from its round on one owner's shard is
  changed. "Complete" is then two claims, of the data as dealt and as changed: an agent holding every
  shard sees the one its copy of the changed shard belongs to; an agent holding the changed shard's new
  version refutes "complete as dealt" (verified counterevidence: its own copy is newer), and does not
  take such a report as a reason to spare a neighbour its frames.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.engine.media.exchange import Outbox
from hivebench.ids import canonical_json
from hivebench.seeding import Streams
from hivebench.suites.silobench.baselines import ClassicalPolicy, Distributed, Holdings, LocalOnly
from hivebench.suites.silobench.task import SiloActions, SiloViews
from hivebench.waggle.runtime.adapter import Evidence, GraphContacts, Proposal
from hivebench.waggle.runtime.claims import ClaimCodes
from hivebench.waggle.runtime.field import RECEIVER, WRITER, Incident
from hivebench.waggle.runtime.records import BIN_MAX, CLAIM, CONFLICT, NONE, NOVELTY, forbidden_keys

ACTIONS = ("SEND", "HOLD", "ANSWER")
SEND, HOLD, ANSWER = range(len(ACTIONS))


class Arrivals(Holdings):
    """Holdings that also keep, per agent and shard, every port the shard arrived on (a bitmask of the
    agent's CSR slots: at most 63 ports) in the round it first arrived, where the flood passes shards
    on (`ports`; where owners send their own alone, nothing needs it)."""

    came: np.ndarray
    ports = False

    def read(self, views: SiloViews) -> np.ndarray:
        if self.known is None:
            self.start(views)
            self.came = np.zeros(self.known.shape, dtype=np.int64)
        known = super().read(views)
        inbox, block = views.inbox, views.block
        if self.ports and len(inbox.receiver):
            rows, owners = self.news
            receiver, sender = inbox.receiver[rows], inbox.sender[rows]
            slot = np.searchsorted(block.edge_keys, receiver * block.agents + sender) - block.indptr[receiver]
            self.came[receiver, owners] = 0  # a newer version: the ports it came on (none for a first arrival)
            np.bitwise_or.at(self.came, (receiver, owners), np.left_shift(1, slot))
        return known


class AnonymousFlood(Distributed):
    """The `distributed` flood, label-free: a shard that reaches an agent on several ports in one round
    goes on to none of them (the baseline keeps out only the last of them, in agent-index order)."""

    def __init__(self, params: dict[str, Any], rng: Streams):
        super().__init__(params, rng)
        self.holdings = Arrivals()

    def decide(self, views: SiloViews) -> SiloActions:
        self.holdings.ports = not self.own_only(views)  # on degree-three ports
        return super().decide(views)

    def send(self, views: SiloViews, known: np.ndarray) -> Outbox:
        if self.own_only(views):
            return super().send(views, known)
        holdings = self.holdings
        assert isinstance(holdings, Arrivals) and holdings.passed is not None
        packed = self.fresh(views, own_only=False)
        holdings.passed |= packed
        senders = np.flatnonzero(packed.any(axis=1))
        i, receiver = views.block.fan_out(senders)
        sender = senders[i]
        slot = (
            np.searchsorted(views.block.edge_keys, sender * views.block.agents + receiver) - views.block.indptr[sender]
        )
        carried = packed[sender] & ((holdings.came[sender] >> slot[:, None]) & 1 == 0)
        kept = carried.any(axis=1)
        return Outbox(sender[kept], receiver[kept], payload=carried[kept])


class SiloAdapter(GraphContacts):
    actions = ACTIONS
    wait = HOLD
    frame_intent = True
    # who may send this round and whose pending call was lost, as a perturbation tells (its flood's)
    asked: np.ndarray | None = None
    lost: np.ndarray | None = None

    def start(self, views: SiloViews, seeds: list[int], rng: Streams, params: dict[str, Any]) -> None:
        if views.protocol != "p2p" or views.oracle:
            raise ValueError(f"the Waggle runtime runs Silo-Bench on p2p ports, not protocol {views.protocol}")
        self.n = views.block.n
        # per episode, the claim "complete" of the data as dealt (column 0) and as changed (column 1)
        first = np.arange(len(seeds)) * self.n
        codes = ClaimCodes(seeds, self.n)
        self.complete = np.stack([codes.encode(first, 0, 0), codes.encode(first, 0, 1)], axis=1)
        self.policy: ClassicalPolicy | None = None
        self.proposed: SiloActions | None = None
        self._evidence: tuple[int, Evidence] | None = None

    def live(self, views: SiloViews) -> np.ndarray:
        return views.active

    def running(self, views: SiloViews) -> np.ndarray:
        return views.block.per_episode(views.active) > 0

    def legal(self, views: SiloViews) -> np.ndarray:
        legal = np.zeros((views.block.agents, len(ACTIONS)), dtype=bool)
        if views.answering:
            legal[:, ANSWER] = True
        else:
            legal[:, [SEND, HOLD]] = True
            legal[:, ANSWER] = views.early and self.proposed is not None and np.asarray(self.proposed.given, bool)
        return legal

    def heard(self, views: SiloViews) -> tuple[np.ndarray, np.ndarray]:
        return views.inbox.sender, views.inbox.receiver

    def budget(self, views: SiloViews) -> tuple[int, int]:
        return views.step, views.horizon

    def intervention(self, views: SiloViews) -> int:
        return views.intervention

    def proposal(self, views: SiloViews, medium: str) -> Proposal:
        if self.policy is None:
            self.policy = (
                LocalOnly({}, Streams([], "none")) if medium == "silent" else AnonymousFlood({}, Streams([], "none"))
            )
        self.policy.asked, self.policy.lost = self.asked, self.lost
        proposed = self.policy.decide(views)
        agents = views.block.agents
        given = np.zeros(agents, dtype=bool) if proposed.given is None else np.asarray(proposed.given, dtype=bool)
        self.proposed = SiloActions(proposed.outbox, proposed.answers, given)
        sending = np.zeros(agents, dtype=bool)
        if proposed.outbox is not None:
            sending[proposed.outbox.sender] = True
        action = np.where(given, ANSWER, np.where(sending, SEND, HOLD))
        return Proposal(action, sending)

    def evidence(self, views: SiloViews) -> Evidence:
        """Call after `proposal` (which reads the round's deliveries into the holdings)."""
        if self._evidence is not None and self._evidence[0] == views.step:
            return self._evidence[1]
        assert self.policy is not None and self.policy.holdings.known is not None
        agent = np.flatnonzero(self.policy.holdings.known.all(axis=1) & views.active)
        claim = self.complete[agent // self.n, self._newer(views, agent).astype(np.int64)]
        evidence = Evidence(agent, claim, np.full(len(agent), NONE), np.zeros(len(agent), bool))
        self._evidence = (views.step, evidence)
        return evidence

    def refutes(self, views: SiloViews, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """An agent holding a changed shard's new version knows the data as dealt is no longer all of it."""
        return (claim == self.complete[agent // self.n, 0]) & self._newer(views, agent)

    def _newer(self, views: SiloViews, agent: np.ndarray) -> np.ndarray:
        """Per agent, whether it holds its episode's changed shard as changed (the intervention)."""
        version = None if self.policy is None else self.policy.holdings.version
        if views.changed is None or version is None:
            return np.zeros(len(agent), dtype=bool)
        return version[agent, views.changed[agent // self.n]] == 1

    def wants(self, views: SiloViews, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        """A commitment to its episode's "complete" stands while the agent's view does not refute it
        (nothing moves on Silo-Bench: a commitment changes no action)."""
        return (claim[:, None] == self.complete[agent // self.n]).any(axis=1) & ~self.refutes(views, agent, claim)

    def kind(self, agent: np.ndarray, claim: np.ndarray) -> np.ndarray:
        return np.zeros(len(agent), dtype=np.int64)

    def act(
        self, views: SiloViews, action: np.ndarray, messages: pa.StringArray | None, incident: Incident
    ) -> SiloActions:
        assert self.proposed is not None
        proposed = self.proposed
        answering = action == ANSWER
        if views.answering:
            return SiloActions(answers=proposed.answers, given=answering & views.active)
        outbox = proposed.outbox
        assert outbox is not None
        rows = incident.rows
        receiver, claim = rows[:, RECEIVER], rows[:, 2 + CLAIM]
        complete = (claim[:, None] == self.complete[receiver // self.n]).any(axis=1)
        first_hand = (rows[:, 2 + NOVELTY] == BIN_MAX) & (rows[:, 2 + CONFLICT] == 0)  # no relay carries novelty 4
        believed = complete & first_hand & ~self.refutes(views, receiver, claim)
        reported = rows[believed]
        done = np.isin(
            outbox.sender * views.block.agents + outbox.receiver,
            reported[:, RECEIVER] * views.block.agents + reported[:, WRITER],
        )
        goes = np.isin(action[outbox.sender], (SEND, ANSWER)) & ~done
        outbox = outbox.take(np.flatnonzero(goes))
        if not views.early:
            return SiloActions(outbox=outbox)
        answers = proposed.answers if proposed.answers is not None else [None] * views.block.agents
        return SiloActions(outbox, answers, answering)

    def contract(self, views: SiloViews, agent: int) -> dict[str, Any]:
        legal = [ACTIONS[a] for a in np.flatnonzero(self.legal(views)[agent])]
        task = views.instance(agent).task
        return {
            "benchmark": "Silo-Bench",
            "task": task,
            "protocol": views.protocol,
            "rounds": views.rounds,
            "actions": legal,
        }

    def private_state(self, views: SiloViews, agent: int) -> dict[str, Any]:
        assert self.policy is not None and self.policy.holdings.known is not None
        shard = views.shard(agent)
        shard = shard.tolist() if isinstance(shard, np.ndarray) else shard
        if forbidden_keys(shard):
            # The task's own records (II-18's and III-29's carry an `id`: the data's, not an agent's):
            # as their JSON text, since the view's recursive check refuses such a key at any depth.
            shard = canonical_json(shard)
        return {"shard": shard, "complete": bool(self.policy.holdings.known[agent].all())}
