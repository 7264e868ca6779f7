"""The training-only heads of stage two and their losses (the paper's Eqs. 5 and 7). Both read the
final local-view hidden state h(ℓ): the last layer's (after its norm) at the prompt's last token, the
one that predicts the record's first token. Neither is part of the deployed adapter ("They provide
training gradients only and are absent from the deployed checkpoint").

- `FactorHeads`: "Orbit heads are linear projections of the final local-view hidden state", one per
  factor of ρ(d) (factors.py).
- `FieldPredictor`: "concatenates h(ℓ_i^t) with learned 32-dimensional embeddings of the factors in
  ρ(d_i^t), applies a 512-dimensional GELU layer with dropout 0.05, and uses one linear output head
  per target" (field.py's targets).

The paper's Eq. 5 is not in the excerpt hivebench has, only its terms: "the two cross-entropies
constitute L_sup ... while the last term aligns the corresponding factor distributions". hivebench
averages the factor terms over the 12 factors (so each weighs like one cross-entropy) and over the
pairs; the record's cross-entropies are per answer token, as L_dec's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hivebench.train.factors import FACTORS
from hivebench.train.field import HISTOGRAMS, STATES

EMBEDDING, HIDDEN, DROPOUT = 32, 512, 0.05  # the paper's predictor sizes


class FactorHeads(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.heads = nn.ModuleDict({name: nn.Linear(hidden, len(classes)) for name, classes in FACTORS.items()})

    def forward(self, state: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per factor, (rows, classes) logits."""
        return {name: head(state) for name, head in self.heads.items()}


class FieldPredictor(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.embeddings = nn.ModuleDict({name: nn.Embedding(len(c), EMBEDDING) for name, c in FACTORS.items()})
        self.layer = nn.Sequential(nn.Linear(hidden + EMBEDDING * len(FACTORS), HIDDEN), nn.GELU(), nn.Dropout(DROPOUT))
        self.heads = nn.ModuleDict({name: nn.Linear(HIDDEN, width) for name, width in {**HISTOGRAMS, **STATES}.items()})

    def forward(self, state: torch.Tensor, factors: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per target, (rows, classes) logits; `factors` (rows, 12) class indices in FACTORS' order."""
        embedded = [table(factors[:, k]) for k, table in enumerate(self.embeddings.values())]
        inner = self.layer(torch.cat([state, *embedded], dim=1))
        return {name: head(inner) for name, head in self.heads.items()}


def symmetric_kl(p_logits: torch.Tensor, q_logits: torch.Tensor) -> torch.Tensor:
    """Per row, D_SKL(p, q) = ½ KL(p‖q) + ½ KL(q‖p) of the two softmax distributions."""
    log_p, log_q = F.log_softmax(p_logits.float(), dim=-1), F.log_softmax(q_logits.float(), dim=-1)
    return 0.5 * ((log_p.exp() * (log_p - log_q)).sum(-1) + (log_q.exp() * (log_q - log_p)).sum(-1))


def factor_terms(
    original: dict[str, torch.Tensor], moved: dict[str, torch.Tensor], labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(the factor cross-entropies on both sides of each pair, their symmetric KL), each summed over
    the pairs and averaged over the factors; `labels` (pairs, 12): ρ(d), the same for both sides."""
    cross, agree = [], []
    for k, name in enumerate(FACTORS):
        target = labels[:, k]
        cross.append(
            F.cross_entropy(original[name].float(), target, reduction="sum")
            + F.cross_entropy(moved[name].float(), target, reduction="sum")
        )
        agree.append(symmetric_kl(original[name], moved[name]).sum())
    return torch.stack(cross).mean(), torch.stack(agree).mean()


def field_loss(
    predicted: dict[str, torch.Tensor], histograms: dict[str, torch.Tensor], states: torch.Tensor
) -> torch.Tensor:
    """Eq. 7 summed over the rows: ¼ of the histograms' soft-label cross-entropies plus ½ of the
    states' cross-entropies ("giving the two groups equal total weight"); `histograms` per target
    (rows, classes) distributions, `states` (rows, 2): readiness, commitment."""
    soft = sum(-(histograms[name] * F.log_softmax(predicted[name].float(), dim=-1)).sum() for name in HISTOGRAMS)
    hard = sum(F.cross_entropy(predicted[name].float(), states[:, k], reduction="sum") for k, name in enumerate(STATES))
    return soft / len(HISTOGRAMS) + hard / len(STATES)
