"""The OpenAI-compatible backend against a real vLLM server (CPU build) serving the tiny model,
directly and through a proxy that injects faults or dies mid-episode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from conftest import tiny_served
from servers import FaultProxy

from hivebench.agents.llm.agent import decision_schema
from hivebench.cells import study_blocks
from hivebench.config import validate
from hivebench.engine.writer import write_episode
from hivebench.models import BackendError, ChatRequest, Sampling
from hivebench.models.decide import FALLBACK, check
from hivebench.models.remote import OpenAIBackend
from hivebench.paths import calls_path, cell_path

SCHEMA = decision_schema({"color": {"type": "integer", "minimum": 0, "maximum": 1}}, notes_chars=40)


def requests(n: int) -> list[ChatRequest]:
    return [
        ChatRequest(
            ({"role": "user", "content": f"Agent {v}: your colour 0, neighbours 0 and 0. Reply in JSON."},),
            SCHEMA,
            Sampling(temperature=1.0, top_p=1.0, max_tokens=96),
            7 + v,
        )
        for v in range(n)
    ]


def server_cell(base_url: str, steps: int = 3, n: int = 3, **method: Any) -> dict[str, Any]:
    config = validate(
        {
            "tasks": {"cycle": {"kind": "coloring", "steps": steps}},
            "methods": {
                # timeout_s: the "hang" fault waits it out; a loaded machine's replies stay well inside it
                "tiny": tiny_served(
                    base_url,
                    **{
                        "notes_chars": 40,
                        "max_tokens": 96,
                        "history": "full",
                        "timeout_s": 10,
                        "max_retries": 4,
                        "retry_total_s": 60,
                        **method,  # a test's own settings over these
                    },
                )
            },
            "studies": {"s": {"tasks": ["cycle"], "methods": ["tiny"], "populations": [n], "seeds": 1}},
        },
        "test",
    )
    return next(study_blocks(config, "s", Path("."))[0].cells())


def test_structured_outputs_end_to_end_all_in_flight_under_the_limit(vllm_server: str) -> None:
    proxy = FaultProxy(vllm_server)
    try:
        backend = OpenAIBackend("tiny", proxy.url, None, concurrency=4)
        finished: list[int] = []
        results = backend.complete(requests(11), lambda i, r: finished.append(i))
    finally:
        proxy.stop()
    assert sorted(finished) == list(range(11)) and proxy.forwarded == 11
    assert 1 < proxy.max_in_flight <= 4
    for result in results:
        assert check(result.text, SCHEMA)[1] is None, result.text
        assert result.mode == "json_schema" and result.usage.retries == 0
        assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    # A request's seed is its sample index: the same request gives the same reply.
    again = OpenAIBackend("tiny", vllm_server + "/v1", None).complete(requests(2), lambda i, r: None)
    assert [r.text for r in again] == [r.text for r in results[:2]]


def test_episode_completes_through_429_500_hang_and_drop_with_retries_counted(
    vllm_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    secret = "sk-hivebench-test-0123456789abcdef"
    monkeypatch.setenv("HIVEBENCH_TEST_KEY", secret)  # vLLM started without --api-key accepts any
    faults = {1: "429", 2: "500", 4: "hang", 6: "drop"}
    proxy = FaultProxy(vllm_server, lambda number, body: faults.get(number))
    try:
        cell = server_cell(proxy.url, steps=3, n=3, api_key_env="HIVEBENCH_TEST_KEY")
        summary = write_episode(cell, cell_path(cell))
    finally:
        proxy.stop()
    written = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    assert secret.encode() not in written and secret not in caplog.text
    assert summary["llm_calls"] == 9 and summary["valid"] == 9
    assert summary["retries"] == len(faults) and proxy.forwarded == 9
    table = pq.read_table(cell_path(cell)).to_pydict()
    assert sum(r for r in table["retries"] if r is not None) == len(faults)
    assert all(isinstance(notes, str) for notes in table["notes"])


def test_killed_server_rerun_resumes_from_the_cache_with_no_repeated_call(
    vllm_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    proxy = FaultProxy(vllm_server, die_after=5)
    cell = server_cell(proxy.url, steps=4, n=3, max_retries=2)  # 12 calls; the server dies after 5
    with pytest.raises(BackendError):
        write_episode(cell, cell_path(cell))
    assert not Path(cell_path(cell)).exists()
    cached = len(Path(calls_path(cell)).read_text().splitlines())
    assert 5 <= cached == proxy.forwarded < 12  # every answer the server gave before dying is kept

    revived = FaultProxy(vllm_server, port=proxy.port)  # the same address, so the same cell
    try:
        first = write_episode(cell, cell_path(cell))
        assert revived.forwarded == 12 - cached and first["llm_calls"] == 12
        done = Path(cell_path(cell)).read_bytes()
        Path(cell_path(cell)).unlink()
        assert write_episode(cell, cell_path(cell)) == first
    finally:
        revived.stop()
    assert revived.forwarded == 12 - cached, "a finished episode replays from its cache without calls"
    assert Path(cell_path(cell)).read_bytes() == done


def test_server_refusing_json_schema_gets_json_mode_then_repair_then_fallback(
    vllm_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def refuse_schema(number: int, body: bytes) -> str | None:
        return "400-json-schema" if json.loads(body)["response_format"]["type"] == "json_schema" else None

    proxy = FaultProxy(vllm_server, refuse_schema)
    try:
        cell = server_cell(proxy.url, steps=2, n=3, max_tokens=32)
        summary = write_episode(cell, cell_path(cell))
    finally:
        proxy.stop()
    # A random model in plain JSON mode never closes its string within 32 tokens: every decision
    # fails, gets one repair request, fails again, and falls back to keeping the current colour.
    assert summary["fallback"] == 6 and summary["llm_calls"] == 12
    table = pq.read_table(cell_path(cell)).to_pydict()
    assert set(table["decision"][3:]) == {FALLBACK}
    assert table["color"] == [0] * 9  # everyone kept colour 0 (init "same")
    modes = {json.loads(line)["result"]["mode"] for line in Path(calls_path(cell)).read_text().splitlines()}
    assert modes == {"json_object"}


def test_a_server_echoing_the_key_does_not_put_it_in_the_error(
    vllm_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-hivebench-echoed-0123456789"
    monkeypatch.setenv("HIVEBENCH_TEST_KEY", secret)
    proxy = FaultProxy(vllm_server, lambda number, body: "401-echo-key")
    try:
        with pytest.raises(BackendError) as error:
            OpenAIBackend("tiny", proxy.url, "HIVEBENCH_TEST_KEY").complete(requests(1), lambda i, r: None)
    finally:
        proxy.stop()
    assert "bad key Bearer <api key>" in str(error.value) and secret not in str(error.value)
    assert error.value.__suppress_context__  # the original exception, which quotes the key, is not shown


def test_a_malformed_response_is_an_invalid_reply_naming_server_and_cell(
    vllm_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    # The first answer of each round's three is cut short; its repair request goes through.
    proxy = FaultProxy(vllm_server, lambda number, body: "malformed" if number in (1, 7) else None)
    try:
        cell = server_cell(proxy.url, steps=2, n=3)
        with caplog.at_level("WARNING", logger="hivebench.llm"):
            summary = write_episode(cell, cell_path(cell))
    finally:
        proxy.stop()
    # Strict schema decoding makes every other reply valid, and both repair requests too.
    assert (summary["valid"], summary["repaired"], summary["fallback"], summary["llm_calls"]) == (4, 2, 0, 8)
    warnings = [r.getMessage() for r in caplog.records if "malformed" in r.getMessage()]
    assert len(warnings) == 2
    assert (
        f"cell {cell_path(cell).removesuffix('.parquet')}: {proxy.url} answered with a malformed response"
        in warnings[0]
    )
    modes = [json.loads(line)["result"]["mode"] for line in Path(calls_path(cell)).read_text().splitlines()]
    assert modes.count("malformed") == 2


def test_the_cache_replays_after_a_base_url_or_concurrency_change(
    vllm_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/llm-agents.md (Response cache): base URL, concurrency and retry settings are not in the cache
    key, so moving to another server of the same model replays the cache (the cell reruns, but without
    a call)."""
    monkeypatch.chdir(tmp_path)
    first, second = FaultProxy(vllm_server), FaultProxy(vllm_server)
    try:
        cell = server_cell(first.url, concurrency=1)
        summary = write_episode(cell, cell_path(cell))
        assert first.forwarded == summary["llm_calls"] == 9
        done = pq.read_table(cell_path(cell))
        moved = server_cell(second.url, concurrency=4, max_retries=7)
        assert moved != cell and cell_path(moved) == cell_path(cell)
        Path(cell_path(cell)).unlink()
        assert write_episode(moved, cell_path(moved)) == summary
    finally:
        first.stop()
        second.stop()
    assert second.forwarded == 0 and first.forwarded == 9, "replayed from the cache, no call"
    assert pq.read_table(cell_path(moved)).equals(done)  # latencies included: they come from the cache
