"""Stage two (SCD, Eq. 8) with the tiny random model: a disabled loss gives exactly no gradient, every
enabled loss moves its own parameters, and a training from a warm start keeps its heads out of the
deployed adapter and resumes as the uninterrupted one. Sources and transitions are the scripted
controller's records on its own views of a small Pursuit and Silo-Bench III-26 cell."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
from test_train import scripted_views

from hivebench.agents.scripted_controller.rule import record_for
from hivebench.models.adapter import ADAPTER
from hivebench.train.distill import STATE, Settings, latest_checkpoint, load_student, train
from hivebench.train.examples import encode
from hivebench.train.structural import Source, Structural, Structure, Transition

SETTINGS = Settings(rank=4, alpha=8, dropout=0.0, learning_rate=1e-2, batch=4, micro_batch=4, updates=4)
STRUCTURE = Structure(transition_batch=4)


@pytest.fixture(scope="module")
def played() -> tuple[list[Source], list[Transition]]:
    """Every view as a source with the scripted controller's record, and each agent's consecutive
    views as transitions."""
    sources, transitions = [], []
    for cell_rows in scripted_views():
        rows = sorted(cell_rows, key=lambda r: (r["agent"], r["step"]))
        for row, after in zip(rows, rows[1:] + [None]):
            view, actions = json.loads(row["view"]), json.loads(row["actions"])
            sources.append(Source(view, actions, record_for(view)))
            if after is not None and after["agent"] == row["agent"] and after["step"] == row["step"] + 1:
                transitions.append(Transition(view, actions, record_for(view), json.loads(after["view"])))
    return sources, transitions


@pytest.fixture(scope="module")
def tokenizer(tiny_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


def gradients(tiny_model: Path, tokenizer: Any, played, arm: str, perturb: bool = False) -> dict[str, torch.Tensor]:
    """Every trainable weight's gradient after one update of `arm` (the heads shifted by noise with
    `perturb`: that changes the auxiliary losses' values and nothing else)."""
    model = load_student(tiny_model, SETTINGS)
    sources, transitions = played
    objective = Structural(
        model, tokenizer, tokenizer.pad_token_id, sources, transitions, SETTINGS, replace(STRUCTURE, arm=arm)
    )
    if perturb:
        with torch.no_grad():
            for p in objective.heads.parameters():
                p.add_(torch.randn_like(p))
    losses = objective.step(model, 0, [0, 5, 9, 14])
    assert all(losses[name] > 0 for name in ("decision", "orbit", "field")), losses  # computed, whatever the arm
    assert losses["refused_pairs"] == 0  # the scripted controller's records on its own views: all admitted
    named = {f"student.{n}": p for n, p in model.named_parameters() if p.requires_grad}
    named |= {f"heads.{n}": p for n, p in objective.heads.named_parameters()}
    return {n: torch.zeros_like(p) if p.grad is None else p.grad.clone() for n, p in named.items()}


def part(grads: dict[str, torch.Tensor], prefix: str) -> list[torch.Tensor]:
    return [g for n, g in grads.items() if n.startswith(prefix)]


def test_a_disabled_loss_gives_exactly_no_gradient(tiny_model, tokenizer, played) -> None:
    decision = gradients(tiny_model, tokenizer, played, "decision")
    assert all(torch.count_nonzero(g) == 0 for g in part(decision, "heads."))
    assert any(torch.count_nonzero(g) > 0 for g in part(decision, "student."))
    # other head weights change both auxiliary losses' values, and not one bit of the student's gradient
    shifted = gradients(tiny_model, tokenizer, played, "decision", perturb=True)
    assert all(torch.equal(decision[n], shifted[n]) for n in decision)
    orbit_only = gradients(tiny_model, tokenizer, played, "orbit")
    assert all(torch.count_nonzero(g) == 0 for g in part(orbit_only, "heads.field."))
    field_only = gradients(tiny_model, tokenizer, played, "field")
    assert all(torch.count_nonzero(g) == 0 for g in part(field_only, "heads.factors."))


def test_every_enabled_loss_moves_its_own_parameters(tiny_model, tokenizer, played) -> None:
    decision = gradients(tiny_model, tokenizer, played, "decision")
    for arm, own in (("orbit", "heads.factors."), ("field", "heads.field."), ("joint", "heads.")):
        grads = gradients(tiny_model, tokenizer, played, arm)
        # each head of its own gets a gradient (the predictor's layer, its heads and the embeddings in use)
        heads = {n.rsplit(".", 1)[0] for n in grads if n.startswith(own)}
        for head in heads:
            assert any(torch.count_nonzero(g) > 0 for n, g in grads.items() if n.startswith(head + ".")), (arm, head)
        # and the student's gradient is not the decision loss's alone
        assert not all(torch.equal(decision[n], grads[n]) for n in decision if n.startswith("student.")), arm


def test_stage_two_from_a_warm_start_keeps_its_heads_out_of_the_adapter_and_resumes(
    tiny_model, tokenizer, played, tmp_path
) -> None:
    sources, transitions = played
    pad = tokenizer.pad_token_id
    examples = [encode(tokenizer, s.view, s.actions, s.record) for s in sources]
    warm = train(tiny_model, pad, examples[:12], examples[12:16], replace(SETTINGS, updates=2), tmp_path / "warm")
    settings = replace(SETTINGS, warm_start=str(tmp_path / "warm" / ADAPTER), checkpoint_every=2)

    def objective(model: Any) -> Structural:
        return Structural(model, tokenizer, pad, sources[:12], transitions, settings, STRUCTURE)

    # it starts from the warm start's adapter
    started = {n: p for n, p in load_student(tiny_model, settings).named_parameters() if p.requires_grad}
    warm_weights = adapter_weights(tmp_path / "warm" / ADAPTER)
    assert len(started) == len(warm_weights) > 0
    assert all(torch.equal(p.detach(), warm_weights[peft_name(n)]) for n, p in started.items())
    done = train(tiny_model, pad, examples[:12], examples[12:16], settings, tmp_path / "joint", objective=objective)
    assert [u for u, _ in done["history"]["auxiliary"]] == [1, 2, 3, 4]
    assert done["base_model"] == warm["base_model"]
    names = list(adapter_weights(tmp_path / "joint" / ADAPTER))
    assert len(names) == len(warm_weights) and all("lora_" in n for n in names)  # nothing of the heads
    state = torch.load(latest_checkpoint(tmp_path / "joint") / STATE, weights_only=False)
    assert any(k.startswith("factors.") for k in state["heads"]) and any(k.startswith("field.") for k in state["heads"])
    # killed after its first checkpoint: the resumed training is the uninterrupted one
    again = tmp_path / "again"
    shutil.copytree(tmp_path / "joint", again)
    shutil.rmtree(latest_checkpoint(again))
    resumed = train(tiny_model, pad, examples[:12], examples[12:16], settings, again, objective=objective)
    for key in ("train", "validation", "auxiliary"):
        assert json.dumps(resumed["history"][key]) == json.dumps(done["history"][key]), key
    assert resumed["adapter_digest"] == done["adapter_digest"]


def adapter_weights(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(folder / "adapter_model.safetensors")


def peft_name(name: str) -> str:
    """A trainable parameter's name as peft saves it (no adapter name)."""
    return name.replace(".default.weight", ".weight")
