"""Action batches combined agent by agent (hivebench.perturb.actions): `choose` in one pass and
`merge` part after part give each agent the actions of the last batch that holds it, on every kind of
field a suite's actions have."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hivebench.engine.media.outbox import Outbox
from hivebench.perturb.actions import choose, merge


@dataclass(frozen=True)
class Actions:
    """A batch of the shapes the suites' actions take: an array, a list of optional answers, an outbox."""

    move: np.ndarray
    answers: list[str | None] | None
    outbox: Outbox | None


@st.composite
def batches(draw: Any, agents: int, tag: int) -> Actions:
    """A batch, its answers or outbox None (nothing) or not, its outbox's rows in sender order as
    the suites send them."""
    move = np.array(draw(st.lists(st.integers(0, 9), min_size=agents, max_size=agents)))
    answers = draw(st.one_of(st.none(), st.lists(st.sampled_from([None, f"a{tag}"]), min_size=agents, max_size=agents)))
    rows = draw(st.lists(st.integers(0, agents - 1), max_size=2 * agents))
    outbox = None
    if draw(st.booleans()) or rows:
        sender = np.sort(np.array(rows, dtype=np.int64))
        text = pa.array([f"m{tag}-{i}" for i in range(len(sender))], pa.string())
        outbox = Outbox(sender, (sender + 1) % agents, text)
    return Actions(move, answers, outbox)


@st.composite
def merges(draw: Any) -> tuple[Any, list[tuple[Any, np.ndarray]]]:
    agents = draw(st.integers(2, 6))
    base = draw(batches(agents, 0))
    parts = [
        (draw(batches(agents, k)), np.array(draw(st.lists(st.booleans(), min_size=agents, max_size=agents))))
        for k in range(1, draw(st.integers(1, 4)) + 1)
    ]
    return base, parts


def per_agent(actions: Actions, agents: int) -> list[tuple[Any, ...]]:
    """Each agent's move, answer and messages (None and an empty outbox alike: nothing)."""
    outbox = actions.outbox
    sent = [[] for _ in range(agents)]
    if outbox is not None:
        for sender, receiver, text in zip(outbox.sender, outbox.receiver, outbox.texts().to_pylist()):
            sent[sender].append((int(receiver), text))
    answers = actions.answers or [None] * agents
    return [(int(actions.move[a]), answers[a], tuple(sent[a])) for a in range(agents)]


@settings(max_examples=400, deadline=None)
@given(case=merges())
def test_merging_at_once_gives_each_agent_what_merging_part_after_part_gives(case):
    base, parts = case
    one_by_one = base
    for batch, mask in parts:
        one_by_one = merge(one_by_one, batch, mask)
    agents = len(parts[0][1])
    last = np.zeros(agents, dtype=np.int64)  # per agent, the last part that holds it (0: none, the base)
    for k, (_, mask) in enumerate(parts, start=1):
        last[mask] = k
    at_once = choose([base, *(batch for batch, _ in parts)], last)
    # each agent's actions from the last part that holds it, else from the base
    source = [base] * agents
    for batch, mask in parts:
        source = [batch if m else s for s, m in zip(source, mask)]
    expected = [per_agent(batch, agents)[a] for a, batch in enumerate(source)]
    assert per_agent(at_once, agents) == per_agent(one_by_one, agents) == expected
    for combined in (at_once, one_by_one):  # rows in sender order, as they came
        if combined.outbox is not None:
            assert (np.diff(combined.outbox.sender) >= 0).all()
