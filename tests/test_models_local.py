"""The transformers backend with constrained decoding: a tiny random model and SmolLM2, no network."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hivebench.agents.llm import decision_schema
from hivebench.models import ChatRequest, Sampling
from hivebench.models.decide import check
from hivebench.models.local import TransformersBackend

SCHEMA = decision_schema({"color": {"type": "integer", "minimum": 0, "maximum": 1}}, notes_chars=40)


def requests(n: int, sampling: Sampling = Sampling(temperature=1.0, top_p=1.0, max_tokens=64)) -> list[ChatRequest]:
    return [
        ChatRequest(
            (
                {"role": "system", "content": f"You are agent {v} of {n} on a cycle; pick colour 0 or 1."},
                {"role": "user", "content": f"Your colour: 0. Neighbours: 0, 0. Notes: none. Step {v}."},
            ),
            SCHEMA,
            sampling,
            1000 + v,
        )
        for v in range(n)
    ]


def test_tiny_model_batched_sampled_replies_are_all_schema_valid(tiny_model: Path) -> None:
    backend = TransformersBackend("tiny", str(tiny_model))
    seen: list[int] = []
    results = backend.complete(requests(11), lambda i, r: seen.append(i))
    assert sorted(seen) == list(range(11))
    for result in results:
        value, error = check(result.text, SCHEMA)
        assert error is None, result.text
        assert value["color"] in (0, 1) and len(value["notes"]) <= 40
        assert result.usage.input_tokens > 0 and 0 < result.usage.output_tokens <= 64
        assert result.mode == "constrained"
    # A random model under sampling: the notes differ across agents.
    assert len({r.text for r in results}) > 1


def test_a_reply_does_not_depend_on_its_batch(tiny_model: Path) -> None:
    backend = TransformersBackend("tiny", str(tiny_model))
    batch = [r.text for r in backend.complete(requests(6), lambda i, r: None)]
    alone = [backend.complete([r], lambda i, x: None)[0].text for r in requests(6)]
    assert batch == alone


def test_greedy_decoding_is_deterministic_and_a_tiny_top_p_is_greedy(tiny_model: Path) -> None:
    backend = TransformersBackend("tiny", str(tiny_model))
    greedy = requests(3, Sampling(temperature=0.0, top_p=1.0, max_tokens=64))
    first = [r.text for r in backend.complete(greedy, lambda i, r: None)]
    assert first == [r.text for r in backend.complete(greedy, lambda i, r: None)]
    # The nucleus of a vanishing top_p is the single likeliest allowed token, whatever the temperature.
    narrow = requests(3, Sampling(temperature=1.0, top_p=1e-9, max_tokens=64))
    assert [r.text for r in backend.complete(narrow, lambda i, r: None)] == first
    sampled = requests(3, Sampling(temperature=1.0, top_p=1.0, max_tokens=64))
    assert [r.text for r in backend.complete(sampled, lambda i, r: None)] != first


def test_smollm2_gives_schema_valid_decisions_batched_and_sampled(smollm2: Path) -> None:
    backend = TransformersBackend("SmolLM2-135M-Instruct", str(smollm2))
    results = backend.complete(requests(5), lambda i, r: None)
    values = [check(r.text, SCHEMA) for r in results]
    assert all(error is None for _, error in values), [r.text for r in results]
    assert np.all([v["color"] in (0, 1) for v, _ in values])
