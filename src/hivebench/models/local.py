"""Local Hugging Face `transformers` models: one batched, left-padded `generate` per round.

Replies are constrained to the request's JSON Schema by llguidance: at every decoding step each row's
grammar matcher masks the tokens that cannot continue valid JSON. Sampling happens in the same logits
processor with one torch Generator per row, seeded by the request's sample index, so a row's reply
does not depend on which other rows share its batch, up to floating-point rounding (padding changes
the shapes of the matrix products; bfloat16 makes such differences likelier). Greedy decoding of the
one-hot result then picks exactly the sampled token. Each reply's latency is its batch's wall time.
"""

from __future__ import annotations

import os
import time
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from hivebench.models import BackendError, ChatRequest, ChatResult, OnResult, Sampling, Usage


@cache
def load_model(path: str, threads: int, dtype: str) -> tuple[Any, Any, Any]:
    """Model, tokenizer and llguidance tokenizer of a local folder, loaded once per process."""
    import torch
    from llguidance.hf import from_tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    # `threads` cores (Snakemake gives the job as many), never more than this process may use.
    torch.set_num_threads(min(threads, len(os.sched_getaffinity(0))))
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise BackendError(f"{folder}: not a transformers model folder (no config.json)")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    # Eager attention: on a small CPU model the default (sdpa) made first calls 10-50x slower here.
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype), attn_implementation="eager")
    model.eval()
    # A folder's generation_config.json (repetition penalty, top-k, ...) would be merged into every
    # generate call, unseen by the config and the cache key: sampling here is only what a request says.
    model.generation_config = GenerationConfig()
    vocab = model.get_output_embeddings().weight.shape[0]
    return model, tokenizer, from_tokenizer(tokenizer, n_vocab=vocab)


class SchemaSampler:
    """A logits processor: mask each row to its JSON grammar, then sample one token per row."""

    def __init__(self, ll_tokenizer: Any, requests: list[ChatRequest], prompt_length: int):
        import torch
        from llguidance import LLMatcher

        self.matchers = [
            LLMatcher(ll_tokenizer, LLMatcher.grammar_from_json_schema(r.schema, defaults={"whitespace_flexible": False}))
            for r in requests
        ]
        for matcher in self.matchers:
            if matcher.is_error():
                raise BackendError(f"the decision schema cannot be compiled to a grammar: {matcher.get_error()}")
        self.sampling = [r.sampling for r in requests]
        self.generators = [torch.Generator().manual_seed(r.sample) for r in requests]
        self.prompt_length = prompt_length

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch
        from llguidance.torch import allocate_token_bitmask, fill_next_token_bitmask

        rows, vocab = scores.shape
        if input_ids.shape[1] > self.prompt_length:  # consume the token each row just emitted
            for row, matcher in enumerate(self.matchers):
                if not matcher.is_stopped():
                    matcher.consume_token(int(input_ids[row, -1]))
        bitmask = allocate_token_bitmask(rows, vocab)
        for row, matcher in enumerate(self.matchers):
            fill_next_token_bitmask(matcher, bitmask, row)
        allowed = np.unpackbits(bitmask.numpy().view(np.uint8), axis=1, bitorder="little")[:, :vocab]
        masked = scores.float().masked_fill(torch.from_numpy(allowed == 0), float("-inf"))
        chosen = [self._sample(masked[row], self.sampling[row], self.generators[row]) for row in range(rows)]
        onehot = torch.full_like(scores, float("-inf"))
        onehot[torch.arange(rows), torch.tensor(chosen)] = 0.0
        return onehot

    @staticmethod
    def _sample(logits: Any, sampling: Sampling, generator: Any) -> int:
        import torch

        if sampling.temperature == 0:
            return int(logits.argmax())
        probs = torch.softmax(logits / sampling.temperature, dim=-1)
        if sampling.top_p < 1:
            ordered, order = probs.sort(descending=True)
            outside = ordered.cumsum(0) - ordered > sampling.top_p  # keep the smallest set reaching top_p
            probs = probs.scatter(0, order, ordered.masked_fill(outside, 0.0))
        return int(torch.multinomial(probs, 1, generator=generator))


class TransformersBackend:
    name = "transformers"

    def __init__(self, model: str, path: str, threads: int = 1, dtype: str = "float32"):
        self.model = f"{model}:{dtype}"  # the weights' precision changes replies: part of the cache key
        self.path = path
        self.threads = threads
        self.dtype = dtype

    def complete(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        results: list[ChatResult | None] = [None] * len(requests)
        groups: dict[Sampling, list[int]] = {}
        for i, request in enumerate(requests):
            groups.setdefault(request.sampling, []).append(i)
        for sampling, members in groups.items():
            for offset, result in enumerate(self._generate([requests[i] for i in members], sampling)):
                results[members[offset]] = result
                on_result(members[offset], result)
        return results  # type: ignore[return-value]

    def _generate(self, requests: list[ChatRequest], sampling: Sampling) -> list[ChatResult]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        model, tokenizer, ll_tokenizer = load_model(self.path, self.threads, self.dtype)
        prompts = [tokenizer.apply_chat_template(list(r.messages), add_generation_prompt=True, tokenize=False) for r in requests]
        batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        width = batch["input_ids"].shape[1]
        sampler = SchemaSampler(ll_tokenizer, requests, width)
        config = GenerationConfig(
            max_new_tokens=sampling.max_tokens,
            do_sample=False,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        started = time.perf_counter()
        with torch.inference_mode():
            output = model.generate(**batch, generation_config=config, logits_processor=LogitsProcessorList([sampler]))
        latency = time.perf_counter() - started
        results = []
        for row in range(len(requests)):
            generated = output[row, width:].tolist()
            if tokenizer.eos_token_id in generated:
                generated = generated[: generated.index(tokenizer.eos_token_id) + 1]
            text = tokenizer.decode(generated, skip_special_tokens=True)
            usage = Usage(int(batch["attention_mask"][row].sum()), len(generated), round(latency, 6), 0)
            results.append(ChatResult(text, usage, "constrained"))
        return results
