"""vLLM's CPU build under seeded load (issue 9): its default server command died on the first seeded
prompt whose prefill it split into chunks (0.32), so every command hivebench documents or runs turns
chunked prefill off with a step budget of a whole context; that command serves seeded load of long
prompts (against the real server, with the tiny model)."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
import servers
from conftest import REPO, soak_count
from test_models_server import SCHEMA

from hivebench.models import ChatRequest, Sampling
from hivebench.models.decide import check
from hivebench.models.remote import OpenAIBackend

WORDS = "agent colour neighbour conflict round notes hold switch keep wait".split()


def long_prompt(i: int, words: int = 2200) -> str:
    """About 2,200 tokens of the tiny model: more than the 2,048 a default CPU server prefills per step."""
    return f"Agent {i}: " + " ".join(WORDS[(i + 7 * k) % len(WORDS)] for k in range(words))


def seeded(n: int) -> list[ChatRequest]:
    sampling = Sampling(temperature=1.0, top_p=1.0, max_tokens=96)  # room to close a 40-character string
    return [ChatRequest(({"role": "user", "content": long_prompt(i)},), SCHEMA, sampling, 100 + i) for i in range(n)]


def cpu_safe(flags: list[str], max_model_len: int) -> bool:
    """Chunked prefill off, and a step budget of at least a whole context."""
    if "--no-enable-chunked-prefill" not in flags or "--max-num-batched-tokens" not in flags[:-1]:
        return False
    budget = flags[flags.index("--max-num-batched-tokens") + 1]
    return budget.isdigit() and int(budget) >= max_model_len


# A line that starts a vLLM server: `vllm serve ...` or `<python> -m vllm.entrypoints.openai.api_server ...`,
# at the start of the line (after indentation, a YAML comment's `#`, a shell prompt, `VAR=value`s).
SERVER_START = re.compile(
    r"^\s*(?:#\s*)?(?:\$\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(?P<command>(?:vllm\s+serve|\S+\s+-m\s+vllm\.entrypoints\.openai\.api_server)\b.*)$"
)
# The line after a command that gives what vLLM's CPU build adds to it (config/examples/llm-servers.yaml).
CPU_ADDITIONS = re.compile(r"vLLM's CPU build.*\bneeds:\s*(?P<flags>--.*)$")


def documented_cpu_commands(text: str) -> list[list[str]]:
    """Every vLLM server command in `text`, as vLLM's CPU build would be started with it.

    The documented commands are for the CPU build (docs/llm-agents.md, "vLLM on a CPU"; GPU builds rewind
    their generators and need no flags). The one rule that leaves a command out as given: a command
    whose next line says what "vLLM's CPU build ... needs:" is the GPU form, and is checked with
    those additions, which is how a CPU user runs it."""
    lines = text.splitlines()
    commands = []
    for i, line in enumerate(lines):
        start = SERVER_START.match(line)
        if start is None:
            continue
        flags = start["command"].split(" #")[0].split()  # without a trailing comment
        additions = CPU_ADDITIONS.search(lines[i + 1]) if i + 1 < len(lines) else None
        commands.append(flags + (additions["flags"].split() if additions else []))
    return commands


def unsafe(commands: list[list[str]]) -> list[str]:
    """The commands that lack chunked prefill off or a step budget of a whole context."""
    bad = []
    for flags in commands:
        length = flags.index("--max-model-len") + 1 if "--max-model-len" in flags[:-1] else None
        if length is None or not flags[length].isdigit() or not cpu_safe(flags, int(flags[length])):
            bad.append(" ".join(flags))
    return bad


# Every file of the documentation: a vLLM server command anywhere in one of them is checked.
DOCUMENTATION = sorted(
    path.relative_to(REPO).as_posix()
    for pattern in (
        "README.md",
        "docs/*.md",
        "config/README.md",
        "config/examples/*.yaml",
        "src/hivebench/suites/*/README.md",
    )
    for path in REPO.glob(pattern)
)
# The files that give server commands ("vLLM on a CPU" and the example config), so the check is never vacuous.
GIVING_COMMANDS = ["docs/llm-agents.md", "config/examples/llm-servers.yaml"]


@pytest.mark.parametrize("path", DOCUMENTATION)
def test_every_documented_cpu_server_command_turns_chunked_prefill_off(path: str) -> None:
    commands = documented_cpu_commands((REPO / path).read_text())
    assert not unsafe(commands), path


@pytest.mark.parametrize("path", GIVING_COMMANDS)
def test_the_documentation_gives_server_commands(path: str) -> None:
    assert path in DOCUMENTATION
    assert documented_cpu_commands((REPO / path).read_text()), f"{path} gives no vLLM server command"


def test_a_documented_command_without_the_flag_is_caught() -> None:
    """The check above fails on docs/llm-agents.md with the flag taken out of one command (a copy of its text)."""
    doc = (REPO / "docs/llm-agents.md").read_text()
    assert "--no-enable-chunked-prefill" in doc
    without = doc.replace(" --no-enable-chunked-prefill", "", 1)
    assert len(unsafe(documented_cpu_commands(without))) == 1
    gpu_form = (
        "#   vllm serve M    # any server\n"
        "#     vLLM's CPU build also needs: --max-model-len 8 --max-num-batched-tokens 8\n"
    )
    assert unsafe(documented_cpu_commands(gpu_form)) == ["vllm serve M --max-model-len 8 --max-num-batched-tokens 8"]


def test_the_test_server_runs_with_the_documented_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command start_vllm runs (caught before it starts anything) is a CPU-safe server command."""
    started = []

    class Caught:
        pid = -1

        def __init__(self, command: list[str], **kwargs: object) -> None:
            started.append(command)

    monkeypatch.setattr(servers.subprocess, "Popen", Caught)
    monkeypatch.setattr(servers, "wait_until_up", lambda *args, **kwargs: None)
    servers.start_vllm(tmp_path / "model", "tiny", tmp_path / "server.log")
    [command] = started
    assert SERVER_START.match(" ".join(command)), command  # the rule above finds it as a server command
    assert not unsafe([command]), command
    assert cpu_safe(list(servers.CPU_SAFE_FLAGS), servers.MAX_MODEL_LEN)


@pytest.mark.soak  # 8 long prompts at once; 32 under `make soak`
def test_the_documented_server_command_serves_seeded_load(vllm_server: str) -> None:
    backend = OpenAIBackend("tiny", vllm_server + "/v1", None, concurrency=16, timeout_s=300)
    results = backend.complete(seeded(soak_count(8, 32)), lambda i, r: None)
    assert all(check(r.text, SCHEMA)[1] is None and r.usage.retries == 0 for r in results)
    assert min(r.usage.input_tokens for r in results) > 2048  # each prompt longer than a default chunk
    assert urllib.request.urlopen(vllm_server + "/v1/models", timeout=5).status == 200  # still serving
