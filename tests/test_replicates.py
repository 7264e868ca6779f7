"""Replicates (training seeds) as a cell dimension, and the hierarchical paired bootstrap: against a
brute-force two-level resampler, and equal to the paired stratified bootstrap with one replicate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hivebench.anchors import load_anchors
from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.contrasts import contrast_table, paired_contrast, procedure
from hivebench.engine.loop import play_block
from hivebench.ids import digest
from hivebench.paths import cell_path
from hivebench.scores import POOLED, score_table
from hivebench.stats import hierarchical_bootstrap, percentile_interval, stratified_bootstrap


def brute_force(values: np.ndarray, strata: np.ndarray, weights: dict, resamples: int, seed: int) -> np.ndarray:
    """The two-level resampler written out, one draw at a time: replicates with replacement, then
    inside each drawn replicate every stratum's units with replacement."""
    rng = np.random.default_rng(seed)
    labels = sorted(set(strata))
    total = sum(weights[label] for label in labels)
    members = {label: np.flatnonzero(strata == label) for label in labels}
    replicates = len(values)
    out = np.empty(resamples)
    for b in range(resamples):
        statistic = 0.0
        for r in rng.integers(0, replicates, replicates):
            for label in labels:
                picked = rng.choice(members[label], len(members[label]), replace=True)
                statistic += weights[label] / total * values[r, picked].mean()
        out[b] = statistic / replicates
    return out


def test_hierarchical_bootstrap_matches_a_brute_force_two_level_resampler():
    rng = np.random.default_rng(11)
    strata = np.repeat(np.array(["pursuit/n16", "I-01/n16", "I-02/n32"]), [5, 8, 12])
    replicates = 4
    values = rng.normal(0, 1, (replicates, len(strata))) + rng.normal(0, 1.5, (replicates, 1))
    weights = {"pursuit/n16": 1.0, "I-01/n16": 3.0, "I-02/n32": 2.0}
    estimate, ours = hierarchical_bootstrap(values, strata, weights, 6000, seed=1)
    theirs = brute_force(values, strata, weights, 6000, seed=2)
    by_hand = np.mean([sum(w * values[r, strata == s].mean() for s, w in weights.items()) / 6 for r in range(4)])
    assert estimate[0] == pytest.approx(by_hand)
    assert ours[:, 0].mean() == pytest.approx(theirs.mean(), abs=0.05 * theirs.std())
    assert ours[:, 0].std() == pytest.approx(theirs.std(), rel=0.05)
    width = np.ptp(np.percentile(theirs, [2.5, 97.5]))
    assert np.allclose(np.percentile(ours[:, 0], [2.5, 97.5]), np.percentile(theirs, [2.5, 97.5]), atol=0.06 * width)


def test_with_one_replicate_it_is_the_stratified_bootstrap():
    rng = np.random.default_rng(3)
    strata = rng.integers(0, 4, 60)
    values = rng.normal(size=(1, 60))
    for weights in (None, {0: 1.0, 1: 2.0, 2: 0.5, 3: 1.0}):
        hier = hierarchical_bootstrap(values, strata, weights, 3000, seed=9)
        flat = stratified_bootstrap(values[0][:, None], strata, weights, 3000, seed=9)
        assert np.array_equal(hier[0], flat[0]) and np.array_equal(hier[1], flat[1])


def test_the_interval_widens_with_replicate_variation_and_not_without():
    rng = np.random.default_rng(9)
    strata = np.repeat(np.arange(3), 8)
    noise = rng.normal(0, 1, (5, 24))
    varied = noise + rng.normal(0, 2, (5, 1))  # each training seed shifts all its episodes
    _, hier = hierarchical_bootstrap(varied, strata, None, 4000, seed=0)
    _, flat = stratified_bootstrap(varied.reshape(-1, 1), np.tile(strata, 5), None, 4000, seed=0)
    _, steady = hierarchical_bootstrap(noise, strata, None, 4000, seed=0)
    width = np.ptp(np.percentile(hier[:, 0], [2.5, 97.5]))
    assert width > 2 * np.ptp(np.percentile(flat[:, 0], [2.5, 97.5]))
    assert np.ptp(np.percentile(steady[:, 0], [2.5, 97.5])) < width / 2


def unit_rows(method: str, values: np.ndarray, replicate: str | None = None) -> list[dict]:
    """Episodes of one method (one replicate): two tasks x two populations x 6 seeds, in order."""
    keys = [(task, n, seed) for task in ("I-01", "I-02") for n in (4, 8) for seed in range(6)]
    return [
        {"suite": "silobench", "task": t, "population": n, "seed": s, "method": method, "replicate": replicate, "m": v}
        for (t, n, s), v in zip(keys, values)
    ]


def test_a_one_replicate_contrast_equals_the_paired_stratified_interval():
    rng = np.random.default_rng(4)
    a, b = rng.normal(1, 1, 24), rng.normal(0, 1, 24)
    fixed = pd.DataFrame(unit_rows("A", a) + unit_rows("B", b))
    one = pd.DataFrame(unit_rows("A", a, "seed0") + unit_rows("B", b))
    paired = paired_contrast(fixed, "m", "A", "B", None, 4000, 0.95, 0, strata_by="task")
    hierarchical = paired_contrast(one, "m", "A", "B", None, 4000, 0.95, 0)
    assert (paired["replicates"], hierarchical["replicates"]) == (0, 1)
    assert "task x population" in hierarchical["method"] and "task x population" in paired["method"]
    assert [paired[k] for k in ("estimate", "lo", "hi", "n_units")] == [
        hierarchical[k] for k in ("estimate", "lo", "hi", "n_units")
    ]
    strata = np.array([f"silobench/{t}/n{n}" for t in ("I-01", "I-02") for n in (4, 8) for _ in range(6)])
    _, distribution = stratified_bootstrap((a - b)[:, None], strata, None, 4000, 0)
    assert (paired["lo"], paired["hi"]) == tuple(float(x[0]) for x in percentile_interval(distribution, 0.95))


def test_replicates_are_paired_by_label_and_a_fixed_method_meets_every_replicate():
    rng = np.random.default_rng(5)
    shift = {"s0": -3.0, "s1": 0.0, "s2": 3.0}  # a training seed's effect, shared by A's and B's replicate
    base = rng.normal(0, 1, 24)
    rows = []
    for label, effect in shift.items():
        rows += unit_rows("A", base + effect + 0.5 + rng.normal(0, 0.1, 24), label)
        rows += unit_rows("B", base + effect + rng.normal(0, 0.1, 24), label)
    rows += unit_rows("F", base)
    frame = pd.DataFrame(rows)
    by_label = paired_contrast(frame, "m", "A", "B", None, 4000, 0.95, 0)
    assert by_label["replicates"] == 3 and by_label["estimate"] == pytest.approx(0.5, abs=0.05)
    assert by_label["hi"] - by_label["lo"] < 0.2  # the shared shifts cancel
    against_fixed = paired_contrast(frame, "m", "A", "F", None, 4000, 0.95, 0)
    assert against_fixed["replicates"] == 3 and against_fixed["estimate"] == pytest.approx(0.5, abs=0.05)
    assert against_fixed["hi"] - against_fixed["lo"] > 3  # the training seeds' spread stays
    table = contrast_table(frame, {"pairs": [["A", "B"], ["F", "B"]]}, ["m"], 500, 0.95, 0)
    assert set(table["method"]) == {procedure(3, "task")} and set(table["replicates"]) == {3}
    assert procedure(3, "task").startswith("hierarchical bootstrap, replicates resampled")


def test_fixed_methods_are_resampled_within_their_tasks_by_default():
    """Task-seed units resampled within each task of a benchmark at each population, the tasks weighing
    alike (Table 18's task weights); `strata: suite` pools them within benchmark x population strata."""
    rng = np.random.default_rng(8)
    frame = pd.DataFrame(unit_rows("A", rng.normal(size=24)) + unit_rows("B", rng.normal(size=24)))
    default = contrast_table(frame, {"reference": "B"}, ["m"], 2000, 0.95, 0)
    pooled = contrast_table(frame, {"reference": "B", "strata": "suite"}, ["m"], 2000, 0.95, 0)
    assert set(default["method"]) == {procedure(0, "task")} and set(pooled["method"]) == {procedure(0, "suite")}
    strata = {"suite": np.tile(np.repeat([4, 8], 6), 2), "task": np.repeat(np.arange(4), 6)}
    a, b = frame[frame.method == "A"]["m"].to_numpy(), frame[frame.method == "B"]["m"].to_numpy()
    for table, key in ((pooled, "suite"), (default, "task")):
        _, distribution = stratified_bootstrap((a - b)[:, None], strata[key], None, 2000, 0)
        lo, hi = percentile_interval(distribution, 0.95)
        overall = table[table.population == "all"].iloc[0]
        assert (overall["lo"], overall["hi"]) == (lo[0], hi[0])


def test_a_unit_missing_from_one_replicate_is_dropped_and_counted():
    rows = unit_rows("A", np.arange(24.0), "s0") + unit_rows("A", np.arange(24.0), "s1") + unit_rows("B", np.zeros(24))
    frame = pd.DataFrame(rows).drop(index=30)  # replicate s1's seed 6 (task I-01, N = 8, seed 0)
    result = paired_contrast(frame, "m", "A", "B", None, 500, 0.95, 0)
    assert (result["n_units"], result["dropped_units"]) == (23, 1)


def test_replicates_with_other_labels_are_refused():
    rows = unit_rows("A", np.zeros(24), "s0") + unit_rows("B", np.zeros(24), "t0")
    with pytest.raises(ValueError, match="replicates are paired by label"):
        paired_contrast(pd.DataFrame(rows), "m", "A", "B", None, 500, 0.95, 0)


def test_scores_have_a_row_per_replicate_and_one_over_them():
    from conftest import REPO

    rng = np.random.default_rng(6)
    rows = []
    for label, effect in (("s0", 0.0), ("s1", 0.2)):
        for seed in range(5):
            value = effect + rng.random()
            rows.append(
                {"suite": "silobench", "task": "I-01", "method": "w", "population": 4, "seed": seed}
                | {"replicate": label, "success": value, "exact": value, "partial": value}
            )
    rows += [{**row, "method": "f", "replicate": None} for row in rows[:5]]
    episodes = pd.DataFrame(rows)
    anchors = load_anchors(REPO / "config/anchors.yaml")
    table = score_table(episodes, 1000, 0.95, 0, anchors)
    success = table[table.metric == "success"].set_index(["method", "replicate"])
    assert set(success.index) == {("w", "s0"), ("w", "s1"), ("w", POOLED), ("f", "")}
    w = episodes[episodes.method == "w"]
    assert success.loc[("w", POOLED), "mean"] == pytest.approx(w.groupby("replicate")["success"].mean().mean())
    assert success.loc[("w", POOLED), "interval"] == "hierarchical percentile"
    assert success.loc[("w", "s0"), "n"] == 5 and success.loc[("w", POOLED), "n"] == 10


def replicated(config: dict) -> dict:
    config["methods"]["random"]["replicates"] = [0, "b"]
    config["methods"]["soft_fp"]["replicates"] = {"0": {"p": 0.5}, "b": {}}
    return config


def test_each_replicate_is_a_cell_dimension_with_its_own_folder_and_parameters(config):
    before = all_blocks(validate(config, "x.yaml"), Path("."))["tiny"]
    blocks = all_blocks(validate(replicated(config), "x.yaml"), Path("."))["tiny"]
    assert len(blocks) == 2 * len(before)
    assert all("replicate" not in block.shared for block in before)  # a method without keeps its cells
    soft_fp = [b for b in blocks if b.shared["method"]["name"] == "soft_fp"]
    soft = {label: next(b for b in soft_fp if b.shared["replicate"] == label) for label in ("0", "b")}
    assert soft["0"].shared["method"]["params"] == {"p": 0.5} and soft["b"].shared["method"]["params"] == {"p": 0.3}
    cell = next(soft["b"].cells())
    assert cell_path(cell) == "results/episodes/tiny/loopbench/cycle/soft_fp/replicate-b/n3/s0.parquet"
    hashes = {digest(c) for b in blocks for c in b.cells()}
    assert len(hashes) == sum(len(b.seeds) for b in blocks)


def test_replicates_share_the_initial_state_and_draw_their_own_moves(config):
    config["tasks"]["cycle"]["init"] = "random"
    blocks = all_blocks(validate(replicated(config), "x.yaml"), Path("."))["tiny"]
    by_replicate = {
        b.shared["replicate"]: b
        for b in blocks
        if b.shared["method"]["name"] == "random" and b.shared["population"] == 5
    }
    first, second = (play_block(list(by_replicate[label].cells())[:3]) for label in ("0", "b"))
    colours = [[np.asarray(record.agents["color"]) for record in records] for records in (first, second)]
    assert all(np.array_equal(a[:5], b[:5]) for a, b in zip(*colours))  # state 0: the seed's
    assert any(not np.array_equal(a, b) for a, b in zip(*colours))


@pytest.mark.parametrize(
    ("replicates", "problem"),
    [
        ({"x": {"p": 1.5}}, "methods.soft_fp.replicates.x.p: 1.5 is greater than the maximum of 1"),
        ({"x": {"kind": "random"}}, "methods.soft_fp.replicates.x: sets kind, which every replicate"),
        ([0, "0"], "methods.soft_fp.replicates: labels repeat once read as text"),
        ({"x": {"q": 1}}, "methods.soft_fp.replicates.x: Unevaluated properties are not allowed ('q' was unexpected)"),
    ],
)
def test_a_bad_replicate_is_named(config, replicates, problem):
    config["methods"]["soft_fp"]["replicates"] = replicates
    with pytest.raises(ConfigError) as error:
        validate(config, "x.yaml")
    assert problem in str(error.value)


def test_a_contrast_of_replicates_with_other_labels_is_refused_before_anything_runs(config):
    config["methods"]["random"]["replicates"] = ["a", "b"]
    config["methods"]["soft_fp"]["replicates"] = ["a", "c"]
    with pytest.raises(ConfigError, match="studies.tiny.contrasts: 'soft_fp' and 'random' both have replicates"):
        validate(config, "x.yaml")


def two_replicates(rng: np.random.Generator, tasks: list[str], seeds: int, **columns) -> pd.DataFrame:
    """One method's episodes: two replicates far apart (0.1 and 0.9 plus a little noise) on the same
    (task, seed) units, and per unit the value of each replicate."""
    rows = []
    for label, level in (("s0", 0.1), ("s1", 0.9)):
        for task in tasks:
            for seed in range(seeds):
                rows.append({"replicate": label, "task": task, "seed": seed, "value": level + 0.05 * rng.random()})
    return pd.DataFrame(rows).assign(method="w", population=8, **columns)


def test_a_silobench_sections_interval_resamples_replicates_first():
    from hivebench.suites.silobench.report import summary_table

    frame = two_replicates(np.random.default_rng(4), ["I-01", "I-02"], 8, level="I")
    episodes = frame.rename(columns={"task": "silo_task"}).assign(
        success=frame["value"], exact=frame["value"], partial=frame["value"], density=1.0
    )
    episodes = episodes.assign(protocol="p2p", topology="regular3", rounds=9, compat="hivebench")
    row = summary_table(episodes, 2000, 0.95, 0).set_index("level").loc["all"]
    # by hand: replicates x units (task, seed, in that order) x one column, both tasks weighing the same
    values = np.stack(
        [frame[frame.replicate == r].sort_values(["task", "seed"])["value"].to_numpy() for r in "s0 s1".split()]
    )
    strata = np.repeat(["I-01", "I-02"], 8)
    estimate, distribution = hierarchical_bootstrap(values, strata, {"I-01": 1.0, "I-02": 1.0}, 2000, 0)
    lo, hi = percentile_interval(distribution, 0.95)
    assert (row["success"], row["success_lo"], row["success_hi"]) == pytest.approx((estimate[0], lo[0], hi[0]))
    # the replicates' spread is in the interval; pooled as 32 independent episodes it would not be
    assert row["success_hi"] - row["success_lo"] > 0.7
    pooled = stratified_bootstrap(frame[["value"]].to_numpy(), frame["task"].to_numpy(), None, 2000, 0)[1]
    assert np.ptp(percentile_interval(pooled, 0.95)) < 0.4


def test_a_swarmbench_sections_scores_and_aggregate_resample_replicates_first():
    from hivebench.suites.swarmbench.report import aggregate_table, summary_table

    frame = two_replicates(np.random.default_rng(5), ["pursuit", "foraging", "synchronization"], 6)
    episodes = frame.rename(columns={"task": "swarm_task", "value": "score"})
    anchors = {("swarmbench", task): (1.0, 8, "") for task in ("pursuit", "foraging", "synchronization")}
    scores = summary_table(episodes, 2000, 0.95, 0, anchors).set_index("task")
    pursuit = frame[frame.task == "pursuit"]
    values = np.stack([pursuit[pursuit.replicate == r].sort_values("seed")["value"].to_numpy() for r in ("s0", "s1")])
    estimate, distribution = hierarchical_bootstrap(values, np.zeros(6), None, 2000, 0)
    lo, hi = percentile_interval(distribution, 0.95)
    assert tuple(scores.loc["pursuit", ["score", "score_lo", "score_hi"]]) == pytest.approx((estimate[0], lo[0], hi[0]))
    aggregate = aggregate_table(episodes, 2000, 0.95, 0, anchors).iloc[0]
    assert aggregate["hi"] - aggregate["lo"] > 0.7


def test_a_unit_played_twice_by_one_replicate_is_refused():
    from hivebench.replicated import episode_ci

    frame = two_replicates(np.random.default_rng(6), ["I-01", "I-02"], 3)
    with pytest.raises(ValueError, match="share a unit"):
        episode_ci(frame, "value", 200, 0.95, 0)  # two tasks in one group: (population, seed) repeats
