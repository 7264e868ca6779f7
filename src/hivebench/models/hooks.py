"""What the workflow asks at parse time of any method that calls models (`llm`, `waggle`, `swarmsys`), about the
model settings they share (the `model_backend` schema definition): a cell's parameters (a scripted
model's file hashed, the scheduling-only `llm_slots` dropped), problems found before any job starts,
a job's inputs, cores, scheduler resources and endpoint slots. Standard library only: the Snakefile
asks these hooks at parse time."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.method import MethodHooks, file_param, file_problems
from hivebench.models.builtin import BUILTIN, cached_snapshot, folder, is_hub_id, package_dir

# A block that calls models runs for hours (a local model's job asks for the memory its batches need
# instead, where the method knows it).
MODEL_RESOURCES = {"runtime": 240, "mem_mb": 4000}
# The endpoint slots every openai method's jobs hold one of, unless it names its own (`llm_slots`).
SLOTS = "llm_slots"


class ModelHooks(MethodHooks):
    def resolve(self, entry: dict[str, Any], base: Path) -> dict[str, Any]:
        """`llm_slots` only schedules jobs; a scripted model's file enters the cell as its content hash."""
        params = {k: v for k, v in entry.items() if k != "llm_slots"}
        if params["backend"] == "scripted":
            params["model"], params["model_sha256"] = file_param(params["model"], base)
        return params

    def problems(self, entry: dict[str, Any], base: Path) -> Iterator[str]:
        if entry["backend"] == "scripted":
            missing = list(file_problems("model", base / entry["model"]))
            yield from missing or script_problems(base / entry["model"])
        elif entry["backend"] == "openai":
            env = entry["api_key_env"]
            if env is not None and not os.environ.get(env):
                yield f"api_key_env: the environment variable {env} is not set (the API key is read from it)"
        elif entry["model"] in BUILTIN:
            try:
                package_dir(BUILTIN[entry["model"]])
            except FileNotFoundError as exc:
                yield f"model: {exc}"
        elif not (Path(entry["model"]) / "config.json").is_file() and not cached(entry["model"]):
            yield (
                f"model: {entry['model']!r} is neither a builtin model ({', '.join(BUILTIN)}), a transformers "
                "model folder (no config.json there) nor a hub id in the local Hugging Face cache"
            )

    def job_inputs(self, params: dict[str, Any]) -> list[str]:
        """A builtin model's converted folder (the prepare_model rule makes it)."""
        if params["backend"] == "transformers" and params["model"] in BUILTIN:
            return [str(folder(params["model"]))]
        return []

    def job_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        return MODEL_RESOURCES

    def threads(self, params: dict[str, Any]) -> int:
        return params["threads"]

    def slot_resource(self, entry: dict[str, Any]) -> str | None:
        return entry.get("llm_slots", SLOTS) if entry["backend"] == "openai" else None


def cached(model: str) -> bool:
    """A hub id (org/name) whose snapshot is in the local Hugging Face cache (never downloaded)."""
    return is_hub_id(model) and cached_snapshot(model) is not None


def script_problems(path: Path) -> Iterator[str]:
    """A scripted model's file that no episode can play: unreadable, not UTF-8, a line that is not JSON,
    or no reply at all. (One too short for its episodes fails in the job: what they ask is known only
    as they play, repairs included.)"""
    from hivebench.models.scripted import RepliesError, read_replies

    try:
        replies = read_replies(path)
    except RepliesError as exc:
        yield f"model: {exc}"
    except OSError as exc:
        yield f"model: {path}: cannot be read: {exc.strerror}"
    else:
        if not replies:
            yield f"model: {path}: no replies (the file is empty or blank); each line is one reply"
