"""One trace field for several runtimes of a block: a mixed population's members on the field
(hivebench.agents.mixed), so that a controller beside FixedSwarm agents reads their traces and they
read its. Each round the first member to update the field updates it and the others read that update;
every member's deposits of a round arrive together at the next; the first member reports the field's
counts and its `traces` table (each member's per-agent columns read the whole field's traffic and keep
their own agents')."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from hivebench.seeding import Streams
from hivebench.waggle.runtime.field import Incident, TraceField


class SharedField:
    def __init__(self, members: int):
        self.members = members
        self.field: TraceField | None = None
        self.updates = 0  # `deliver` calls so far: one per member per round
        self.incident: Incident | None = None

    def deliver(self, contacts: tuple[np.ndarray, np.ndarray], running: np.ndarray | None) -> Incident:
        assert self.field is not None
        if self.updates % self.members == 0:  # the round's first member: the local update
            self.incident = self.field.deliver(contacts, running)
        self.updates += 1
        assert self.incident is not None
        return self.incident

    def send(self, step: int, deposits: tuple[np.ndarray, np.ndarray]) -> None:
        """Stage a member's deposits beside those the others staged this round, in writer order (as
        one runtime stages its agents')."""
        assert self.field is not None
        before = self.field.staged
        self.field.send(step, deposits)
        if before is not None and before[0] == step:
            _, writers, traces = self.field.staged  # type: ignore[misc]
            writers, traces = np.concatenate([before[1], writers]), np.concatenate([before[2], traces])
            order = np.argsort(writers, kind="stable")
            self.field.staged = (step, writers[order], traces[order])


class FieldShare:
    """One member's hold on the shared field (a `TraceField` to its runtime)."""

    def __init__(self, shared: SharedField, reports: bool):
        self.shared, self.reports = shared, reports

    def deliver(self, contacts: tuple[np.ndarray, np.ndarray], running: np.ndarray | None = None) -> Incident:
        return self.shared.deliver(contacts, running)

    def send(self, step: int, deposits: tuple[np.ndarray, np.ndarray]) -> None:
        self.shared.send(step, deposits)

    def counts(self, episode: int) -> dict[str, int]:
        assert self.shared.field is not None
        return self.shared.field.counts(episode) if self.reports else {}

    def tables(self, episode: int) -> dict[str, pa.Table]:
        assert self.shared.field is not None
        return self.shared.field.tables(episode) if self.reports else {}

    def __getattr__(self, name: str) -> Any:  # what a runtime reads of its field: arrived, pairs, traffic, ...
        return getattr(self.shared.field, name)


def share_field(runtimes: Sequence[Any], rng: Streams) -> None:
    """Give the runtimes among a mixed population's members that write on the trace field one field,
    built as the first of them builds its own (under a perturbation, an unreliable one) but drawing
    from `rng` (the population's, not a member's: the stream one method's field draws from)."""
    on_field = [r for r in runtimes if getattr(r, "field", False)]
    if len(on_field) < 2:
        return
    shared = SharedField(len(on_field))

    def maker(make_field: Callable[..., TraceField], reports: bool) -> Callable[..., FieldShare]:
        def make(block: Any, _member_rng: Streams, contacts: int) -> FieldShare:
            if shared.field is None:
                shared.field = make_field(block, rng, contacts)
            return FieldShare(shared, reports)

        return make

    for i, runtime in enumerate(on_field):
        runtime.make_field = maker(runtime.make_field, reports=i == 0)
