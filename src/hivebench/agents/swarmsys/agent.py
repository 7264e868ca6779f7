"""SwarmSys on Silo-Bench: explorers, workers and validators cycle through events, matched to them by
their profiles (arXiv 2510.10047; the README says what hivebench chose where the paper is silent).

One iteration is three communication rounds. In its first (explore) every open event's participants
are drawn (matching.py) and its explorers post; in the second its workers, who have read the
explorer's post, contribute; in the third its validators, who have read the contributions, accept
some, summarise the event into its profile and may terminate it (the whole task's validator with the
final answer: "TERMINATE: The answer is: <answer>"). A post goes to the event's other participants as
one point-to-point message each (several posts to one receiver in a round are one message), so the
task's medium delivers, cuts and counts them: the receiver-delivered messages. The profiles (agents'
abilities, status and accepted history; events' descriptions and progress) are the organisation's
own state, read by the matching and by an event's participants, as the paper keeps them. In round R
an agent that received the whole task's terminating line whole, from the validator that sent it,
gives its answer (not on a segmented task, where each agent's answer is its own slice); every other
agent is asked once.
Model calls and tokens are counted per (state, agent) and per episode, apart from the messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.agents.swarmsys import prompts
from hivebench.agents.swarmsys.matching import compatibility, embed, exploration, join_probability
from hivebench.agents.swarmsys.prompts import ROLES
from hivebench.engine.api import Policy
from hivebench.engine.media.exchange import Outbox
from hivebench.models import Backend, ChatRequest, Sampling
from hivebench.models.decide import Decision, totals
from hivebench.models.open import decider_for
from hivebench.seeding import Streams
from hivebench.suites.silobench.instances import statement
from hivebench.suites.silobench.task import SiloActions, SiloViews

TERMINATE = "TERMINATE: The answer is: "  # round t of an iteration is phase t mod 3, whose role (ROLES) acts


@dataclass
class Event:
    """An event's profile: the whole task (E0) or a sub-task an explorer opened (a leaf)."""

    key: str
    description: str
    leaf: bool
    progress: str = ""
    open: bool = True
    members: dict[int, str] = field(default_factory=dict)  # this iteration's participants: block agent -> role


@dataclass
class Profile:
    """An agent's profile: its role, its abilities and status as it last wrote them, and the outcomes of
    its judged contributions (event description, accepted)."""

    role: str
    ability: str
    status: str = "idle"
    judged: list[tuple[str, bool]] = field(default_factory=list)


@dataclass
class Turn:
    """One model call's record: the event it was about ("" for the answer), the role it acted in
    (None for the answer) and the decision."""

    event: str
    role: str | None
    decision: Decision


class SwarmSys(Policy):
    def __init__(
        self, params: dict[str, Any], rng: Streams, cache_paths: list[str | Path], backend: Backend | None = None
    ):
        """`backend`: one in the method's model's place (an estimate's)."""
        self.params = params
        self.sampling = Sampling.of(params)
        self.decider = decider_for(params, cache_paths, backend)
        self.episodes = len(rng)
        self.roles_rng, self.matching, self.samples = rng.child("roles"), rng.child("matching"), rng.child("samples")
        self.max_events = 1 + int(params["subevents"])
        self.window, self.gamma, self.dims = int(params["window"]), float(params["gamma"]), int(params["dims"])
        self.turns: list[list[list[Turn]]] = []  # per round, per block agent, its calls
        self.log: list[dict[str, Any]] = []  # the `events` table's rows, every episode's

    # -- set-up --------------------------------------------------------------------------------------
    def _start(self, views: SiloViews) -> None:
        n = self.n = views.block.n
        count = views.block.agents
        explorers = min(int(self.params["explorers"]), n - 2)
        validators = min(int(self.params["validators"]), n - 1 - explorers)
        # each episode's roles: the first `explorers` of a random order explore, the next validate
        order = np.argsort(self.roles_rng.random((count,)).reshape(self.episodes, n), axis=1)
        rank = np.argsort(order, axis=1).ravel()
        role = np.where(rank < explorers, 0, np.where(rank < explorers + validators, 2, 1))
        self.profiles = [Profile(ROLES[r], ROLES[r]) for r in role.tolist()]
        self.events = [[Event("E0", statement(views.instances[s])[0], leaf=False)] for s in range(self.episodes)]
        self.heard: list[list[tuple[int, int, str]]] = [[] for _ in range(count)]  # (round, sender, text)
        self.answers: list[Any] = [None] * count  # the whole task's terminated answer each agent holds
        self.knows = np.zeros(count, dtype=bool)
        self.switches = np.zeros(self.episodes, dtype=np.int64)
        # per episode, the whole task's terminating validator and the line it posted (None: not yet)
        self.closing: list[tuple[int, str] | None] = [None] * self.episodes

    # -- a round -------------------------------------------------------------------------------------
    def decide(self, observation: SiloViews) -> SiloActions:
        views = observation
        if views.step == 0:
            self._start(views)
        self._hear(views)
        samples = self.samples.integers(0, 2**31 - 1, (views.block.agents, self.max_events))
        if views.answering:
            return self._answer(views, samples)
        phase = views.step % len(ROLES)
        if phase == 0:
            self._match(views)
        role = ROLES[phase]
        asked = [
            (v, s, j)
            for s in range(self.episodes)
            for j, event in enumerate(self.events[s])
            if event.open
            for v, r in event.members.items()
            if r == role
        ]
        requests = [self._request(views, v, self.events[s][j], role, int(samples[v, j])) for v, s, j in asked]
        decisions = self.decider.decide(requests, [s for _, s, _ in asked])
        turns: list[list[Turn]] = [[] for _ in range(views.block.agents)]
        posts: dict[tuple[int, int], list[str]] = {}
        wanted: dict[int, str] = {}
        for (v, s, j), decision in zip(asked, decisions):
            event = self.events[s][j]
            turns[v].append(Turn(event.key, role, decision))
            reply = decision.value
            if reply is None:
                continue  # a fallback: the agent posts nothing and its profile stays
            text = self._apply(v, s, event, role, reply)
            for u in event.members:
                if u != v and text:
                    posts.setdefault((v, u), []).append(f"[{event.key}] {text}")
            profile = self.profiles[v]
            profile.ability, profile.status = reply["ability"], reply["status"]
            wanted[v] = reply["role"]
        self.turns.append(turns)
        self._switch(wanted)
        if phase == len(ROLES) - 1 or views.step == views.rounds - 1:
            self._log(views.step)
        pairs = sorted(posts)
        return SiloActions(
            outbox=Outbox(
                np.array([v for v, _ in pairs], dtype=np.int64),
                np.array([u for _, u in pairs], dtype=np.int64),
                text=["\n".join(posts[pair]) for pair in pairs],
            )
        )

    def _hear(self, views: SiloViews) -> None:
        """What reached each agent at the start of this round. An agent that received the terminating
        validator's line whole (not cut by the message cap) holds the whole task's answer, unless the
        task is segmented (each agent answers its own slice)."""
        inbox = views.inbox
        texts = inbox.outbox.text or []
        for i in range(len(inbox.receiver)):
            v, sender, text = int(inbox.receiver[i]), int(inbox.sender[i]), texts[inbox.message[i]]
            self.heard[v].append((views.step, sender % self.n, text))
            closing = self.closing[v // self.n]
            if closing is not None and closing[0] == sender and closing[1] in text.split("\n"):
                if not views.instance(v).segmented:
                    self.answers[v], self.knows[v] = self.answers[sender], True

    def _match(self, views: SiloViews) -> None:
        """Each open event's participants for this iteration (Eqs. 4-10): every (agent, event) pair joins by
        its own draw; an event left without a role's holder takes the most compatible one (the paper's
        "each event contains at least one explorer, one worker, and one validator")."""
        n = self.n
        draws = self.matching.random((views.block.agents, self.max_events))
        for s in range(self.episodes):
            own = range(s * n, (s + 1) * n)
            events = [e for e in self.events[s] if e.open]  # none once the whole task is terminated
            for event in self.events[s]:
                event.members = {}
            if not events:
                continue
            profiles = [self.profiles[v] for v in own]
            history = [" ".join(d for d, ok in p.judged[-self.window :] if ok) for p in profiles]
            agents = embed([f"{p.ability} {h}" for p, h in zip(profiles, history)], self.dims) + embed(
                [p.status for p in profiles], self.dims
            )
            c = compatibility(agents, embed([f"{e.description} {e.progress}" for e in events], self.dims))
            p = join_probability(c, exploration(np.array([success(pr, self.window) for pr in profiles])), self.gamma)
            joined = draws[own.start : own.stop, : len(events)] < p
            for j, event in enumerate(events):
                event.members = {own.start + i: profiles[i].role for i in np.flatnonzero(joined[:, j]).tolist()}
                for role in ROLES:
                    if role not in event.members.values():
                        holders = [i for i, pr in enumerate(profiles) if pr.role == role]
                        best = holders[int(np.argmax(c[holders, j]))]
                        event.members[own.start + best] = role
                event.members = dict(sorted(event.members.items()))

    def _request(self, views: SiloViews, v: int, event: Event, role: str, sample: int) -> ChatRequest:
        n, profile = self.n, self.profiles[v]
        task, answer = statement(views.instance(v))
        whole = not event.leaf
        subevents = self._room(v // n) if role == "explorer" and whole else 0
        system = prompts.SYSTEM.format(agent=v % n, n=n, role=prompts.ROLE_RULES[role], task=task, answer=answer)
        start = views.step - views.step % len(ROLES)
        accepted = "; ".join(d for d, ok in profile.judged[-self.window :] if ok) or "none"
        left = views.rounds - views.step
        lines = [
            f"You are agent {v % n}. Round {views.step + 1} of {views.rounds + 1}; "
            f"{left} rounds of communication left.",
            prompts.shard_line(views.shard(v)),
            f"Your profile: abilities: {profile.ability}; status: {profile.status}; accepted work: {accepted}.",
            f"Event {event.key} ({'a sub-task' if event.leaf else 'the whole task'}): {event.description}",
            f"Its progress: {event.progress or 'none yet'}",
            f"Its participants this iteration: {', '.join(str(u % n) for u in event.members)}",
            "Messages this iteration:",
            *prompts.heard_lines([(u, text) for t, u, text in self.heard[v] if t >= start]),
            prompts.reply_format(role, subevents, whole),
        ]
        chars = (int(self.params["post_chars"]), int(self.params["profile_chars"]))
        schema = prompts.reply_schema(role, n, chars, subevents, whole, answer)
        messages = ({"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)})
        return ChatRequest(messages, schema, self.sampling, sample)

    def _room(self, episode: int) -> int:
        """How many sub-tasks may still be opened in an episode."""
        return self.max_events - len(self.events[episode])

    def _apply(self, v: int, s: int, event: Event, role: str, reply: dict[str, Any]) -> str:
        """A valid reply's effect on the events and profiles; the text it posts. The whole task's
        validator terminates it only with an answer ("null: not terminating", as its reply's format says);
        every event closes with it."""
        if role != "validator":
            for description in reply.get("subevents", [])[: self._room(s)]:
                self.events[s].append(Event(f"E{len(self.events[s])}", description, leaf=True))
            return reply["post"]
        n = self.n
        contributors = {
            u
            for u, r in event.members.items()
            if r == "worker" and any(t.event == event.key and t.decision.value is not None for t in self.turns[-1][u])
        }  # the workers who posted in this event last round
        accepted = {s * n + a for a in reply["accepted"]}
        for u in sorted(contributors):
            self.profiles[u].judged.append((event.description, u in accepted))
        event.progress = reply["summary"]
        if not reply["terminate"] or (not event.leaf and reply["answer"] is None):
            return reply["summary"]
        if event.leaf:
            event.open = False
            self.events[s][0].progress += f" {event.key} result: {reply['summary']}"
            return reply["summary"]
        for other in self.events[s]:
            other.open = False
        self.answers[v], self.knows[v] = reply["answer"], True
        line = TERMINATE + json.dumps(reply["answer"])
        self.closing[s] = (v, f"[{event.key}] {line}")
        return line

    def _switch(self, wanted: dict[int, str]) -> None:
        """Role switches, in agent order, each while its old role keeps a holder in the episode."""
        for v, role in sorted(wanted.items()):
            old = self.profiles[v].role
            s = v // self.n
            holders = sum(p.role == old for p in self.profiles[s * self.n : (s + 1) * self.n])
            if role != old and holders > 1:
                self.profiles[v].role = role
                self.switches[s] += 1

    def _answer(self, views: SiloViews, samples: np.ndarray) -> SiloActions:
        """Round R: the terminated answer where an agent holds it, else the model's, asked once."""
        n = self.n
        asked = np.flatnonzero(~self.knows).tolist()
        requests = []
        for v in asked:
            task, answer = statement(views.instance(v))
            lines = [
                f"You are agent {v % n}. Communication is over.",
                prompts.shard_line(views.shard(v)),
                "Everything that reached you:",
                *prompts.heard_lines([(u, text) for _, u, text in self.heard[v]]),
                'Reply with only a JSON object: {"answer": <your answer>}',
            ]
            system = prompts.ANSWERING.format(agent=v % n, n=n, task=task, answer=answer)
            messages = ({"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)})
            requests.append(ChatRequest(messages, prompts.answer_schema(answer), self.sampling, int(samples[v, 0])))
        decisions = self.decider.decide(requests, [v // n for v in asked])
        turns: list[list[Turn]] = [[] for _ in range(views.block.agents)]
        answers, given = list(self.answers), self.knows.copy()
        for v, decision in zip(asked, decisions):
            turns[v].append(Turn("", None, decision))
            if decision.value is not None:
                answers[v], given[v] = decision.value["answer"], True
        self.turns.append(turns)
        return SiloActions(answers=answers, given=given.tolist())

    def _log(self, step: int) -> None:
        """The `events` table's rows at the end of an iteration (or of the last communication round): every
        event's profile and this iteration's participants with their roles."""
        for s, events in enumerate(self.events):
            for event in events:
                self.log.append(
                    {
                        "episode": s,
                        "round": step,
                        "event": event.key,
                        "leaf": event.leaf,
                        "open": event.open,
                        "participants": [u % self.n for u in event.members],
                        "roles": list(event.members.values()),
                        "description": event.description,
                        "progress": event.progress,
                    }
                )

    # -- the record ----------------------------------------------------------------------------------
    def _own(self, episode: int) -> slice:
        return slice(episode * self.n, (episode + 1) * self.n)

    def _rows(self, episode: int) -> list[list[Turn]]:
        """The episode's calls by (state, agent) row: none at state 0, then each round's."""
        own = self._own(episode)
        return [[] for _ in range(self.n)] + [calls for turns in self.turns for calls in turns[own]]

    def columns(self, episode: int) -> dict[str, pa.Array]:
        """Per (state, agent): the role the agent acted in that round (none: it made no call in a role)
        and its calls, tokens and latency."""
        rows = self._rows(episode)

        def total(get: Callable[[Decision], float]) -> list[float]:
            return [sum(get(t.decision) for t in calls) for calls in rows]

        return {
            "role": pa.array([next((t.role for t in calls if t.role), None) for calls in rows], pa.string()),
            "calls": pa.array(total(lambda d: d.calls), pa.int32()),
            "input_tokens": pa.array(total(lambda d: d.usage.input_tokens), pa.int32()),
            "output_tokens": pa.array(total(lambda d: d.usage.output_tokens), pa.int32()),
            "latency_s": pa.array(total(lambda d: d.usage.latency_s), pa.float64()),
        }

    def summary(self, episode: int) -> dict[str, Any]:
        calls = totals([t.decision for calls in self._rows(episode) for t in calls])
        judged = [ok for p in self.profiles[self._own(episode)] for _, ok in p.judged]
        events = self.events[episode]
        return {
            "model_calls": calls["llm_calls"],
            "model_tokens": calls["input_tokens"] + calls["output_tokens"],
            **calls,
            "events": len(events),
            "events_closed": sum(not e.open for e in events),
            "terminated": self.closing[episode] is not None,
            "contributions": len(judged),
            "accepted": sum(judged),
            "role_switches": int(self.switches[episode]),
            "answers_carried": int(self.knows[self._own(episode)].sum()),
            **self.decider.recorded(),
        }

    def tables(self, episode: int) -> dict[str, pa.Table]:
        rows = [{k: v for k, v in row.items() if k != "episode"} for row in self.log if row["episode"] == episode]
        schema = pa.schema(
            [
                ("round", pa.int32()),
                ("event", pa.string()),
                ("leaf", pa.bool_()),
                ("open", pa.bool_()),
                ("participants", pa.list_(pa.int32())),
                ("roles", pa.list_(pa.string())),
                ("description", pa.string()),
                ("progress", pa.string()),
            ]
        )
        return {"events": pa.Table.from_pylist(rows, schema)}


def success(profile: Profile, window: int) -> float:
    """S_i: the share of the agent's last `window` judged contributions that were accepted (0.5 before any)."""
    recent = [ok for _, ok in profile.judged[-window:]]
    return float(np.mean(recent)) if recent else 0.5
