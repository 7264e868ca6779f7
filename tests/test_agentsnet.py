"""AgentsNet: instances, rounds, scores on hand-made answers, the message rules, and the classical
algorithms solving every problem given enough rounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import play
from hivebench.engine.media import NeighbourMessages, Outbox
from hivebench.suites.agentsnet import problems
from hivebench.suites.agentsnet.graphs import Block, graph_from_edges, instance
from hivebench.suites.agentsnet.names import NAMES

FAMILIES = ("watts_strogatz", "barabasi_albert", "delaunay")
PATH4 = graph_from_edges(np.array([[0, 1], [1, 2], [2, 3]]), ("Ann", "Bob", "Cy", "Di"))
STAR = graph_from_edges(np.array([[0, 1], [0, 2], [0, 3]]), ("Hub", "A", "B", "C"))
TRIANGLE = graph_from_edges(np.array([[0, 1], [1, 2], [0, 2]]), ("A", "B", "C"))


@pytest.mark.parametrize("family", FAMILIES)
def test_an_instance_is_a_function_of_family_n_and_seed(family):
    a, b, other = instance(family, 16, 7), instance.__wrapped__(family, 16, 7), instance.__wrapped__(family, 16, 8)
    assert (a.edges == b.edges).all() and a.names == b.names
    assert not (len(a.edges) == len(other.edges) and (a.edges == other.edges).all())
    assert len(set(a.names)) == 16 and set(a.names) <= set(NAMES)
    assert a.diameter >= 1 and (a.degrees >= 1).all()


def test_watts_strogatz_on_four_nodes_is_complete_and_large_populations_get_unique_names():
    assert len(instance("watts_strogatz", 4, 0).edges) == 6
    big = instance("barabasi_albert", 450, 0)
    assert len(set(big.names)) == 450 and any(name.endswith("2") for name in big.names)


@pytest.mark.parametrize(
    ("problem", "n", "diameter", "rounds"),
    [
        ("coloring", 4, 1, 4),
        ("matching", 8, 3, 5),
        ("vertex_cover", 16, 4, 6),
        ("coloring", 17, 4, 9),
        ("consensus", 4, 2, 5),
        ("leader_election", 16, 4, 9),
    ],
)
def test_the_papers_rounds_rule(problem, n, diameter, rounds):
    assert problems.paper_rounds(problem, n, diameter) == rounds


HAND_MADE = [
    ("coloring", PATH4, ["Group 1", "Group 2", "Group 1", "Group 2"], 1.0),
    ("coloring", PATH4, ["Group 1", "Group 1", "Group 2", "Group 1"], 2 / 3),
    ("coloring", PATH4, ["Group 1", "Group 2", None, "Group 2"], 0.0),  # an invalid answer voids it
    ("coloring", PATH4, ["Group 1", "Group 2", "Group 4", "Group 2"], 0.0),  # only Δ + 1 = 3 groups
    ("vertex_cover", STAR, ["Yes", "No", "No", "No"], 1.0),
    ("vertex_cover", STAR, ["No", "No", "No", "No"], 0.0),  # nobody says yes: 0, not a division by zero
    ("vertex_cover", TRIANGLE, ["Yes", "Yes", "Yes"], 0.0),  # complete, but no coordinator is needed
    ("vertex_cover", STAR, ["No", "Yes", "Yes", "No"], 2 / 3),  # covers 2 of 3 edges; both needed
    ("matching", PATH4, ["Bob", "Ann", "Di", "Cy"], 1.0),
    ("matching", PATH4, ["Bob", "Ann", "None", "None"], 0.5),  # adjacent Nones break maximality
    ("matching", PATH4, ["Bob", "Cy", "None", "Cy"], 0.25),  # only Cy (None, no None beside it) is consistent
    ("matching", STAR, ["A", "Hub", "None", None], 0.75),  # an invalid answer fails only its agent
    ("leader_election", PATH4, ["No", "Yes", "No", "No"], 1.0),
    ("leader_election", PATH4, ["No", "Yes", "Yes", "No"], 0.0),
    ("leader_election", PATH4, ["No", "Yes", "No", None], 0.0),
    ("consensus", PATH4, ["1", "1", "1", "1"], 1.0),
    ("consensus", PATH4, ["1", "0", "1", "1"], 0.0),
    ("consensus", PATH4, ["1", "1", "yes", "1"], 0.0),
]


@pytest.mark.parametrize(("problem", "graph", "answers", "score"), HAND_MADE)
def test_scores_on_hand_made_answers(problem, graph, answers, score):
    scores, valid = problems.scores(problem, Block((graph,)), pa.array(answers, pa.string()))
    assert scores.tolist() == pytest.approx([score])
    assert valid.tolist() == [a is not None and a in problems.options(problem, graph, v) for v, a in enumerate(answers)]


@pytest.mark.parametrize("problem", problems.PROBLEMS)
def test_a_block_scores_each_episode_as_alone(problem):
    cases = [(g, a, score) for p, g, a, score in HAND_MADE if p == problem and g.n == 4]
    block = Block(tuple(g for g, _, _ in cases))
    scores, _ = problems.scores(problem, block, pa.array([x for _, a, _ in cases for x in a], pa.string()))
    assert len(cases) > 1 and scores.tolist() == pytest.approx([score for _, _, score in cases])


def test_messages_go_to_neighbours_only_and_are_cut_to_the_cap():
    medium = NeighbourMessages(Block((PATH4,)), max_chars=5, last_round=[3])
    medium.send(0, Outbox(np.array([0, 1]), np.array([1, 2]), pa.array(["hello world", "hi"])))
    assert medium.deliver().texts().to_pylist() == ["hello", "hi"] and medium.counts(0)["truncated_messages"] == 1
    with pytest.raises(ValueError, match="agent 0 sent a message to 2, not a neighbour"):
        medium.send(1, Outbox(np.array([0]), np.array([2]), pa.array(["x"])))
    with pytest.raises(ValueError, match="two messages to one neighbour"):
        medium.send(1, Outbox(np.array([0, 0]), np.array([1, 1]), pa.array(["x", "y"])))
    table = medium.tables(0)["messages"]
    assert table.column_names == ["step", "sender", "receiver", "size", "text"]
    assert table.to_pylist()[0] == {"step": 0, "sender": 0, "receiver": 1, "size": 5, "text": "hello"}


def study(rounds, populations, seeds, methods=("distributed",)):
    tasks = {
        f"{p}-{f}": {"kind": "agentsnet", "problem": p, "family": f, "rounds": rounds}
        for p in problems.PROBLEMS
        for f in FAMILIES
    }
    config = {
        "tasks": tasks,
        "methods": {m: {"kind": m, "seeds_per_job": 1000} for m in methods},
        "studies": {"s": {"tasks": list(tasks), "methods": list(methods), "populations": populations, "seeds": seeds}},
    }
    return all_blocks(validate(config, "agentsnet.yaml"), Path("agentsnet.yaml").parent)["s"]


@pytest.mark.slow  # ~10 s
def test_with_enough_rounds_the_distributed_algorithms_solve_99_percent_of_instances():
    for block in study(rounds=60, populations=[16, 60], seeds=60):
        solved = [play(cell).summary["solved"] for cell in block.cells()]
        assert np.mean(solved) >= 0.99, (block.shared["task"]["name"], block.shared["population"], np.mean(solved))


def test_flooding_solves_leader_election_and_consensus_at_the_papers_rounds():
    for block in study(rounds="paper", populations=[8, 30], seeds=20):
        if block.shared["task"]["params"]["problem"] in ("leader_election", "consensus"):
            assert all(play(cell).summary["solved"] == 1.0 for cell in block.cells())


def test_an_episode_records_every_message_and_every_answer():
    block = study(rounds=3, populations=[8], seeds=1, methods=("distributed",))[0]
    record = play(next(block.cells()))
    messages = record.table("messages").to_pylist()
    assert {m["step"] for m in messages} == {0, 1, 2}  # rounds 0..R-1 send, round R answers
    assert all(m["size"] == len(m["text"]) > 0 for m in messages)
    assert record.summary["messages"] == len(messages) == 3 * 2 * record.summary["edges"]
    assert record.summary["message_chars"] == sum(m["size"] for m in messages)
    answers = record.agents["answer"].to_pylist()
    assert len(answers) == 5 * 8 and answers[:32] == [None] * 32 and None not in answers[32:]


def test_episodes_of_different_lengths_play_in_one_block_as_alone():
    """At the paper's rounds each instance has its own R: a block's episodes end at different rounds."""
    from hivebench.engine.loop import play_block
    from hivebench.store import stored

    lengths = set()
    for block in study(rounds="paper", populations=[30], seeds=8):
        cells = list(block.cells())
        together = play_block(cells)
        lengths.add(len({r.summary["rounds"] for r in together}))
        for cell, record in zip(cells, together):
            alone = play(cell)
            assert pa.table(alone.agents).equals(pa.table(record.agents)) and alone.summary == record.summary
            assert stored(alone.table("messages")).equals(stored(record.table("messages")))  # as written
    assert max(lengths) > 1  # some block did mix lengths


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"family": "watts_strogatz", "populations": [3]},
            "studies.s.populations[0]: a watts_strogatz graph needs at least 4 nodes, got 3 (task 't')",
        ),
        ({"family": "delaunay", "populations": [2]}, "a delaunay graph needs at least 3 nodes, got 2"),
        ({"family": "hexagonal"}, "tasks.t.family: 'hexagonal' is not one of"),
        ({"rounds": 0}, "tasks.t.rounds: 0 is less than the minimum of 1"),
        (
            {"method": "soft_fp"},
            "studies.s: method 'm' (kind soft_fp, a loopbench method) cannot run task 't' of suite agentsnet",
        ),
    ],
)
def test_bad_agentsnet_input_is_a_config_error_naming_it(change, message):
    task = {"kind": "agentsnet", "problem": "coloring", "family": change.get("family", "delaunay")}
    if "rounds" in change:
        task["rounds"] = change["rounds"]
    config = {
        "tasks": {"t": task},
        "methods": {"m": {"kind": change.get("method", "distributed")}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": change.get("populations", [8]), "seeds": 1}},
    }
    with pytest.raises(ConfigError) as error:
        validate(config, "bad.yaml")
    assert message in str(error.value)


def test_a_cell_whose_messages_table_changed_is_not_kept(tmp_path, monkeypatch):
    """The per-agent file holds the side table's hash: a job keeps the cell only with that very table."""
    from hivebench.engine.writer import write_episode
    from hivebench.ids import digest
    from hivebench.paths import cell_path, side_path
    from hivebench.store import verified_summary, write_atomic

    monkeypatch.chdir(tmp_path)
    cell = next(study(rounds=2, populations=[8], seeds=1)[0].cells())
    write_episode(cell, cell_path(cell))
    assert verified_summary(cell_path(cell), digest(cell)) is not None
    messages = side_path(cell_path(cell), "messages")
    write_atomic(pa.table({"step": [0]}), messages)  # a whole Parquet file, but not the one written
    assert verified_summary(cell_path(cell), digest(cell)) is None
