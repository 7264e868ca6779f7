"""Stage two's update (SCD, Eq. 8: the Joint arm) against stage one's (decision distillation, the
baseline) on the same sources, model and settings: SmolLM2-135M-Instruct with a rank-16 LoRA adapter,
the rule teacher's records on the scripted controller's views of a Pursuit and a III-26 cell (bench_train's),
each agent's consecutive views there as the transitions. A stage-two update reads each source's orbit
partner and `transition_batch` transitions besides, and runs the factor heads and the field predictor:
the ratio is what the paper's factorial costs per update over decision distillation. Timed over the
updates alone (`seconds.updates` of the manifest), the faster of alternating runs.

Usage: python benchmarks/bench_scd.py [--updates 6] [--dtype float32|bfloat16] [--threads 2] [--repeats 2]
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import torch
from bench_train import MODEL, arguments, decisions, played, student

from hivebench.train.distill import Settings, train
from hivebench.train.examples import encode
from hivebench.train.structural import Source, Structural, Structure, Transition
from hivebench.train.teacher import record


def transitions() -> list[Transition]:
    out = []
    for cell in played():
        rows = sorted(cell, key=lambda r: (r["agent"], r["step"]))
        for row, after in zip(rows, rows[1:]):
            if after["agent"] == row["agent"]:
                view = json.loads(row["view"])
                out.append(Transition(view, json.loads(row["actions"]), record(view), json.loads(after["view"])))
    return out


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    base, tokenizer, pad = student()
    sources = [Source(*d) for d in decisions()]
    data = [encode(tokenizer, s.view, s.actions, s.record) for s in sources]
    moves = transitions()
    settings = Settings(
        rank=16, alpha=32, batch=4, micro_batch=4, updates=args.updates, checkpoint_every=args.updates,
        dtype=args.dtype, threads=args.threads,
    )  # fmt: skip
    structure = Structure(arm="joint", transition_batch=4)
    torch.set_num_threads(args.threads)

    def objective(model: object) -> Structural:
        return Structural(model, tokenizer, pad, sources, moves, settings, structure)

    stage_one, stage_two = [], []
    for _ in range(args.repeats):  # alternately, so that neither always runs on a warmer process
        with tempfile.TemporaryDirectory() as out:
            stage_one.append(train(base, pad, data, data[:4], settings, Path(out))["seconds"]["updates"])
        with tempfile.TemporaryDirectory() as out:
            done = train(base, pad, data, data[:4], settings, Path(out), objective=objective)
            stage_two.append(done["seconds"]["updates"])
    one, two = min(stage_one), min(stage_two)
    print(
        f"{MODEL}, {args.dtype}, {args.threads} threads, LoRA rank {settings.rank}: {settings.updates} updates of "
        f"{settings.batch} sources; stage two adds their partners and {structure.transition_batch} transitions "
        f"({len(moves)} in all)"
    )
    print(f"stage one (decision distillation, baseline): {one:.1f} s, {one / settings.updates:.2f} s an update")
    print(f"stage two (Joint): {two:.1f} s, {two / settings.updates:.2f} s an update")
    print(f"ratio (stage two / stage one, seconds per update): {two / one:.2f}x")


if __name__ == "__main__":
    main()
