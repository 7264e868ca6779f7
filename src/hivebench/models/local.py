"""Local Hugging Face `transformers` models: batched, schema-constrained decoding on the KV cache.

Pre-filling is the dear part of a decision on a CPU, and most of a prompt was pre-filled before:
- the tokens of its system message (the task statement every agent of an episode reads) are
  pre-filled once per process and reused by every prompt that starts with them;
- with full history an agent's chat only grows (`ChatRequest.keep_state`): the KV cache of its last
  prompt and reply is kept, so a round pre-fills only the new user message.
Rows are left-padded (masked, with positions that skip the padding), decoded token by token, and a row
that has finished its JSON leaves the batch. Tokens the JSON grammar forces (`{"color":`) are fed
without sampling. A batch holds at most `batch_rows` rows.

Replies are constrained to the request's JSON Schema by llguidance: at every decoding step each row's
grammar matcher masks the tokens that cannot continue valid JSON (a request without a schema asks for
free text: its row is not masked and runs until any of the model's end tokens, its end of turn
included), and the row's token is sampled with its own torch Generator, seeded by the request's sample
index, so a row's reply does not depend on which other rows share its batch, up to floating-point
rounding (padding changes the shapes of the matrix products; bfloat16 makes such differences
likelier). Each reply's latency is its batch's wall time.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from hivebench.ids import digest
from hivebench.models import (
    BackendError,
    ChatRequest,
    ChatResult,
    OnResult,
    Sampling,
    Usage,
)

# Queries per row up to which attention runs on the key/value heads directly (decoding steps).
SHORT_QUERIES = 16


def grouped_attention(
    module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any
) -> tuple[Any, None]:
    """`sdpa`, but a few queries per row (a decoding step, with the tokens the grammar forces) attend
    by two grouped matrix products on the key/value heads: transformers copies the whole KV cache for
    each query head there, and CPU `sdpa` with a mask is slower than the products themselves."""
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    rows, heads, length, dim = query.shape
    # No mask: no padding (one query then sees every key; more need the causal mask sdpa makes).
    unmasked = attention_mask is None and length == 1
    if length > SHORT_QUERIES or not (unmasked or (attention_mask is not None and attention_mask.dtype == torch.bool)):
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    groups = heads // key.shape[1]
    packed = query.reshape(rows, heads // groups, groups * length, dim)  # query head g * length + i
    scores = torch.matmul(packed, key.transpose(-1, -2)).float() * kwargs.get("scaling", dim**-0.5)
    if not unmasked:
        scores = scores.masked_fill(~attention_mask.repeat(1, 1, groups, 1), float("-inf"))
    out = torch.matmul(torch.softmax(scores, dim=-1).to(value.dtype), value)
    return out.reshape(rows, heads, length, dim).transpose(1, 2).contiguous(), None


@cache
def load_model(path: str, threads: int, dtype: str, adapter: str | None = None) -> tuple[Any, Any, Any]:
    """Model, tokenizer and llguidance tokenizer of a local folder, loaded once per process, with a peft
    LoRA adapter (a folder) over it where one is given."""
    import torch
    from llguidance.hf import from_tokenizer
    from transformers import AttentionInterface, AutoModelForCausalLM, AutoTokenizer
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    # `threads` cores (Snakemake gives the job as many), never more than this process may use.
    torch.set_num_threads(min(threads, len(os.sched_getaffinity(0))))
    folder = Path(path)
    if not (folder / "config.json").is_file():
        raise BackendError(f"{folder}: not a transformers model folder (no config.json)")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    AttentionInterface.register("hivebench", grouped_attention)
    AttentionMaskInterface.register("hivebench", sdpa_mask)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype), attn_implementation="hivebench")
    if adapter is not None:
        from peft import PeftModel

        if not (Path(adapter) / "adapter_config.json").is_file():
            raise BackendError(f"{adapter}: not a peft adapter folder (no adapter_config.json)")
        # Not merged: a rank-r update added into bfloat16 weights loses what falls below their rounding
        # step; kept beside them it is computed as it was trained (and as vLLM serves it).
        model = PeftModel.from_pretrained(model, adapter)
    model.eval()
    vocab = model.get_output_embeddings().weight.shape[0]
    return model, tokenizer, from_tokenizer(tokenizer, n_vocab=vocab)


def end_tokens(model: Any, tokenizer: Any) -> frozenset[int]:
    """The tokens that end a free-text reply: the tokenizer's end of text and every one the model's
    generation config names (an int or a list: a chat model's end of turn may be another token)."""
    configured = model.generation_config.eos_token_id
    ids = configured if isinstance(configured, list) else [configured]
    return frozenset(i for i in [*ids, tokenizer.eos_token_id] if i is not None)


def reply_text(tokenizer: Any, tokens: list[int], ends: frozenset[int]) -> str:
    """A reply's text: its tokens decoded, without the end token that closed it."""
    if tokens and tokens[-1] in ends:
        tokens = tokens[:-1]
    return tokenizer.decode(tokens, skip_special_tokens=True)


class SchemaSampler:
    """Each row's JSON grammar matcher (None: free text) and random generator: masks a step's logits to
    the tokens that can continue valid JSON, samples one token per row and feeds it to the row's matcher."""

    def __init__(self, ll_tokenizer: Any, requests: list[ChatRequest]):
        import torch
        from llguidance import LLMatcher

        self.matchers = [
            None
            if r.schema is None
            else LLMatcher(
                ll_tokenizer, LLMatcher.grammar_from_json_schema(r.schema, defaults={"whitespace_flexible": False})
            )
            for r in requests
        ]
        for matcher in self.matchers:
            if matcher is not None and matcher.is_error():
                raise BackendError(f"the decision schema cannot be compiled to a grammar: {matcher.get_error()}")
        self.sampling = [r.sampling for r in requests]
        self.generators = [torch.Generator().manual_seed(r.sample) for r in requests]

    def choose(self, logits: Any, rows: list[int]) -> list[int]:
        """One token for each of `rows` (logits row i is rows[i]'s), consumed by its matcher."""
        # llguidance's numpy kernels: its torch ones are torch.compile'd, a few seconds a process on a CPU
        from llguidance.numpy import (
            allocate_token_bitmask,
            apply_token_bitmask_inplace,
            fill_next_token_bitmask,
        )

        bitmask = allocate_token_bitmask(len(rows), logits.shape[1])  # every token allowed
        for i, row in enumerate(rows):
            if self.matchers[row] is not None:
                fill_next_token_bitmask(self.matchers[row], bitmask, i)
        logits = logits.float().contiguous()
        apply_token_bitmask_inplace(logits.numpy(), bitmask)  # in place: the array shares the tensor's memory
        chosen = [self._sample(logits[i], self.sampling[row], self.generators[row]) for i, row in enumerate(rows)]
        for row, token in zip(rows, chosen):
            matcher = self.matchers[row]
            if matcher is not None and not matcher.is_stopped():
                matcher.consume_token(token)
        return chosen

    def stopped(self, row: int) -> bool:
        """The row's JSON is complete (only the end of the reply can follow); free text never is."""
        matcher = self.matchers[row]
        return matcher is not None and matcher.is_stopped()

    def forced(self, row: int, most: int) -> list[int]:
        """The next tokens the row's grammar allows no alternative to (at most `most`), consumed."""
        matcher = self.matchers[row]
        tokens = [] if matcher is None else matcher.compute_ff_tokens()[:most]
        if tokens:
            matcher.consume_tokens(tokens)
        return tokens

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
        # Inverse CDF with one uniform draw: a tenth of torch.multinomial's time over a large vocabulary.
        cdf = probs.cumsum(0)
        return int(
            torch.searchsorted(cdf, torch.rand((), generator=generator) * cdf[-1], right=True).clamp(max=len(cdf) - 1)
        )


@dataclass
class State:
    """A KV cache of one row: the tokens it holds and, per layer, their keys and values
    (1, heads, tokens, head dim)."""

    tokens: list[int]
    layers: list[tuple[Any, Any]]

    @property
    def nbytes(self) -> int:
        return sum(keys.nbytes + values.nbytes for keys, values in self.layers)

    def head(self, length: int) -> State:
        return State(self.tokens[:length], [(k[:, :, :length], v[:, :, :length]) for k, v in self.layers])


def common_length(a: list[int], b: list[int]) -> int:
    """How many tokens two sequences share from the start."""
    size = min(len(a), len(b))
    differ = np.flatnonzero(np.asarray(a[:size]) != np.asarray(b[:size]))
    return int(differ[0]) if len(differ) else size


def chat_key(messages: Any) -> str:
    return digest([dict(m) for m in messages])


def left_padded(rows: list[list[int]], pad: int) -> tuple[Any, Any]:
    """Token rows as one (rows, longest) tensor, padded on the left, and its mask (1: a token)."""
    import torch

    width = max(map(len, rows))
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, width - len(row) :] = torch.tensor(row)
        mask[r, width - len(row) :] = 1
    return ids, mask


# System-message prefixes kept per process: a job meets one per episode shape.
PREFIXES_KEPT = 16
# Agents' KV caches kept from one round to the next (full history); beyond this the oldest go.
STATES_KEPT_MB = 1024


class TransformersBackend:
    name = "transformers"

    def __init__(
        self,
        model: str,
        path: str,
        threads: int = 1,
        dtype: str = "float32",
        batch_rows: int = 64,
        reuse: bool = True,
        adapter: str | None = None,
    ):
        self.model = f"{model}:{dtype}"  # the weights' precision changes replies: part of the cache key
        self.path = path
        self.adapter = adapter  # a LoRA adapter's folder, loaded with peft beside the weights
        self.threads = threads
        self.dtype = dtype
        self.batch_rows = batch_rows
        self.reuse = reuse  # False: every prompt pre-filled whole (the reference for tests and benchmarks)
        self.prefixes: dict[tuple[int, ...], State] = {}  # system-message tokens -> their KV cache
        self.states: dict[str, State] = {}  # a chat with its reply -> its KV cache (full history)
        self.prefilled = {"reused": 0, "computed": 0}  # prompt tokens whose KV cache was reused, computed
        self.seconds = {"prefill": 0.0, "decode": 0.0}  # wall time in the model, for benchmarks

    def complete(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        model, tokenizer, _ = load_model(self.path, self.threads, self.dtype, self.adapter)
        prompts = [
            tokenizer.apply_chat_template(list(r.messages), add_generation_prompt=True, tokenize=False)
            for r in requests
        ]
        tokens = tokenizer(prompts, add_special_tokens=False)["input_ids"]
        groups: dict[Sampling, list[int]] = {}
        for i, request in enumerate(requests):
            groups.setdefault(request.sampling, []).append(i)
        results: list[ChatResult | None] = [None] * len(requests)
        for sampling, members in groups.items():
            for start in range(0, len(members), self.batch_rows):
                chunk = members[start : start + self.batch_rows]
                for i, result in zip(
                    chunk, self._decode([tokens[i] for i in chunk], [requests[i] for i in chunk], sampling)
                ):
                    results[i] = result
                    on_result(i, result)
        return results  # type: ignore[return-value]  # every request is in one group

    def _reused(self, request: ChatRequest, tokens: list[int]) -> State | None:
        """The longest KV cache this process holds of the prompt's first tokens (never all of them:
        the last one is pre-filled for its logits): the agent's previous chat and reply, or its
        system message."""
        if not self.reuse:
            return None
        state = self.states.pop(chat_key(request.messages[:-1]), None) or self._prefix(request)
        length = 0 if state is None else min(common_length(state.tokens, tokens), len(tokens) - 1)
        return state.head(length) if state is not None and length > 0 else None

    def _prefix(self, request: ChatRequest) -> State | None:
        """The KV cache of the request's system message as its template renders it alone, pre-filled
        once (None without one)."""
        import torch

        model, tokenizer, _ = load_model(self.path, self.threads, self.dtype, self.adapter)
        if request.messages[0]["role"] != "system":
            return None
        text = tokenizer.apply_chat_template([request.messages[0]], tokenize=False)
        prefix = tuple(tokenizer(text, add_special_tokens=False)["input_ids"])
        if prefix not in self.prefixes:
            with torch.inference_mode():
                out = model(input_ids=torch.tensor([prefix]), use_cache=True, logits_to_keep=1)
            self.prefixes[prefix] = State(list(prefix), [(layer.keys, layer.values) for layer in out.cache.layers])
            self.prefilled["computed"] += len(prefix)
            if len(self.prefixes) > PREFIXES_KEPT:
                del self.prefixes[next(iter(self.prefixes))]  # the oldest
        return self.prefixes[prefix]

    def _keep(self, key: str, state: State) -> None:
        self.states[key] = state
        total = sum(s.nbytes for s in self.states.values())
        while total > STATES_KEPT_MB * 2**20 and len(self.states) > 1:
            total -= self.states.pop(next(iter(self.states))).nbytes  # the oldest

    def _decode(self, prompts: list[list[int]], requests: list[ChatRequest], sampling: Sampling) -> list[ChatResult]:
        """Decode one batch: pre-fill what no kept KV cache holds, then a token per live row a step
        (with the tokens the grammar forces after it) until every row has finished its JSON."""
        import torch

        model, tokenizer, ll_tokenizer = load_model(self.path, self.threads, self.dtype, self.adapter)
        started = time.perf_counter()
        sampler = SchemaSampler(ll_tokenizer, requests)
        # a JSON reply ends where its grammar does (which allows only the tokenizer's end after it)
        free = end_tokens(model, tokenizer)
        ends = [free if r.schema is None else frozenset([tokenizer.eos_token_id]) for r in requests]
        reused = [self._reused(r, t) for r, t in zip(requests, prompts)]
        kept = [0 if state is None else len(state.tokens) for state in reused]
        # Tokens the grammar forces before any choice are pre-filled with the prompt.
        generated = [sampler.forced(row, sampling.max_tokens) for row in range(len(requests))]
        fed = [len(g) for g in generated]  # generated tokens already in the KV cache
        rows = [prompt[k:] + g for prompt, k, g in zip(prompts, kept, generated)]
        input_ids, mask, cache = self._first_inputs(model, rows, reused, kept, tokenizer.pad_token_id)
        longest = max(kept)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)  # padding takes no position
        self.prefilled["reused"] += sum(kept)
        self.prefilled["computed"] += sum(map(len, rows))
        live = list(range(len(rows)))
        with torch.inference_mode():
            out = model(
                input_ids=input_ids,
                attention_mask=mask,
                position_ids=positions[:, longest:],
                cache=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            position = positions[:, -1]
            prefilled = time.perf_counter()
            while live:
                chosen = sampler.choose(out.logits[:, -1], live)
                feeds, going = [], []
                for i, (row, token) in enumerate(zip(live, chosen)):
                    generated[row].append(token)
                    at_end = token in ends[row]
                    forced = [] if at_end else sampler.forced(row, sampling.max_tokens - len(generated[row]))
                    generated[row] += forced
                    if at_end or sampler.stopped(row) or len(generated[row]) >= sampling.max_tokens:
                        if requests[row].keep_state and self.reuse:
                            self._keep_row(
                                requests[row],
                                prompts[row] + generated[row][: fed[row]],
                                cache,
                                mask[i],
                                i,
                                reply_text(tokenizer, generated[row], ends[row]),
                            )
                    else:
                        feeds.append([token, *forced])
                        going.append(i)
                        fed[row] = len(generated[row])
                if not going:
                    break
                if len(going) < len(live):  # finished rows leave the batch
                    index = torch.tensor(going)
                    cache.batch_select_indices(index)
                    mask, position = mask[index], position[index]
                    live = [live[i] for i in going]
                ids, new = left_padded(feeds, tokenizer.pad_token_id)
                mask = torch.cat([mask, new], dim=1)
                steps = position[:, None] + new.cumsum(-1)
                position = steps[:, -1]
                out = model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=steps,
                    cache=cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
        ended = time.perf_counter()
        self.seconds["prefill"] += prefilled - started
        self.seconds["decode"] += ended - prefilled
        latency = round(ended - started, 6)
        return [
            ChatResult(
                reply_text(tokenizer, tokens, end),
                Usage(len(prompt), len(tokens), latency, 0),
                "text" if request.schema is None else "constrained",
            )
            for prompt, tokens, request, end in zip(prompts, generated, requests, ends)
        ]

    @staticmethod
    def _first_inputs(
        model: Any, rows: list[list[int]], reused: list[State | None], kept: list[int], pad: int
    ) -> tuple[Any, Any, Any]:
        """The batch's first forward: each row's reused KV cache (`kept` tokens) right-aligned to the
        longest, then its new tokens left-padded; (input ids, the attention mask over both, the KV cache)."""
        import torch
        from transformers import DynamicCache

        longest = max(kept)
        cache = DynamicCache(config=model.config)
        mask = torch.zeros((len(rows), longest), dtype=torch.long)
        for r, length in enumerate(kept):
            mask[r, longest - length :] = 1
        if longest:
            first = next(state for state in reused if state is not None)
            for layer, (like, _) in enumerate(first.layers):
                shape = (len(rows), like.shape[1], longest, like.shape[3])
                keys, values = torch.zeros(shape, dtype=like.dtype), torch.zeros(shape, dtype=like.dtype)
                for r, state in enumerate(reused):
                    if state is not None:
                        keys[r, :, longest - kept[r] :], values[r, :, longest - kept[r] :] = (
                            state.layers[layer][0][0],
                            state.layers[layer][1][0],
                        )
                cache.update(keys, values, layer)
        input_ids, new = left_padded(rows, pad)
        return input_ids, torch.cat([mask, new], dim=1), cache

    def _keep_row(self, request: ChatRequest, tokens: list[int], cache: Any, mask: Any, index: int, text: str) -> None:
        """Keep a finished row's KV cache for the agent's next round (its chat with this reply)."""
        where = mask.nonzero().squeeze(1)
        layers = [
            (layer.keys[index : index + 1, :, where], layer.values[index : index + 1, :, where])
            for layer in cache.layers
        ]
        self._keep(chat_key((*request.messages, {"role": "assistant", "content": text})), State(tokens, layers))
