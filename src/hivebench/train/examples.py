"""A decision example as the student sees it: the chat a controller is asked at deployment (the
paper's instruction, the action names and the six-part view: hivebench.agents.waggle.prompt) through
the model's own chat template, then the teacher's record as the constrained decoder writes it and the
end token. Only the answer's tokens (the record and its end) carry loss."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hivebench.agents.waggle.prompt import messages, record_schema

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
    its generation prompt, no special tokens added), and the answer as the decoder would write it
    (`answer_text`), then the end token that closes a JSON reply."""
    chat = list(messages(view, actions))
    prompt = tokenizer(
        tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False), add_special_tokens=False
    )["input_ids"]
    answer = tokenizer(answer_text(record, actions), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return Example(prompt + answer, len(prompt))


def answer_text(record: dict[str, Any], actions: list[str]) -> str:
    """The record as a schema-constrained decoder writes it: every object's keys in the order of the
    record's JSON Schema (`record_schema`: task_action, response, deposits, commit, execution_intent;
    a trace's channel, claim, novelty, ...), no spaces. The decoder at deployment follows that order,
    so an answer in any other would teach the student records it is never let write. (A change in how
    an example is written raises models.adapter.EXAMPLE_FORMAT, so that trainings rerun.)"""
    return json.dumps(in_schema_order(record, record_schema(actions)), separators=(",", ":"), ensure_ascii=False)


def in_schema_order(value: Any, schema: dict[str, Any]) -> Any:
    """`value` with the keys of each object in the order its schema lists them."""
    if isinstance(value, list):
        return [in_schema_order(item, schema.get("items", {})) for item in value]
    if not isinstance(value, dict):
        return value
    objects = [s for s in schema.get("anyOf", [schema]) if s.get("type") == "object"]
    properties = objects[0]["properties"] if objects else {}
    ordered = [key for key in properties if key in value] + [key for key in value if key not in properties]
    return {key: in_schema_order(value[key], properties.get(key, {})) for key in ordered}


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
