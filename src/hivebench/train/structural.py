"""Stage two (the paper's SCD, Eq. 8): from the shared warm start, each update interleaves a decision
minibatch, with every source's orbit partner beside it, and a transition minibatch; the arm says
which auxiliary losses count.

    L = L_dec + w_orbit · λ_orbit · L_orbit + w_field · λ_field · L_field,   w ∈ {0, 1} by arm

- L_dec: the sources' answer tokens' mean cross-entropy (stage one's).
- L_orbit (Eq. 5 less L_dec): the partners' answer tokens' mean cross-entropy, plus the factor heads'
  cross-entropies on both sides of each admitted pair and their symmetric KL, averaged over the 12
  factors and the pairs (heads.factor_terms).
- L_field (Eq. 7): the field predictor on the transitions' views, each with its admitted record's
  factors, against Eq. 6's targets on the next views; the mean over the transitions.

"Disabled losses are computed but multiplied by zero before backpropagation; no arm replaces an
auxiliary loss with additional decision supervision": every arm runs the same forward passes on the
same sources, partners and transitions, so an arm's disabled loss gives exactly no gradient.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from hivebench.ids import digest
from hivebench.models.adapter import MANIFEST
from hivebench.train.distill import Settings, forward_rows
from hivebench.train.examples import Example, encode
from hivebench.train.factors import NAMES, factors
from hivebench.train.field import HISTOGRAMS, STATES, eventful, stratified, targets
from hivebench.train.heads import FactorHeads, FieldPredictor, factor_terms, field_loss
from hivebench.train.orbit import admitted, partner, rng_for

ARMS = {"decision": (0, 0), "orbit": (1, 0), "field": (0, 1), "joint": (1, 1)}  # arm -> (w_orbit, w_field)


@dataclass(frozen=True)
class Structure:
    """What stage two adds to a distillation's settings (all of it in the manifest)."""

    arm: str = "joint"  # decision | orbit | field | joint
    orbit_weight: float = 1.0  # λ_orbit
    field_weight: float = 1.0  # λ_field
    transition_batch: int = 16  # transitions per update
    eventful_share: float = 0.5  # of the transitions drawn from eventful updates


@dataclass(frozen=True)
class Source:
    view: dict[str, Any]
    actions: list[str]
    record: dict[str, Any]


@dataclass(frozen=True)
class Transition:
    view: dict[str, Any]  # ℓ_t
    actions: list[str]
    record: dict[str, Any]  # the admitted d_t
    next_view: dict[str, Any]  # ℓ_{t+1}


class Structural:
    """The stage-two objective of one arm over `sources` (the decision examples, in the train set's
    order) and `transitions`; `heads` holds the factor heads and the field predictor."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        pad: int,
        sources: list[Source],
        transitions: list[Transition],
        settings: Settings,
        structure: Structure,
    ):
        if structure.arm not in ARMS:
            raise ValueError(f"arm: expected one of {list(ARMS)}, got {structure.arm!r}")
        self.tokenizer, self.pad, self.settings, self.structure = tokenizer, pad, settings, structure
        self.sources = sources
        self.examples = [encode(tokenizer, s.view, s.actions, s.record) for s in sources]
        self.labels = [factors(s.view, s.record, tuple(s.actions)) for s in sources]
        hidden = model.get_base_model().config.get_text_config().hidden_size
        torch.manual_seed(settings.seed)  # the heads' initialisation, the same in every arm of a seed
        self.heads = nn.ModuleDict({"factors": FactorHeads(hidden), "field": FieldPredictor(hidden)}).to(
            settings.device
        )
        self.field = field_data(tokenizer, transitions)
        self.partners: dict[tuple[int, int], Example | None] = {}

    def partner(self, index: int, epoch: int) -> Example | None:
        """The source's orbit partner this epoch, encoded; None where admission refuses it."""
        key = (index, epoch)
        if key not in self.partners:
            s = self.sources[index]
            moved = partner(s.view, s.record, rng_for(self.settings.seed, epoch, index))
            ok = admitted((s.view, s.record), moved, tuple(s.actions))
            self.partners[key] = encode(self.tokenizer, moved[0], s.actions, moved[1]) if ok else None
        return self.partners[key]

    def step(self, model: Any, update: int, indices: list[int]) -> dict[str, float]:
        """Backpropagate one update's Eq. 8; every loss by name, unweighted (`decision` first), and how
        many of the update's sources had their orbit partner refused (`refused_pairs`)."""
        w_orbit, w_field = ARMS[self.structure.arm]
        orbit_scale = w_orbit * self.structure.orbit_weight
        field_scale = w_field * self.structure.field_weight
        batch = self.settings.batch
        epochs = [(update * batch + j) // len(self.examples) for j in range(len(indices))]  # the schedule's
        pairs = [(i, self.partner(i, e)) for i, e in zip(indices, epochs)]
        pairs.sort(key=lambda p: len(self.examples[p[0]].tokens))
        refused = sum(m is None for _, m in pairs)  # this update's sources whose partner admission refused
        tokens = sum(self._answer(i) for i, _ in pairs)
        moved_tokens = sum(len(m.tokens) - m.prompt for _, m in pairs if m is not None)
        admitted_pairs = sum(m is not None for _, m in pairs)
        losses = {"decision": 0.0, "orbit": 0.0, "field": 0.0}
        for start in range(0, len(pairs), self.settings.micro_batch):
            chunk = pairs[start : start + self.settings.micro_batch]
            moved = [(i, m) for i, m in chunk if m is not None]
            rows = forward_rows(
                model,
                [self.examples[i] for i, _ in chunk] + [m for _, m in moved],
                self.pad,
                self.settings.device,
                True,
            )
            count = len(chunk)
            decision = rows.loss[:count].sum() / tokens
            orbit = rows.loss[count:].sum() / max(moved_tokens, 1)
            if moved:
                sides = [self.heads["factors"](rows.state[:count]), self.heads["factors"](rows.state[count:])]
                paired = [k for k, (_, m) in enumerate(chunk) if m is not None]
                labels = torch.tensor([self.labels[i] for i, _ in moved], device=rows.state.device)
                original = {name: logits[paired] for name, logits in sides[0].items()}
                cross, agree = factor_terms(original, sides[1], labels)
                orbit = orbit + (cross + agree) / admitted_pairs
            (decision + orbit_scale * orbit).backward()
            losses["decision"] += float(decision.detach())
            losses["orbit"] += float(orbit.detach())
        losses["field"] = self._field(model, update, field_scale)
        return {**losses, "refused_pairs": float(refused)}

    def _answer(self, index: int) -> int:
        example = self.examples[index]
        return len(example.tokens) - example.prompt

    def _field(self, model: Any, update: int, scale: float) -> float:
        """Backpropagate the update's transition minibatch's L_field (times `scale`); its value."""
        field = self.field
        if not field.prompts:
            return float("nan")
        rng = np.random.default_rng([self.settings.seed, update, 0xF1E1D])
        drawn = stratified(field.eventful, self.structure.transition_batch, self.structure.eventful_share, rng)
        total = 0.0
        for start in range(0, len(drawn), self.settings.micro_batch):
            chosen = drawn[start : start + self.settings.micro_batch].tolist()
            rows = forward_rows(model, [field.prompts[t] for t in chosen], self.pad, self.settings.device, True)
            device = rows.state.device
            predicted = self.heads["field"](rows.state, field.factors[chosen].to(device))
            histograms = {k: h[chosen].to(device) for k, h in field.histograms.items()}
            loss = field_loss(predicted, histograms, field.states[chosen].to(device)) / len(drawn)
            (scale * loss).backward()
            total += float(loss.detach())
        return total


@dataclass(frozen=True)
class FieldData:
    """Transitions as the field predictor reads them: each view's prompt (for h(ℓ_t)), its admitted
    record's factors, Eq. 6's targets on the next view, and whether the update was eventful."""

    prompts: list[Example]
    factors: torch.Tensor  # (transitions, 12)
    histograms: dict[str, torch.Tensor]  # target -> (transitions, classes) distributions
    states: torch.Tensor  # (transitions, 2) readiness, commitment
    eventful: np.ndarray  # (transitions,) bool


def field_data(tokenizer: Any, transitions: list[Transition]) -> FieldData:
    made = [targets(t.next_view) for t in transitions]
    return FieldData(
        [prompt_only(tokenizer, t.view, t.actions) for t in transitions],
        torch.tensor([factors(t.view, t.record, tuple(t.actions)) for t in transitions], dtype=torch.long).reshape(
            -1, len(NAMES)
        ),
        {k: torch.tensor(np.array([m.histograms[k] for m in made])).float().reshape(len(made), -1) for k in HISTOGRAMS},
        torch.tensor([[m.states[k] for k in STATES] for m in made], dtype=torch.long).reshape(-1, len(STATES)),
        np.array([eventful(t.view, t.record, t.next_view) for t in transitions], dtype=bool),
    )


def read_transitions(table: pd.DataFrame) -> list[Transition]:
    """A transition corpus's rows (transitions.py's table) as Transitions."""
    return [
        Transition(json.loads(v), json.loads(a), json.loads(r), json.loads(n))
        for v, a, r, n in zip(table["view"], table["actions"], table["record"], table["next_view"])
    ]


def prompt_only(tokenizer: Any, view: dict[str, Any], actions: list[str]) -> Example:
    """A view's prompt with one answer token (the end token: its loss is never used), so that the
    forward pass's hidden state at the prompt's last token is h(view)."""
    example = encode(
        tokenizer, view, actions, {"task_action": actions[0], "response": None, "deposits": [], "commit": None}
    )
    return Example(example.tokens[: example.prompt] + [tokenizer.eos_token_id], example.prompt)


def stage_two_objective(
    tokenizer: Any,
    pad: int,
    decisions: list[tuple[dict[str, Any], list[str], dict[str, Any]]],
    transitions_file: str | Path,
    settings: Settings,
    given: dict[str, Any],
) -> tuple[Callable[[Any], Structural], dict[str, Any]]:
    """The objective `distill.train` takes for stage two (the train set's (view, actions, record) as its
    sources, the transition corpus's rows as its transitions) and what its manifest adds: the arm's
    settings and the digests of the warm start and the transitions (a retrained warm start or a new
    transition corpus is another training)."""
    structure = Structure(**{f.name: given[f.name] for f in fields(Structure) if f.name in given})
    table = pd.read_parquet(transitions_file)
    table = table[table["split"] == "train"]  # the probe's episodes are never trained on
    rows = read_transitions(table)
    sources = [Source(view, actions, record) for view, actions, record in decisions]
    assert settings.warm_start is not None
    warm = json.loads((Path(settings.warm_start).parent / MANIFEST).read_text())
    about = {
        "stage": 2,
        "structure": asdict(structure),
        "warm_start_digest": warm["adapter_digest"],
        "transitions_digest": digest(table[["view", "record", "next_view"]].values.tolist()),
        "transitions": len(rows),
        "eventful_transitions": int(table["eventful"].sum()),
    }

    def objective(model: Any) -> Structural:
        return Structural(model, tokenizer, pad, sources, rows, settings, structure)

    return objective, about
