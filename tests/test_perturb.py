"""Perturbations (hivebench.perturb): an unreliable medium, faulty agents and partial activation wrap
a suite's medium and a method's policy; a perturbation that changes nothing plays exactly the
unperturbed cell, and every draw is the cell seed's own."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from hivebench.agents.mixed import members_of
from hivebench.cells import study_blocks
from hivebench.config import ConfigError, schema, validate
from hivebench.contrasts import contrast_pairs
from hivebench.engine.block import Block, GraphBlock
from hivebench.engine.jobs import summary_row
from hivebench.engine.loop import make_task, play_block
from hivebench.engine.media import exchange
from hivebench.engine.media.neighbours import NeighbourMessages
from hivebench.engine.media.outbox import Outbox
from hivebench.engine.media.radius import RadiusBroadcast
from hivebench.engine.writer import write_episode
from hivebench.ids import digest
from hivebench.models import ChatResult
from hivebench.models.cache import ResponseCache
from hivebench.paths import calls_path, cell_files, cell_path, inline_tables, side_path, table_fields
from hivebench.perturb import MEDIUM_DEFAULTS, VERSION, axis, resolved
from hivebench.perturb.report import members_table, render, robustness_table
from hivebench.perturb.transit import UnreliableMedium
from hivebench.registry import METHODS, SUITE_OBJECTS, TASK_KINDS
from hivebench.report import Section
from hivebench.seeding import Streams
from hivebench.store import INLINE_KEY, SUMMARY_KEY, inline_text, read_cell
from hivebench.suites.agentsnet.task import NetActions
from hivebench.suites.agentsnet.text import NetView
from hivebench.suites.loopbench.task import ColoringTask
from hivebench.suites.silobench.adversary import SiloAdversary, dealt_lies, forged_instance, with_forged_own
from hivebench.suites.silobench.exchange import FORGED, ShardTexts, lies
from hivebench.suites.silobench.instances import instance, whole_answer
from hivebench.suites.silobench.task import SiloActions
from hivebench.suites.silobench.text import SiloView
from hivebench.view.episode import load as load_episode
from hivebench.view.page import render as render_page
from tests.test_media import graph

CONFIG = Path(__file__).parents[1] / "config" / "config.yaml"
# (task, methods, population) of every suite: classical baselines and the Waggle controls
CASES = [
    ("cycle", ["soft_fp", "greedy"], 5),
    ("coloring-ws", ["distributed", "fixedswarm"], 8),
    ("vertex_cover-ba", ["distributed"], 8),
    ("matching-dt", ["distributed"], 8),
    ("swarm-pursuit", ["heuristic", "nativemsg"], 8),
    ("silo", ["distributed", "fixedswarm"], 6),
]
PERTURBATIONS = {
    "q0": {"medium": {"loss": 0}},
    "f0": {"faults": {"kind": "crash", "fraction": 0, "onset": 2}},
    "a1": {"activation": {"probability": 1}},
    "lossy": {"medium": {"loss": 0.3, "delay": 1, "delay_max": 2}},
    "lossy-counted": {"medium": {"loss": 0.3, "delay": 1, "delay_max": 2, "transit": False}},
    "crash": {"faults": {"kind": "crash", "fraction": 0.25, "onset": 2}},
    "stuck": {"faults": {"kind": "stuck", "fraction": 0.25, "onset": 1}},
    "sleepy": {"activation": {"count": 3}},
    "drowsy": {"activation": {"probability": 0.4}},
    "drowsy-answers": {"activation": {"probability": 0.4, "spare_answers": True}},
    "adv": {"faults": {"kind": "adversarial", "fraction": 0.25, "onset": 1}},
    "lie": {"faults": {"kind": "adversarial", "fraction": 0.25}},
    "rand": {"faults": {"kind": "random", "fraction": 0.25, "onset": 0}},
    "lossy-crash": {
        "medium": {"loss": 0.3, "delay": 1, "delay_max": 2},
        "faults": {"kind": "crash", "fraction": 0.25, "onset": 2},
    },
    "field-loss": {"medium": {"loss": 0.5}},
    "field-expiry": {"medium": {"expiry": 3}},
    "clocked": {"clocks": {"period": 2, "jitter": 1, "latency": 1, "latency_max": 2}},
    "churned": {"churn": {"leave": 0.1, "join": 0.3}},
}


@cache
def default_config() -> dict[str, Any]:
    return yaml.safe_load(CONFIG.read_text())


def study(task: str, methods: list[str], n: int, perturbations: list[str], seeds: Any = 2) -> dict[str, Any]:
    """A validated config whose study `t` runs the task under the perturbations."""
    config = copy.deepcopy(default_config())
    config["perturbations"] = PERTURBATIONS
    config["studies"] = {
        "t": {"tasks": [task], "methods": methods, "seeds": seeds, "populations": [n], "perturbations": perturbations}
    }
    return validate(config, str(CONFIG))


def blocks(config: dict[str, Any]) -> dict[tuple[str, str | None], list[dict[str, Any]]]:
    """Each (method, perturbation)'s cells of the study's first task."""
    out: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for block in study_blocks(config, "t", CONFIG.parent):
        key = (block.shared["method"]["name"], block.shared.get("perturbation", {}).get("name"))
        out.setdefault(key, list(block.cells()))
    return out


def without_metadata(path: str) -> pa.Table:
    return pq.read_table(path).replace_schema_metadata(None)


@pytest.mark.parametrize("task, methods, n", CASES, ids=[case[0] for case in CASES])
def test_a_perturbation_that_changes_nothing_writes_the_unperturbed_cells_bytes(task, methods, n, tmp_path):
    cells = blocks(study(task, methods, n, ["none", "q0", "f0", "a1"]))
    for (method, perturbation), group in cells.items():
        if perturbation is None:
            continue
        plain = cells[(method, None)]
        for cell, base, record, base_record in zip(group, plain, play_block(group), play_block(plain)):
            assert cell["perturbation"] == {"name": perturbation, "version": VERSION}  # no part left: nothing wraps
            for c, p, r in ((cell, "a", record), (base, "b", base_record)):
                write_episode(c, tmp_path / p / "s.parquet", r)
            summaries = [pq.read_schema(tmp_path / p / "s.parquet").metadata[SUMMARY_KEY] for p in "ab"]
            assert summaries[0] == summaries[1]  # as written
            assert without_metadata(tmp_path / "a" / "s.parquet").equals(without_metadata(tmp_path / "b" / "s.parquet"))
            for name in record.tables:  # side tables hold no identity: the same bytes
                a = (tmp_path / "a" / f"s.{name}.parquet").read_bytes()
                assert a == (tmp_path / "b" / f"s.{name}.parquet").read_bytes(), (method, perturbation, name)


def records_equal(a, b) -> None:
    assert json.dumps(a.summary) == json.dumps(b.summary)  # NaN as NaN
    assert pa.table(a.agents).equals(pa.table(b.agents))
    assert a.tables.keys() == b.tables.keys()
    for name in a.tables:
        assert a.table(name).equals(b.table(name)), name


@pytest.mark.parametrize("task, methods, n", CASES, ids=[case[0] for case in CASES])
def test_a_perturbed_cell_is_its_seeds_alone_whatever_its_block(task, methods, n):
    names = ["crash", "stuck", "sleepy", "lossy", "clocked", "churned"]
    cells = blocks(study(task, methods[:1], n, names, seeds=3))
    for (_, perturbation), group in cells.items():
        together = play_block(group)
        for cell, record in zip(group, together):
            records_equal(play_block([cell])[0], record)  # alone, and again: the same numbers
        changed = play_block(blocks(study(task, methods[:1], n, ["none"], seeds=3))[(methods[0], None)])
        assert any(
            json.dumps(a.summary) != json.dumps(b.summary) or not pa.table(a.agents).equals(pa.table(b.agents))
            for a, b in zip(together, changed)
        ), perturbation


def test_a_crashed_agent_sends_nothing_and_keeps_its_state_from_its_onset():
    onset = PERTURBATIONS["crash"]["faults"]["onset"]
    for task, method in (("swarm-pursuit", "nativemsg"), ("coloring-ws", "distributed"), ("silo", "distributed")):
        n = 8 if task != "silo" else 6
        (cell,) = blocks(study(task, [method], n, ["crash"], seeds=[3]))[(method, "crash")]
        record = play_block([cell])[0]
        agents = pa.table(record.agents).to_pandas()
        faulty = sorted(agents[agents.faulty & (agents.step == 0)].agent)
        assert len(faulty) == 2 and record.summary["faulty_agents"] == 2
        messages = record.table("messages").to_pandas()
        assert len(messages[~messages.sender.isin(faulty)]) > 0  # the others talk
        assert messages[messages.sender.isin(faulty) & (messages.step >= onset)].empty, task
        assert not agents[agents.agent.isin(faulty) & (agents.step > onset)].acted.any()
        if task == "swarm-pursuit":  # frozen: it stays (others may still push it: SwarmBench's physics)
            assert (agents[agents.agent.isin(faulty) & (agents.step > onset)].action == "STAY").all()


def test_partial_activation_lets_exactly_its_count_act_and_holds_the_others():
    (cell,) = blocks(study("cycle", ["greedy"], 7, ["sleepy"], seeds=[0]))[("greedy", "sleepy")]
    agents = pa.table(play_block([cell])[0].agents).to_pandas()
    acted = agents[agents.step > 0].groupby("step").acted.sum()
    assert (acted == 3).all() and len(acted) == cell["task"]["params"]["steps"]
    colors = agents.pivot(index="step", columns="agent", values="color").to_numpy()
    asleep = ~agents.pivot(index="step", columns="agent", values="acted").to_numpy()
    assert (colors[1:][asleep[1:]] == colors[:-1][asleep[1:]]).all()  # an agent asleep keeps its colour


@pytest.mark.parametrize("task, n", [("consensus-dt", 8), ("silo", 6)])
def test_activation_that_spares_answers_wakes_every_agent_in_its_answer_round(task, n):
    cells = blocks(study(task, ["distributed"], n, ["drowsy", "drowsy-answers"], seeds=[1, 2, 3]))
    assert "spare_answers" not in cells[("distributed", "drowsy")][0]["perturbation"]["activation"]
    assert axis(cells[("distributed", "drowsy-answers")][0]["perturbation"]) == (
        "activation probability, answers spared",
        0.4,
    )
    for name, spared in (("drowsy", False), ("drowsy-answers", True)):
        acted = []
        for record in play_block(cells[("distributed", name)]):
            agents = pa.table(record.agents).to_pandas()
            last = agents[agents.step == agents.step.max()]
            given = last.answer.notna().to_numpy()
            assert given.all() == spared and last.acted.all() == spared  # asleep, an agent gives no answer
            acted.extend(agents.acted[(agents.step > 0) & (agents.step < agents.step.max())])
        assert 0.25 < np.mean(acted) < 0.55  # the conversation's rounds sleep alike (p = 0.4)


def messages_through(medium: UnreliableMedium, rounds: int, outbox, where=None) -> dict[str, list[int]]:
    """Send `outbox(t)` each round (texts naming their round and edge) and note the rounds at whose start
    each text arrives, as the inbox shows it."""
    arrived: dict[str, list[int]] = {}
    for t in range(rounds):
        medium.send(t, outbox(t))
        inbox = medium.deliver(where)
        if isinstance(inbox, exchange.Delivered):
            texts = [f"{inbox.outbox.text[m]}>{r}" for m, r in zip(inbox.message, inbox.receiver)]
        else:
            texts = [f"{text}>{r}" for text, r in zip(inbox.texts().to_pylist(), inbox.receiver)]
        for text in texts:
            arrived.setdefault(text, []).append(t + 1)
    return arrived


def settings(**given: Any) -> dict[str, Any]:
    """A medium part as the config schema fills it in: its defaults, then `given`."""
    medium = schema()["$defs"]["perturbation"]["properties"]["medium"]["properties"]
    return {key: field["default"] for key, field in medium.items() if "default" in field} | given


def test_the_axes_know_every_medium_default():
    assert {k: v for k, v in settings().items() if k != "truncate_chars"} == MEDIUM_DEFAULTS


CYCLE4 = graph([(0, 1), (1, 2), (2, 3), (3, 0)], 4)


def unicast(t: int) -> Outbox:
    block = GraphBlock([CYCLE4, CYCLE4])
    return Outbox(block.src, block.indices, pa.array([f"{t}:{s}-{r}" for s, r in zip(block.src, block.indices)]))


def test_a_lost_message_never_arrives_and_the_others_arrive_next_round():
    medium = UnreliableMedium(
        NeighbourMessages(GraphBlock([CYCLE4, CYCLE4]), 100, [9, 9]), settings(loss=0.4), Streams([1, 2], "x")
    )
    arrived = messages_through(medium, 10, unicast)
    transit = pa.concat_tables([medium.tables(s)["transit"] for s in range(2)]).to_pandas()
    block = GraphBlock([CYCLE4, CYCLE4])
    sent = {f"{t}:{s}-{r}>{r}" for t in range(10) for s, r in zip(block.src, block.indices)}
    missing = sent - set(arrived)
    assert 0.2 * len(sent) < len(missing) < 0.6 * len(sent)  # q = 0.4 of 160
    assert all(rounds == [int(text.split(":")[0]) + 1] for text, rounds in arrived.items())  # once, next round
    assert (transit.fate == "lost").sum() == len(missing) and (transit.arrival == -1).all()
    assert sum(medium.counts(s)["lost_messages"] for s in range(2)) == len(missing)
    assert sum(medium.counts(s)["messages"] for s in range(2)) == len(sent)  # every message is recorded as sent


def test_a_delayed_message_arrives_exactly_its_delay_late_and_a_duplicate_once_more_after():
    block = GraphBlock([CYCLE4, CYCLE4])
    medium = UnreliableMedium(NeighbourMessages(block, 100, [9, 9]), settings(delay=2), Streams([1, 2], "x"))
    arrived = messages_through(medium, 10, unicast)
    assert arrived and all(rounds == [int(text.split(":")[0]) + 3] for text, rounds in arrived.items())
    assert len(arrived) == 8 * 16  # 16 directed edges; those sent in the last two rounds are on their way
    assert [medium.counts(s)["max_in_flight"] for s in (0, 1)] == [16, 16]  # two rounds' 8 messages each
    doubled = UnreliableMedium(NeighbourMessages(block, 100, [9, 9]), settings(duplicate=0.5), Streams([1, 2], "x"))
    twice = {text: rounds for text, rounds in messages_through(doubled, 10, unicast).items() if len(rounds) > 1}
    assert twice and all(rounds[1] == rounds[0] + 1 for rounds in twice.values())
    transit = doubled.tables(0)["transit"].to_pandas()
    assert set(transit.fate) == {"duplicated"} and (transit.arrival == transit.step + 2).all()


def loopbench_under(medium: dict[str, Any], rounds: int = 12) -> ColoringTask:
    """Two 7-cycles coloured at random for `rounds` rounds, each node announcing its colour through an
    unreliable medium with these settings."""
    task = ColoringTask({"graph": "cycle", "colors": 2, "steps": rounds, "init": "random", "metric_window": 3}, 7)
    task.reset([3, 4])
    task.medium = UnreliableMedium(task.medium, settings(**medium), Streams([3, 4], "perturbation/medium"))
    draws = np.random.default_rng(0).integers(0, 2, (rounds, task.agents))
    for decisions in draws:
        views = task.observe()
        task.step(decisions)
    views = task.observe()
    assert (views.heard[-1] == task.hearing.heard[rounds]).all()
    return task


def test_a_loopbench_agent_hears_a_delayed_colour_late_and_keeps_the_last_it_heard_of_a_lost_one():
    late = loopbench_under({"delay": 2})
    truth = late.trajectory[:, late.hearing.sender]  # per state, each edge's neighbour's colour as it is
    assert (late.hearing.heard[:3] == truth[0]).all()  # a colour of state t >= 1 is heard at state t + 2
    assert (late.hearing.heard[3:] == truth[1:-2]).all()
    lossy = loopbench_under({"loss": 0.3})
    heard, truth = lossy.hearing.heard, lossy.trajectory[:, lossy.hearing.sender]
    transit = pa.concat_tables([lossy.medium.tables(s)["transit"] for s in range(2)]).to_pandas()
    stale = heard[1:] != truth[1:]
    assert stale.any() and (transit.fate == "lost").sum() == sum(
        lossy.medium.counts(s)["lost_messages"] for s in (0, 1)
    )
    for t in range(1, len(heard)):  # an edge either heard this round's colour or kept last round's
        assert ((heard[t] == truth[t]) | (heard[t] == heard[t - 1])).all()
    # the views' counts are of the heard colours; the record's conflicts of the colours as they are
    views = lossy.observe()
    heard_counts = np.zeros((lossy.agents, 2), dtype=np.int64)
    np.add.at(heard_counts, (lossy.hearing.receiver, heard[-1]), 1)
    assert (views.neighbor_counts == heard_counts).all()
    actual = np.zeros_like(heard_counts)
    np.add.at(actual, (lossy.hearing.receiver, truth[-1]), 1)
    colors = lossy.trajectory[-1]
    assert (lossy.conflicts[-1] == actual[np.arange(lossy.agents), colors]).all()
    assert (views.own_conflicts == heard_counts[np.arange(lossy.agents), colors]).all()


def test_a_broadcasts_deliveries_share_its_fate_unless_drawn_per_delivery():
    position = np.zeros((4, 2), dtype=np.int64)  # every agent within reach of every other
    present = np.ones(4, dtype=bool)

    def said(t: int) -> Outbox:
        return Outbox(np.arange(4), np.full(4, -1), pa.array([f"{t}:{s}" for s in range(4)]))

    for unit, shared in (("message", True), ("delivery", False)):
        medium = UnreliableMedium(
            RadiusBroadcast(Block(4, 1), 1, 100, False), settings(loss=0.5, unit=unit), Streams([5], "x")
        )
        arrived = messages_through(medium, 20, said, (position, present))
        heard_by = {}
        for text in arrived:
            heard_by.setdefault(text.split(">")[0], set()).add(text)
        assert all(len(who) in ((3,) if shared else (1, 2, 3)) for who in heard_by.values()), unit
        assert shared or any(len(who) < 3 for who in heard_by.values())


def test_point_to_point_deliveries_arrive_late_beside_the_rounds_own():
    block = GraphBlock([graph([(0, 1), (1, 2)], 3)])
    shards = ShardTexts([[[1], [2], [3]]])
    medium = UnreliableMedium(exchange.PointToPoint(block, shards, 100), settings(delay=1), Streams([0], "x"))

    def sent(t: int) -> exchange.Outbox:
        return exchange.Outbox(np.array([0, 1]), np.array([1, 2]), text=[f"{t}:a", f"{t}:b"])

    arrived = messages_through(medium, 5, sent)
    assert arrived == {f"{t}:{x}>{r}": [t + 2] for t in range(4) for x, r in (("a", 1), ("b", 2))}


def test_the_config_names_a_perturbation_it_lacks_and_one_that_cannot_apply(monkeypatch):
    with pytest.raises(ConfigError, match=r"studies.t.perturbations\[1\]: unknown perturbation 'wobbly'"):
        study("cycle", ["greedy"], 5, ["none", "wobbly"])
    suite, kind = TASK_KINDS["coloring"]  # as a plug-in's task kind without a medium would declare it
    monkeypatch.setitem(TASK_KINDS, "coloring", (suite, dataclasses.replace(kind, medium=False)))
    with pytest.raises(
        ConfigError, match=r"perturbation 'lossy' changes messages, and task 'cycle' \(coloring\) sends none"
    ):
        study("cycle", ["greedy"], 5, ["lossy"])
    with pytest.raises(ConfigError, match="perturbations"):
        config = copy.deepcopy(default_config())
        config["perturbations"] = {"none": {"activation": {"count": 1}}}
        validate(config, str(CONFIG))


def test_a_perturbed_arm_has_its_own_name_path_and_identity():
    cells = blocks(study("silo", ["distributed"], 6, ["none", "lossy"]))
    plain, lossy = cells[("distributed", None)][0], cells[("distributed", "lossy")][0]
    assert table_fields(plain)["method"] == "distributed" and "perturbation" not in table_fields(plain)
    assert table_fields(lossy)["method"] == "distributed+lossy" and table_fields(lossy)["perturbation"] == "lossy"
    assert "/distributed+lossy/n6/" in cell_path(lossy)
    # its changed deliveries lie in its per-agent file: the files are named as the unperturbed cell's
    assert [Path(f).name for f in cell_files(lossy)] == [Path(f).name for f in cell_files(plain)]
    assert inline_tables(lossy) == ("transit",) and inline_tables(plain) == ()
    expected = settings(loss=0.3, delay=1, delay_max=2)
    del expected["truncate_chars"]  # nothing is cut: the length a cut keeps is no part of the cell
    del expected["transit"]  # as every cell held it before the setting: the default is no part of the cell
    assert lossy["perturbation"]["medium"] == expected
    assert {k: v for k, v in lossy.items() if k != "perturbation"} == plain


def test_an_arm_that_moves_one_setting_lies_on_its_axis():
    assert axis(resolved("x", {"medium": settings(loss=0.3)})) == ("message loss", 0.3)
    assert axis(resolved("x", {"medium": settings(delay=2)})) == ("message delay (rounds)", 2)
    assert axis(resolved("x", PERTURBATIONS["crash"])) == ("crash fraction from round 2", 0.25)
    assert axis(resolved("x", PERTURBATIONS["sleepy"])) == ("agents active per round", 3)
    assert axis(resolved("x", PERTURBATIONS["lossy"])) is None  # loss and delay at once: a point of its own
    both = {**PERTURBATIONS["crash"], **PERTURBATIONS["sleepy"]}
    assert axis(resolved("x", both)) is None


def test_contrasts_set_methods_against_the_reference_under_each_perturbation_and_arms_against_their_method():
    methods = ["nocomm", "fixedswarm", "nocomm+loss", "fixedswarm+loss", "fixedswarm+crash"]
    assert contrast_pairs(methods, {"reference": "nocomm"}) == [
        ("fixedswarm", "nocomm"),
        ("fixedswarm+loss", "nocomm+loss"),
        ("nocomm+loss", "nocomm"),
        ("fixedswarm+loss", "fixedswarm"),
        ("fixedswarm+crash", "fixedswarm"),
    ]
    assert contrast_pairs(["a", "b"], {"reference": "a"}) == [("b", "a")]  # an unperturbed study as before


def test_the_robustness_section_sets_each_arm_against_its_method_seed_by_seed(tmp_path):
    config = study("silo", ["distributed"], 6, ["none", "lossy", "crash"], seeds=4)
    rows = []
    for cells in blocks(config).values():
        rows += [summary_row(c, digest(c), r.summary) for c, r in zip(cells, play_block(cells))]
    episodes = pd.DataFrame(rows)
    table = robustness_table(episodes, 1000, 0.95, 0)
    crash = table[(table.perturbation == "crash") & (table.population == "all")].iloc[0]
    assert (crash.method, crash.axis, crash.strength, crash.n_units) == (
        "distributed",
        "crash fraction from round 2",
        0.25,
        4,  # the study's first task (I-09), four seeds
    )
    wide = episodes.pivot_table(index=["task", "seed"], columns="method", values="exact")
    expected = (wide["distributed+crash"] - wide["distributed"]).groupby("task").mean().mean()  # tasks weigh alike
    assert crash.estimate == pytest.approx(expected) and crash.lo <= crash.estimate <= crash.hi
    assert table[table.perturbation == "lossy"].axis.eq("").all()  # two settings at once: no curve
    html = render(Section(episodes, tmp_path, "robustness/", 1000, 0.95, 0, {}, None))
    assert "<h2>Robustness</h2>" in html and (tmp_path / "curves.png").stat().st_size > 1000
    assert pd.read_csv(tmp_path / "robustness.csv").shape[0] == len(table)


def mixed_study(tmp_path: Path, members: dict[str, Any], task: str, n: int, seeds: int = 3, **methods: Any):
    config = copy.deepcopy(default_config())
    config["methods"].update(methods, mix={"kind": "mixed", "members": members})
    config["perturbations"] = PERTURBATIONS
    config["studies"] = {"t": {"tasks": [task], "methods": ["mix", *members], "seeds": seeds, "populations": [n]}}
    source = tmp_path / "config.yaml"
    source.write_text(yaml.safe_dump(config))
    return {
        b.shared["method"]["name"]: list(b.cells()) for b in study_blocks(validate(config, str(source)), "t", tmp_path)
    }


@pytest.mark.parametrize(
    "task, method, n", [("cycle", "soft_fp", 5), ("coloring-ws", "distributed", 8), ("silo-waggle", "nativemsg", 8)]
)
def test_a_mixed_population_of_one_method_plays_as_that_method(task, method, n, tmp_path):
    cells = mixed_study(tmp_path, {method: 1}, task, n)
    for mixed, alone in zip(play_block(cells["mix"]), play_block(cells[method])):
        assert set(mixed.agents.pop("member").to_pylist()) == {method}
        split = {k: mixed.summary.pop(k) for k in list(mixed.summary) if "@" in k}
        records_equal(mixed, alone)
        agents = pa.table(alone.agents).to_pandas()
        last = agents[agents.step == agents.step.max()]
        for metric in SUITE_OBJECTS[cells[method][0]["suite"]].agent_metrics:  # the one member: every agent
            assert split.pop(f"{metric}@{method}") == pytest.approx(last[metric].astype(float).mean())
        assert not split


@pytest.mark.parametrize("method", ["nativemsg", "fixedswarm"])
def test_a_method_split_into_two_members_plays_and_counts_as_it_does_alone(method, tmp_path):
    """NativeMsg and FixedSwarm draw nothing on Silo-Bench: as two members of one settings each plays
    as it plays alone. The runtime's counters (each member's over its own agents) add up to the
    method's, and FixedSwarm's two members write on one trace field and read each other's traces."""
    other = f"{method}-b"
    cells = mixed_study(tmp_path, {method: 0.5, other: 0.5}, "silo-waggle", 8, **{other: {"kind": method}})
    for mixed, alone in zip(play_block(cells["mix"]), play_block(cells[method])):
        assert set(mixed.agents.pop("member").to_pylist()) == {method, other}
        assert {k: v for k, v in mixed.summary.items() if "@" not in k} == alone.summary
        assert mixed.agents.keys() == alone.agents.keys()
        for name, values in alone.agents.items():  # the members' columns joined: their values, typed anew
            assert pa.array(mixed.agents[name]).to_pylist() == pa.array(values).to_pylist(), name
        assert mixed.tables.keys() == alone.tables.keys()
        for name in alone.tables:
            assert mixed.table(name).equals(alone.table(name)), name
        assert alone.summary["delivered_frames"] > 0 and alone.summary.get("traces_written", 1) > 0


def test_a_mixed_population_deals_its_shares_from_the_seed_and_a_model_member_asks_only_its_agents(tmp_path):
    steps, model_agents = 15, 2  # C5: 40% of 5 agents
    (tmp_path / "replies.jsonl").write_text(json.dumps({"color": 1, "notes": "one"}) + "\n")
    scripted = {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", "notes_chars": 60, "max_tokens": 64}
    cells = mixed_study(tmp_path, {"model": 0.4, "soft_fp": 0.6}, "cycle", 5, seeds=4, model=scripted)
    with pytest.raises(Exception, match="replies"):  # one reply: the member runs out in its first round of two agents
        play_block(cells["mix"][:1])
    (tmp_path / "replies.jsonl").write_text((json.dumps({"color": 1, "notes": "one"}) + "\n") * steps * model_agents)
    records = play_block(cells["mix"])
    deals = []
    for record in records:
        agents = pa.table(record.agents).to_pandas()
        members = agents[agents.step == 0].set_index("agent").member
        assert sorted(members) == ["model", "model", "soft_fp", "soft_fp", "soft_fp"]
        asked = agents[agents.step > 0].dropna(subset=["decision"])
        assert set(asked.agent) == set(members[members == "model"].index)  # its two agents, every round
        assert len(asked) == steps * model_agents and (asked.color == 1).all()
        deals.append(tuple(members))
    assert len(set(deals)) > 1  # drawn per seed
    assert [tuple(pa.table(r.agents).to_pandas().query("step == 0").member) for r in play_block(cells["mix"])] == deals


def test_the_config_names_what_is_wrong_with_a_mixed_population(tmp_path):
    for members, problem in (
        ({"soft_fp": 0.5, "greedy": 0.4}, "the shares sum to 0.9, not 1"),
        ({"soft_fp": [0, 1], "greedy": 0.5}, "give every member a share, or every member its agents"),
        ({"soft_fp": [0, 1], "greedy": [1]}, "an agent is listed for two members"),
        ({"soft_fp": 0.5, "nowhere": 0.5}, "members.nowhere: unknown method"),
        ({"soft_fp": 0.5, "distributed": 0.5}, "members.distributed: kind distributed does not run suite loopbench"),
    ):
        with pytest.raises(ConfigError, match=re.escape(problem)):
            mixed_study(tmp_path, members, "cycle", 5)


@pytest.mark.parametrize("task", ["swarm-pursuit", "coloring-ws", "silo-waggle"])
def test_the_waggle_validator_refuses_every_trace_an_adversary_forges(task):
    cells = blocks(study(task, ["fixedswarm"], 8, ["none", "adv"], seeds=2))
    for plain, forged in zip(play_block(cells[("fixedswarm", None)]), play_block(cells[("fixedswarm", "adv")])):
        agents = pa.table(forged.agents).to_pandas()
        adversaries = set(agents[agents.faulty].agent)
        assert forged.summary["forged_traces"] > 0 and plain.summary["invalid_records"] == 0
        # every forged trace refused, none written: what reached the field from an adversary after its
        # onset is nothing it forged (its controller's own traces are replaced)
        assert forged.summary["invalid_records"] == forged.summary["forged_traces"]
        traces = forged.table("traces").to_pandas()
        assert traces[traces.writer.isin(adversaries) & (traces.step >= 1)].empty


def test_agentsnet_adversaries_claim_leadership_and_random_agents_answer_among_their_options():
    cells = blocks(study("leader_election-ws", ["distributed"], 8, ["adv", "rand"], seeds=[4]))
    adversarial, random = (play_block(cells[("distributed", p)])[0] for p in ("adv", "rand"))
    agents = pa.table(adversarial.agents).to_pandas()
    final = agents[agents.step == agents.step.max()]
    assert (final[final.faulty].answer == "Yes").all() and adversarial.summary["score"] == 0  # two leaders
    agents = pa.table(random.agents).to_pandas()
    final = agents[agents.step == agents.step.max()]
    assert final[final.faulty].answer.isin(["Yes", "No"]).all()
    messages = random.table("messages").to_pandas()
    assert messages[messages.sender.isin(final[final.faulty].agent)].empty  # a random agent's messages are empty: none


def test_an_adversarial_fault_needs_its_suites_adversary_or_the_trace_field(monkeypatch):
    with pytest.raises(ConfigError, match="loopbench defines no adversary"):
        study("cycle", ["greedy"], 5, ["adv"])
    study("silo", ["distributed"], 6, ["adv"])
    monkeypatch.setitem(SUITE_OBJECTS, "silobench", dataclasses.replace(SUITE_OBJECTS["silobench"], adversary=None))
    with pytest.raises(ConfigError, match="silobench defines no adversary"):
        study("silo", ["distributed"], 6, ["adv"])
    study("silo", ["fixedswarm"], 6, ["adv"])  # its agents forge traces


def test_a_silobench_adversary_reports_a_wrong_value_of_its_shard_and_its_receivers_answer_from_it():
    config = study("silo", ["distributed"], 6, ["none", "lie"], seeds=[5, 6, 7])
    cells = blocks(config)
    liars, honest = play_block(cells[("distributed", "lie")]), play_block(cells[("distributed", None)])
    assert all(r.summary["exact"] == 1 for r in honest)
    assert np.mean([r.summary["exact"] for r in liars]) < 0.5
    for cell, record in zip(cells[("distributed", "lie")], liars):
        inst = instance(cell["task"]["params"]["task"], 6, cell["seed"])
        faulty = np.flatnonzero(np.asarray(record.agents["faulty"])[:6])
        assert len(faulty) == 2  # a quarter of 6, rounded
        messages = record.table("messages").to_pandas()
        carried = [json.loads(text) for text in messages.text]
        for agent in faulty:  # it says another agent's shard is its own; the others pass the lie on
            said = [shards[str(agent)] for shards in carried if str(agent) in shards]
            lie = lies(inst.shards)[agent]
            assert len(said) > 3 and lie != inst.shards[agent] and all(value == lie for value in said)
        # every honest agent holds all the shards, the liars' forged: it answers what they make true
        answers = pa.array(record.agents["answer"]).to_pylist()[-6:]
        expected = whole_answer(forged_instance(inst, faulty.tolist(), lies(inst.shards)), list(range(6)))
        assert [answers[v] for v in range(6) if v not in faulty] == [json.dumps(expected)] * 4


def test_a_silobench_lie_longer_than_the_truth_keeps_every_message_within_the_cap():
    config = copy.deepcopy(default_config())
    config["tasks"]["tight"] = {"kind": "silobench", "task": "I-09", "topology": "regular3", "message_chars": 304}
    config["perturbations"] = PERTURBATIONS
    methods = ["distributed", "random"]  # passed on by honest agents, a lie costs what its text does
    config["studies"] = {"t": {"tasks": ["tight"], "methods": methods, "seeds": 8, "populations": [6]}}
    config["studies"]["t"]["perturbations"] = ["lie"]
    for block in study_blocks(validate(config, str(CONFIG)), "t", CONFIG.parent):
        records = play_block(list(block.cells()))
        sizes = pa.concat_tables([r.table("messages") for r in records]).column("size").to_numpy()
        assert sizes.max() <= 304 and len(sizes) > 8


def test_a_silobench_adversary_drops_the_last_shards_it_relays_where_its_lie_would_go_over_the_cap():
    block, instances = GraphBlock([graph([(0, 1), (1, 2), (2, 0)], 3)]), [instance("I-09", 3, 1)]
    true, lie = np.array([[50, 60, 70]]), np.array([[80, 60, 70]])  # agent 0's lie costs 30 more
    views = SimpleNamespace(block=block, instances=instances, previous=None, item_costs=true, message_chars=190)
    payload = np.array([[True, True, True], [True, True, False]])  # 180 and 110 characters
    sent = exchange.Outbox(np.array([0, 0]), np.array([1, 2]), payload=payload)
    forged = with_forged_own(views, sent, np.array([0, 1]), dealt_lies(views), lie).payload
    assert forged.tolist() == [[FORGED, 1, 0], [FORGED, 1, 0]]  # 210 over 190: owner 2's shard goes


def test_a_silobench_adversary_replaces_an_llm_agents_message_with_its_lie():
    block, instances = GraphBlock([graph([(0, 1), (1, 2)], 3)]), [instance("I-09", 3, 1)]
    views = SimpleNamespace(block=block, instances=instances, previous=None)
    sent = exchange.Outbox(np.array([0, 1, 2]), np.array([1, 2, 1]), text=["a", "b", "c"])
    lied = SiloAdversary(Streams([1], "x")).act(views, SiloActions(outbox=sent), np.array([False, True, False]))
    shards = views.instances[0].shards
    assert lied.outbox.text == ["a", json.dumps({"1": lies(shards)[1]}), "c"]


def test_the_episode_page_marks_faulty_agents_and_draws_lost_and_late_messages(tmp_path):
    import altair as alt

    (cell,) = blocks(study("coloring-ws", ["distributed"], 8, ["lossy-crash"], seeds=[1]))[
        ("distributed", "lossy-crash")
    ]
    path = tmp_path / "s1.parquet"
    write_episode(cell, path)
    page = render_page(load_episode(path), tmp_path / "s1.html").read_text(encoding="utf-8")
    spec = json.loads(re.search(r'id="episode-spec">(.*?)</script>', page, re.DOTALL).group(1))
    alt.HConcatChart.from_dict(spec, validate=True)
    transit = load_episode(path).tables["transit"]
    kinds = {row["kind"] for row in spec["datasets"]["links"]}
    assert {"messages", "lost", "delayed"} <= kinds
    lost = [row for row in spec["datasets"]["links"] if row["kind"] == "lost"]
    assert len(lost) == (transit.fate == "lost").sum()
    agents = pq.read_table(path).to_pandas()
    faulty = agents[agents.faulty]
    flagged = [row for row in spec["datasets"]["flags"] if row["flag"] == "faulty"]
    assert len(flagged) == len(faulty) == 2 * (agents.step.max() + 1)
    idle = [row for row in spec["datasets"]["flags"] if row["flag"] == "did not act"]
    assert len(idle) == (~agents.acted & (agents.step > 0)).sum() > 0


def test_a_loopbench_page_draws_lost_and_late_announcements(tmp_path):
    (cell,) = blocks(study("cycle", ["soft_fp"], 7, ["lossy"], seeds=[1]))[("soft_fp", "lossy")]
    path = tmp_path / "s1.parquet"
    write_episode(cell, path)
    page = render_page(load_episode(path), tmp_path / "s1.html").read_text(encoding="utf-8")
    spec = json.loads(re.search(r'id="episode-spec">(.*?)</script>', page, re.DOTALL).group(1))
    transit = load_episode(path).tables["transit"]
    drawn = pd.DataFrame(spec["datasets"]["links"])
    assert set(drawn.kind) == set(transit.fate) == {"lost", "delayed"}
    assert drawn.kind.value_counts().to_dict() == transit.fate.value_counts().to_dict()


def test_the_trace_field_loses_deliveries_and_expires_traces_early():
    cells = blocks(study("swarm-pursuit", ["fixedswarm"], 8, ["none", "field-loss", "field-expiry"], seeds=2))
    plain, lossy, short = (play_block(cells[("fixedswarm", p)]) for p in (None, "field-loss", "field-expiry"))
    for a, b, c in zip(plain, lossy, short):
        assert b.summary["dropped_traces"] > 0 and "dropped_traces" not in a.summary
        traces = b.table("traces").to_pandas()
        assert len(traces) == b.summary["trace_deliveries"]  # what arrived, as it arrived
        longest = a.table("traces").to_pandas().ttl.max()
        assert longest > 1 and c.table("traces").to_pandas().ttl.max() == max(1, longest - 3)
        assert c.summary["shortened_traces"] > 0 and c.summary["dropped_traces"] == 0


def test_a_truncated_message_arrives_cut_and_a_classical_one_not_at_all():
    block = GraphBlock([CYCLE4, CYCLE4])
    medium = UnreliableMedium(
        NeighbourMessages(block, 100, [9, 9]), settings(truncate=0.5, truncate_chars=3), Streams([1, 2], "x")
    )
    arrived = messages_through(medium, 6, unicast)
    cut = [text for text in arrived if len(text.split(">")[0]) == 3]
    assert cut and len(cut) < len(arrived) and all(len(rounds) == 1 for rounds in arrived.values())
    assert sum(medium.counts(s)["cut_messages"] for s in range(2)) == len(cut)
    assert medium.counts(0)["truncated_messages"] == 0  # the cap's count, the suite medium's own
    shards = ShardTexts([[[1], [2], [3]]])
    silo = UnreliableMedium(
        exchange.PointToPoint(GraphBlock([graph([(0, 1), (1, 2)], 3)]), shards, 100),
        settings(truncate=1.0, truncate_chars=1),
        Streams([0], "x"),
    )
    silo.send(0, exchange.Outbox(np.array([0, 1]), np.array([1, 2]), text=["hello", "world"]))
    inbox = silo.deliver()
    assert [inbox.outbox.text[m] for m in inbox.message] == ["h", "w"]
    silo.send(1, exchange.Outbox(np.array([0]), np.array([1]), payload=np.array([[True, False, False]])))
    assert len(silo.deliver().receiver) == 0 and silo.counts(0)["cut_messages"] == 3  # unreadable: gone


def test_a_mixed_population_is_scored_by_member(tmp_path):
    cells = mixed_study(tmp_path, {"soft_fp": 0.6, "greedy": 0.4}, "cycle", 5, seeds=6)
    records = play_block(cells["mix"])
    rows = [summary_row(c, digest(c), r.summary) for c, r in zip(cells["mix"], records)]
    table = members_table(pd.DataFrame(rows), 1000, 0.95, 0)
    assert set(table.member) == {"soft_fp", "greedy"} and set(table.metric) == {"conflicts"}
    for member, count in (("soft_fp", 3), ("greedy", 2)):
        per_episode = []
        for record in records:
            agents = pa.table(record.agents).to_pandas()
            last = agents[(agents.step == agents.step.max()) & (agents.member == member)]
            assert len(last) == count
            per_episode.append(last.conflicts.mean())
        assert table.set_index("member").loc[member, "mean"] == pytest.approx(np.mean(per_episode))


def test_a_mixed_population_under_a_perturbation_takes_its_faults_and_forgeries():
    config = copy.deepcopy(default_config())
    config["methods"]["mix"] = {"kind": "mixed", "members": {"nativemsg": 0.5, "fixedswarm": 0.5}}
    config["perturbations"] = PERTURBATIONS
    config["studies"] = {"t": {"tasks": ["silo-waggle"], "methods": ["mix"], "seeds": 2, "populations": [8]}}
    config["studies"]["t"]["perturbations"] = ["adv"]
    (block,) = study_blocks(validate(config, str(CONFIG)), "t", CONFIG.parent)
    for record in play_block(list(block.cells())):
        agents = pa.table(record.agents).to_pandas()
        assert agents[agents.faulty].agent.nunique() == 2 and set(agents.member) == {"nativemsg", "fixedswarm"}
        assert record.summary["forged_traces"] > 0
        assert record.summary["invalid_records"] == record.summary["forged_traces"]  # both members' validators


def test_a_mixed_populations_estimate_is_its_model_members_share(tmp_path):
    (tmp_path / "replies.jsonl").write_text(json.dumps({"color": 1, "notes": "x"}) + "\n")
    scripted = {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", "notes_chars": 60, "max_tokens": 64}
    cells = mixed_study(tmp_path, {"model": [0, 3], "soft_fp": "rest"}, "cycle", 5, model=scripted)
    mixed = METHODS["mixed"].hooks.estimate(cells["mix"][0], 1)
    alone = METHODS["llm"].hooks.estimate(cells["model"][0], 1)
    assert mixed.calls == round(alone.calls * 2 / 5) and mixed.approximate
    assert mixed.input_tokens == round(alone.input_tokens * 2 / 5)


@pytest.mark.parametrize("task", ["consensus-dt", "matching-ws"])
def test_two_members_sending_the_same_algorithms_messages_read_each_others(task):
    """NativeMsg and FixedSwarm both send AgentsNet's classical messages: merged, they keep the payload
    the algorithm reads (and under loss too)."""
    config = copy.deepcopy(default_config())
    config["methods"]["mix"] = {"kind": "mixed", "members": {"nativemsg": 0.5, "fixedswarm": 0.5}}
    config["perturbations"] = PERTURBATIONS
    config["studies"] = {
        "t": {
            "tasks": [task],
            "methods": ["mix", "nativemsg"],
            "seeds": 2,
            "populations": [8],
            "perturbations": ["none", "lossy"],
        }
    }
    arms = {
        (b.shared["method"]["name"], b.shared.get("perturbation", {}).get("name")): list(b.cells())
        for b in study_blocks(validate(config, str(CONFIG)), "t", CONFIG.parent)
    }
    for arm, cells in arms.items():
        for record in play_block(cells):
            assert 0 <= record.summary["score"] <= 1 and record.table("messages").num_rows > 0, arm


def test_a_stuck_agent_repeats_its_onset_rounds_action_and_message():
    (cell,) = blocks(study("swarm-pursuit", ["nativemsg"], 8, ["stuck"], seeds=[2]))[("nativemsg", "stuck")]
    record = play_block([cell])[0]
    agents = pa.table(record.agents).to_pandas()
    onset = PERTURBATIONS["stuck"]["faults"]["onset"]
    messages = record.table("messages").to_pandas()
    for agent in agents[agents.faulty].agent.unique():
        mine = agents[agents.agent == agent].set_index("step")
        # state t + 1 holds round t's action: from the round after its onset on, round onset's again
        assert (mine.loc[onset + 2 :, "action"] == mine.loc[onset + 1, "action"]).all()
        said = messages[messages.sender == agent].set_index("step").text
        if onset in said.index:
            assert (said.loc[onset + 1 :] == said.loc[onset]).all() and len(said.loc[onset + 1 :]) > 0


def test_activation_lets_about_its_probability_act_and_random_agents_spread_over_their_choices():
    PROBABILITY = 0.4
    config = copy.deepcopy(default_config())
    config["perturbations"] = {"p": {"activation": {"probability": PROBABILITY}}, "rand": PERTURBATIONS["rand"]}
    config["studies"] = {
        "t": {
            "tasks": ["cycle"],
            "methods": ["greedy"],
            "seeds": 20,
            "populations": [11],
            "perturbations": ["p", "rand"],
        }
    }
    arms = {
        b.shared["perturbation"]["name"]: list(b.cells())
        for b in study_blocks(validate(config, str(CONFIG)), "t", CONFIG.parent)
    }
    agents = pd.concat(pa.table(r.agents).to_pandas() for r in play_block(arms["p"]))
    share = agents[agents.step > 0].acted.mean()  # 20 seeds x 15 rounds x 11 agents: s.e. about 0.016
    assert abs(share - PROBABILITY) < 0.05
    agents = pd.concat(pa.table(r.agents).to_pandas() for r in play_block(arms["rand"]))
    random = agents[agents.faulty & (agents.step > 0)]
    assert 0.4 < random.color.mean() < 0.6  # two colours, drawn uniformly: 20 x 15 x 3 draws


def test_a_mixed_populations_page_reads_its_model_members_calls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "replies.jsonl").write_text((json.dumps({"color": 1, "notes": "x"}) + "\n") * 40)
    scripted = {"kind": "llm", "backend": "scripted", "model": "replies.jsonl", "notes_chars": 60, "max_tokens": 64}
    cells = mixed_study(tmp_path, {"model": [0, 3], "soft_fp": "rest"}, "cycle", 5, model=scripted)
    cell = cells["mix"][0]
    write_episode(cell, cell_path(cell))
    (member,) = [c for c in members_of(cell) if c["method"]["kind"] == "llm"]
    # a scripted model keeps no cache: the record a real model's call leaves, where the member writes it
    ResponseCache(calls_path(member)).put("k1", ChatResult('{"color": 1}'), "m", [{"role": "user", "content": "hi"}])
    assert load_episode(tmp_path / cell_path(cell)).calls["k1"]["messages"] == [{"role": "user", "content": "hi"}]


def test_the_transit_table_lies_sealed_in_the_cell_file_as_the_medium_made_it(tmp_path):
    (cell,) = blocks(study("silo", ["distributed"], 6, ["lossy"], seeds=[2]))[("distributed", "lossy")]
    (record,) = play_block([cell])
    path = tmp_path / "s2.parquet"
    write_episode(cell, path, record)
    made = record.table("transit")
    assert len(made) and not Path(side_path(path, "transit")).exists()
    pd.testing.assert_frame_equal(load_episode(path).tables["transit"], made.to_pandas().astype({"fate": str}))
    assert read_cell(path, digest(cell)) == (record.summary, {})
    metadata = pq.read_schema(path).metadata
    # the record changed by hand (a delivery dropped): the seal no longer holds
    metadata = {**metadata, INLINE_KEY: inline_text({"transit": made.slice(1)})}
    pq.write_table(pq.read_table(path).replace_schema_metadata(metadata), path)
    assert "does not match its seal" in read_cell(path, digest(cell))[1][str(path)]


def test_a_medium_without_its_transit_table_writes_the_same_episode(tmp_path):
    config = study("coloring-ws", ["distributed"], 8, ["lossy", "lossy-counted", "field-expiry"], seeds=[1, 2])
    cells = blocks(config)
    recorded, counted = cells[("distributed", "lossy")], cells[("distributed", "lossy-counted")]
    assert "transit" not in recorded[0]["perturbation"]["medium"]  # the default: the cell as before the setting
    assert [Path(f).name.split(".")[1] for f in cell_files(counted[0])[1:]] == ["messages"]
    assert inline_tables(counted[0]) == ()
    for a, b in zip(play_block(recorded), play_block(counted)):
        assert a.summary == b.summary and pa.table(a.agents).equals(pa.table(b.agents))
        assert set(a.tables) - set(b.tables) == {"transit"} and a.table("messages").equals(b.table("messages"))
    # the trace field's expiry alone leaves the task's messages as they are: no transit table
    expiry = cells[("distributed", "field-expiry")][0]
    assert [Path(f).name.split(".")[1] for f in cell_files(expiry)[1:]] == ["messages"]


def task_under(name: str, n: int, seed: int, **medium: Any) -> Any:
    """The default config's task `name` (N = n, one episode) reset, its medium made unreliable."""
    (cell,) = blocks(study(name, ["distributed"], n, ["none"], seeds=[seed]))[("distributed", None)]
    task = make_task(cell)
    task.reset([seed])
    task.medium = UnreliableMedium(task.medium, settings(**medium), Streams([seed], "perturbation/medium"))
    return task


def test_an_llm_agent_sees_what_it_sent_and_only_what_reached_it_under_loss():
    task = task_under("coloring-ws", 8, 3, loss=0.5)
    block = task.block
    for t in range(3):
        said = pa.array([f"r{t} {s}>{r}" for s, r in zip(block.src, block.indices)])
        task.step(NetActions(outbox=Outbox(block.src, block.indices, said)))
    views, view = task.observe(), NetView()
    transit = task.medium.tables(0)["transit"].to_pandas()
    lost = {(int(r.step), int(r.sender), int(r.receiver)) for r in transit.itertuples()}
    assert lost and len(lost) < 3 * len(block.src)
    for agent in range(8):
        prompt = view.turn(views, agent, window=3)
        for t in range(3):
            for u in block.neighbours(agent).tolist():
                assert f"to {block.names[u]}: r{t} {agent}>{u}" in prompt  # every message it sent, lost or not
                reached = f"{block.names[u]}: r{t} {u}>{agent}" in prompt
                assert reached == ((t, u, agent) not in lost)  # from the others, what reached it


def test_a_silobench_agent_sees_each_message_it_sent_once_in_its_round_under_delay():
    task = task_under("silo-waggle", 6, 2, delay=1)
    block = task.block
    for t in range(3):
        said = [f"r{t} {s}>{r}" for s, r in zip(block.src, block.indices)]
        task.step(SiloActions(outbox=exchange.Outbox(block.src, block.indices, text=said)))
    views, view = task.observe(), SiloView()
    for agent in range(6):
        prompt = view.turn(views, agent, window=3)
        for u in block.neighbours(agent).tolist():
            for t in range(3):
                assert prompt.count(f"to agent {u}: r{t} {agent}>{u}") == 1  # once, where it was sent
            assert f"from agent {u}: r1 {u}>{agent}" in prompt  # a round late: sent in round 2, now in round 4
            assert f"from agent {u}: r2 {u}>{agent}" not in prompt  # on its way
