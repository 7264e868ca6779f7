"""The frozen-probe field loss (the paper's structural diagnostic): "a probe trained on the frozen
controller's hidden states", measured "only after selection, on data excluded from controller training
and checkpoint choice".

The deployed controller (the base model with the selected adapter, no heads) reads each held-out
transition's view once, without gradients; its final view hidden state h(ℓ_t) and the admitted record's
factors go into a fresh field predictor (heads.FieldPredictor, the training's architecture) fitted on
the `probe_fit` episodes' transitions with Eq. 7 and measured on the `probe_test` episodes': the mean
Eq. 7 loss over all of them and over the eventful ones. A lower loss says the controller's hidden state
holds more of what its next local field will be.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from hivebench.train.distill import forward_rows
from hivebench.train.heads import FieldPredictor, field_loss
from hivebench.train.structural import FieldData, field_data, read_transitions


@dataclass(frozen=True)
class ProbeSettings:
    epochs: int = 200  # full-batch updates of the probe
    learning_rate: float = 1e-3
    seed: int = 0
    micro_batch: int = 8  # views per forward pass of the frozen controller
    device: str = "cpu"


@dataclass(frozen=True)
class Features:
    state: torch.Tensor  # (rows, hidden) h(ℓ_t)
    field: FieldData  # the records' factors, Eq. 6's targets, the eventful ones


def features(model: Any, tokenizer: Any, pad: int, rows: pd.DataFrame, settings: ProbeSettings) -> Features:
    """The frozen controller's h(ℓ_t) on each transition, with its record's factors and Eq. 6's targets."""
    field = field_data(tokenizer, read_transitions(rows))
    states = []
    with torch.no_grad():
        for start in range(0, len(field.prompts), settings.micro_batch):
            chunk = field.prompts[start : start + settings.micro_batch]
            states.append(forward_rows(model, chunk, pad, settings.device, hidden=True).state.cpu())
    return Features(torch.cat(states), field)


def loss_of(probe: FieldPredictor, data: Features, rows: np.ndarray) -> torch.Tensor:
    """The mean Eq. 7 loss over `rows` of `data`."""
    predicted = probe(data.state[rows], data.field.factors[rows])
    histograms = {k: h[rows] for k, h in data.field.histograms.items()}
    return field_loss(predicted, histograms, data.field.states[rows]) / max(len(rows), 1)


def fit_and_measure(fit: Features, test: Features, settings: ProbeSettings) -> dict[str, Any]:
    """A fresh probe fitted on `fit` (full batch, AdamW), its mean loss on `test`, all and eventful."""
    torch.manual_seed(settings.seed)
    probe = FieldPredictor(fit.state.shape[1])
    optimizer = torch.optim.AdamW(probe.parameters(), lr=settings.learning_rate)
    every = np.arange(len(fit.field.eventful))
    probe.train()
    for _ in range(settings.epochs):
        loss = loss_of(probe, fit, every)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    probe.eval()
    with torch.no_grad():
        fitted = float(loss_of(probe, fit, every))
        each = [float(loss_of(probe, test, np.array([row]))) for row in range(len(test.field.eventful))]
    eventful = [loss for loss, flag in zip(each, test.field.eventful) if flag]
    return {
        "probe_loss": float(np.mean(each)),
        "probe_loss_eventful": float(np.mean(eventful)) if eventful else float("nan"),
        "fit_loss": fitted,
        "fit": len(every),
        "test": len(each),
        "eventful_test": len(eventful),
        "test_losses": each,  # per probe_test transition, in the file's order
        "test_eventful": test.field.eventful.tolist(),
        "settings": asdict(settings),
    }


def probe(base: Path, adapter: Path, transitions: Path, dtype: str, settings: ProbeSettings) -> dict[str, Any]:
    """Load the deployed controller and measure it (its transitions' `probe_fit` and `probe_test`)."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hivebench.train.examples import pad_id

    table = pd.read_parquet(transitions)
    fit_rows, test_rows = (table[table["split"] == split] for split in ("probe_fit", "probe_test"))
    if fit_rows.empty or test_rows.empty:
        raise ValueError(f"{transitions}: no held-out episodes to fit and measure the probe (held_out: 0?)")
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=getattr(torch, dtype))
    model = PeftModel.from_pretrained(model, adapter).to(settings.device).eval()
    pad = pad_id(tokenizer)
    fit = features(model, tokenizer, pad, fit_rows, settings)
    test = features(model, tokenizer, pad, test_rows, settings)
    return fit_and_measure(fit, test, settings)
