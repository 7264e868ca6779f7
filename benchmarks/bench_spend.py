"""What the spend ledger and the shared rate limit add to a model job, against the same job without a
meter (the baseline), measured in the same run.

A LoopBench job block of the tiny random model served by vLLM's CPU build (tests/tiny_model.py; needs
`make vllm`): --seeds episodes of C--agents for --rounds rounds, one call per live agent and round and
one per repair (about 1,000 calls at the defaults), each request with its own sample index.
1. The calls made: the block played against the server with a fresh response cache, with the meter
   (every call held in the ledger, paced at its endpoint's schedule, settled) and without, alternating
   --repeats times; and the meter's own seconds per call (hold, pace, settle) timed on their own.
2. The calls replayed: the same block again from the filled response cache (no call reaches the
   server, nor the ledger), with the meter and without, alternating --replays times.
Usage: python benchmarks/bench_spend.py [--seeds S] [--agents N] [--rounds T] [--repeats R] [--replays P]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from hivebench.cells import study_blocks  # noqa: E402
from hivebench.config import validate  # noqa: E402
from hivebench.engine.loop import play_block  # noqa: E402
from hivebench.spend.ledger import Budget, Budgets, Charge, Ledger  # noqa: E402
from hivebench.spend.meter import Meter, Settings, metering  # noqa: E402
from hivebench.spend.rates import Limit, Pace  # noqa: E402


def block_cells(base_url: str, seeds: int, agents: int, rounds: int, scratch: Path) -> list[dict[str, Any]]:
    method = {"kind": "llm", "backend": "openai", "model": "tiny", "base_url": base_url, "notes_chars": 16}
    config = validate(
        {
            "tasks": {"cycle": {"kind": "coloring", "steps": rounds}},
            "methods": {"m": {**method, "max_tokens": 40, "history": 1, "seeds_per_job": seeds}},
            "studies": {"s": {"tasks": ["cycle"], "methods": ["m"], "populations": [agents], "seeds": seeds}},
        },
        str(scratch / "config.yaml"),
    )
    return list(study_blocks(config, "s", scratch)[0].cells())


def play(cells: list[dict[str, Any]], folder: Path, metered: bool) -> float:
    """Seconds to play the block in `folder` (its response caches and ledger lie there)."""
    os.chdir(folder)
    meter = Meter("s", "m", Settings(Budgets(Budget(usd=1e6))), folder / "results/spend")
    with metering(meter) if metered else contextlib.nullcontext():
        started = time.perf_counter()
        play_block(cells)
        return time.perf_counter() - started


def gate_seconds(scratch: Path, calls: int) -> float:
    """The meter's own seconds per call: a hold, a pace and a settle, on files beside each other."""
    ledger = Ledger(Budgets(Budget(usd=1e6)), scratch / "gate")
    pace = Pace(scratch / "gate" / "rates", "http://127.0.0.1/v1", "tiny", Limit())
    started = time.perf_counter()
    for _ in range(calls):
        hold = ledger.hold("s", "m", "tiny", Charge(0.001, 400, 40), 600)
        assert hold is not None
        pace.take(140)
        ledger.settle(hold, Charge(0.0005, 200, 20))
    return (time.perf_counter() - started) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--replays", type=int, default=21)
    args = parser.parse_args()
    from servers import VLLM_PYTHON, start_vllm, stop_vllm
    from tiny_model import build

    if not VLLM_PYTHON.exists():
        sys.exit(f"no vLLM at {VLLM_PYTHON}: run `make vllm`")
    scratch = Path(tempfile.mkdtemp())
    process, url = start_vllm(build(scratch / "tiny"), "tiny", scratch / "vllm.log")
    try:
        cells = block_cells(url + "/v1", args.seeds, args.agents, args.rounds, scratch)
        made: dict[bool, list[float]] = {True: [], False: []}
        replayed: dict[bool, list[float]] = {True: [], False: []}
        filled = None
        for repeat in range(args.repeats):
            for metered in (repeat % 2 == 0, repeat % 2 == 1):  # alternate which goes first
                folder = scratch / f"made-{repeat}-{metered}"
                folder.mkdir()
                made[metered].append(play(cells, folder, metered))
                filled = filled or folder
        for repeat in range(args.replays):
            for metered in (repeat % 2 == 0, repeat % 2 == 1):
                replayed[metered].append(play(cells, filled, metered))
        calls = sum(len(path.read_text().splitlines()) for path in filled.rglob("*.calls.jsonl"))
        per_call = gate_seconds(scratch, calls)
    finally:
        os.chdir(REPO)
        stop_vllm(process)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{calls} calls made (C{args.agents}, {args.seeds} seeds x {args.rounds} rounds), vLLM CPU build, tiny model")
    for name, runs in (("made", made), ("replayed from the response cache", replayed)):
        on, off = statistics.median(runs[True]), statistics.median(runs[False])
        print(
            f"  {name}: {off:.3f} s without a meter, {on:.3f} s with it (medians of {len(runs[True])}): "
            f"{on / off:.3f}x ({(on / off - 1) * 100:+.1f}%)"
        )
    made_call = statistics.median(made[False]) / calls
    print(
        f"  the meter's own time per call made (hold, pace, settle): {per_call * 1e3:.2f} ms, "
        f"{per_call / made_call * 100:.1f}% of a made call's share of the block ({made_call * 1e3:.1f} ms)"
    )


if __name__ == "__main__":
    main()
