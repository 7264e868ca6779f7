"""Budgets and rate limits against the real vLLM server (CPU build, the tiny model) behind the
fault-injecting proxy, whose counts and arrival times are the measure: a run stopped at its budget made
no call past it and left its cells unfinished, not damaged; a rerun with more budget makes no call
twice; parallel jobs share one rate limit and wait out one server's retry-after."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import served_study, snakemake_command
from servers import FaultProxy

from hivebench.spend.ledger import Charge, read_ledger, sums

pytestmark = [pytest.mark.vllm, pytest.mark.workflow]


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        snakemake_command(workdir, "--cores", "2", *args), capture_output=True, text=True, timeout=900
    )


def cached_keys(workdir: Path) -> list[str]:
    """Every response-cache record's key, over all cells (a call made twice would show twice)."""
    return [
        json.loads(line)["key"]
        for path in sorted((workdir / "results/episodes").rglob("*.calls.jsonl"))
        for line in path.read_text().splitlines()
    ]


def hivebench(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hivebench", *args, "config.yaml"], cwd=workdir, capture_output=True, text=True
    )


def test_a_budget_reached_mid_run_stops_it_cleanly_and_a_higher_one_goes_on(vllm_server: str, tmp_path: Path) -> None:
    proxy = FaultProxy(vllm_server)
    try:
        served_study(tmp_path, proxy.url, budget={"usd": 0.02})  # below the estimate's bound
        refused = snakemake(tmp_path)
        assert refused.returncode != 0 and "the estimate's bound passes what is left of a budget" in refused.stderr
        assert proxy.received == 0 and not (tmp_path / "results/episodes").exists()

        served_study(tmp_path, proxy.url, budget={"usd": 0.02}, over_estimate="go")
        stopped = snakemake(tmp_path)
        assert stopped.returncode != 0
        assert "stopped at a budget" in stopped.stderr and "Raise usd there and rerun" in stopped.stderr
        ledger = read_ledger(tmp_path / "results/spend/ledger.json")
        spent = sums(ledger["spent"])
        calls = ledger["spent"]["s"]["tiny"]["tiny"]["calls"]
        # No call past the budget: the server saw exactly the calls the ledger counted, within it.
        assert 0 < spent.usd <= 0.02 and ledger["held"] == {}
        assert proxy.forwarded == calls == len(cached_keys(tmp_path))
        records = [json.loads(p.read_text()) for p in (tmp_path / "logs").rglob("*.job.json")]
        assert "stopped" in {r["state"] for r in records} and "failed" not in {r["state"] for r in records}
        log = "".join(p.read_text() for p in (tmp_path / "logs").rglob("block*.log"))
        assert "progress: " in log and " calls made and " in log
        status = hivebench(tmp_path, "status", "--json")
        cells = json.loads(status.stdout)["cells"][0]
        # Cells finished before the budget was met are done; the rest unfinished, none damaged or failed.
        assert cells["done"] > 0 and cells["unfinished"] > 0 and cells["damaged"] == cells["failed"] == 0
        assert hivebench(tmp_path, "verify").returncode == 0  # nothing on disk is damaged
        made = proxy.forwarded

        served_study(tmp_path, proxy.url, budget={"usd": 1.0})
        finished = snakemake(tmp_path)
        assert finished.returncode == 0, finished.stderr[-3000:]
        keys = cached_keys(tmp_path)
        assert len(keys) == len(set(keys)) == proxy.forwarded > made  # every call made once, none again
        total = sums(read_ledger(tmp_path / "results/spend/ledger.json")["spent"])
        assert total.usd <= 1.0 and total.input_tokens > spent.input_tokens
        shown = hivebench(tmp_path, "status").stdout
        assert f"budget of the run (spend.budget): ${total.usd:.4f} spent of $1.0000" in shown
        assert "0 cells still to run call servers" in shown and f"{len(keys)} " in shown.split("spent on calls")[1]
        landing = (tmp_path / "reports/index.html").read_text()
        assert f"<td>{len(keys):,}</td>" in landing and f"${total.usd:.4f} of $1.0000 spent" in landing
    finally:
        proxy.stop()


def test_parallel_jobs_share_one_rate_limit(vllm_server: str, tmp_path: Path) -> None:
    proxy = FaultProxy(vllm_server)
    try:
        limit = {"base_url": proxy.url, "model": "tiny", "requests_per_minute": 90}
        served_study(tmp_path, proxy.url, population=4, seeds=2, rate_limits=[limit])
        run = snakemake(tmp_path)
        assert run.returncode == 0, run.stderr[-3000:]
    finally:
        proxy.stop()
    times = sorted(proxy.arrivals)
    rate = (len(times) - 1) / (times[-1] - times[0]) * 60
    assert len(times) >= 32 and 0.9 * 90 <= rate <= 1.1 * 90, (len(times), rate)


def test_a_retry_after_slows_every_job(vllm_server: str, tmp_path: Path) -> None:
    proxy = FaultProxy(vllm_server, fault=lambda number, body: "429" if number == 12 else None, retry_after_s=3)
    try:
        served_study(tmp_path, proxy.url, population=4, seeds=2)
        run = snakemake(tmp_path)
        assert run.returncode == 0, run.stderr[-3000:]
    finally:
        proxy.stop()
    [(refused, _)] = proxy.faults
    # Calls already on their way when the 429 went out may still arrive; then none, from either job,
    # until the wait it asked for is over.
    later = [t - refused for t in proxy.arrivals if t > refused + 0.3]
    assert later and min(later) >= 2.8, later[:5]
    assert Charge() != sums(read_ledger(tmp_path / "results/spend/ledger.json")["spent"])
