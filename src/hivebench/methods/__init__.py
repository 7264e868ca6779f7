"""Methods map one round's views of all agents to all agents' decisions at once.

A method that calls models sets `uses_models = True` and is also given `cache_path`, the cell's
response cache file. A method may add per-(step, agent) columns to the episode table (`columns()`,
step 0 included) and fields to the episode summary (`summary()`).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Method(Protocol):
    def __init__(self, params: dict[str, Any], rng: np.random.Generator) -> None: ...

    def decide(self, views: Any) -> np.ndarray: ...
