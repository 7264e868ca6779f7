"""Load and validate a hivebench configuration.

Used by the Snakefile at parse time and by `hivebench validate`, so it imports nothing heavy
(no numpy, no pandas): every Snakemake job, on SLURM too, re-parses the workflow.
"""

from __future__ import annotations

import copy
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import yaml
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

Config = dict[str, Any]


class ConfigError(ValueError):
    """A configuration that cannot run. The message names the file and the key."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid hivebench configuration {source}:\n{lines}")


@cache
def _schema() -> dict[str, Any]:
    text = resources.files("hivebench").joinpath("schema/config.schema.yaml").read_text()
    return yaml.safe_load(text)


def _with_defaults(validator_class: type) -> type:
    """A validator that fills `default` values in, as it validates (jsonschema FAQ recipe)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema) -> Iterator[ValidationError]:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": set_defaults})


_FillingValidator = _with_defaults(Draft202012Validator)


def key_path(parts: Any) -> str:
    """`methods.soft_fp.p`, `studies.default.seeds[0]`: how a person finds the key in YAML."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _describe(error: ValidationError) -> str:
    # oneOf/anyOf errors say only "is not valid under any of the given schemas": show the closest branch.
    if error.context:
        error = best_match(error.context)
    return f"{key_path(error.absolute_path)}: {error.message}"


def _consequence(error: ValidationError, errors: list[ValidationError]) -> bool:
    """An `unevaluatedProperties` error caused by a bad value below it: when a kind's branch of the
    schema fails, its keys count as unevaluated, which would report valid keys as unknown."""
    if error.validator != "unevaluatedProperties":
        return False
    path = list(error.absolute_path)
    return any(other is not error and list(other.absolute_path)[: len(path)] == path for other in errors)


def validate(config: Config, source: str) -> Config:
    """Validate `config` against the schema, fill in defaults, and check cross references.

    Returns the filled-in config (a copy); raises ConfigError naming `source` and every bad key.
    """
    filled = copy.deepcopy(config)
    errors = sorted(_FillingValidator(_schema()).iter_errors(filled), key=lambda e: list(e.absolute_path))
    errors = [e for e in errors if not _consequence(e, errors)]
    if errors:
        raise ConfigError(source, [_describe(e) for e in errors])
    problems = list(_cross_reference_problems(filled, Path(source).parent))
    if problems:
        raise ConfigError(source, problems)
    return filled


def load(path: str | Path) -> Config:
    """Read a YAML configuration file and validate it."""
    path = Path(path)
    try:
        with path.open() as stream:  # a stream, so YAML errors name the file
            raw = yaml.safe_load(stream)
    except FileNotFoundError:
        raise ConfigError(str(path), ["file not found"]) from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), [f"not valid YAML: {exc}"]) from None
    if not isinstance(raw, dict):
        raise ConfigError(str(path), ["the top level must be a mapping with tasks, methods and studies"])
    return validate(raw, str(path))


def _cross_reference_problems(config: Config, base: Path) -> Iterator[str]:
    # Imported here: graph checks live with the task, which is stdlib-only as well.
    from hivebench.tasks.graphs import GraphError, resolve_graph

    for study_name, study in config["studies"].items():
        where = f"studies.{study_name}"
        for i, task in enumerate(study["tasks"]):
            if task not in config["tasks"]:
                yield f"{where}.tasks[{i}]: unknown task {task!r} (defined: {', '.join(sorted(config['tasks']))})"
        for i, method in enumerate(study["methods"]):
            if method not in config["methods"]:
                yield (
                    f"{where}.methods[{i}]: unknown method {method!r} "
                    f"(defined: {', '.join(sorted(config['methods']))})"
                )
        contrasts = study.get("contrasts", {})
        named = ([contrasts["reference"]] if "reference" in contrasts else []) + [
            m for pair in contrasts.get("pairs", []) for m in pair
        ]
        for name in dict.fromkeys(named):
            if name not in study["methods"]:
                yield f"{where}.contrasts: {name!r} is not one of this study's methods ({', '.join(study['methods'])})"
        if "weights" in contrasts:
            from hivebench.registry import TASKS

            kinds = [config["tasks"][t]["kind"] for t in study["tasks"] if t in config["tasks"]]
            suites = {TASKS[kind].suite for kind in kinds}
            for suite in sorted(suites ^ set(contrasts["weights"])):
                problem = "has no weight" if suite in suites else "is not a suite of this study"
                yield f"{where}.contrasts.weights: {suite!r} {problem} (suites: {', '.join(sorted(suites))})"
        for name in study.get("method_seeds", {}):
            if name not in study["methods"]:
                yield f"{where}.method_seeds.{name}: not one of this study's methods ({', '.join(study['methods'])})"
        populations = study.get("populations")
        for task_name in study["tasks"]:
            task = config["tasks"].get(task_name)
            if task is None:
                continue
            try:
                graph = resolve_graph(task["graph"], base)
            except GraphError as exc:
                yield f"tasks.{task_name}.graph: {exc}"
                continue
            if graph.fixed_size is None:
                if populations is None:
                    yield f"{where}.populations: required, task {task_name!r} takes its size from it"
                    continue
                for i, n in enumerate(populations):
                    if n < 3:
                        yield f"{where}.populations[{i}]: a cycle needs at least 3 nodes, got {n} (task {task_name!r})"
            if graph.fixed_size is not None and "conf_best" not in task and not graph.brute_force_feasible(
                task["colors"]
            ):
                yield (
                    f"tasks.{task_name}.conf_best: required for a graph of {graph.fixed_size} nodes "
                    f"and {task['colors']} colours (too large to compute exactly)"
                )
    used = {m for study in config["studies"].values() for m in study["methods"]}
    for name in sorted(used & set(config["methods"])):
        if config["methods"][name]["kind"] == "llm":
            yield from _llm_problems(f"methods.{name}", config["methods"][name], base)


def _llm_problems(where: str, method: dict[str, Any], base: Path) -> Iterator[str]:
    """What would make an LLM method fail mid-run, found before any job starts."""
    from hivebench.models.builtin import BUILTIN, package_dir

    if method["backend"] == "openai":
        env = method["api_key_env"]
        if env is not None and not os.environ.get(env):
            yield f"{where}.api_key_env: the environment variable {env} is not set (the API key is read from it)"
    elif method["model"] in BUILTIN:
        try:
            package_dir(BUILTIN[method["model"]])
        except FileNotFoundError as exc:
            yield f"{where}.model: {exc}"
    elif not (Path(method["model"]) / "config.json").is_file():
        yield (
            f"{where}.model: {method['model']!r} is neither a builtin model ({', '.join(BUILTIN)}) "
            "nor a transformers model folder (no config.json there)"
        )
    notes = method.get("initial_notes", {})
    for key in ("file", "episode"):
        if key in notes and not (base / notes[key]).is_file():
            yield f"{where}.initial_notes.{key}: no such file: {base / notes[key]}"
