"""SwarmSys's embedding-based probabilistic matching (arXiv 2510.10047, §2.3, Eqs. 4-10), for a
block's episodes: each agent's profile and each open event's profile become vectors, their
compatibility a number in [0, 1], and every (agent, event) pair joins by its own Bernoulli draw.

The paper's encoder is "instruction-guided" and unnamed; hivebench embeds a profile's words by
feature hashing (`embed`), with no model and no instruction: a documented stand-in (the README's
table), so that matching runs offline and the same on every machine.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

WORD = re.compile(r"[a-z0-9]+")


def embed(texts: list[str], dims: int) -> np.ndarray:
    """(len(texts), dims): each text's words hashed into `dims` signed buckets, L2-normalised (a text
    without words is the zero vector)."""
    out = np.zeros((len(texts), dims))
    for row, text in enumerate(texts):
        for word in WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            out[row, h % dims] += 1.0 if (h >> 63) & 1 else -1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def compatibility(agents: np.ndarray, events: np.ndarray) -> np.ndarray:
    """C_norm = (cos(v_a, v_e) + 1) / 2 (Eq. 6) of every agent (rows) with every event (columns); a
    zero vector's cosine is 0."""
    a = np.linalg.norm(agents, axis=1, keepdims=True)
    e = np.linalg.norm(events, axis=1, keepdims=True)
    cos = (agents / np.where(a > 0, a, 1.0)) @ (events / np.where(e > 0, e, 1.0)).T
    return (np.clip(cos, -1.0, 1.0) + 1.0) / 2.0


def exploration(success: np.ndarray) -> np.ndarray:
    """eps_i = 0.15 + (0.5 - S_i) * 0.2 (Eq. 7), from each agent's recent average success S_i."""
    return 0.15 + (0.5 - success) * 0.2


def join_probability(c: np.ndarray, eps: np.ndarray, gamma: float) -> np.ndarray:
    """p(i, j) = eps_i (0.1 + 0.9 C) + (1 - eps_i) sigmoid(gamma (C - 0.5)) (Eq. 10); `eps` per row."""
    eps = eps[:, None]
    return eps * (0.1 + 0.9 * c) + (1.0 - eps) / (1.0 + np.exp(-gamma * (c - 0.5)))
