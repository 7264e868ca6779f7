"""Bootstrap statistics: BCa against scipy, known answers, coverage by simulation, pairing,
unmatched units, anchors (hierarchical resampling: test_replicates.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hivebench.anchors import AnchorError, load_anchors, mismatch, normalise
from hivebench.contrasts import paired_contrast
from hivebench.registry import SUITE_OBJECTS
from hivebench.scores import score_table
from hivebench.stats import (
    bca_interval,
    bootstrap_means,
    mean_ci,
    percentile_interval,
    stratified_bootstrap,
)


def test_bca_matches_scipy_on_the_same_bootstrap_distribution():
    x = np.random.default_rng(1).exponential(size=40)
    result = stats.bootstrap((x,), np.mean, n_resamples=5000, method="BCa", rng=np.random.default_rng(3))
    lo, hi = bca_interval(result.bootstrap_distribution, x, 0.95)
    assert lo == pytest.approx(result.confidence_interval.low, rel=1e-12)
    assert hi == pytest.approx(result.confidence_interval.high, rel=1e-12)


def test_mean_ci_agrees_with_scipy_within_resampling_noise():
    x = np.random.default_rng(2).lognormal(size=60)
    for method, scipy_method in (("percentile", "percentile"), ("bca", "BCa")):
        ours = mean_ci(x, 20_000, 0.95, seed=0, method=method)
        theirs = stats.bootstrap((x,), np.mean, n_resamples=20_000, method=scipy_method, rng=np.random.default_rng(0))
        width = theirs.confidence_interval.high - theirs.confidence_interval.low
        assert abs(ours.lo - theirs.confidence_interval.low) < 0.05 * width
        assert abs(ours.hi - theirs.confidence_interval.high) < 0.05 * width


def test_bootstrap_means_resample_rows_jointly_and_reproducibly():
    values = np.column_stack([np.arange(10.0), np.arange(10.0) + 5])
    a = bootstrap_means(values, 1000, np.random.default_rng(7))
    b = bootstrap_means(values, 1000, np.random.default_rng(7))
    assert np.array_equal(a, b) and a.shape == (1000, 2)
    assert np.allclose(a[:, 1] - a[:, 0], 5)  # both columns saw the same rows in every resample


def episodes(a: np.ndarray, b: np.ndarray, populations: np.ndarray | None = None) -> pd.DataFrame:
    n = len(a)
    populations = np.full(n, 5) if populations is None else populations
    rows = []
    for method, values in (("A", a), ("B", b)):
        rows += [
            {"suite": "s", "task": "t", "population": p, "seed": i, "method": method, "m": v}
            for i, (p, v) in enumerate(zip(populations, values))
        ]
    return pd.DataFrame(rows)


def test_a_constant_shift_has_a_zero_width_interval():
    base = np.random.default_rng(0).normal(size=30) * 10
    result = paired_contrast(episodes(base + 3, base), "m", "A", "B", None, 2000, 0.95, 0)
    assert (
        result["estimate"] == pytest.approx(3) and result["lo"] == pytest.approx(3) and result["hi"] == pytest.approx(3)
    )
    assert (result["n_units"], result["dropped_units"]) == (30, 0)


def test_a_one_unit_stratum_contributes_its_value_with_no_spread():
    values = np.array([[10.0], [1.0], [2.0], [3.0], [4.0]])
    strata = np.array(["solo", "x", "x", "x", "x"])
    estimate, distribution = stratified_bootstrap(values, strata, {"solo": 1, "x": 1}, 4000, seed=0)
    assert estimate[0] == pytest.approx(0.5 * 10 + 0.5 * 2.5)
    only_x = 2 * (distribution[:, 0] - 5)  # remove the solo stratum's fixed half
    assert only_x.mean() == pytest.approx(2.5, abs=0.05)
    assert distribution.std() == pytest.approx(0.5 * np.std([1, 2, 3, 4]) / 2, rel=0.1)  # half the weight


def test_unmatched_units_are_dropped_and_counted():
    base = np.arange(20.0)
    frame = episodes(base + 1, base)
    frame = frame[~((frame.method == "A") & (frame.seed < 4))]
    frame.loc[(frame.method == "B") & (frame.seed == 10), "m"] = np.nan
    result = paired_contrast(frame, "m", "A", "B", None, 500, 0.95, 0)
    assert (result["n_units"], result["dropped_units"]) == (15, 5)


def test_paired_intervals_cover_the_true_difference_about_95_percent_of_the_time():
    rng = np.random.default_rng(2024)
    studies, units, delta, covered = 600, 40, 1.5, 0
    for s in range(studies):
        seed_effect = rng.normal(0, 5, units)  # shared by both methods on a unit
        a = seed_effect + delta + rng.normal(0, 1, units)
        b = seed_effect + rng.normal(0, 1, units)
        estimate, distribution = stratified_bootstrap((a - b)[:, None], np.zeros(units), None, 1000, seed=s)
        lo, hi = percentile_interval(distribution, 0.95)
        covered += lo[0] <= delta <= hi[0]
    assert 0.93 <= covered / studies <= 0.97


def test_pairing_narrows_the_interval_when_methods_share_seed_effects():
    rng = np.random.default_rng(5)
    seed_effect = rng.normal(0, 5, 50)
    a, b = seed_effect + 1 + rng.normal(0, 1, 50), seed_effect + rng.normal(0, 1, 50)
    paired = paired_contrast(episodes(a, b), "m", "A", "B", None, 4000, 0.95, 0)
    da = bootstrap_means(a[:, None], 4000, np.random.default_rng(1))[:, 0]
    db = bootstrap_means(b[:, None], 4000, np.random.default_rng(2))[:, 0]
    unpaired_lo, unpaired_hi = np.percentile(da - db, [2.5, 97.5])
    assert paired["hi"] - paired["lo"] < 0.5 * (unpaired_hi - unpaired_lo)


def test_anchors_normalise_only_scores_under_the_rules_they_were_measured_under(tmp_path):
    from conftest import REPO

    anchors = load_anchors(REPO / "config/anchors.yaml")
    assert anchors.rules == {"swarmbench": "reference"}  # the paper's, on the released SwarmBench
    assert np.isnan(normalise(100.0, "swarmbench", "synchronization", anchors))  # hivebench's rules: not 100 / 6.4
    assert normalise(12.8, "swarmbench", "synchronization", anchors, "reference") == pytest.approx(2.0)
    assert mismatch(anchors, "swarmbench", "hivebench") == "not normalised: rules hivebench, the anchors' reference"
    (tmp_path / "a.yaml").write_text("swarmbench: {rules: '', pursuit: {8: {value: 6.2, provenance: x}}}")
    with pytest.raises(ValueError, match="swarmbench.rules: must name the rules the anchors were measured under"):
        load_anchors(tmp_path / "a.yaml")
    (tmp_path / "a.yaml").write_text("swarmbench: {pursuit: {8: {value: 6.2, provenance: x}}}")
    assert normalise(6.2, "swarmbench", "pursuit", load_anchors(tmp_path / "a.yaml")) == 1.0  # no rules stated


def test_a_missing_anchor_is_an_error_not_one(tmp_path):
    from conftest import REPO

    anchors = load_anchors(REPO / "config/anchors.yaml")
    assert normalise(12.4, "swarmbench", "pursuit", anchors, "reference") == pytest.approx(2.0)
    value, frozen_at, provenance = anchors[("swarmbench", "foraging")]
    assert (value, frozen_at) == (3.80, 8) and "Table 18" in provenance
    with pytest.raises(AnchorError, match="no anchor for swarmbench/flocking"):
        normalise(12.4, "swarmbench", "flocking", anchors)
    (tmp_path / "a.yaml").write_text("swarmbench: {pursuit: {8: {value: 6.2}}}")
    with pytest.raises(ValueError, match="needs value and provenance"):
        load_anchors(tmp_path / "a.yaml")
    (tmp_path / "a.yaml").write_text(
        "swarmbench: {pursuit: {8: {value: 6.2, provenance: x}, 16: {value: 7, provenance: y}}}"
    )
    with pytest.raises(ValueError, match="one anchor per task, frozen at one population .* got N = 8, 16"):
        load_anchors(tmp_path / "a.yaml")


def test_an_anchor_frozen_at_one_population_normalises_every_population():
    """The Waggle aggregate divides by the N = 8 anchor at every N (it used to stop at N != 8)."""
    from conftest import REPO

    episodes = pd.DataFrame(
        {
            "suite": "swarmbench",
            "task": "chase",
            "swarm_task": "pursuit",
            "method": "m",
            "population": [8, 8, 64, 64],
            "score": [6.2, 6.2, 12.4, 12.4],
            "compat": "reference",  # the rules the anchors were measured under
        }
    )
    table = score_table(episodes, 200, 0.95, 0, load_anchors(REPO / "config/anchors.yaml"))
    assert table.set_index("population")["normalised_mean"].to_dict() == pytest.approx({8: 1.0, 64: 2.0})
    assert (table["normalisation"] == "").all()
    hivebench = score_table(episodes.drop(columns="compat"), 200, 0.95, 0, load_anchors(REPO / "config/anchors.yaml"))
    assert hivebench["normalised_mean"].isna().all()
    assert (hivebench["normalisation"] == "not normalised: rules hivebench, the anchors' reference").all()
    flocking = score_table(episodes.assign(swarm_task="flocking"), 200, 0.95, 0, {})
    assert flocking["normalised_mean"].isna().all()  # not in the aggregate: no anchor needed, none given


def test_scores_and_the_swarmbench_table_give_each_mean_its_per_episode_sample_sd():
    """The lower-scale anchor tables' "per-episode mean ± sample s.d. over the ten seeds", beside the
    interval: scores.sd, and SwarmBench's score_sd and normalised_sd (the s.d. over the anchor)."""
    from conftest import REPO

    from hivebench.suites.swarmbench.report import summary_table

    values = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0, 3.0, 7.0]  # ten seeds: mean 5, sample s.d. 2.108...
    episodes = pd.DataFrame(
        {
            "suite": "swarmbench",
            "task": "pursuit",
            "swarm_task": "pursuit",
            "method": "m",
            "population": 8,
            "seed": range(10),
            "score": values,
            "compat": "reference",
        }
    )
    anchors = load_anchors(REPO / "config/anchors.yaml")
    sd = float(np.sqrt(sum((v - 5.0) ** 2 for v in values) / 9))
    scores = score_table(episodes, 200, 0.95, 0, anchors).iloc[0]
    assert (scores["mean"], scores["sd"], scores["normalised_sd"]) == pytest.approx((5.0, sd, sd / 6.20))
    assert scores["lo"] < 5.0 < scores["hi"]
    section = summary_table(episodes, 200, 0.95, 0, anchors).iloc[0]
    assert (section["score_sd"], section["normalised_sd"]) == pytest.approx((sd, sd / 6.20))
    one = score_table(episodes.head(1), 200, 0.95, 0, anchors).iloc[0]
    assert np.isnan(one["sd"])  # one episode has no sample s.d.


def test_units_are_the_ones_that_ran_not_the_product_of_their_keys():
    # Two fixed graphs of different sizes: (t1, N=10) and (t2, N=20) exist, (t1, 20) and (t2, 10) do not.
    rows = [
        {"suite": "s", "task": task, "population": n, "seed": seed, "method": method, "m": float(seed)}
        for task, n in (("t1", 10), ("t2", 20))
        for seed in range(5)
        for method in ("A", "B")
    ]
    result = paired_contrast(pd.DataFrame(rows), "m", "A", "B", None, 200, 0.95, 0)
    assert (result["n_units"], result["dropped_units"]) == (10, 0)


def test_contrasts_naming_a_method_that_did_not_run_are_an_error():
    from hivebench.contrasts import contrast_table

    frame = episodes(np.arange(5.0), np.arange(5.0))
    with pytest.raises(ValueError, match="not in the episodes: C"):
        contrast_table(frame, {"pairs": [["A", "C"]]}, ["m"], 100, 0.95, 0)
    with pytest.raises(ValueError, match="not in the episodes: Z"):
        contrast_table(frame, {"reference": "Z"}, ["m"], 100, 0.95, 0)


def test_a_study_of_one_method_has_an_empty_contrasts_table():
    from hivebench.contrasts import COLUMNS, contrast_table

    episodes = pd.DataFrame(
        {
            "suite": "loopbench",
            "task": "cycle",
            "method": "random",
            "population": 3,
            "seed": range(5),
            "proximity": np.linspace(50, 60, 5),
        }
    )
    table = contrast_table(episodes, {"reference": "random"}, ["proximity"], 200, 0.95, 0)
    assert table.empty and list(table.columns) == COLUMNS


def test_a_metric_of_one_suite_is_contrasted_over_that_suites_units_only():
    """In a study spanning suites, AgentsNet units have no proximity: they are not "dropped" units."""
    from hivebench.contrasts import contrast_table

    rows = [
        {
            "suite": suite,
            "task": "t",
            "population": 5,
            "seed": seed,
            "method": method,
            metric: float(seed + (method == "A")),
        }
        for suite, metric in (("loopbench", "proximity"), ("agentsnet", "score"))
        for seed in range(6)
        for method in ("A", "B")
    ]
    frame = pd.DataFrame(rows)
    table = contrast_table(
        frame,
        {"reference": "B"},
        ["proximity", "score"],
        200,
        0.95,
        0,
        SUITE_OBJECTS,
    )
    overall = table[table.population == "all"].set_index("metric")
    assert (overall.n_units == 6).all() and (overall.dropped_units == 0).all() and (overall.estimate == 1.0).all()
    unfiltered = contrast_table(frame, {"reference": "B"}, ["proximity"], 200, 0.95, 0)
    assert unfiltered.loc[unfiltered.population == "all", "dropped_units"].item() == 6


def test_a_metric_two_suites_report_under_one_name_is_contrasted_per_suite():
    from hivebench.contrasts import contrast_table

    rows = [
        {"suite": suite, "task": "t", "population": 8, "seed": seed, "method": method, "score": value}
        for suite, scale in (("swarmbench", 10.0), ("agentsnet", 0.1))
        for seed in range(6)
        for method, value in (("A", scale * (seed + 1)), ("B", 0.0))
    ]
    table = contrast_table(pd.DataFrame(rows), {"reference": "B"}, ["score"], 200, 0.95, 0, SUITE_OBJECTS)
    overall = table[table["population"] == "all"].set_index("metric")["estimate"]
    # SwarmBench's score is a per-task scale (anchor-normalised): its raw contrast is per task
    assert overall.to_dict() == pytest.approx({"score (swarmbench: t)": 35.0, "score (agentsnet)": 0.35})


SWARM_TASKS = {"pursuit": 6.0, "foraging": 2.0, "synchronization": 100.0, "flocking": 50.0, "transport": 4.0}


def swarm_episodes(rules: str) -> pd.DataFrame:
    """A and B on SwarmBench's five tasks at N = 8 and 16, six seeds: A leads B by the task's number
    times (seed + 1) / 10 (so the tasks' raw differences are on their own scales)."""
    rows = [
        {
            "suite": "swarmbench",
            "task": task,
            "swarm_task": task,
            "compat": rules,
            "population": n,
            "seed": seed,
            "method": method,
            "score": lead * (seed + 1) / 10 if method == "A" else 0.0,
        }
        for task, lead in SWARM_TASKS.items()
        for n in (8, 16)
        for seed in range(6)
        for method in ("A", "B")
    ]
    return pd.DataFrame(rows)


def test_swarmbench_is_contrasted_per_task_and_as_the_normalised_aggregate_of_the_anchored_three():
    """Table 18: SwarmBench contributes 3 tasks x 5 seeds a population, each task score / its anchor and
    an equal share; Flocking and Transport (no anchor) are contrasted on their own, never pooled raw."""
    from hivebench.contrasts import contrast_table

    anchors = load_anchors("config/anchors.yaml")
    table = contrast_table(
        swarm_episodes("reference"), {"reference": "B"}, ["score"], 500, 0.95, 0, SUITE_OBJECTS, anchors
    )
    at_16 = table[table["population"] == "16"].set_index("metric")
    mean_lead = 3.5 / 10  # the mean of (seed + 1) / 10 over seeds 0-5
    expected = {f"score (swarmbench: {task})": lead * mean_lead for task, lead in SWARM_TASKS.items()}
    expected["score normalised (swarmbench)"] = mean_lead * (6.0 / 6.20 + 2.0 / 3.80 + 100.0 / 6.40) / 3
    assert at_16["estimate"].to_dict() == pytest.approx(expected)
    aggregate = at_16.loc["score normalised (swarmbench)"]
    assert aggregate["n_units"] == 18 and aggregate["dropped_units"] == 0  # 3 tasks x 6 seeds, not 5 x 6


def test_scores_under_other_rules_than_the_anchors_get_no_normalised_contrast():
    from hivebench.contrasts import contrast_table

    anchors = load_anchors("config/anchors.yaml")  # measured under the reference's rules
    table = contrast_table(
        swarm_episodes("hivebench"), {"reference": "B"}, ["score"], 200, 0.95, 0, SUITE_OBJECTS, anchors
    )
    assert set(table["metric"]) == {f"score (swarmbench: {task})" for task in SWARM_TASKS}


def test_each_task_keeps_an_equal_share_of_its_suite_in_every_resample():
    """Table 18's task weights: a task that lost units still weighs what the others weigh, and the
    units are resampled within their task (the weights hold in every resample), not pooled."""
    from hivebench.contrasts import contrast_table

    rng = np.random.default_rng(3)
    rows = []
    for task, shift, seeds in (("I-01", 1.0, 10), ("I-02", 5.0, 4)):  # I-02 played 4 seeds only
        for seed in range(seeds):
            noise = rng.normal(0, 1)
            rows += [
                {"suite": "silobench", "task": task, "population": 8, "seed": seed, "method": "A", "m": shift + noise},
                {"suite": "silobench", "task": task, "population": 8, "seed": seed, "method": "B", "m": noise},
            ]
    frame = pd.DataFrame(rows)
    weighted = contrast_table(frame, {"reference": "B"}, ["m"], 2000, 0.95, 0)
    pooled = contrast_table(frame, {"reference": "B", "strata": "suite"}, ["m"], 2000, 0.95, 0)
    at_8 = weighted[weighted["population"] == "8"].iloc[0]
    assert at_8["estimate"] == pytest.approx((1.0 + 5.0) / 2)  # not (10 x 1 + 4 x 5) / 14
    assert pooled[pooled["population"] == "8"].iloc[0]["estimate"] == pytest.approx((10 * 1.0 + 4 * 5.0) / 14)
    # every difference is its task's shift: within tasks nothing varies, so a resample that keeps the
    # task weights gives the same mean each time; pooling would let the tasks' shares vary
    assert (at_8["lo"], at_8["hi"]) == pytest.approx((3.0, 3.0))
    assert pooled[pooled["population"] == "8"].iloc[0]["hi"] - pooled[pooled["population"] == "8"].iloc[0]["lo"] > 0.5
