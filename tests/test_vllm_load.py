"""vLLM's CPU build under seeded load (issue 9): its default server command died on the first seeded
prompt whose prefill it split into chunks (0.32), so every command hivebench documents or runs turns
chunked prefill off with a step budget of a whole context; that command serves seeded load of long
prompts (against the real server, with the tiny model)."""

from __future__ import annotations

import urllib.request

import pytest
from servers import CPU_SAFE_FLAGS, MAX_MODEL_LEN

from conftest import REPO
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


def cpu_safe(flags: list[str], max_model_len: int) -> bool:
    """Chunked prefill off, and a step budget of at least a whole context."""
    budget = flags.index("--max-num-batched-tokens")
    return "--no-enable-chunked-prefill" in flags and int(flags[budget + 1]) >= max_model_len


@pytest.mark.parametrize("path", ["README.md", "config/examples/llm-servers.yaml"])
def test_every_documented_cpu_server_command_turns_chunked_prefill_off(path: str) -> None:
    commands = [line.split() for line in (REPO / path).read_text().splitlines() if "--no-enable-chunked-prefill" in line]
    assert commands, f"{path} gives no vLLM CPU server command"
    for flags in commands:
        length = flags.index("--max-model-len")
        assert cpu_safe(flags, int(flags[length + 1])), (path, " ".join(flags))


def test_the_test_server_runs_with_the_documented_flags() -> None:
    assert cpu_safe(list(CPU_SAFE_FLAGS), MAX_MODEL_LEN)


def test_the_documented_server_command_serves_seeded_load(vllm_server: str) -> None:
    backend = OpenAIBackend("tiny", vllm_server + "/v1", None, concurrency=16, timeout_s=120)
    results = backend.complete(seeded(32), lambda i, r: None)
    assert all(check(r.text, SCHEMA)[1] is None and r.usage.retries == 0 for r in results)
    assert min(r.usage.input_tokens for r in results) > 2048  # each prompt longer than a default chunk
    assert urllib.request.urlopen(vllm_server + "/v1/models", timeout=5).status == 200  # still serving
