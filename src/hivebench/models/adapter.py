"""A trained LoRA adapter as a method's cells name it: `adapter` (a training of the config) and
`adapter_seed` (which of its seeds) in the method's parameters, the folder the distill job writes, and
the adapter's digest, which is part of every cell that uses it (`with_adapter_digest`): a retrained
adapter changes exactly those cells. Standard library only: cells are made at parse time.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

TRAINED_DIR = Path("models/trained")
MANIFEST = "manifest.json"
ADAPTER = "adapter"  # the selected adapter's folder in a training seed's folder (train/distill.py)
# How a training example is written (train/examples.py): raised when that changes, so that the distill
# jobs retrain (2: the record in the decoding schema's key order, not canonical JSON's).
EXAMPLE_FORMAT = 2


def trained_folder(training: str, seed: int) -> Path:
    """Where the distill job writes a training seed's adapter and manifest (relative to the workflow)."""
    return TRAINED_DIR / training / f"seed{seed}"


def adapter_folder(params: dict[str, Any]) -> Path:
    """The peft adapter folder a method's parameters name."""
    return trained_folder(params["adapter"], params["adapter_seed"]) / ADAPTER


def manifest_path(params: dict[str, Any]) -> Path:
    return trained_folder(params["adapter"], params["adapter_seed"]) / MANIFEST


def lora_module(params: dict[str, Any]) -> str:
    """The name a vLLM server knows the adapter by (`--lora-modules NAME=FOLDER`): the method's
    `lora_module`, else `<training>-seed<seed>`."""
    return params.get("lora_module") or f"{params['adapter']}-seed{params['adapter_seed']}"


def adapter_digest(params: dict[str, Any]) -> str | None:
    """The digest of the adapter the parameters name, from its training's manifest; None before it is
    trained."""
    path = manifest_path(params)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return _digest(str(path), stat.st_mtime_ns, stat.st_size)


@cache  # every cell of a block asks; the manifest is read again only once rewritten
def _digest(path: str, mtime_ns: int, size: int) -> str:
    return json.loads(Path(path).read_text())["adapter_digest"]


def with_adapter_digest(shared: dict[str, Any]) -> dict[str, Any]:
    """A cell's shared part with its method's adapter digest (`adapter_digest`, None while untrained)
    filled in from the training's manifest, where the method names an adapter; otherwise unchanged."""
    params = shared["method"]["params"]
    if not params.get("adapter"):
        return shared
    filled = {**params, "adapter_digest": adapter_digest(params)}
    return {**shared, "method": {**shared["method"], "params": filled}}
