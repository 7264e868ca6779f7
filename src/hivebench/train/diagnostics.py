"""The structural diagnostics of stage two, after selection, on data no training or selection saw:

- orbit agreement: the deployed controller decides each held-out test view and its orbit partner
  (channel and claim handles relabelled, incident records reshuffled); per view, the share of the 12
  identifier-free factors (factors.py) on which its two records agree;
- the frozen-probe field loss (probe.py), over all the held-out transitions and the eventful ones.

Per arm of a factorial (the trainings that go on from one warm start), means with hierarchical
bootstrap intervals (training seeds resampled, then views or transitions within each; stats.py), and
each arm against Decision only: orbit agreement in points, eventful probe loss in percent. The paper's
Table 16 (its second student family, Llama-3.1-8B-Instruct, Joint against Decision only): orbit
agreement +17.0 points, eventful probe loss −34.0%, recovery +7.5 points.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hivebench.stats import hierarchical_bootstrap, percentile_interval
from hivebench.train.factors import NAMES, factors_of
from hivebench.waggle.study.viewset import view_blocks

PAPER = {"orbit agreement (points)": 17.0, "eventful probe loss (%)": -34.0, "recovery (points)": 7.5}


def factor_rows(views: pd.DataFrame, records: pd.Series) -> np.ndarray:
    """(views, 12) the factors of each view's record (JSON text; a missing one: all null)."""
    out = np.zeros((len(views), len(NAMES)), dtype=np.int64)
    for positions, block in view_blocks(views):
        for agent, p in enumerate(positions):
            text = records.iloc[p]
            record = json.loads(text) if isinstance(text, str) else None
            out[p] = factors_of(block, agent, record) if record is not None else 0
    return out


def orbit_agreement(
    test: pd.DataFrame, records: pd.Series, orbit: pd.DataFrame, orbit_records: pd.Series
) -> np.ndarray:
    """Per test view, the share of the 12 factors its record and its orbit partner's record share."""
    return (factor_rows(test, records) == factor_rows(orbit, orbit_records)).mean(axis=1)


def load(paths: dict[str, str]) -> tuple[dict[int, np.ndarray], dict[int, dict[str, Any]]]:
    """A training's diagnostics from its files by name (the workflow's `training_diagnostics`: `test`,
    `orbit`, and per seed `seed<k>.test`, `seed<k>.orbit`, `seed<k>.probe`): (orbit agreement per view,
    probe results) per seed."""
    test, orbit = pd.read_parquet(paths["test"]), pd.read_parquet(paths["orbit"])
    seeds = sorted(int(key.split(".")[0].removeprefix("seed")) for key in paths if key.endswith(".probe"))
    agreement, probes = {}, {}
    for seed in seeds:
        records, moved = (pd.read_parquet(paths[f"seed{seed}.{which}"])["record"] for which in ("test", "orbit"))
        agreement[seed] = orbit_agreement(test, records, orbit, moved)
        probes[seed] = json.loads(Path(paths[f"seed{seed}.probe"]).read_text())
    return agreement, probes


def per_seed(agreement: dict[int, np.ndarray], probes: dict[int, dict[str, Any]]) -> pd.DataFrame:
    """A training's diagnostics, a row per seed (orbit agreement %, probe losses)."""
    rows = [
        {
            "seed": seed,
            "orbit agreement (%)": 100 * float(agreement[seed].mean()),
            "probe loss": probes[seed]["probe_loss"],
            "probe loss, eventful": probes[seed]["probe_loss_eventful"],
            "probe transitions (eventful)": f"{probes[seed]['test']} ({probes[seed]['eventful_test']})",
        }
        for seed in sorted(agreement)
    ]
    return pd.DataFrame(rows)


def interval(
    values: np.ndarray, resamples: int, confidence: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) per column of `values` (seeds, units, k): seeds, then units, resampled."""
    estimate, distribution = hierarchical_bootstrap(values, np.zeros(values.shape[1]), None, resamples, seed)
    low, high = percentile_interval(distribution, confidence)
    return estimate, low, high


def factorial_table(
    arms: dict[str, tuple[dict[int, np.ndarray], dict[int, dict[str, Any]]]],
    reference: str,
    resamples: int,
    confidence: float,
    seed: int,
) -> pd.DataFrame:
    """A row per arm (its name -> (orbit agreement per seed, probe results per seed)), then the paper's:
    the means over its seeds with intervals, and against `reference` (paired by training seed): orbit
    agreement in points, the eventful probe loss's change in percent."""
    seeds = sorted(set.intersection(*(set(a) for a, _ in arms.values())))
    rows = []
    ref_agree = np.stack([arms[reference][0][s] for s in seeds])
    ref_probe = [arms[reference][1][s] for s in seeds]
    for name, (agreement, probes) in arms.items():
        agree = np.stack([agreement[s] for s in seeds])  # (seeds, views)
        row: dict[str, Any] = {"arm": name, "seeds": len(seeds)}
        values = np.stack([100 * agree, 100 * (agree - ref_agree)], axis=-1)
        est, low, high = interval(values, resamples, confidence, seed)
        row |= cell("orbit agreement (%)", est[0], low[0], high[0])
        loss = np.stack([probes[s]["test_losses"] for s in seeds])
        eventful = np.array(probes[seeds[0]]["test_eventful"], dtype=bool)  # the same transitions for every seed
        est_l, low_l, high_l = interval(loss[..., None], resamples, confidence, seed)
        row |= cell("probe loss", est_l[0], low_l[0], high_l[0])
        ev = loss[:, eventful]
        ref_ev = np.stack([p["test_losses"] for p in ref_probe])[:, eventful]
        if ev.size:
            est_e, low_e, high_e = interval(ev[..., None], resamples, confidence, seed)
            row |= cell("probe loss, eventful", est_e[0], low_e[0], high_e[0])
        if name != reference:
            row |= cell(f"orbit agreement vs {reference} (points)", est[1], low[1], high[1])
            if ev.size:
                # the ratio of means, its interval from the same hierarchical draws of both arms' losses
                both = np.stack([ev, ref_ev], axis=-1)
                _, distribution = hierarchical_bootstrap(both, np.zeros(ev.shape[1]), None, resamples, seed)
                change = 100 * (distribution[:, 0] / distribution[:, 1] - 1)
                point = 100 * (ev.mean() / ref_ev.mean() - 1)
                low_c, high_c = np.quantile(change, [(1 - confidence) / 2, (1 + confidence) / 2])
                row |= cell(f"eventful probe loss vs {reference} (%)", point, low_c, high_c)
        rows.append(row)
    paper = {
        "arm": "paper (Table 16: Joint vs Decision only)",
        f"orbit agreement vs {reference} (points)": PAPER["orbit agreement (points)"],
        f"eventful probe loss vs {reference} (%)": PAPER["eventful probe loss (%)"],
    }
    return pd.DataFrame([*rows, paper])


def cell(name: str, estimate: float, low: float, high: float) -> dict[str, float]:
    """A quantity's estimate and its interval's ends, as three columns."""
    return {name: float(estimate), f"{name} low": float(low), f"{name} high": float(high)}
