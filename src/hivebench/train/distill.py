"""Decision distillation (the paper's stage one, L_dec): a LoRA adapter on a causal LM trained on
teacher records, the loss on the answer's tokens only.

- The schedule is the training seed's (schedule.py); each update reads `batch` examples in
  micro-batches of `micro_batch` (gradient accumulation; grouped by length, to pad little), its loss
  the mean over the answer tokens of the whole batch, so the micro-batch size changes no gradient.
- Every `checkpoint_every` updates (and after the last) a checkpoint holds the adapter (peft's files),
  the trainable weights, the optimizer, the random state and the history, and the validation loss is
  measured; a checkpoint is written whole or not at all (a folder renamed into place), and a killed
  training resumes from the last one and goes on as the uninterrupted one would have.
- The adapter kept is the checkpoint with the least validation loss ("checkpoint selection by minimum
  validation decision loss"), copied to `<out>/adapter/` with `<out>/manifest.json`.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hivebench.ids import digest
from hivebench.models.adapter import ADAPTER, MANIFEST
from hivebench.train.examples import IGNORED, Example, padded
from hivebench.train.schedule import schedule

LOG = logging.getLogger(__name__)
STATE = "state.pt"  # a checkpoint's trainable weights, optimizer, random state and history
SOURCE = "made_of.txt"  # the digest of the settings and inputs a checkpoint was made of


@dataclass(frozen=True)
class Settings:
    """What a distillation run is: every field changes the adapter, so all of them go in its manifest."""

    rank: int = 32  # the paper's rank-32 LoRA
    alpha: int = 64
    dropout: float = 0.05
    target_modules: str | list[str] = "all-linear"  # peft's names, or every linear layer but the head
    learning_rate: float = 2e-4
    batch: int = 16  # examples per update (the effective batch)
    micro_batch: int = 4  # examples per forward pass: memory, not the result
    updates: int = 648  # the paper's stage-two budget
    checkpoint_every: int = 50
    seed: int = 0  # the schedule, the adapter's initialisation and its dropout
    dtype: str = "float32"  # float32 | bfloat16
    device: str = "cpu"  # cpu | cuda
    threads: int = 1  # CPU threads (the job's cores)
    warm_start: str | None = None  # an adapter folder to go on from (stage two's shared warm start)


@dataclass
class History:
    train: list[tuple[int, float]] = field(default_factory=list)  # (update, loss), every update
    validation: list[tuple[int, float]] = field(default_factory=list)  # (update, loss), every checkpoint
    # (update, {loss: value}) every update: an objective's other losses, unweighted (stage two's)
    auxiliary: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    # wall seconds in updates, and in validation and checkpoints, over every run (a resumed one's too;
    # a checkpoint's own writing is counted from the next one on)
    seconds: dict[str, float] = field(default_factory=lambda: {"updates": 0.0, "checkpoints": 0.0})


def load_student(base: Path, settings: Settings) -> Any:
    """The base model with a fresh LoRA adapter (its initialisation drawn from the seed), or with the
    warm start's adapter to go on training (its rank, alpha and modules then)."""
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(settings.seed)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=getattr(torch, settings.dtype))
    if settings.warm_start is not None:
        return PeftModel.from_pretrained(model, settings.warm_start, is_trainable=True).to(settings.device)
    config = LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=settings.target_modules,
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config).to(settings.device)


def forward_rows(model: Any, examples: list[Example], pad: int, device: str, hidden: bool = False) -> Rows:
    """One forward pass over a micro-batch: each row's summed cross-entropy of its answer tokens and
    their count, and with `hidden` the final local-view hidden state (the last layer's, after its norm,
    at the prompt's last token). The head runs only from the first position that predicts an answer
    token on (a prompt is most of a view's tokens, and the head over a large vocabulary most of a small
    model's cost)."""
    import torch
    import torch.nn.functional as F

    ids, mask, labels = (t.to(device) for t in padded(examples, pad))
    start = min(e.prompt for e in examples) - 1  # this position predicts the first answer token
    kept = torch.arange(start, ids.shape[1] - 1, device=device)
    out = model(input_ids=ids, attention_mask=mask, logits_to_keep=kept, output_hidden_states=hidden)
    logits = out.logits.float()
    target = labels[:, start + 1 :]
    each = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=IGNORED, reduction="none").sum(1)
    state = None
    if hidden:
        last = torch.tensor([e.prompt - 1 for e in examples], device=device)
        state = out.hidden_states[-1][torch.arange(len(examples), device=device), last].float()
    return Rows(each, (target != IGNORED).sum(1), state)


@dataclass(frozen=True)
class Rows:
    loss: Any  # (rows,) summed answer cross-entropy
    tokens: Any  # (rows,) answer tokens
    state: Any  # (rows, hidden) h(view), or None


def answer_loss(model: Any, examples: list[Example], pad: int, device: str) -> tuple[Any, int]:
    """(the summed cross-entropy of the answer tokens, how many there are) over a micro-batch."""
    rows = forward_rows(model, examples, pad, device)
    return rows.loss.sum(), int(rows.tokens.sum())


class Decision:
    """Stage one's objective, L_dec alone: an update's loss is the mean over the answer tokens of its
    whole batch, in micro-batches grouped by length (so that a micro-batch pads little: the update's
    gradient is the sum over all of them whichever way they are grouped)."""

    heads = None  # no weights of its own

    def __init__(self, train_set: list[Example], pad: int, settings: Settings):
        self.train_set, self.pad, self.settings = train_set, pad, settings

    def step(self, model: Any, update: int, indices: list[int]) -> dict[str, float]:
        """Backpropagate one update's loss; its losses by name (`decision` first)."""
        batch = sorted((self.train_set[i] for i in indices), key=lambda e: len(e.tokens))
        tokens = sum(len(e.tokens) - e.prompt for e in batch)  # each answer token weighs 1 / tokens
        total = 0.0
        for start in range(0, len(batch), self.settings.micro_batch):
            loss, _ = answer_loss(
                model, batch[start : start + self.settings.micro_batch], self.pad, self.settings.device
            )
            (loss / tokens).backward()
            total += float(loss.detach())
        return {"decision": total / tokens}


def mean_loss(model: Any, examples: list[Example], pad: int, settings: Settings) -> float:
    """The validation decision loss: the mean over every answer token of `examples` (no dropout)."""
    import torch

    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(examples), settings.micro_batch):
            loss, tokens = answer_loss(model, examples[start : start + settings.micro_batch], pad, settings.device)
            total, count = total + float(loss), count + tokens
    model.train()
    return total / max(count, 1)


def train(
    base: Path,
    pad: int,
    train_set: list[Example],
    validation: list[Example],
    settings: Settings,
    out: Path,
    about: dict[str, Any] | None = None,
    objective: Any = None,
) -> dict[str, Any]:
    """Train (or resume) into `out`; return the manifest of the adapter kept. `pad`: the tokenizer's
    padding token; `about`: what the manifest also says (the corpus's and teacher's digests, arm);
    `objective`: what an update optimises (`Decision` by default; stage two's: structural.Structural),
    a function of the student giving an object with `step` and `heads` (its own weights or None)."""
    import torch

    torch.set_num_threads(settings.threads)
    model = load_student(base, settings)
    step = objective(model) if objective is not None else Decision(train_set, pad, settings)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if step.heads is not None:
        trainable += list(step.heads.parameters())
    optimizer = torch.optim.AdamW(trainable, lr=settings.learning_rate, weight_decay=0.0)
    history, done = History(), 0
    # what the checkpoints were made of: a training whose settings, examples or inputs (the caller's
    # `about`: corpus, warm start, transitions) changed starts again instead of resuming another's
    made_of = digest([asdict(settings), [e.tokens for e in train_set], [e.tokens for e in validation], about or {}])
    last = latest_checkpoint(out)
    if last is not None and checkpoint_source(last) != made_of:
        LOG.warning("%s: checkpoints of other settings or inputs, removed: training from the start", out)
        shutil.rmtree(out / "checkpoints")
        last = None
    if last is not None:
        done, history = restore(last, model, optimizer, step.heads)
    plan = schedule(len(train_set), settings.batch, settings.updates, settings.seed)
    model.train()
    seconds = history.seconds
    for update in range(done, settings.updates):
        started = time.perf_counter()
        losses = step.step(model, update, plan[update].tolist())
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        history.train.append((update + 1, losses.pop("decision")))
        if losses:
            history.auxiliary.append((update + 1, losses))
        checkpoint = time.perf_counter()
        seconds["updates"] += checkpoint - started
        if (update + 1) % settings.checkpoint_every == 0 or update + 1 == settings.updates:
            history.validation.append((update + 1, mean_loss(model, validation, pad, settings)))
            save_checkpoint(out, update + 1, model, optimizer, history, step.heads, made_of)
            LOG.info(
                "update %d of %d: train loss %.4f, validation loss %.4f (%.0f s in updates)",
                update + 1,
                settings.updates,
                history.train[-1][1],
                history.validation[-1][1],
                seconds["updates"],
            )
            seconds["checkpoints"] += time.perf_counter() - checkpoint
    return select(out, base, history, settings, about or {})


def checkpoint_folder(out: Path, update: int) -> Path:
    return out / "checkpoints" / f"update-{update:06d}"


def latest_checkpoint(out: Path) -> Path | None:
    """The last checkpoint written whole (a partial one never got its final name)."""
    folders = sorted((out / "checkpoints").glob("update-[0-9]*[0-9]")) if (out / "checkpoints").is_dir() else []
    return folders[-1] if folders else None


def save_checkpoint(
    out: Path, update: int, model: Any, optimizer: Any, history: History, heads: Any = None, made_of: str = ""
) -> None:
    """The adapter (peft's files: never the training-only heads), and in STATE the trainable weights,
    the heads', the optimizer, the random state, the history and what the training was made of (its
    settings' and inputs' digest); that digest in SOURCE too, to read without loading the state."""
    import torch

    final = checkpoint_folder(out, update)
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    weights = {name: p.detach().cpu() for name, p in model.named_parameters() if p.requires_grad}
    state = {
        "update": update,
        "weights": weights,
        "optimizer": optimizer.state_dict(),
        "rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "history": asdict(history),
        "heads": None if heads is None else heads.state_dict(),
    }
    torch.save(state, partial / STATE)
    (partial / SOURCE).write_text(made_of + "\n")
    partial.rename(final)


def checkpoint_source(folder: Path) -> str:
    """The digest of the settings and inputs a checkpoint was made of ('' for one written before)."""
    return (folder / SOURCE).read_text().strip() if (folder / SOURCE).is_file() else ""


def restore(folder: Path, model: Any, optimizer: Any, heads: Any = None) -> tuple[int, History]:
    """Load a checkpoint into the model, the heads and the optimizer; (the updates it had done, its
    history)."""
    import torch

    state = torch.load(folder / STATE, weights_only=False)
    missing = set(state["weights"]) - {name for name, _ in model.named_parameters()}
    if missing:
        raise ValueError(f"{folder}: a checkpoint of another adapter ({len(missing)} weights this model lacks)")
    model.load_state_dict(state["weights"], strict=False)
    if heads is not None:
        heads.load_state_dict(state["heads"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    if state["cuda_rng"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    saved = state["history"]
    train, validation = ([tuple(r) for r in saved[split]] for split in ("train", "validation"))
    seconds = saved.get("seconds", {"updates": 0.0, "checkpoints": 0.0})  # a checkpoint from before they were kept
    auxiliary = [(update, dict(losses)) for update, losses in saved.get("auxiliary", [])]
    return state["update"], History(train, validation, auxiliary, seconds)


def select(out: Path, base: Path, history: History, settings: Settings, about: dict[str, Any]) -> dict[str, Any]:
    """Copy the checkpoint of least validation loss (the first of equals) to `<out>/adapter/` and write
    the manifest beside it."""
    finite = [(loss, update) for update, loss in history.validation if math.isfinite(loss)]
    if not finite:
        raise ValueError(f"{out}: no checkpoint has a finite validation loss (an empty validation split?)")
    loss, update = min(finite)
    chosen = out / ADAPTER
    shutil.rmtree(chosen, ignore_errors=True)
    shutil.copytree(checkpoint_folder(out, update), chosen, ignore=shutil.ignore_patterns(STATE, SOURCE))
    manifest = {
        **about,
        "base_model": str(base),
        "base_revision": base_revision(base),
        "settings": asdict(settings),
        "updates": settings.updates,
        "selected_update": update,
        "validation_loss": loss,
        "history": {"train": history.train, "validation": history.validation}
        | ({"auxiliary": history.auxiliary} if history.auxiliary else {}),
        "seconds": {name: round(value, 3) for name, value in history.seconds.items()},
    }
    manifest["adapter_digest"] = digest(sorted((p.name, file_digest(p)) for p in chosen.iterdir()))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def base_revision(base: Path) -> str:
    """The base model's revision: the digest of its config and weight files (a local folder has no hub
    commit; the same files give the same digest wherever they lie)."""
    files = sorted(p for p in base.iterdir() if p.name == "config.json" or p.suffix == ".safetensors")
    return digest([(p.name, p.stat().st_size, file_digest(p)) for p in files])


def file_digest(path: Path) -> str:
    import hashlib

    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
