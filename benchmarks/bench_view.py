"""The episode viewer: page size, time to write it, and time to load it in headless chromium.

A SwarmBench Pursuit episode of 128 agents and 100 rounds under the heuristic (its messages on the
radius medium), against the issue's budgets (under 5 MB, loaded in under 2 s) and against a baseline
page: the same task with 8 agents and 10 rounds (what every page carries whatever its episode: the
Vega bundle, the script). Load time: from navigation until the page marks its drawing ready, then
from moving the slider to the next state drawn; each the median of `--repeats`.
Usage: python benchmarks/bench_view.py [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser import open_page, set_step, start  # noqa: E402  (the tests' browser helpers)
from episode_pages import played  # noqa: E402

from hivebench.view.episode import load  # noqa: E402
from hivebench.view.page import render  # noqa: E402

BUDGET_MB, BUDGET_S = 5.0, 2.0


def page_for(folder: Path, n: int, rounds: int) -> tuple[Path, float]:
    """The page of a Pursuit episode of n agents; the seconds `render` took (a warm process)."""
    path = played(folder, {"kind": "swarmbench", "task": "pursuit", "rounds": rounds}, {"kind": "heuristic"}, n)
    episode = load(path)
    begun = time.perf_counter()
    page = render(episode, folder / f"n{n}.html")
    return page, time.perf_counter() - begun


def browser_times(driver, page: Path, repeats: int) -> tuple[float, float]:
    loads, moves = [], []
    for _ in range(repeats):
        loads.append(open_page(driver, page))
        begun = time.perf_counter()
        set_step(driver, 1)
        moves.append(time.perf_counter() - begun)
    return statistics.median(loads), statistics.median(moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        page_for(Path(folder), 8, 10)  # imports, the Vega bundle
        baseline, base_write = page_for(Path(folder), 8, 10)
        big, big_write = page_for(Path(folder), 128, 100)
        driver = start()
        try:
            base_load, base_move = browser_times(driver, baseline, args.repeats)
            big_load, big_move = browser_times(driver, big, args.repeats)
        finally:
            driver.quit()
        base_mb, big_mb = baseline.stat().st_size / 1e6, big.stat().st_size / 1e6
    print(f"{'page':28s} {'MB':>6s} {'write s':>8s} {'load s':>7s} {'slider s':>9s}")
    print(f"{'baseline: N = 8, 10 rounds':28s} {base_mb:6.2f} {base_write:8.2f} {base_load:7.2f} {base_move:9.3f}")
    print(f"{'N = 128, 100 rounds':28s} {big_mb:6.2f} {big_write:8.2f} {big_load:7.2f} {big_move:9.3f}")
    print(
        f"N = 128 against the baseline: {big_mb / base_mb:.2f}x the size, {big_load / base_load:.2f}x the load time; "
        f"budgets: {big_mb / BUDGET_MB:.0%} of {BUDGET_MB:g} MB, {big_load / BUDGET_S:.0%} of {BUDGET_S:g} s"
    )


if __name__ == "__main__":
    main()
