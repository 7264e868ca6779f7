"""Bootstrap statistics, vectorised: resamples are drawn in chunks of index matrices and reduced with
matrix products, never one Python iteration per resample.

- `mean_ci`: a mean with a percentile or BCa interval (BCa as scipy.stats.bootstrap computes it).
- `stratified_bootstrap`: weighted means of several columns over matched units resampled within
  strata; the columns share every resample, so differences of columns are paired contrasts.
- `hierarchical_bootstrap`: replicates (training seeds) resampled first, then units within strata
  inside each drawn replicate, as stratified_bootstrap resamples them.
Every draw comes from `numpy.random.default_rng(seed)`: the same inputs give the same interval.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

CHUNK_CELLS = 4_000_000  # index-matrix entries per chunk: ~32 MB of int64


class Interval(NamedTuple):
    estimate: float
    lo: float
    hi: float
    n: int  # values (or matched units) used


def resample_counts(n: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """How often each of n units is drawn, per resample: (chunk, n) float matrices, `resamples` rows in
    all. A mean over a resample is then `counts @ values / n`."""
    chunk = max(1, min(resamples, CHUNK_CELLS // max(n, 1)))
    done = 0
    while done < resamples:
        rows = min(chunk, resamples - done)
        picks = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        yield np.bincount(picks.ravel(), minlength=rows * n).reshape(rows, n).astype(float)
        done += rows


def bootstrap_means(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples, k) means of the k columns of `values` (n, k) over resampled rows (shared per resample)."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    return np.concatenate([counts @ values / n for counts in resample_counts(n, resamples, rng)])


def percentile_interval(distribution: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1 - confidence) / 2
    lo, hi = np.percentile(distribution, [100 * alpha, 100 * (1 - alpha)], axis=0)
    return lo, hi


def bca_interval(distribution: np.ndarray, values: np.ndarray, confidence: float) -> tuple[float, float]:
    """Bias-corrected and accelerated interval of a mean from its bootstrap distribution, with the
    jackknife acceleration of the mean (the formulas of scipy.stats.bootstrap, method="BCa")."""
    from scipy.special import ndtr, ndtri  # here: scipy.special takes a report job 0.2 s to import

    values = np.asarray(values, dtype=float)
    estimate = values.mean()
    below = (distribution < estimate).sum() + (distribution <= estimate).sum()
    z0 = ndtri(below / (2 * len(distribution)))
    n = len(values)
    jackknife = (values.sum() - values) / (n - 1)
    deviation = jackknife.mean() - jackknife
    acceleration = (deviation**3).sum() / (6 * ((deviation**2).sum()) ** 1.5)
    alpha = (1 - confidence) / 2
    z = ndtri(np.array([alpha, 1 - alpha]))
    levels = ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    lo, hi = np.percentile(distribution, 100 * levels)
    return float(lo), float(hi)


def mean_ci(values: np.ndarray, resamples: int, confidence: float, seed: int, method: str = "percentile") -> Interval:
    """Mean and bootstrap interval of the defined values (NaNs left out and not counted).

    Identical values give a zero-width interval; no values give NaNs.
    """
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    n = len(values)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    mean = float(values.mean())
    if n == 1 or np.ptp(values) == 0:
        return Interval(mean, mean, mean, n)
    distribution = bootstrap_means(values[:, None], resamples, np.random.default_rng(seed))[:, 0]
    if method == "bca":
        lo, hi = bca_interval(distribution, values, confidence)
    else:
        lo, hi = (float(x) for x in percentile_interval(distribution, confidence))
    return Interval(mean, lo, hi, n)


def stratified_bootstrap(
    values: np.ndarray, strata: np.ndarray, weights: dict[object, float] | None, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted mean over strata of each column's stratum means, and its bootstrap distribution.

    `values` (n, k): one row per matched unit, one column per quantity (e.g. per-method differences);
    `strata` (n,): each unit's stratum. Units are resampled within their stratum, each stratum keeping
    its size, and every column shares the draw, which keeps compared methods coupled. `weights` maps
    stratum -> weight (normalised here); None weighs strata by their unit counts (the pooled mean).
    Returns (estimate (k,), distribution (resamples, k)).
    """
    values = np.asarray(values, dtype=float)
    strata = np.asarray(strata)
    labels, inverse = np.unique(strata, return_inverse=True)
    sizes = np.bincount(inverse)
    raw = sizes.astype(float) if weights is None else np.array([float(weights[label]) for label in labels])
    share = raw / raw.sum()
    rng = np.random.default_rng(seed)
    estimate = np.zeros(values.shape[1])
    distribution = np.zeros((resamples, values.shape[1]))
    for s, w in enumerate(share):  # strata are few; resamples stay vectorised
        rows = values[inverse == s]
        estimate += w * rows.mean(axis=0)
        distribution += w * bootstrap_means(rows, resamples, rng)
    return estimate, distribution


def hierarchical_bootstrap(
    values: np.ndarray, strata: np.ndarray, weights: dict[object, float] | None, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """`stratified_bootstrap` with replicates (training seeds) resampled first.

    `values` (replicates, n[, k]): every replicate's value on the same n matched units; `strata` and
    `weights` as in stratified_bootstrap. Each resample draws as many replicates as there are, with
    replacement; then, inside every drawn replicate, the units within each stratum, as
    stratified_bootstrap draws them. The statistic is the mean over replicates of the weighted mean over
    strata of the unit means. With one replicate the unit draws and the arithmetic are
    stratified_bootstrap's own: the same seed gives the same distribution.
    Returns (estimate (k,), distribution (resamples, k)).
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 2:
        values = values[..., None]
    replicates, _, k = values.shape
    labels, inverse = np.unique(np.asarray(strata), return_inverse=True)
    sizes = np.bincount(inverse)
    raw = sizes.astype(float) if weights is None else np.array([float(weights[label]) for label in labels])
    share = raw / raw.sum()
    rng = np.random.default_rng(seed)  # the units' draws, in stratified_bootstrap's order
    drawn = np.random.default_rng([seed, 1]).integers(0, replicates, size=resamples * replicates)
    estimate = np.zeros(k)
    distribution = np.zeros((resamples, k))
    for s, w in enumerate(share):
        rows = values[:, inverse == s]  # (replicates, units of the stratum, k)
        n = rows.shape[1]
        estimate += w * rows.mean(axis=1).mean(axis=0)
        # every replicate's means under each unit draw, one draw per (resample, drawn replicate)
        by_unit = rows.transpose(1, 0, 2).reshape(n, replicates * k)
        means, done = [], 0
        for counts in resample_counts(n, resamples * replicates, rng):
            rows_here = len(counts)
            all_means = (counts @ by_unit / n).reshape(rows_here, replicates, k)
            means.append(all_means[np.arange(rows_here), drawn[done : done + rows_here]])
            done += rows_here
        distribution += w * np.concatenate(means).reshape(resamples, replicates, k).mean(axis=1)
    return estimate, distribution
