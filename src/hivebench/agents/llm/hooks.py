"""What the workflow asks of an `llm` method at parse time beyond its model settings (ModelHooks):
its prompt protocol's and notes' parameters and problems, a job's memory, and its estimate. Standard
library at import: the heavy parts are imported when asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.method import CellEstimate, file_param, file_problems
from hivebench.models.hooks import ModelHooks

# What the JSON protocol's memory is made of: the reference protocol keeps the reference's own.
NOTES_KEYS = ("history", "notes_chars", "tagged_notes")


class LLMHooks(ModelHooks):
    def resolve(self, entry: dict[str, Any], base: Path) -> dict[str, Any]:
        """The model settings as ModelHooks keeps them; initial notes enter the cell as their text or
        content hash. The JSON protocol, hivebench's own, is left out with reasoning off (so cells from
        before these options keep their identity); the reference protocol keeps its parser's quirks
        unless told otherwise, and has no notes or history settings (they are their defaults there:
        protocol_problems)."""
        params = super().resolve(entry, base)
        if params.get("prompt_protocol", "json") == "json":
            params.pop("prompt_protocol", None)
            if not params.get("reasoning_chars"):
                params.pop("reasoning_chars", None)
        else:
            params.setdefault("reference_quirks", True)
            for key in NOTES_KEYS:
                params.pop(key, None)
        if "initial_notes" in params:
            params["initial_notes"] = resolved_notes(params["initial_notes"], base)
        return params

    def suite_problems(self, entry: dict[str, Any], suite: str) -> Iterator[str]:
        if entry.get("prompt_protocol") != "reference":
            return
        from hivebench.registry import SUITE_OBJECTS  # the view (numpy, pyarrow) is imported only here
        from hivebench.suite import load

        if getattr(load(SUITE_OBJECTS[suite].text_view), "reference", None) is None:
            yield (
                f"prompt_protocol: suite {suite} has no reference prompt protocol (docs/llm-agents.md says "
                "which suites do); use prompt_protocol: json for it"
            )

    def problems(self, entry: dict[str, Any], base: Path) -> Iterator[str]:
        yield from protocol_problems(entry)
        yield from super().problems(entry, base)
        yield from notes_problems(entry.get("initial_notes", {}), base)

    def job_memory_mb(self, shared: dict[str, Any], seeds: int) -> int | None:
        """A local model's batches (once its folder is there); a server's or a script's: not known."""
        if shared["method"]["params"]["backend"] != "transformers":
            return None  # before importing the estimate: it loads numpy and pyarrow, at parse time
        from hivebench.agents.llm.estimate import block_memory_mb
        from hivebench.ids import canonical_json

        return block_memory_mb(canonical_json(shared), seeds)

    def estimate(self, shared: dict[str, Any], seeds: int) -> CellEstimate:
        from hivebench.agents.llm.estimate import cell_estimate

        return cell_estimate(shared, seeds)


def protocol_problems(entry: dict[str, Any]) -> Iterator[str]:
    """Settings of the other protocol than the one chosen (the entry has its defaults filled in: a
    memory setting of the JSON protocol is one set where it is not its default)."""
    if entry.get("prompt_protocol", "json") == "json":
        if "reference_quirks" in entry:
            yield "reference_quirks: only with prompt_protocol: reference (the reference's parser)"
        return
    from hivebench.config import schema  # loaded already: the entry was validated against it

    if entry.get("reasoning_chars"):
        yield "reasoning_chars: only with prompt_protocol: json (the reference protocol reasons in free text)"
    defaults = schema()["$defs"]["llm_method"]["properties"]
    for key in NOTES_KEYS:
        if entry.get(key, defaults[key]["default"]) != defaults[key]["default"]:
            yield f"{key}: prompt_protocol: reference keeps no notes or history (the reference's memory is its own)"
    if "initial_notes" in entry:
        yield "initial_notes: prompt_protocol: reference keeps no notes (the reference's memory is its own)"


def resolved_notes(spec: dict[str, str], base: Path) -> dict[str, str]:
    """Initial notes as they enter a cell: a file's text inline; another episode by its path (given
    relative to the config file, stored relative to the working directory) and its content hash, so a
    changed source reruns the cell. Both are read when the config is expanded: they must exist then."""
    if "file" in spec:
        return {"text": (base / spec["file"]).read_text(encoding="utf-8")}
    if "episode" in spec:
        path, sha256 = file_param(spec["episode"], base)
        return {"episode": path, "sha256": sha256}
    return spec


def notes_problems(spec: dict[str, str], base: Path) -> Iterator[str]:
    """Initial notes from a file that is missing or not UTF-8 text, or from an episode that is not an
    LLM method's Parquet file."""
    for key in ("file", "episode"):
        if key not in spec:
            continue
        path = base / spec[key]
        if not path.is_file():
            yield from file_problems(f"initial_notes.{key}", path)
        elif key == "file":
            try:
                if "\0" in path.read_bytes().decode("utf-8"):
                    yield f"initial_notes.file: {path} contains a NUL character"
            except UnicodeDecodeError as exc:
                yield f"initial_notes.file: {path} is not UTF-8 text (byte {exc.start})"
        else:
            yield from notes_episode_problems("initial_notes.episode", path)


def notes_episode_problems(key: str, path: Path) -> Iterator[str]:
    """An episode whose final notes seed another method's agents: an LLM episode's Parquet file.
    (pyarrow is imported only for a config that names one.)"""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        columns = set(pq.read_schema(path).names)
    except (pa.ArrowException, OSError) as exc:
        yield f"{key}: {path} is not a readable Parquet file ({exc})"
        return
    missing = {"step", "agent", "notes"} - columns
    if missing:
        yield f"{key}: {path} has no {', '.join(sorted(missing))} column (an LLM method's episode file has them)"
