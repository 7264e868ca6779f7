"""Paired bootstrap speed: 10,000 resamples over 10,000 matched units x 8 methods.

hivebench: one `stratified_bootstrap` call over the 8 method columns (every resample shared by all
methods, so all 7 contrasts against a reference come from it), in-process wall time.
Baseline: `scipy.stats.bootstrap` (vectorized, percentile) on the per-unit differences, once per
contrast, 7 contrasts. Also one contrast alone on each side.
Usage: python benchmarks/bench_stats.py [--units N] [--resamples R]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from hivebench.stats import percentile_interval, stratified_bootstrap


def timed(function) -> tuple[float, object]:
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    seed_effect = rng.normal(0, 5, (args.units, 1))
    values = seed_effect + rng.normal(0, 1, (args.units, 8)) + np.arange(8) * 0.1
    strata = np.zeros(args.units)

    ours_all, (estimate, distribution) = timed(
        lambda: stratified_bootstrap(values, strata, None, args.resamples, seed=0)
    )
    contrasts = distribution[:, 1:] - distribution[:, :1]
    lo, hi = percentile_interval(contrasts, 0.95)
    differences = values[:, 1:] - values[:, :1]

    def scipy_contrast(k: int):
        return stats.bootstrap(
            (differences[:, k],),
            np.mean,
            n_resamples=args.resamples,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(k),
            batch=1000,
        ).confidence_interval

    scipy_one, interval = timed(lambda: scipy_contrast(0))
    scipy_all = scipy_one + sum(timed(lambda k=k: scipy_contrast(k))[0] for k in range(1, 7))
    ours_one, _ = timed(lambda: stratified_bootstrap(differences[:, :1], strata, None, args.resamples, seed=0))
    print(f"{args.resamples} paired resamples, {args.units} matched units, 8 methods (7 contrasts):")
    print(f"  scipy.stats.bootstrap, 7 contrasts (baseline): {scipy_all:7.2f} s")
    print(f"  hivebench stratified_bootstrap, 8 columns:     {ours_all:7.2f} s  ({scipy_all / ours_all:.1f}x)")
    print(f"  one contrast: scipy {scipy_one:.2f} s, hivebench {ours_one:.2f} s ({scipy_one / ours_one:.1f}x)")
    print(
        f"  contrast 1 interval: hivebench [{lo[0]:.4f}, {hi[0]:.4f}], scipy [{interval.low:.4f}, {interval.high:.4f}]"
    )


if __name__ == "__main__":
    main()
