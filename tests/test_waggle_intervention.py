"""The late-counterevidence intervention on SwarmBench Pursuit (`relocate_at`): the prey is moved at
that round and nowhere else, recovery is the share of agents with it in view at the end, and the
runtime's stale-field burden and post-conflict traffic agree with the `traces` table, recomputed here
from the field's rules (a trace written in round w with TTL k is held in rounds w + 1 .. w + k unless a
newer trace of the same writer reaches the same receiver first)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import play_block
from hivebench.waggle.study.report import intervention_table

N, ROUNDS, AT = 16, 60, 30


def records(kind: str, relocate_at: int | None = AT, seeds: int = 3):
    task = {"kind": "swarmbench", "task": "pursuit", "rounds": ROUNDS}
    if relocate_at is not None:
        task["relocate_at"] = relocate_at
    config = {
        "tasks": {"t": task},
        "methods": {"m": {"kind": kind}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": seeds}},
    }
    (block,) = all_blocks(validate(config, "test"), Path("test").parent)["s"]
    return play_block(list(block.cells()))


def test_the_prey_is_relocated_at_the_round_and_the_episode_is_the_same_before_it():
    for plain, moved in zip(records("nocomm", None), records("nocomm")):
        before, after = np.array(plain.summary["prey_path"]), np.array(moved.summary["prey_path"])
        assert (before[:AT] == after[:AT]).all()  # NoComm's agents do not know what is to come
        # where the prey stood once it had moved (the plain episode's), then at least k = 5 cells from it
        assert np.abs(after[AT] - before[AT]).max() >= 5
        assert moved.summary["relocation_distance"] == np.abs(after[AT] - after[AT - 1]).max() >= 5
        rows = pd.DataFrame(moved.agents)
        last = rows[rows.step == ROUNDS]
        near = (np.maximum(np.abs(last.row - after[-1][0]), np.abs(last.col - after[-1][1])) <= 2).mean()
        assert moved.summary["recovery"] == pytest.approx(near)  # 5 x 5 views: within 2 cells
        assert moved.summary["intervention_round"] == AT
        assert moved.summary["stale_field_burden"] == 0 and moved.summary["post_conflict_traffic"] == 0
        assert "recovery" not in plain.summary and "intervention_round" not in plain.summary


def held_stale(traces: pd.DataFrame) -> int:
    """Trace-rounds held from round AT on of traces written before it, from the traces table."""
    total = 0
    for (_, _), group in traces.groupby(["writer", "receiver"]):
        written = group["step"].to_numpy()
        ttl = group["ttl"].to_numpy()
        for i, w in enumerate(written):
            if w >= AT:
                continue
            until = w + ttl[i]
            if i + 1 < len(written):
                until = min(until, written[i + 1])  # the next one replaces it on arrival
            until = min(until, ROUNDS - 1)  # the last decision round
            total += max(0, until - max(w + 1, AT) + 1)
    return total


@pytest.mark.parametrize("kind", ["fixedswarm", "scripted_controller"])
def test_stale_burden_and_post_conflict_traffic_agree_with_the_traces_table(kind):
    burdens = []
    for record in records(kind):
        traces = pa.table(record.tables["traces"]).to_pandas().sort_values(["writer", "receiver", "step"])
        s = record.summary
        # one trace per writer per round and no native messages: every delivery is one frame (those sent
        # from round AT on: what arrives in round AT was sent before the relocation)
        assert s["post_conflict_traffic"] * N == (traces["step"] >= AT).sum()
        assert s["stale_field_burden"] * N == held_stale(traces)
        burdens.append(s["stale_field_burden"])
    assert max(burdens) > 0  # the check has something to count


def test_relocation_is_pursuits_alone_and_before_the_last_round():
    for task, at, problem in [("foraging", 5, "only Pursuit"), ("pursuit", ROUNDS, "not a round before the last")]:
        config = {
            "tasks": {"t": {"kind": "swarmbench", "task": task, "rounds": ROUNDS, "relocate_at": at}},
            "methods": {"m": {"kind": "nocomm"}},
            "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": 1}},
        }
        with pytest.raises(ConfigError, match=f"tasks.t.relocate_at: .*{problem}"):
            validate(config, "test")


@pytest.mark.parametrize("grid, view", [(6, 5), (12, 99), (11, 5)])
def test_a_relocation_that_could_stay_in_view_is_refused(grid, view):
    config = {
        "tasks": {"t": {"kind": "swarmbench", "task": "pursuit", "grid": grid, "view": view, "relocate_at": 5}},
        "methods": {"m": {"kind": "nocomm"}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [4], "seeds": 1}},
    }
    with pytest.raises(ConfigError, match=rf"relocate_at: on a {grid} x {grid} map .* needs a map of at least"):
        validate(config, "test")
    config["tasks"]["t"]["grid"] = 2 * view + 2  # from every cell some cell is `view` cells away
    if view < 50:
        validate(config, "test")


def test_the_report_table_gives_each_metric_with_its_interval():
    episodes = pd.DataFrame(
        {
            "method": ["a"] * 3 + ["b"] * 2,
            "suite": "swarmbench",
            "task": "pursuit",
            "intervention_round": [30.0] * 5,
            "recovery": [0.5, 0.25, 0.75, 0.0, np.nan],
            "stale_field_burden": [1.0, 2.0, 3.0, 0.0, 0.0],
            "post_conflict_traffic": [4.0, 4.0, 4.0, 0.0, 1.0],
        }
    )
    table = intervention_table(episodes, 1000, 0.95, 0).set_index(["method", "metric"])
    assert table.loc[("a", "recovery (%)"), "mean"] == pytest.approx(50.0)
    assert table.loc[("b", "recovery (%)"), "episodes"] == 1  # an episode without the value is left out
    assert table.loc[("a", "stale-field burden"), "lo"] < 2.0 < table.loc[("a", "stale-field burden"), "hi"]
    assert table.loc[("a", "post-conflict traffic"), ["mean", "lo", "hi"]].tolist() == [4.0, 4.0, 4.0]
    assert (table["round"] == 30).all()
