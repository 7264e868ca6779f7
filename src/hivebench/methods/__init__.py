"""Methods map one round's views of all agents to all agents' decisions at once."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Method(Protocol):
    def __init__(self, params: dict[str, Any], rng: np.random.Generator) -> None: ...

    def decide(self, views: Any) -> np.ndarray: ...
