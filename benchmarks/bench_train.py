"""Decision distillation's training speed against a plain `transformers` Trainer loop (the baseline) on
the same batches and model: SmolLM2-135M-Instruct with the same LoRA adapter, the rule teacher's records
on the scripted controller's views of a Pursuit and a Silo-Bench III-26 cell, the same updates of the
same examples in the same order (the Trainer fed them in sequence, the same micro-batches and gradient
accumulation). Both are timed over their updates alone (hivebench's checkpoint and validation loss, and
the Trainer's start, are left out); tokens per second counts every token of every example read.

Usage: python benchmarks/bench_train.py [--updates 6] [--dtype float32|bfloat16] [--threads 2] [--repeats 2]
(SmolLM2 is converted into models/ first, if missing.)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.models.builtin import prepare
from hivebench.train.distill import Settings, load_student, train
from hivebench.train.examples import Example, encode, pad_id, padded
from hivebench.train.schedule import schedule
from hivebench.train.teacher import record

REPO = Path(__file__).resolve().parents[1]
MODEL = "SmolLM2-135M-Instruct"


def played() -> list[list[dict]]:
    """The scripted controller's `views` rows of a Pursuit and a III-26 cell, per cell."""
    config = {
        "tasks": {
            "pursuit": {"kind": "swarmbench", "task": "pursuit", "rounds": 10},
            "silo": {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": 9},
        },
        "methods": {"rule": {"kind": "scripted_controller", "keep_views": True}},
        "studies": {"s": {"tasks": ["pursuit", "silo"], "methods": ["rule"], "populations": [4], "seeds": 1}},
    }
    blocks = all_blocks(validate(config, "bench.yaml"), REPO)["s"]
    return [episode.table("views").to_pylist() for block in blocks for episode in play_block(list(block.cells()))]


def decisions() -> list[tuple[dict, list[str], dict]]:
    """(view, action names, the rule teacher's record): the first 24 views of each cell."""
    out = []
    for rows in played():
        for row in rows[:24]:
            view = json.loads(row["view"])
            out.append((view, json.loads(row["actions"]), record(view)))
    return out


def examples(tokenizer: object) -> list[Example]:
    return [encode(tokenizer, *d) for d in decisions()]


def trainer_seconds(base: Path, pad: int, train_set: list[Example], settings: Settings) -> float:
    """A plain Trainer over the same scheduled examples, in order."""
    from torch.utils.data import SequentialSampler
    from transformers import Trainer, TrainingArguments

    class InOrder(Trainer):
        def _get_train_sampler(self, *args: object, **kwargs: object) -> SequentialSampler:
            return SequentialSampler(self.train_dataset)

    plan = schedule(len(train_set), settings.batch, settings.updates, settings.seed).ravel()
    dataset = [train_set[i] for i in plan]

    def collate(batch: list[Example]) -> dict[str, torch.Tensor]:
        ids, mask, labels = padded(batch, pad)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}

    model = load_student(base, settings)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            per_device_train_batch_size=settings.micro_batch,
            gradient_accumulation_steps=settings.batch // settings.micro_batch,
            max_steps=settings.updates,
            learning_rate=settings.learning_rate,
            lr_scheduler_type="constant",
            weight_decay=0.0,
            logging_steps=settings.updates,
            save_strategy="no",
            report_to=[],
            use_cpu=settings.device == "cpu",
            dataloader_num_workers=0,
            remove_unused_columns=False,
            seed=settings.seed,
        )
        trainer = InOrder(model=model, args=args, train_dataset=dataset, data_collator=collate)
        started = time.perf_counter()
        trainer.train()
        return time.perf_counter() - started


def arguments(description: str) -> argparse.Namespace:
    """The options this benchmark and bench_scd.py share."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--updates", type=int, default=6)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="runs of each, alternating; the fastest counts")
    return parser.parse_args()


def student() -> tuple[Path, object, int]:
    """SmolLM2's folder (converted into models/ first, if missing), its tokenizer and padding token."""
    from transformers import AutoTokenizer

    base = REPO / "models" / MODEL
    if not (base / "config.json").is_file():
        prepare(MODEL, base)
    tokenizer = AutoTokenizer.from_pretrained(base)
    return base, tokenizer, pad_id(tokenizer)


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    base, tokenizer, pad = student()
    data = examples(tokenizer)
    settings = Settings(
        rank=16,
        alpha=32,
        batch=4,
        micro_batch=2,
        updates=args.updates,
        checkpoint_every=args.updates,
        dtype=args.dtype,
        threads=args.threads,
    )
    torch.set_num_threads(args.threads)
    plan = schedule(len(data), settings.batch, settings.updates, settings.seed).ravel()
    tokens = sum(len(data[i].tokens) for i in plan)
    ours, theirs = [], []
    for _ in range(args.repeats):  # alternately, so that neither always runs on a warmer process
        with tempfile.TemporaryDirectory() as out:
            ours.append(train(base, pad, data, data[:4], settings, Path(out))["seconds"]["updates"])
        theirs.append(trainer_seconds(base, pad, data, settings))
    ours, theirs = min(ours), min(theirs)
    print(
        f"{MODEL}, {args.dtype}, {args.threads} threads, LoRA rank {settings.rank}: {settings.updates} updates of "
        f"{settings.batch} examples ({settings.micro_batch} a pass), {tokens} tokens, "
        f"{sum(len(e.tokens) - e.prompt for e in data) / len(data):.0f} answer tokens an example on average"
    )
    print(f"hivebench distill: {ours:.1f} s, {tokens / ours:.0f} tokens/s")
    print(f"transformers Trainer (baseline): {theirs:.1f} s, {tokens / theirs:.0f} tokens/s")
    print(f"ratio (hivebench / Trainer, tokens per second): {theirs / ours:.2f}x")


if __name__ == "__main__":
    main()
