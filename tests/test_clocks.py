"""Asynchronous clocks (hivebench.perturb.clocks): the synchronous loop as their special case on every
suite, a decision applied late from the snapshot it was asked on, and cells reproducible from the seed."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hivebench.cells import study_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.api import Policy
from hivebench.engine.conformance import differences
from hivebench.engine.loop import make_policy, make_task, play_block, run
from hivebench.engine.writer import write_episode
from hivebench.models import ChatResult, Usage
from hivebench.paths import cell_path
from hivebench.perturb import MEDIUM_DEFAULTS, VERSION, axis, resolved
from hivebench.perturb.agents import Gate, GatedPolicy, add_columns
from hivebench.perturb.clocks import Clocks
from hivebench.perturb.membership import Membership
from hivebench.seeding import Streams
from hivebench.suites.loopbench.task import ColoringTask
from hivebench.suites.loopbench.text import ColoringView
from hivebench.suites.silobench.baselines import carried_shards
from hivebench.view.episode import load as load_episode
from hivebench.view.page import render as render_page
from tests.test_llm_episodes import first_cell, replayed_without_the_model
from tests.test_perturb import CASES, CONFIG, blocks, default_config, records_equal, study

CLOCKS = {"name": "clocks", "version": VERSION}  # a perturbation as a cell holds it, but for its part
TELEMETRY = ("acted", "asked", "staleness")  # the gate's per-agent columns
CLOCK_SUMMARY = ("decisions", "mean_staleness")


def under(cells: list[dict[str, Any]], clocks: dict[str, Any]) -> list[dict[str, Any]]:
    """The cells with a clocks part as given, whether or not it changes anything (bypassing `resolved`)."""
    return [{**copy.deepcopy(cell), "perturbation": {**CLOCKS, "clocks": clocks}} for cell in cells]


def without_telemetry(record: Any) -> Any:
    out = copy.copy(record)
    out.agents = {k: v for k, v in record.agents.items() if k not in TELEMETRY}
    out.summary = {k: v for k, v in record.summary.items() if k not in CLOCK_SUMMARY}
    return out


@pytest.mark.parametrize("task, methods, n", CASES, ids=[case[0] for case in CASES])
def test_one_period_no_jitter_no_latency_plays_the_synchronous_loop(task, methods, n):
    cells = blocks(study(task, methods, n, ["none"]))
    for method in methods:
        plain = cells[(method, None)]
        timed = play_block(under(plain, {"period": 1, "jitter": 0, "latency": 0}))
        for a, b in zip(timed, play_block(plain)):
            assert differences(without_telemetry(a), b) == []
            assert a.summary["mean_staleness"] == 0 and np.asarray(a.agents["acted"])[n:].all()


def test_a_clock_that_changes_nothing_is_no_part_of_the_cell():
    assert resolved("x", {"clocks": {"period": 1, "jitter": 0, "latency": 0}}) == {"name": "x", "version": VERSION}
    kept = resolved("x", {"clocks": {"period": 3, "jitter": 0, "latency": 2, "latency_max": 2}})
    assert kept["clocks"] == {"period": 3, "latency": 2}
    assert axis(resolved("x", {"clocks": {"latency": 2}})) == ("decision latency (rounds)", 2)
    assert axis(kept) is None  # two settings moved: a point of its own
    assert axis(resolved("x", {"clocks": {"latency": 0, "latency_max": 3}})) == (
        "decision latency, drawn from 0 up to (rounds)",
        3,
    )


class Majority(Policy):
    """Each agent takes the colour most of its neighbours hold in the view it is given (ties: 0)."""

    def decide(self, observation: Any) -> np.ndarray:
        return np.argmax(observation.neighbor_counts, axis=1)

    def columns(self, episode: int) -> dict[str, Any]:
        return {}

    def summary(self, episode: int) -> dict[str, Any]:
        return {}

    def tables(self, episode: int) -> dict[str, Any]:
        return {}


def test_a_late_decision_applies_what_was_decided_on_its_snapshot_though_the_view_changed():
    n, rounds = 9, 24
    task = ColoringTask({"graph": "cycle", "colors": 2, "steps": rounds, "init": "random", "metric_window": "full"}, n)
    task.reset([5, 6])
    gate = Gate({"clocks": {"period": 2, "jitter": 1, "latency": 1, "latency_max": 3}}, n, Streams([5, 6], "p"))
    records = run(task, GatedPolicy(Majority(), gate, ColoringView()))
    add_columns(records, gate)
    colors = task.trajectory  # (states, agents)
    agents = np.arange(task.agents)
    left, right = (agents // n) * n + (agents - 1) % n, (agents // n) * n + (agents + 1) % n
    stale = changed = 0
    for s, record in enumerate(records):
        ages = pa.array(record.agents["staleness"]).to_numpy(zero_copy_only=False)
        for row in np.flatnonzero(~np.isnan(ages)):
            state, agent = divmod(row, n)
            agent += s * n
            age, applied_round = int(ages[row]), state - 1  # applied in the round that led to `state`
            asked = applied_round - age
            on = [colors[t, left[agent]] + colors[t, right[agent]] for t in (asked, applied_round)]
            majority = [int(ones > 1) for ones in on]  # of two neighbours: 1 where both hold 1
            assert colors[state, agent] == majority[0]  # what was decided on its snapshot
            stale += age > 0
            changed += majority[0] != majority[1]
        assert record.summary["decisions"] == int((~np.isnan(ages)).sum())
    assert stale and changed  # decisions applied late, some against a view that had changed since


def clock_ticks(clocks: dict[str, Any], n: int = 16, ticks: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """(ticks, agents) who was asked and whose decision applied in each tick of two episodes' clocks."""
    gate = Gate({"clocks": clocks}, n, Streams([1, 2], "p"))
    asked, applied = [], []
    for _ in range(ticks):
        gate.next_round()
        asked.append(gate.clocks.asking.copy())
        applied.append(gate.clocks.applying.copy())
    return np.array(asked), np.array(applied)


def test_an_agent_acts_only_on_its_clock_one_call_at_a_time():
    asked, applied = clock_ticks({"period": 3, "jitter": 2, "latency": 2})
    for agent in range(asked.shape[1]):
        ticks, done = np.flatnonzero(asked[:, agent]), np.flatnonzero(applied[:, agent])
        assert ticks[0] < 3 and (np.diff(ticks) >= 3).all() and (np.diff(ticks) <= 5).all()
        assert (done[: len(ticks)] == ticks[: len(done)] + 2).all()  # each applied two rounds after it was asked
    # a call longer than the period: the timer waits for it, and the agent is asked the round after it applies
    asked, applied = clock_ticks({"period": 2, "latency": 3})
    for agent in range(asked.shape[1]):
        ticks, done = np.flatnonzero(asked[:, agent]), np.flatnonzero(applied[:, agent])
        assert ticks[0] < 2 and (np.diff(ticks) == 4).all() and (done[: len(ticks)] == ticks[: len(done)] + 3).all()


def test_no_clock_handler_reads_a_global_clock_or_another_agents_state():
    """The clocks' handlers (a timer firing, a call starting or completing, a call lost to churn) read
    only an agent's own timers and draws, and time only as differences: shifting the epoch, or
    scrambling every other agent's timer, its pending call's due tick and its presence, changes nothing
    of an agent's schedule. (The tick index orders events for analysis; the round a view shows is the
    task's, not the clocks'.) Not covered here: the answer round's deadline and `seconds_per_round`."""
    settings = {"period": 3, "jitter": 2, "latency": 1, "latency_max": 3}
    agents, watched, shift = 16, 5, 1_000

    def clocks() -> Clocks:
        return Clocks(settings, agents, Streams([1, 2], "p"))

    plain, shifted, scrambled = clocks(), clocks(), clocks()
    for c in (plain, shifted, scrambled):
        c.next_tick()
    shifted.tick += shift  # the same clocks, their epoch moved on
    shifted.fire += shift
    shifted.due[shifted.due >= 0] += shift
    shifted.asked_at[shifted.asked_at >= 0] += shift
    others = np.arange(agents) != watched
    noise = np.random.default_rng(0)
    absent = np.zeros(agents, dtype=bool)
    applied_late = 0
    for tick in range(1, 40):
        # every other agent's timers, pending call and presence scrambled before each tick
        scrambled.fire[others] = scrambled.tick + noise.integers(-2, 4, others.sum())
        due = scrambled.tick + noise.integers(0, 3, others.sum())
        scrambled.due[others] = np.where(noise.random(others.sum()) < 0.5, -1, due)
        scrambled.asked_at[others] = scrambled.tick - noise.integers(0, 3, others.sum())
        absent[watched] = tick % 11 == 0  # the watched agent leaves now and then: its pending call is lost
        away = absent | (others & (noise.random(agents) < 0.3))
        plain.next_tick(absent=absent)
        shifted.next_tick(absent=absent)
        scrambled.next_tick(absent=away)
        for c in (shifted, scrambled):
            assert c.asking[watched] == plain.asking[watched] and c.applying[watched] == plain.applying[watched]
            assert c.staleness[watched] == plain.staleness[watched]
        assert (shifted.asking == plain.asking).all() and (shifted.staleness == plain.staleness).all()
        applied_late += plain.staleness[watched] > 0
    assert applied_late >= 5  # the watched agent's calls started and completed all along


def test_the_answer_round_is_every_agents_deadline():
    cells = blocks(study("coloring-ws", ["distributed"], 8, ["none"], seeds=3))[("distributed", None)]
    for record in play_block(under(cells, {"period": 3, "latency": 2})):
        agents = pd.DataFrame({k: np.asarray(record.agents[k], dtype=object) for k in ("step", "answer")})
        agents["staleness"] = pa.array(record.agents["staleness"]).to_pandas()
        last = agents[agents.step == agents.step.max()]
        assert last.answer.notna().all() and (last.staleness == 0).all()  # asked and answering in round R
        assert record.summary["score"] > 0


def test_an_answer_at_the_deadline_applies_then_though_calls_are_timed():
    """Under `seconds_per_round` a decision applies as many rounds after it was asked as its call
    took, but an answer at the deadline applies in the answer round (after it, the episode is over)."""
    clocks = Clocks({"seconds_per_round": 0.5}, 6, Streams([1, 2], "p"))
    answering = np.array([False, True, True, False, False, True])
    clocks.next_tick()
    clocks.timed(np.full(6, 2.0))  # every call takes 4 rounds
    clocks.next_tick(answering=answering)
    clocks.timed(np.full(6, 2.0))
    assert (clocks.applying == answering).all() and (clocks.staleness[answering] == 0).all()
    for _ in range(3):
        clocks.next_tick()
    assert (clocks.applying == ~answering).all() and (clocks.staleness[~answering] == 4).all()


def test_clocks_and_activation_together_and_a_range_running_down_are_refused():
    config = copy.deepcopy(default_config())
    config["perturbations"] = {"both": {"clocks": {"period": 2}, "activation": {"probability": 0.5}}}
    study = {"tasks": ["cycle"], "methods": ["greedy"], "seeds": 2, "populations": [5], "perturbations": ["both"]}
    config["studies"] = {"t": study}
    with pytest.raises(ConfigError, match=r"perturbations.both: `clocks` and `activation` both say when agents act"):
        validate(config, str(CONFIG))
    config["perturbations"] = {"both": {"clocks": {"latency": 3, "latency_max": 2}}}
    with pytest.raises(ConfigError, match=r"perturbations.both.clocks.latency_max: 2 is below latency \(3\)"):
        validate(config, str(CONFIG))


def test_an_asynchronous_cell_reproduces_from_its_seed():
    cells = blocks(study("silo", ["distributed"], 6, ["none"]))[("distributed", None)]
    timed = under(cells, {"period": 2, "jitter": 1, "latency": 1, "latency_max": 2})
    first, second = play_block(timed), play_block(copy.deepcopy(timed))
    assert all(differences(a, b) == [] for a, b in zip(first, second))
    assert any(a.summary["mean_staleness"] > 0 for a in first)


def test_an_asynchronous_llm_cell_asks_only_the_agents_its_clocks_fire_and_replays_from_its_cache(
    tiny_model, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    method = {"kind": "llm", "backend": "transformers", "model": str(tiny_model), "notes_chars": 30, "max_tokens": 64}
    config = {
        "tasks": {"cycle": {"kind": "coloring", "steps": 6}},
        "methods": {"tiny": method},
        "perturbations": {"slow": {"clocks": {"period": 2, "jitter": 1, "latency": 1}}},
        "studies": {
            "s": {"tasks": ["cycle"], "methods": ["tiny"], "populations": [5], "seeds": 2, "perturbations": ["slow"]}
        },
    }
    cell = first_cell(validate(config, "test"))
    write_episode(cell, cell_path(cell))
    original = Path(cell_path(cell)).read_bytes()
    agents = pq.read_table(cell_path(cell)).to_pandas()
    later = agents[agents.step > 0]
    assert later.asked.any() and not later.asked.all()
    assert ((later.calls.fillna(0) > 0) == later.asked).all()  # a model call for each agent asked, and only those
    assert (later.staleness.dropna() == 1).all() and later.acted.sum() == later.staleness.notna().sum()
    assert replayed_without_the_model(cell, monkeypatch) == original  # the calls keyed by what each agent was shown


def churned(task: str, method: str, n: int, churn: dict[str, Any], **parts: Any) -> list[Any]:
    """Records of the default config's task and method under churn (and any other part given)."""
    cells = blocks(study(task, [method], n, ["none"], seeds=3))[(method, None)]
    perturbation = {**CLOCKS, "churn": churn, **parts}
    return play_block([{**copy.deepcopy(cell), "perturbation": perturbation} for cell in cells])


def test_an_agent_away_from_the_swarm_does_nothing_and_its_moves_are_counted():
    for record in churned("coloring-ws", "distributed", 8, {"leave": 0.2, "join": 0.3}):
        agents = pd.DataFrame({k: record.agents[k] for k in ("step", "agent", "present", "acted")})
        away = agents[~agents.present]
        assert len(away) and not away.acted.any()  # gone: it takes the idle action
        messages = record.table("messages").to_pandas()
        sent = set(zip(messages.step + 1, messages.sender))  # a message sent in round t leads to state t + 1
        assert not sent & set(zip(away.step, away.agent))
        present = agents.pivot(index="step", columns="agent", values="present").to_numpy()
        moved = present[1:] != present[:-1]
        assert record.summary["leaves"] == (moved & present[:-1]).sum() > 0
        assert record.summary["joins"] == (moved & ~present[:-1]).sum() > 0
        received = np.asarray(record.agents["received"])[~agents.present.to_numpy()]
        assert (received == 0).all() and record.summary["missed_deliveries"] > 0  # nothing reaches it while away
        answers = pd.Series(record.agents["answer"])
        last = agents.step == agents.step.max()
        assert answers[last & ~agents.present].isna().all()  # away in the answer round: no answer


def test_an_agent_that_leaves_loses_its_pending_call():
    (record, *_) = churned("cycle", "soft_fp", 11, {"leave": 0.3, "join": 0.5}, clocks={"latency": 2})
    agents = pd.DataFrame({k: np.asarray(record.agents[k]) for k in ("step", "agent", "present", "acted", "asked")})
    by_agent = agents.sort_values(["agent", "step"]).groupby("agent")
    outcomes = set()
    for _, rows in by_agent:
        asked, present, acted = rows.asked.to_numpy(), rows.present.to_numpy(), rows.acted.to_numpy()
        for state in np.flatnonzero(asked):  # asked in the round to `state`, applied two rounds later
            if state + 2 < len(rows):
                stayed = present[state : state + 3].all()
                assert acted[state + 2] == stayed
                outcomes.add(bool(stayed))
    assert outcomes == {True, False}  # calls applied, and calls lost by agents that left


def test_churn_without_leaving_is_no_part_of_the_cell():
    assert "churn" not in resolved("x", {"churn": {"leave": 0, "join": 0.5}})
    assert resolved("x", {"churn": {"leave": 0.1, "join": 0}})["churn"] == {"leave": 0.1}
    assert axis(resolved("x", {"churn": {"leave": 0.1}})) == ("leave rate per round, no return", 0.1)


@pytest.mark.parametrize("task, method, n", [("coloring-ws", "distributed", 8), ("silo", "distributed", 6)])
def test_late_decisions_and_late_messages_together(task, method, n):
    """Rounds in which every agent is idle (latency) bring held messages (delay): what arrives keeps
    what a classical algorithm reads."""
    cells = blocks(study(task, [method], n, ["none"], seeds=3))[(method, None)]
    medium = {key: value for key, value in MEDIUM_DEFAULTS.items() if key != "transit"} | {"loss": 0.3, "delay": 1}
    timed = [{**cell, "perturbation": {**CLOCKS, "clocks": {"latency": 2}, "medium": medium}} for cell in cells]
    records = play_block(timed)
    assert all(r.summary["delayed_messages"] > 0 and r.summary["decisions"] > 0 for r in records)


def test_a_cell_on_clocks_or_churn_counts_its_own_rounds_whatever_its_block():
    """Consensus on Delaunay graphs: seed 5's episode ends rounds before its block-mates'."""
    cells = blocks(study("consensus-dt", ["distributed"], 16, ["clocked", "churned"], seeds=[4, 5, 6]))
    for group in cells.values():
        together = play_block(group)
        assert len({len(r.agents["step"]) for r in together}) > 1, "episodes of different lengths"
        for cell, record in zip(group, together):
            records_equal(play_block([cell])[0], record)


@pytest.mark.parametrize("method", ["distributed", "nativemsg"])
def test_a_gather_held_back_passes_on_only_what_its_acting_agents_sent(method):
    """Silo-Bench's gather, as a classical baseline or inside the Waggle adapter's proposal (NativeMsg),
    told who acts, marks as passed on only the shards its acting agents sent: with time enough, every
    agent still gathers every shard on clocks and under partial activation (told nothing, it lost most
    of them: exact 0)."""
    cells = blocks(study("silo", [method], 6, ["none", "clocked", "drowsy-answers"], seeds=3))
    plain = play_block(cells[(method, None)])
    for perturbation in ("clocked", "drowsy-answers"):
        for held, base in zip(play_block(cells[(method, perturbation)]), plain):
            assert not np.asarray(held.agents["acted"])[6:].all(), "some agents held back"
            assert held.summary["exact"] == base.summary["exact"] == 1


def test_a_gather_takes_back_what_a_call_lost_with_its_agent_would_have_passed_on():
    """On clocks and under churn a call lost when its agent leaves sends nothing: Silo-Bench's gather,
    told whose calls were lost, counts as passed on only the shards its agents did send (told nothing,
    it never sent the lost call's shards again)."""
    perturbation = {**CLOCKS, "clocks": {"latency": 2}, "churn": {"leave": 0.3, "join": 0.6}}
    plain = blocks(study("silo", ["distributed"], 6, ["none"], seeds=3))[("distributed", None)]
    cells = [{**copy.deepcopy(cell), "perturbation": perturbation} for cell in plain]
    seeds = [cell["seed"] for cell in cells]
    task = make_task(cells[0])
    task.reset(seeds)
    gate = Gate(perturbation, task.n, Streams(seeds, "perturbation"))
    task.medium = Membership(task.medium, gate)
    policy = make_policy(cells, gate=gate)
    decide, sent, lost = policy.decide, [], 0

    def recording(observation: Any) -> Any:
        nonlocal lost
        actions = decide(observation)
        lost += 0 if gate.lost is None else int(gate.lost.sum())
        if actions.outbox is not None and len(actions.outbox.sender):
            shards, _ = carried_shards(actions.outbox.payload)
            sent.append(pd.DataFrame(shards).groupby(actions.outbox.sender).any())
        return actions

    policy.decide = recording
    run(task, policy)
    passed = pd.DataFrame(policy.inner.holdings.passed)
    sent_by = pd.concat(sent).groupby(level=0).any().reindex(passed.index, fill_value=False)
    assert lost > 0 and passed.to_numpy().any()
    assert not (passed.to_numpy() & ~sent_by.to_numpy()).any()  # passed on: sent


SECONDS = 0.2  # a round: the tiny model's batched call takes about 0.1 s on a 2-core Xeon, a few rounds at most


def test_a_model_decision_takes_the_rounds_its_call_took_and_replays_so(tiny_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    method = {"kind": "llm", "backend": "transformers", "model": str(tiny_model), "notes_chars": 30, "max_tokens": 64}
    config = {
        "tasks": {"cycle": {"kind": "coloring", "steps": 10}},
        "methods": {"tiny": method},
        "perturbations": {"timed": {"clocks": {"seconds_per_round": SECONDS}}},
        "studies": {
            "s": {"tasks": ["cycle"], "methods": ["tiny"], "populations": [5], "seeds": 2, "perturbations": ["timed"]}
        },
    }
    cell = first_cell(validate(config, "test"))
    write_episode(cell, cell_path(cell))
    original = Path(cell_path(cell)).read_bytes()
    agents = pq.read_table(cell_path(cell)).to_pandas().sort_values(["agent", "step"])
    for _, rows in agents.groupby("agent"):
        asked = rows[rows.asked]
        for step, seconds in zip(asked.step, asked.latency_s):
            rounds = max(1, int(np.ceil(seconds / SECONDS)))
            applied = rows[rows.step == step + rounds]
            assert applied.empty or (applied.staleness == rounds).all()  # applied as many rounds later as its call took
    assert (agents.staleness.dropna() >= 1).all() and agents.acted.any()
    assert replayed_without_the_model(cell, monkeypatch) == original  # the recorded seconds time the replay alike
    config["perturbations"]["timed"]["clocks"]["latency"] = 2
    with pytest.raises(ConfigError, match="`seconds_per_round` times decisions by calls. seconds .* give no latency"):
        validate(config, "test")


def test_the_episode_page_marks_absent_agents_and_late_decisions(tmp_path):
    import altair as alt

    (cell,) = blocks(study("coloring-ws", ["distributed"], 8, ["none"], seeds=[1]))[("distributed", None)]
    perturbation = {**CLOCKS, "clocks": {"period": 2, "latency": 1}, "churn": {"leave": 0.2, "join": 0.3}}
    cell = {**cell, "perturbation": perturbation}
    path = tmp_path / "s1.parquet"
    write_episode(cell, path)
    page = render_page(load_episode(path), tmp_path / "s1.html").read_text(encoding="utf-8")
    spec = json.loads(re.search(r'id="episode-spec">(.*?)</script>', page, re.DOTALL).group(1))
    alt.HConcatChart.from_dict(spec, validate=True)
    flagged = pd.DataFrame(spec["datasets"]["flags"])
    agents = pq.read_table(path).to_pandas()
    assert (flagged.flag == "away").sum() == (~agents.present).sum() > 0
    assert (flagged.flag == "applied a late decision").sum() == (agents.staleness > 0).sum() > 0


def cache_file(path: Path, seconds: list[float]) -> Path:
    """A response cache as hivebench writes it, its calls having taken these seconds (0: recorded none)."""
    lines = [
        {"key": f"k{i}", "result": ChatResult("{}", Usage(latency_s=s)).to_json(), "model": "m"}
        for i, s in enumerate(seconds)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_decision_takes_the_rounds_of_a_call_drawn_from_a_response_cache(tmp_path, monkeypatch):
    """Any method (here a classical one) on clocks with `latencies`: each decision applies as many
    rounds after it was asked as one of the cache's recorded calls took (seconds over a round's,
    rounded up, at least one); the cell holds the file by its content, and a changed file is refused."""
    monkeypatch.chdir(tmp_path)
    calls = cache_file(tmp_path / "calls.jsonl", [0.0, 0.4, 1.0, 2.5])  # rounds 1, 1, 3; the 0 is no call timed
    config = copy.deepcopy(default_config())
    config["perturbations"] = {"cached": {"clocks": {"latencies": str(calls), "seconds_per_round": 1.0}}}
    config["studies"] = {
        "t": {"tasks": ["cycle"], "methods": ["soft_fp"], "seeds": 4, "populations": [7], "perturbations": ["cached"]}
    }
    (block,) = study_blocks(validate(config, str(CONFIG)), "t", CONFIG.parent)
    cells = list(block.cells())
    sha256 = hashlib.sha256(calls.read_bytes()).hexdigest()
    assert cells[0]["perturbation"]["clocks"]["latencies"] == {"file": "calls.jsonl", "sha256": sha256}
    ages = np.concatenate([pd.Series(r.agents["staleness"]).dropna().to_numpy() for r in play_block(cells)])
    assert set(ages) == {1, 3} and (ages == 1).mean() > 0.5  # two recorded calls of three take one round
    calls.write_text(calls.read_text() + calls.read_text().splitlines()[-1] + "\n")
    with pytest.raises(ValueError, match="calls.jsonl changed since the workflow was read"):
        play_block(cells)


def test_latencies_from_a_cache_that_times_no_call_or_without_a_rounds_seconds_are_refused(tmp_path):
    config = copy.deepcopy(default_config())
    study = {"tasks": ["cycle"], "methods": ["greedy"], "seeds": 2, "populations": [5], "perturbations": ["c"]}
    config["studies"] = {"t": study}
    untimed = cache_file(tmp_path / "scripted.jsonl", [0.0, 0.0])
    for clocks, problem in [
        ({"latencies": str(tmp_path / "none.jsonl"), "seconds_per_round": 1}, r"c.clocks.latencies: no such file"),
        ({"latencies": str(untimed), "seconds_per_round": 1}, r"scripted.jsonl records no call's seconds"),
        ({"latencies": str(untimed)}, r"c.clocks.latencies: give `seconds_per_round` too"),
    ]:
        config["perturbations"] = {"c": {"clocks": clocks}}
        with pytest.raises(ConfigError, match=problem):
            validate(config, str(CONFIG))
