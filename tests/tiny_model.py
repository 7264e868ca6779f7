"""A tiny randomly initialised Llama model and a byte-level BPE tokenizer, built in seconds.

For tests and benchmarks of the model backends without downloading anything. Two heads of width 32:
vLLM's CPU attention accepts only some head sizes (32, 64, 80, ...).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{{ '<|' + m['role'] + '|>' }}{{ m['content'] }}{{ eos_token }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)


def build(out: Path, seed: int = 0) -> Path:
    import torch
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    rng = random.Random(seed)
    torch.manual_seed(seed)
    words = "agent colour color notes round neighbour conflict hold switch keep wait yes no the a".split()
    corpus = []
    for _ in range(2000):
        reply = {"color": rng.randint(0, 9), "notes": " ".join(rng.choices(words, k=rng.randint(1, 8)))}
        corpus += [json.dumps(reply), " ".join(rng.choices(words, k=12))]
    special = ["<|pad|>", "<|bos|>", "<|eos|>", "<|user|>", "<|assistant|>", "<|system|>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=1024, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(corpus, trainer)
    hf_tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<|bos|>", eos_token="<|eos|>", pad_token="<|pad|>"
    )
    hf_tokenizer.chat_template = CHAT_TEMPLATE
    hf_tokenizer.model_max_length = 4096
    hf_tokenizer.save_pretrained(out)
    config = LlamaConfig(
        vocab_size=len(hf_tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=hf_tokenizer.bos_token_id,
        eos_token_id=hf_tokenizer.eos_token_id,
        pad_token_id=hf_tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(out)
    return out


if __name__ == "__main__":
    import sys

    print(build(Path(sys.argv[1])))
