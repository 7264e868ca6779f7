"""vLLM's CPU build under seeded load (issue 9): the default server command dies on the first seeded
prompt whose prefill it splits into chunks; the README's command (chunked prefill off, a step budget
of a whole context) serves the same load. Against the real server, with the tiny model."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import openai
import pytest
from servers import start_vllm, stop_vllm

from conftest import require_vllm
from hivebench.models import ChatRequest, Sampling
from hivebench.models.decide import check
from hivebench.models.remote import OpenAIBackend
from test_models_server import SCHEMA

WORDS = "agent colour neighbour conflict round notes hold switch keep wait".split()


def long_prompt(i: int, words: int = 2200) -> str:
    """About 2,200 tokens of the tiny model: more than the 2,048 a default CPU server prefills per step."""
    return f"Agent {i}: " + " ".join(WORDS[(i + 7 * k) % len(WORDS)] for k in range(words))


def seeded(n: int) -> list[ChatRequest]:
    sampling = Sampling(temperature=1.0, top_p=1.0, max_tokens=96)  # room to close a 40-character string
    return [ChatRequest(({"role": "user", "content": long_prompt(i)},), SCHEMA, sampling, 100 + i) for i in range(n)]


def test_the_default_cpu_server_dies_on_a_seeded_chunked_prefill(tiny_model: Path, tmp_path: Path) -> None:
    require_vllm()
    log = tmp_path / "server.log"
    process, url = start_vllm(tiny_model, "tiny", log, flags=())  # vLLM's defaults: chunked prefill on
    try:
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=60)
        request = seeded(1)[0]
        with pytest.raises((openai.InternalServerError, openai.APIConnectionError)):
            client.chat.completions.create(
                model="tiny", messages=list(request.messages), temperature=1.0, max_completion_tokens=16, seed=request.sample
            )
        process.wait(timeout=60)  # the whole server exits
        assert "CPU Generator does not use offset" in log.read_text()
    finally:
        stop_vllm(process)


def test_the_documented_server_command_serves_seeded_load(vllm_server: str) -> None:
    backend = OpenAIBackend("tiny", vllm_server + "/v1", None, concurrency=16, timeout_s=120)
    results = backend.complete(seeded(32), lambda i, r: None)
    assert all(check(r.text, SCHEMA)[1] is None and r.usage.retries == 0 for r in results)
    assert min(r.usage.input_tokens for r in results) > 2048  # each prompt longer than a default chunk
    assert urllib.request.urlopen(vllm_server + "/v1/models", timeout=5).status == 200  # still serving
