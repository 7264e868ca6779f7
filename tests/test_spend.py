"""The ledger and the shared rate limit on their own (real processes sharing a folder), the spend
settings' config checks, and the workflow's refusal of a run whose estimate passes its budget."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import snakemake_command, tiny_served, write_config

from hivebench.config import ConfigError, validate
from hivebench.spend.ledger import Budget, BudgetReached, Budgets, Charge, Ledger, read_ledger, sums
from hivebench.spend.rates import Limit, Pace


def test_a_hold_that_would_pass_a_budget_is_refused_naming_the_scope_and_figures(tmp_path: Path) -> None:
    ledger = Ledger(Budgets(Budget(usd=1.0), {"s": Budget(input_tokens=1000)}), tmp_path)
    first = ledger.hold("s", "m", "gpt", Charge(0.4, 300, 10), 60)
    assert first is not None
    ledger.settle(first, Charge(0.25, 200, 5))
    spent = read_ledger(tmp_path / "ledger.json")["spent"]
    assert spent == {"s": {"m": {"gpt": {"calls": 1, "usd": 0.25, "input_tokens": 200, "output_tokens": 5}}}}
    with pytest.raises(BudgetReached) as refused:
        ledger.hold("s", "m", "gpt", Charge(0.1, 801, 10), 60)  # 200 + 801 input tokens > study s's 1000
    assert refused.value.scope == "s" and refused.value.amount == "input_tokens"
    assert "200 input tokens spent of 1,000 input tokens, 800 input tokens left" in str(refused.value)
    assert "studies.s.budget" in str(refused.value)
    with pytest.raises(BudgetReached, match=r"spend.budget\) is reached: \$0.2500 spent of \$1.0000"):
        ledger.hold("t", "m", "gpt", Charge(0.8, 1, 1), 60)  # the run's dollars, for any study
    assert ledger.hold("t", "m", "gpt", Charge(0.75, 1, 1), 60) is not None  # exactly at the cap fits


def test_a_call_that_fits_only_once_others_settle_waits_and_a_failed_call_costs_nothing(tmp_path: Path) -> None:
    ledger = Ledger(Budgets(Budget(usd=1.0)), tmp_path)
    in_flight = ledger.hold("s", "m", "gpt", Charge(0.6), 60)
    assert in_flight is not None
    assert ledger.hold("s", "m", "gpt", Charge(0.6), 60) is None  # fits beside what is spent: wait
    ledger.settle(in_flight, None)  # it failed for good: nothing billed, nothing counted
    assert sums(read_ledger(ledger.path)["spent"]) == Charge()
    assert ledger.hold("s", "m", "gpt", Charge(0.6), 60) is not None


def test_a_hold_lapses_when_its_job_is_gone_or_its_time_is_up_and_counts_at_its_worst(tmp_path: Path) -> None:
    ledger = Ledger(Budgets(Budget(usd=10.0)), tmp_path)
    dead = subprocess.Popen(["true"])
    dead.wait()
    ledger.pid = dead.pid  # a hold as a job on this machine that has since died would have left it
    assert ledger.hold("s", "m", "gpt", Charge(4.0), 3600) is not None
    ledger.pid, ledger.host = os.getpid(), "another-node"  # a job elsewhere, alive or not: its time counts
    assert ledger.hold("s", "m", "gpt", Charge(4.0), 0.05) is not None
    ledger.host = socket.gethostname()
    mine = ledger.hold("s", "m", "gpt", Charge(1.0), 0.01)  # this job's own hold lapses only with it
    time.sleep(0.1)
    # Both others' holds lapsed, charged at their worst (their calls may have been billed): 8 of 10 spent.
    assert ledger.hold("s", "m", "gpt", Charge(1.0), 60) is not None and mine is not None
    assert sums(read_ledger(ledger.path)["spent"]) == Charge(8.0)
    assert ledger.hold("s", "m", "gpt", Charge(0.5), 60) is None  # 8 spent and 2 held: wait for them
    ledger.settle(mine, Charge(0.5))
    assert sums(read_ledger(ledger.path)["spent"]) == Charge(8.5, 0, 0)
    with pytest.raises(BudgetReached):
        ledger.hold("s", "m", "gpt", Charge(1.6), 60)  # whatever settles, 8.5 + 1.6 passes 10


def _charge_many(folder: str, study: str, count: int) -> None:
    ledger = Ledger(Budgets(), Path(folder))
    for _ in range(count):
        hold = ledger.hold(study, "m", "gpt", Charge(0.001, 10, 1), 60)
        assert hold is not None
        ledger.settle(hold, Charge(0.001, 7, 1))


def test_parallel_processes_lose_no_charge(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_charge_many, args=(str(tmp_path), f"s{i % 2}", 60)) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    ledger = read_ledger(tmp_path / "ledger.json")
    assert ledger["held"] == {}
    assert sums(ledger["spent"]) == Charge(pytest.approx(0.24), 7 * 240, 240)
    assert [ledger["spent"][s]["m"]["gpt"]["calls"] for s in ("s0", "s1")] == [120, 120]


def _take_slots(folder: str, count: int, starts: list[float]) -> None:
    pace = Pace(Path(folder), "http://127.0.0.1:9/v1", "gpt", Limit(requests_per_minute=600))
    for _ in range(count):
        wait = pace.take(10)
        time.sleep(wait)
        starts.append(time.time())


def test_the_rate_limit_spaces_every_process_calls_at_the_limit(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        starts = manager.list()
        workers = [context.Process(target=_take_slots, args=(str(tmp_path), 8, starts)) for _ in range(3)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
            assert worker.exitcode == 0
        times = sorted(starts)
    assert len(times) == 24
    rate = (len(times) - 1) / (times[-1] - times[0])  # 600 per minute: 10 per second
    assert 9.0 <= rate <= 10.5, rate
    assert min(b - a for a, b in zip(times, times[1:])) > 0.05


def test_a_retry_after_holds_off_every_caller_and_tokens_per_minute_spaces_big_calls(tmp_path: Path) -> None:
    pace = Pace(tmp_path, "http://x/v1", "gpt", Limit(tokens_per_minute=60_000))
    assert pace.take(500) == pytest.approx(0.0, abs=0.01)
    assert pace.take(500) == pytest.approx(0.5, abs=0.05)  # the first took half a second of tokens
    other = Pace(tmp_path, "http://x/v1", "gpt", Limit(tokens_per_minute=60_000))  # another job's
    other.hold_off(3.0)
    assert pace.take(10) == pytest.approx(3.0, abs=0.05)
    assert json.loads(pace.path.read_text())["base_url"] == "http://x/v1"


SERVED = tiny_served("http://127.0.0.1:9/v1", notes_chars=16, max_tokens=40, history=1)  # no server: no call


def served_config(**spend: object) -> dict:
    return {
        "tasks": {"cycle": {"kind": "coloring", "steps": 3}},
        "methods": {"tiny": SERVED, "random": {"kind": "random"}},
        "prices": {"tiny": {"input": 1.0, "output": 2.0}},
        "spend": spend,
        "studies": {"s": {"tasks": ["cycle"], "methods": ["tiny", "random"], "populations": [3], "seeds": 2}},
    }


def test_a_dollar_budget_needs_a_price_for_every_server_model_it_covers() -> None:
    config = served_config(budget={"usd": 5})
    del config["prices"]
    with pytest.raises(ConfigError) as error:
        validate(config, "c.yaml")
    assert "spend.budget.usd: study s's method tiny calls tiny at a server, and prices has no entry for tiny" in str(
        error.value
    )
    config["spend"] = {}
    config["studies"]["s"]["budget"] = {"output_tokens": 100}  # tokens need no price
    assert validate(config, "c.yaml")["studies"]["s"]["budget"] == {"output_tokens": 100}
    config["spend"] = {"rate_limits": [{"base_url": "http://x/v1"}]}
    with pytest.raises(ConfigError, match=r"spend.rate_limits\[0\]"):
        validate(config, "c.yaml")


@pytest.mark.workflow
def test_a_run_whose_bound_passes_the_budget_does_not_start(tmp_path: Path) -> None:
    write_config(tmp_path / "config.yaml", served_config(budget={"usd": 0.0001}))
    run = subprocess.run(snakemake_command(tmp_path, "--cores", "1"), capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    refusal = re.search(
        r"budget of the run \(spend.budget\): \$0.0000 spent of \$0.0001 \(\$0.0001 left\), \$([\d.]+) at most to go "
        r"\(2 cells still to run call servers\): the estimate's bound PASSES it",
        run.stderr,
    )
    assert refusal is not None, run.stderr[-2000:]
    assert not (tmp_path / "results/episodes").exists()  # not even the classical method's jobs ran
    assert not list((tmp_path / ".snakemake/locks").glob("*"))
    # A run of the classical method's job alone calls no server: the budget has nothing to refuse.
    free = next(p for p in job_outputs(tmp_path) if "/random/" in p)
    alone = subprocess.run(snakemake_command(tmp_path, "--cores", "1", free), capture_output=True, text=True)
    assert alone.returncode == 0, alone.stderr[-2000:]
    assert "0 cells still to run call servers" in alone.stderr
    estimate = subprocess.run(
        [sys.executable, "-m", "hivebench", "estimate", "config.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    # the figure is the estimate's bound (its totals' "cost USD (bound)" column, in cents)
    tiny = next(line for line in estimate.stdout.splitlines() if line.startswith("tiny\t"))
    assert float(refusal.group(1)) == pytest.approx(float(tiny.split("\t")[-1].lstrip("~")), abs=0.005)
    settings = json.loads((tmp_path / "results/spend/settings.json").read_text())
    assert settings["budgets"]["run"] == {"usd": 0.0001, "input_tokens": None, "output_tokens": None}


def test_calls_cut_off_mid_flight_count_at_their_worst_and_a_refused_job_makes_no_more(tmp_path: Path) -> None:
    import asyncio

    from servers import FaultProxy

    from hivebench.models import ChatRequest, Sampling
    from hivebench.models.remote import OpenAIBackend
    from hivebench.spend.meter import Meter, Settings, metering, worst_prompt_tokens

    proxy = FaultProxy("127.0.0.1:9", fault=lambda number, body: "hang", hang_s=30)  # never answers
    requests = [
        ChatRequest(({"role": "user", "content": f"agent {i}: colour?"},), None, Sampling(max_tokens=20), i)
        for i in range(3)
    ]
    settings = Settings(Budgets(Budget(usd=1.0)), {"gpt": {"input": 2500.0, "output": 2500.0}})
    backend = OpenAIBackend("gpt", proxy.url, None, timeout_s=60)

    async def cut_off() -> None:
        task = asyncio.ensure_future(backend._complete_all(requests, lambda i, r: None))
        while proxy.received < 3:
            await asyncio.sleep(0.05)
        task.cancel()  # as a SIGTERM to the job does
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        with metering(Meter("s", "m", settings, tmp_path)):
            asyncio.run(cut_off())
    finally:
        proxy.stop()
    ledger = read_ledger(tmp_path / "ledger.json")
    worst = sum(worst_prompt_tokens(r) for r in requests)
    assert ledger["held"] == {} and ledger["spent"]["s"]["m"]["gpt"]["calls"] == 3
    assert sums(ledger["spent"]) == Charge(pytest.approx((worst + 60) * 2500 / 1e6), worst, 60)
    # 3 calls at their worst took most of the dollar: the next one does not fit, and none is sent.
    assert (worst + 60) * 2500 / 1e6 + (worst_prompt_tokens(requests[0]) + 20) * 2500 / 1e6 > 1.0
    with metering(Meter("s", "m", settings, tmp_path)), pytest.raises(BudgetReached):
        backend.complete(requests, lambda i, r: None)
    assert proxy.received == 3


def job_outputs(workdir: Path) -> list[str]:
    """The block summaries (episode jobs' outputs) of the config in `workdir`."""
    from hivebench.cells import expand_jobs

    config = validate(yaml.safe_load((workdir / "config.yaml").read_text()), str(workdir / "c.yaml"))
    return [job.summary_path for jobs in expand_jobs(config, str(workdir / "c.yaml")).values() for job in jobs]


def test_the_bound_to_go_prices_a_mix_at_its_dearest_model_and_leaves_out_calls_already_paid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hivebench.cells import study_blocks
    from hivebench.models import ChatResult, Usage
    from hivebench.models.cache import ResponseCache
    from hivebench.paths import calls_path
    from hivebench.spend.bound import bound

    monkeypatch.chdir(tmp_path)
    config = served_config()
    config["methods"]["dear"] = {**SERVED, "model": "dear"}
    config["methods"]["mix"] = {"kind": "mixed", "members": {"tiny": 0.5, "dear": 0.5}}
    config["prices"]["dear"] = {"input": 10.0, "output": 20.0}  # ten times tiny's
    config["studies"]["s"]["methods"] = ["tiny", "mix"]
    blocks = {b.shared["method"]["name"]: b for b in study_blocks(validate(config, "c.yaml"), "s", tmp_path)}
    tiny, _ = bound([blocks["tiny"]], config["prices"])
    mix, cells = bound([blocks["mix"]], config["prices"])
    assert cells == 2 and mix.usd > 5 * tiny.usd  # not $0: the mix's calls priced at dear's price
    # A call already paid for in a cell's cache is replayed, not paid again: the bound goes down by it.
    cell = next(blocks["tiny"].cells())
    cache = ResponseCache(calls_path(cell))
    cache.put("k1", ChatResult("{}", Usage(input_tokens=300, output_tokens=20)), "tiny")
    cache.put("k2", ChatResult("{}", Usage(input_tokens=500, output_tokens=30)), "tiny")
    paid, _ = bound([blocks["tiny"]], config["prices"])
    assert tiny.usd - paid.usd == pytest.approx((800 * 1.0 + 50 * 2.0) / 1e6)
    assert (tiny.input_tokens - paid.input_tokens, tiny.output_tokens - paid.output_tokens) == (800, 50)


def test_a_ledger_that_is_not_one_is_named_not_a_traceback(tmp_path: Path) -> None:
    write_config(tmp_path / "config.yaml", served_config(budget={"usd": 1.0}))
    (tmp_path / "results/spend").mkdir(parents=True)
    (tmp_path / "results/spend/ledger.json").write_text('{"spent": {"s": ')  # torn by hand
    status = subprocess.run(
        [sys.executable, "-m", "hivebench", "status", "config.yaml"], cwd=tmp_path, capture_output=True, text=True
    )
    assert status.returncode == 2 and "Traceback" not in status.stderr
    assert "results/spend/ledger.json: not a hivebench spend ledger" in status.stderr
