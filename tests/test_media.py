"""Media (hivebench.engine.media) behind the `Medium` protocol: what each delivers and when, its caps
and counts, its side table; a block's episodes side by side (hivebench.engine.block); and wrapping: a
medium that passes everything through leaves every suite's episodes as they were, and a wrapper's own
counts reach the summary without touching the medium it wraps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine import media
from hivebench.engine.block import Block, Graph, GraphBlock, csr
from hivebench.engine.loop import play_block
from hivebench.engine.media import exchange
from hivebench.engine.media.exchange import Broadcast, PointToPoint, SharedStore
from hivebench.engine.media.neighbours import NeighbourMessages
from hivebench.engine.media.outbox import Outbox
from hivebench.engine.media.radius import RadiusBroadcast
from hivebench.engine.writer import stored
from hivebench.suites.silobench.exchange import ShardTexts


def graph(edges: list[tuple[int, int]], n: int) -> Graph:
    return Graph(n, *csr(np.array(edges), n))


PATH3 = graph([(0, 1), (1, 2)], 3)  # 0 - 1 - 2
TRIANGLE = graph([(0, 1), (1, 2), (0, 2)], 3)


def texts(*values: str | None) -> pa.StringArray:
    return pa.array(values, pa.string())


def test_a_block_is_its_episodes_side_by_side_on_the_union_of_their_graphs():
    block = GraphBlock([PATH3, TRIANGLE])
    assert (block.n, block.episodes, block.agents) == (3, 2, 6)
    assert [block.neighbours(v).tolist() for v in range(6)] == [[1], [0, 2], [1], [4, 5], [3, 5], [3, 4]]
    assert block.src.tolist() == [0, 1, 1, 2, 3, 3, 4, 4, 5, 5] and block.graph(4) is TRIANGLE
    assert block.per_episode(agents=np.array([0, 4, 5])).tolist() == [1, 2]
    assert block.per_episode(np.arange(6.0)).tolist() == [3.0, 12.0]
    i, receiver = block.fan_out(np.array([1, 3]))
    assert i.tolist() == [0, 0, 1, 1] and receiver.tolist() == [0, 2, 4, 5]
    assert Block(4, 3).episode_of_agent.tolist() == [0] * 4 + [1] * 4 + [2] * 4


def test_neighbour_messages_arrive_next_round_cut_to_the_cap_and_counted():
    medium = NeighbourMessages(GraphBlock([PATH3, PATH3]), max_chars=4, last_round=[1, 0])
    assert len(medium.deliver().sender) == 0  # nothing sent yet
    medium.send(0, Outbox(np.array([1, 4]), np.array([2, 3]), texts("hello", "hi")))
    inbox = medium.deliver()
    assert inbox.receiver.tolist() == [2, 3] and inbox.texts().to_pylist() == ["hell", "hi"]
    assert len(medium.deliver().sender) == 0  # delivered once
    medium.send(1, Outbox(np.array([0, 3]), np.array([1, 4]), texts("a", "b")))  # episode 1 has ended
    assert medium.deliver().sender.tolist() == [0]
    traffic = medium.traffic(3)
    assert traffic["sent"].tolist() == [[0, 1, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0], [0] * 6]
    assert traffic["received"].tolist() == [[0, 0, 1, 1, 0, 0], [0, 1, 0, 0, 0, 0], [0] * 6]
    assert medium.counts(0) == {"messages": 2, "message_chars": 5, "truncated_messages": 1}
    assert medium.counts(1) == {"messages": 1, "message_chars": 2, "truncated_messages": 0}
    assert medium.tables(1)["messages"].to_pylist() == [
        {"step": 0, "sender": 1, "receiver": 0, "size": 2, "text": "hi"}
    ]


def test_a_classical_outbox_over_every_edge_is_recorded_by_its_codes():
    block = GraphBlock([PATH3])
    medium = NeighbourMessages(block, max_chars=3, last_round=[1])
    dictionary = texts("no", "yes")
    for step in range(2):
        medium.send(
            step,
            Outbox(
                block.src,
                block.indices,
                payload=np.array([0, 1, 1]),
                codes=np.array([0, 1, 1]),
                dictionary=dictionary,
                per_sender=True,
            ),
        )
        assert medium.deliver().payload.tolist() == [0, 1, 1]
    table = medium.tables(0)["messages"]
    assert callable(table) and table().column("text").to_pylist() == ["no", "yes", "yes", "yes"] * 2
    assert medium.counts(0) == {"messages": 8, "message_chars": 22, "truncated_messages": 0}
    assert medium.traffic(2)["received"].tolist() == [[1, 2, 1]] * 2


def test_a_radius_broadcast_reaches_the_agents_near_the_sender_where_they_stand_next_round():
    medium = RadiusBroadcast(Block(3, 2), radius=1, max_chars=3, to_sender=False)
    position = np.array([[0, 0], [1, 1], [3, 3], [0, 0], [0, 1], [5, 5]])
    present = np.array([True, True, True, True, False, True])
    medium.send(0, Outbox(np.array([0, 3]), np.array([-1, -1]), texts("help", "go")))
    inbox = medium.deliver((position, present))
    # agent 0 reaches 1 (not 2: too far; not itself); agent 3 reaches nobody (4 has left the map)
    assert inbox.receiver.tolist() == [1] and inbox.sender.tolist() == [0] and inbox.texts().to_pylist() == ["hel"]
    assert len(medium.deliver((position, present)).receiver) == 0  # a quiet round hears nothing
    assert medium.traffic(2)["sent"].tolist() == [[True, False, False, True, False, False], [False] * 6]
    assert medium.traffic(2)["received"].tolist() == [[0, 1, 0, 0, 0, 0], [0] * 6]
    assert medium.counts(0) == {"messages": 1, "truncated_messages": 1}
    assert medium.tables(0)["messages"].to_pylist() == [
        {"step": 0, "sender": 0, "size": 3, "receivers": 1, "text": "hel"}
    ]
    loud = RadiusBroadcast(Block(3, 1), radius=1, max_chars=3, to_sender=True)
    loud.send(0, Outbox(np.array([0]), np.array([-1]), texts("x")))
    assert loud.deliver((position[:3], present[:3])).receiver.tolist() == [0, 1]


SHARDS = [[[1], [2, 3], [4]]]  # one episode of three agents


def test_point_to_point_and_broadcast_deliver_to_neighbours_next_round():
    block = GraphBlock([PATH3])
    p2p = PointToPoint(block, ShardTexts(SHARDS), max_chars=4)
    p2p.send(0, exchange.Outbox(np.array([0, 1]), np.array([1, 2]), text=["hello", "hi"]))
    inbox = p2p.deliver()
    assert (inbox.receiver.tolist(), inbox.sender.tolist(), [inbox.outbox.text[i] for i in inbox.message]) == (
        [1, 2],
        [0, 1],
        ["hell", "hi"],
    )
    with pytest.raises(ValueError, match="agent 0 sent a message to 2, not a neighbour"):
        p2p.send(1, exchange.Outbox(np.array([0]), np.array([2]), text=["x"]))
    assert p2p.counts(0) == {
        "messages": 2,
        "deliveries": 2,
        "message_chars": 6,
        "truncated_messages": 1,
        "refused_writes": 0,
    }
    loud = Broadcast(block, ShardTexts(SHARDS), max_chars=30)
    loud.send(0, exchange.Outbox(np.array([1]), np.array([-1]), payload=np.array([[True, True, False]])))
    inbox = loud.deliver()
    assert inbox.receiver.tolist() == [0, 2] and inbox.message.tolist() == [0, 0]
    assert loud.tables(0)["messages"].column("text").to_pylist() == ['{"0": [1], "1": [2, 3]}']
    assert loud.traffic(1)["received"].tolist() == [[1, 0, 1]] and loud.counts(0)["message_chars"] == 23
    with pytest.raises(ValueError, match="over the cap of 30"):
        loud.send(1, exchange.Outbox(np.array([1]), np.array([-1]), payload=np.array([[True, True, True]])))


def test_the_shared_store_is_read_next_round_and_refuses_what_would_overflow_it():
    store = SharedStore(GraphBlock([TRIANGLE]), ShardTexts(SHARDS), max_chars=10, store_chars=8, writes=1)
    assert store.deliver().store == [{}]
    store.send(0, exchange.Outbox(np.array([0, 1]), np.array([-1, -1]), text=["abc", "defghij"], keys=["a", "b"]))
    inbox = store.deliver()
    assert list(inbox.store[0]) == ["a"] and inbox.store[0]["a"].text == "abc" and inbox.refused == ((1, "b"),)
    assert len(inbox.receiver) == 0 and inbox.outbox.keys == ["a"]  # the kept writes
    with pytest.raises(ValueError, match="wrote more than 1 keys"):
        store.send(1, exchange.Outbox(np.array([2, 2]), np.array([-1, -1]), text=["x", "y"], keys=["c", "d"]))
    assert store.counts(0) == {
        "messages": 1,
        "deliveries": 0,
        "message_chars": 3,
        "truncated_messages": 0,
        "refused_writes": 1,
    }


class PassThrough:
    """The least a wrapper is: every call goes to the medium it wraps."""

    def __init__(self, inner: Any):
        self.inner, self.block = inner, inner.block

    def send(self, step: int, outbox: Any) -> None:
        self.inner.send(step, outbox)

    def deliver(self, where: Any = None) -> Any:
        return self.inner.deliver(where)

    def traffic(self, rounds: int) -> dict[str, np.ndarray]:
        return self.inner.traffic(rounds)

    def counts(self, episode: int) -> dict[str, int]:
        return self.inner.counts(episode)

    def tables(self, episode: int) -> dict[str, Any]:
        return self.inner.tables(episode)


class Silence(PassThrough):
    """Sends nothing on, and counts what it held back (NoComm as a wrapper)."""

    def __init__(self, inner: Any):
        super().__init__(inner)
        self.held = np.zeros(inner.block.episodes, dtype=np.int64)

    def send(self, step: int, outbox: Any) -> None:
        self.held += self.block.per_episode(agents=outbox.sender)
        self.inner.send(step, outbox.take(np.zeros(0, dtype=np.int64)))

    def counts(self, episode: int) -> dict[str, int]:
        return {**self.inner.counts(episode), "held_messages": int(self.held[episode])}


def wrapped(monkeypatch: pytest.MonkeyPatch, wrapper: type) -> list:
    """Every task builds its medium inside `wrapper`; the wrappers built, as they are."""
    registered, built = media.medium, []

    def build(name: str) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            built.append(wrapper(registered(name)(*args, **kwargs)))
            return built[-1]

        return make

    monkeypatch.setattr(media, "medium", build)
    return built


TASKS = {
    "agentsnet": [
        {"kind": "agentsnet", "problem": p, "family": "delaunay", "rounds": "paper"}
        for p in ("matching", "leader_election")
    ],
    "swarmbench": [{"kind": "swarmbench", "task": t, "rounds": 12} for t in ("pursuit", "foraging")],
    "silobench": [
        *(
            {"kind": "silobench", "task": "II-11", "protocol": p, "topology": "regular3", "rounds": 3}
            for p in ("p2p", "broadcast")
        ),
        {"kind": "silobench", "task": "II-11", "protocol": "store", "rounds": 2},
    ],
}
METHODS = {"agentsnet": ["distributed", "random"], "swarmbench": ["heuristic"], "silobench": ["distributed", "random"]}


def blocks(suite: str) -> list[list[dict]]:
    tasks = {f"t{i}": task for i, task in enumerate(TASKS[suite])}
    methods = {m: {"kind": m} for m in METHODS[suite]}
    config = {
        "tasks": tasks,
        "methods": methods,
        "studies": {"s": {"tasks": list(tasks), "methods": list(methods), "populations": [8], "seeds": 3}},
    }
    return [list(block.cells()) for block in all_blocks(validate(config, "media.yaml"), Path("media.yaml").parent)["s"]]


@pytest.mark.parametrize("suite", list(TASKS))
def test_a_medium_wrapped_in_one_that_passes_everything_through_plays_the_same_episodes(suite, monkeypatch):
    plain = [play_block(cells) for cells in blocks(suite)]
    wrappers = wrapped(monkeypatch, PassThrough)
    for cells, before in zip(blocks(suite), plain):
        for a, b in zip(before, play_block(cells)):
            assert pa.table(a.agents).equals(pa.table(b.agents)) and a.summary == b.summary
            assert a.tables.keys() == b.tables.keys() and all(
                stored(a.table(k)).equals(stored(b.table(k))) for k in a.tables
            )
    assert len(wrappers) == len(plain)  # one per block


def test_a_wrapper_changes_what_passes_and_adds_its_counts_without_touching_the_medium(monkeypatch):
    wrapped(monkeypatch, Silence)
    for cells in blocks("silobench"):
        for record in play_block(cells):
            assert (
                record.summary["messages"] == record.summary["deliveries"] == 0 and record.summary["held_messages"] > 0
            )
            assert record.table("messages").num_rows == 0 and not any(record.agents["received"])
