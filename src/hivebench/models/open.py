"""A method's model settings turned into a backend, one per process and settings."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from hivebench.models import Backend, BackendError
from hivebench.models.adapter import adapter_digest, adapter_folder, lora_module, manifest_path
from hivebench.models.builtin import BUILTIN, cached_snapshot, folder, is_hub_id
from hivebench.models.cache import ResponseCache
from hivebench.models.decide import Decider
from hivebench.models.precision import resolve

# The method parameters that choose and reach a model (the rest shape prompts and sampling).
BACKEND_KEYS = (
    "backend",
    "model",
    "base_url",
    "api_key_env",
    "threads",
    "dtype",
    "batch_rows",
    "concurrency",
    "timeout_s",
    "max_retries",
    "retry_total_s",
    "adapter",
    "adapter_seed",
    "lora_module",
)


def local_path(model: str) -> Path:
    """A builtin model's converted folder, the model given as a folder path, or a Hugging Face hub id
    (`org/name`, not a folder here) as its snapshot in the local cache: never downloaded."""
    if model in BUILTIN:
        return folder(model)
    if Path(model).is_dir() or not is_hub_id(model):
        return Path(model)
    snapshot = cached_snapshot(model)
    if snapshot is None:
        raise BackendError(
            f"{model}: neither a model folder nor in the Hugging Face cache (hivebench downloads no weights: "
            f"`hf download {model}` first, or give the model's folder)"
        )
    return snapshot


def decider_for(params: dict[str, Any], cache_paths: Sequence[str | Path], backend: Backend | None = None) -> Decider:
    """The method's model behind its cells' response caches (`backend`: one in its place; else the
    one `answering` put in every model's place, if any)."""
    caches = [ResponseCache(path) for path in cache_paths]
    return Decider(backend or _answering or backend_for(params, caches), caches)


_answering: Backend | None = None


@contextlib.contextmanager
def answering(backend: Backend) -> Iterator[Backend]:
    """Every decider made inside asks `backend` for what its caches lack, in its model's place (a
    counterfactual's dry runs: hivebench.counterfactual)."""
    global _answering
    outer, _answering = _answering, backend
    try:
        yield backend
    finally:
        _answering = outer


def backend_for(params: dict[str, Any], caches: Sequence[ResponseCache] = ()) -> Backend:
    """The method's model; `dtype: auto` resolved for this machine, or as the caches were filled."""
    if params["backend"] == "scripted":  # one per episode: it answers from the file's first line on
        from hivebench.models.scripted import ScriptedBackend

        return ScriptedBackend(params["model"])
    settings = {k: params.get(k) for k in BACKEND_KEYS}
    if settings["backend"] == "transformers":
        prefix = f"{model_label(settings)}:"
        stored = [m.removeprefix(prefix) for cache in caches for m in cache.models if m.startswith(prefix)]
        settings["dtype"] = resolve(settings["dtype"], stored)
    return _open(json.dumps(settings, sort_keys=True))


@cache  # a job block runs many seeds: load a local model once
def _open(settings_json: str) -> Backend:
    settings = json.loads(settings_json)
    if settings["backend"] == "transformers":
        from hivebench.models.local import TransformersBackend

        return TransformersBackend(
            model_label(settings),
            str(local_path(settings["model"])),
            settings["threads"],
            settings["dtype"],
            settings["batch_rows"],
            adapter=str(adapter_folder(settings)) if settings["adapter"] else None,
        )
    from hivebench.models.remote import OpenAIBackend, RetryPolicy

    return OpenAIBackend(
        lora_module(settings) if settings["adapter"] else settings["model"],
        settings["base_url"],
        settings["api_key_env"],
        concurrency=settings["concurrency"],
        timeout_s=settings["timeout_s"],
        retry=RetryPolicy(max_retries=settings["max_retries"], total_s=settings["retry_total_s"]),
        label=model_label(settings),
        priced=settings["model"],
    )


def model_label(settings: dict[str, Any]) -> str:
    """What a method's replies are cached under: the model, and the adapter over it by its module name
    and the digest of the adapter trained now (a retrained adapter's replies are other replies)."""
    if not settings.get("adapter"):
        return settings["model"]
    trained = adapter_digest(settings)
    if trained is None:
        raise BackendError(
            f"adapter {settings['adapter']!r}: not trained yet (no {manifest_path(settings)}): run its distill job"
        )
    return f"{settings['model']}+{lora_module(settings)}@{trained[:12]}"
