"""The memory a job of a local `transformers` model needs, from the model's config: the estimate
behind the job's `mem_mb` (and `hivebench estimate`).

A batch of `rows` requests of up to `tokens` tokens each (prompt and reply) holds its KV cache (and,
while the cache of reused prefixes is assembled, a copy of it), one layer's activations at a time
while pre-filling (attention scores counted in float32, as the math kernels hold them), and the last
position's logits; with full history the agents' kept KV caches (`STATES_KEPT_MB`) come on top. The
weights are counted twice, in float32 and in the run's dtype: the converted folders are float32 and
are cast on loading.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

BASE_MB = 1300  # Python, torch, transformers, the tokenizers, llguidance (measured 0.94-1.16 GB beside SmolLM2)
# `auto` is sized as float32, the larger: the job may resolve it on another machine than this one.
BYTES = {"float32": 4, "bfloat16": 2, "auto": 4}


def parameters(config: dict[str, Any]) -> int:
    hidden, layers, vocab = config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]
    heads, kv_heads = config["num_attention_heads"], config.get("num_key_value_heads") or config["num_attention_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
    norms = 2 * hidden  # before attention and before the MLP
    return embeddings + hidden + layers * (attention + 3 * hidden * config["intermediate_size"] + norms)


def memory_mb(config: dict[str, Any], dtype: str, rows: int, tokens: int, keeps_states: bool) -> int:
    from hivebench.models.local import STATES_KEPT_MB

    size = BYTES[dtype]
    hidden, layers, heads = config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or hidden // heads
    weights = parameters(config) * (4 + size)
    cache = 2 * rows * tokens * layers * 2 * kv_heads * head_dim * size
    layer = rows * tokens * (4 * hidden + 3 * config["intermediate_size"]) * size + rows * heads * tokens * tokens * 4
    logits = 2 * rows * config["vocab_size"] * 4
    kept = STATES_KEPT_MB if keeps_states else 0
    return math.ceil(BASE_MB + kept + (weights + cache + layer + logits) / 2**20)


def model_config(folder: Path) -> dict[str, Any] | None:
    """A model folder's config.json, or None where it is not there (yet)."""
    path = folder / "config.json"
    return json.loads(path.read_text()) if path.is_file() else None
