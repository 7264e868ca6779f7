"""Bootstrap confidence intervals (scipy.stats.bootstrap), seeded and NaN-aware."""

from __future__ import annotations

import numpy as np
from scipy import stats


def mean_ci(
    values: np.ndarray, resamples: int, confidence: float, seed: int
) -> tuple[float, float, float, int]:
    """Mean, percentile-bootstrap interval and the number of defined values (NaNs are left out).

    A sample of identical values has a zero-width interval; an empty one is all NaN.
    """
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    n = len(values)
    if n == 0:
        return float("nan"), float("nan"), float("nan"), 0
    mean = float(values.mean())
    if n == 1 or np.ptp(values) == 0:
        return mean, mean, mean, n
    result = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return mean, float(interval.low), float(interval.high), n
