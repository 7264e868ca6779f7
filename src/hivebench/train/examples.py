"""A decision example as the student sees it: the chat a controller is asked at deployment (the
paper's instruction, the action names and the six-part view: hivebench.agents.waggle.prompt) through
the model's own chat template, then the teacher's canonical record and the end token. Only the
answer's tokens (the record and its end) carry loss."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hivebench.agents.waggle.prompt import messages
from hivebench.ids import canonical_json

IGNORED = -100  # the label of a token without loss (torch's cross-entropy ignore_index)


@dataclass(frozen=True)
class Example:
    tokens: list[int]  # the prompt's tokens, then the answer's
    prompt: int  # how many of them are the prompt's

    @property
    def labels(self) -> list[int]:
        return [IGNORED] * self.prompt + self.tokens[self.prompt :]


def encode(tokenizer: Any, view: dict[str, Any], actions: list[str], record: dict[str, Any]) -> Example:
    """The prompt tokenised as the transformers backend tokenises it at deployment (the template with
    its generation prompt, no special tokens added), and the answer as the decoder would write it: the
    record's canonical JSON, then the end token that closes a JSON reply."""
    chat = list(messages(view, actions))
    prompt = tokenizer(
        tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False), add_special_tokens=False
    )["input_ids"]
    answer = tokenizer(canonical_json(record), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return Example(prompt + answer, len(prompt))


def pad_id(tokenizer: Any) -> int:
    """The token a micro-batch is padded with: the tokenizer's own, else its end token (SmolLM2's has
    none; padded positions carry no loss and are masked either way)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id


def padded(examples: list[Example], pad: int) -> tuple[Any, Any, Any]:
    """A micro-batch right-padded: (input ids, attention mask, labels), the padding without loss."""
    import torch

    width = max(len(e.tokens) for e in examples)
    ids = torch.full((len(examples), width), pad, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    labels = torch.full((len(examples), width), IGNORED, dtype=torch.long)
    for row, example in enumerate(examples):
        length = len(example.tokens)
        ids[row, :length] = torch.tensor(example.tokens)
        mask[row, :length] = 1
        labels[row, :length] = torch.tensor(example.labels)
    return ids, mask, labels
