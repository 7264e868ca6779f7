"""Identities: canonical JSON and its hash. Standard library only, so what needs an id (a cell, a
model request) does not load the config, the registry and the suites to get one."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _plain(value: Any) -> Any:
    """JSON fallback for numpy scalars, whose text form changed in NumPy 2."""
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable in a cell")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)


def digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:16]
