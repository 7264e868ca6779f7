"""Load and validate a hivebench configuration.

Used by the Snakefile at parse time and by `hivebench validate`, so it imports nothing heavy
(no numpy, no pandas): every Snakemake job, on SLURM too, re-parses the workflow.
"""

from __future__ import annotations

import codecs
import copy
import math
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from hivebench.agents.mixed import MIXED
from hivebench.method import CLASSICAL_TASKS_PER_JOB, JOB_KEYS
from hivebench.perturb import ARM_JOIN, NONE, arm
from hivebench.perturb import resolved as resolved_perturbation
from hivebench.suite import PluginError

Config = dict[str, Any]

# Limits that no schema keyword can state (docs/limits.md).
MAX_AGENT_STEPS = 10_000_000  # population x steps of one episode (its table has that many rows, and N more)
MAX_JOBS = 100_000  # Snakemake jobs of one config: its DAG grows with them (raise seeds_per_job instead)
MAX_CELLS = 10_000_000  # cells of one config: each is a seed held in memory when the workflow is read
MAX_VALUES = 5_000_000  # values in a config once YAML aliases are expanded (a million seeds fit)
# What a job's episodes hold side by side, where a suite estimates it (TaskHooks.episode_bytes).
MAX_JOB_BYTES = 8 * 2**30
# Agents of one lockstep group: engine/jobs.py plays a job's missing cells in groups of at most this
# many agents (at least one cell a group), so at most LOCKSTEP_AGENTS // N episodes at once; it bounds
# a job's memory (a block of large graphs is played in parts).
LOCKSTEP_AGENTS = 100_000
# The anchors file of a config that names none: the workbench's own (the workflow's config/anchors.yaml)
DEFAULT_ANCHORS = Path(__file__).resolve().parents[2] / "config" / "anchors.yaml"


class ConfigError(ValueError):
    """A configuration that cannot run. The message names the file and the key."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid hivebench configuration {source}:\n{lines}")


def schema_yaml(text: str) -> Any:
    """A schema file's content (the package's own, a plug-in's fragment), read with libyaml where PyYAML
    has it: every Snakemake parse reads them, and the pure-Python loader takes a quarter of a second.
    Configs are read with _StrictLoader, which names a repeated key."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (a SafeLoader)


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last one:
    a second `studies:` block would silently replace the first)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key; PyYAML's own error says so
                break
            if first is not key_node:
                problem = f"the key {key!r} is given a second time (first on line {first.start_mark.line + 1})"
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
        return super().construct_mapping(node, deep)


def read_yaml(path: str | Path) -> Any:
    """A YAML file's content; ConfigError naming the file (and line) for anything that is not a
    readable file of well-formed UTF-8 YAML without repeated keys."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ConfigError(str(path), ["not a regular file"])
    try:
        with path.open("rb") as stream:  # bytes: PyYAML reports bad UTF-8 with its position and the file
            start = stream.read(4)  # UTF-32 first: its little-endian mark starts with UTF-16's
            for name, marks in (
                ("UTF-32", (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)),
                ("UTF-16", (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)),
            ):
                if start.startswith(marks):  # PyYAML would decode UTF-16, and fail on UTF-32 with a generic error
                    raise ConfigError(
                        str(path), [f"not UTF-8: it starts with a {name} byte-order mark; save it as UTF-8"]
                    )
            stream.seek(0)
            data = yaml.load(stream, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader)
    except FileNotFoundError:
        raise ConfigError(str(path), ["file not found"]) from None
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot be read: {exc.strerror}"]) from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), [f"not valid YAML: {exc}"]) from None
    except RecursionError:
        raise ConfigError(str(path), ["nested too deeply to read"]) from None
    return data


def _refers_to_itself(data: Any) -> bool:
    """Whether a mapping or list holds itself, directly or deeper (`a: &a [*a]`): a depth-first walk
    that visits each container once, with the containers on the current path marked."""
    on_path: set[int] = set()
    finished: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            finished.add(id(node))
        elif isinstance(node, (dict, list)) and id(node) not in finished:
            if id(node) in on_path:
                return True
            on_path.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in (node.values() if isinstance(node, dict) else node))
    return False


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # "\ud800" in YAML: no file, log or command line can hold it
        return False
    return True


SEED_MAX = 2**32 - 1  # the schema's largest seed (a 32-bit unsigned integer)
# The sections an `include`d config file adds its entries to.
INCLUDED_SECTIONS = ("tasks", "methods", "studies", "viewsets", "corpora", "trainings")


def _with_included(config: Config, source: str) -> tuple[Config, list[str]]:
    """The config with the entries of the files its `include` names (relative to `source`) added to its
    sections, and the problems found: a file that is no such config, or a name defined twice."""
    names = config.get("include") if isinstance(config, dict) else None
    if not isinstance(names, list):
        return config, []  # none, or not a list: the schema says so
    merged = {
        key: dict(value) if isinstance(value, dict) else value for key, value in config.items() if key != "include"
    }
    origin = {(key, entry): source for key, value in merged.items() if isinstance(value, dict) for entry in value}
    problems = []
    for name in names:
        if not isinstance(name, str):
            continue
        other = read_yaml(Path(source).parent / name)
        if not isinstance(other, dict):
            problems.append(f"include: {name}: the top level must be a mapping")
            continue
        for key, entries in other.items():
            if key not in INCLUDED_SECTIONS:
                shown = "an include" if key == "include" else repr(key)
                problems.append(f"include: {name}: {shown}: an included file holds only {', '.join(INCLUDED_SECTIONS)}")
                continue
            if not isinstance(entries, dict):
                problems.append(f"include: {name}: {key}: a mapping of names to entries was expected")
                continue
            section = merged.setdefault(key, {})
            if not isinstance(section, dict):
                continue  # the schema names the including file's own section
            for entry, value in entries.items():
                if (key, entry) in origin:
                    problems.append(f"{key}.{entry}: defined in {origin[key, entry]} and in {name}")
                else:
                    section[entry], origin[key, entry] = value, name
    return merged, problems


def _document_problems(data: Any) -> list[str]:
    """What no schema keyword can say of a loaded document: more than MAX_VALUES values (YAML aliases
    share one node, so a few lines can name billions of values that validation would visit one by
    one), and strings holding a NUL character (no command line can carry one to a job) or a lone
    surrogate (UTF-8 has none)."""
    if _refers_to_itself(data):
        return ["a YAML alias refers to a mapping or list that holds it (the document would be infinite)"]
    budget, stack, problems = MAX_VALUES, [(data, ())], []
    while stack:
        node, path = stack.pop()
        items = list(node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else [])
        budget -= len(items) + 1
        if budget < 0:
            return [f"more than {MAX_VALUES:,} values once YAML aliases are expanded"]
        for key, item in items:
            if isinstance(key, str) and "\0" in key:
                problems.append(f"{key_path(path)}: the key {key!r} contains a NUL character")
            elif isinstance(item, (dict, list)):
                stack.append((item, (*path, key)))
            elif isinstance(item, str) and "\0" in item:
                problems.append(f"{key_path((*path, key))}: contains a NUL character")
            elif isinstance(item, str) and not _utf8(item):
                problems.append(
                    f"{key_path((*path, key))}: contains a lone surrogate (not a character; no UTF-8 for it)"
                )
    return sorted(problems)


@cache
def schema() -> dict[str, Any]:
    """The core schema with every registered suite's and method package's fragment merged in: task
    and method kinds from the registry, and for each kind with a `<kind>_task` / `<kind>_method`
    definition a branch that applies it."""
    from hivebench.registry import METHODS, TASK_KINDS, schema_fragments

    schema = schema_yaml(resources.files("hivebench").joinpath("schema/config.schema.yaml").read_text())
    defs = schema["$defs"]
    for owner, fragment in schema_fragments():
        for name, definition in schema_yaml(fragment.read_text())["$defs"].items():
            if name in defs:
                raise PluginError(f"schema: {owner} redefines $defs.{name}")
            defs[name] = definition
    for section, kinds in (("task", TASK_KINDS), ("method", METHODS)):
        defs[section]["properties"]["kind"]["enum"] = list(kinds)
        defs[section]["allOf"] = [
            {"if": {"properties": {"kind": {"const": kind}}}, "then": {"$ref": f"#/$defs/{kind}_{section}"}}
            for kind in kinds
            if f"{kind}_{section}" in defs
        ]
    return schema


def _is_integer(checker: Any, instance: Any) -> bool:
    """3 is an integer, 3.0 is not (JSON Schema would take it): it would reach paths and ranges."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker: Any, instance: Any) -> bool:
    """A finite number: NaN passes every minimum and maximum, and neither NaN nor inf is a setting."""
    if isinstance(instance, bool) or not isinstance(instance, (int, float)):
        return False
    return isinstance(instance, int) or math.isfinite(instance)


@cache
def _python_regex(pattern: str) -> re.Pattern[str]:
    # JSON Schema patterns are ECMA-262, whose `$` matches only at the very end; Python's `$` also
    # matches before a final newline, which would let "random\n" through as a name. (The schema's
    # patterns put `$` only at their ends, never inside a character class.)
    return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _python_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _with_defaults(validator_class: type) -> type:
    """A validator that fills `default` values in, as it validates (jsonschema FAQ recipe), with
    strict integers, finite numbers and ECMA-262 patterns."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema) -> Iterator[ValidationError]:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    type_checker = validator_class.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
    return validators.extend(
        validator_class, {"properties": set_defaults, "pattern": _ecma_pattern}, type_checker=type_checker
    )


_FillingValidator = _with_defaults(Draft202012Validator)


def key_path(parts: Any) -> str:
    """`methods.soft_fp.p`, `studies.default.seeds[0]`: how a person finds the key in YAML."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _mismatch(error: ValidationError) -> int:
    """How far a oneOf branch is from the value it rejects: a bound or shape (0) beats a wrong type
    (1), which beats a wrong constant (2) -- except for a string, which most likely misspells the
    constant (`rounds: papr`) and is best told the names."""
    named = error.validator in ("const", "enum")
    if isinstance(error.instance, str):
        return 0 if named else 1
    return 2 if named else 1 if error.validator == "type" else 0


def _shown(value: Any, limit: int = 60) -> str:
    """A value as an error message echoes it: its start, and its size where it is longer."""
    text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, (list, dict)):
        size = f"{len(value):,} entries"
    else:  # the value's own length (a string's, not its repr's with the quotes), else its repr's
        size = f"{len(value) if isinstance(value, str) else len(text):,} characters"
    return f"{text[:limit]}... ({size})"


_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "boolean": "true or false",
    "null": "null",
}


def _expected(schema: dict[str, Any]) -> str:
    """What a branch of a oneOf takes, in words: `'paper'`, `an integer from 1 to 10000`."""
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(map(repr, schema["enum"]))
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    text = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
    if "minimum" in schema and "maximum" in schema:
        return f"{text} from {schema['minimum']} to {schema['maximum']}"
    return f"{text} of at least {schema['minimum']}" if "minimum" in schema else text


def _alternatives(error: ValidationError) -> str | None:
    """For a string that matches no alternative of a oneOf (`rounds: '3'`, `rounds: papr`): the names
    expected, then every other alternative; None where the value has some branch's shape."""
    branches = error.context or []
    if (
        not branches
        or not isinstance(error.instance, str)
        or any(
            len(e.absolute_path) != len(error.absolute_path) or e.validator not in ("const", "enum", "type")
            for e in branches
        )
    ):
        return None
    named = " or ".join(_expected(e.schema) for e in branches if e.validator in ("const", "enum"))
    others = " or ".join(_expected(e.schema) for e in branches if e.validator == "type")
    expected = f"{named} was expected, or {others}" if named and others else f"{named or others} was expected"
    return f"{expected} (got {_shown(error.instance)})"


def _describe(error: ValidationError) -> str:
    message = _alternatives(error) if error.validator in ("oneOf", "anyOf") else None
    if message is not None:
        return f"{key_path(error.absolute_path)}: {message}"
    # oneOf/anyOf errors say only "is not valid under any of the given schemas": show the closest
    # branch, the one whose errors lie deepest (the value has that branch's shape, e.g. an edge list).
    while error.context:
        depth = max(len(e.absolute_path) for e in error.context)
        deepest = [e for e in error.context if len(e.absolute_path) == depth]
        closest = min(map(_mismatch, deepest))
        error = best_match(e for e in deepest if _mismatch(e) == closest)
    message = error.message
    value = error.instance
    if error.validator == "type" and isinstance(value, float) and not math.isfinite(value):
        message = f"{value} is not a finite number"
    elif error.validator == "type" and isinstance(value, float) and "integer" in str(error.validator_value):
        message = f"{value!r} is not an integer" + (f" (write {int(value)})" if value.is_integer() else "")
    elif error.validator in ("pattern", "maxLength") and "description" in error.schema:
        message = f"{message}: {error.schema['description']}"
    return f"{key_path(error.absolute_path)}: {message.replace(repr(value), _shown(value))}"


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
    config, problems = _with_included(config, source)
    problems += _document_problems(config)  # first: validation would visit every value
    if problems:
        raise ConfigError(source, problems)
    filled = copy.deepcopy(config)
    errors = sorted(_FillingValidator(schema()).iter_errors(filled), key=lambda e: list(e.absolute_path))
    errors = [e for e in errors if not _consequence(e, errors)]
    if errors:
        raise ConfigError(source, [_describe(e) for e in errors])
    problems = list(_replicate_problems(filled))
    if problems:
        raise ConfigError(source, problems)
    problems = _expand_seed_ranges(filled) or _inherit_warm_starts(filled)
    if problems:
        raise ConfigError(source, problems)
    groups: dict[str, list[str]] = {}
    problems = list(_expand_members(filled, groups)) or _by_entry(
        list(_cross_reference_problems(filled, Path(source).parent)), groups
    )
    if problems:
        raise ConfigError(source, problems)
    return filled


def _with_trainers(config: Config, names: list[str]) -> list[str]:
    """`names`, and the methods that make the adapters they name: the collection methods and model
    teacher of each one's training's corpus."""
    needed = list(names)
    for name in names:
        for _, entry in replicate_entries(config["methods"][name]):
            training = config["trainings"].get(entry.get("adapter") or "")
            if training is None:
                continue
            corpus = config["corpora"][training["corpus"]]
            needed += [spec["method"] for _, _, spec in corpus_parts(corpus)]
            needed += [] if corpus["teacher"] == "rule" else [corpus["teacher"]]
            if "warm_start" in training and "transitions" in corpus:
                needed.append(corpus["transitions"]["method"])
    return list(dict.fromkeys(needed))


def _expand_seed_ranges(config: Config) -> list[str]:
    """Every seed range ({first, count}) made the list of its seeds (the rest of hivebench reads a
    count or a list); the problems of a range that runs past the largest seed."""
    problems = []

    def expanded(seeds: Any, where: str) -> Any:
        if not isinstance(seeds, dict):
            return seeds
        last = seeds["first"] + seeds["count"] - 1
        if last > SEED_MAX:
            problems.append(f"{where}: the range ends at {last:,}, past the largest seed ({SEED_MAX:,})")
        return list(range(seeds["first"], min(last, SEED_MAX) + 1))

    for name, study in config["studies"].items():
        study["seeds"] = expanded(study["seeds"], f"studies.{name}.seeds")
        if "method_seeds" in study:
            study["method_seeds"] = {
                m: expanded(s, f"studies.{name}.method_seeds.{m}") for m, s in study["method_seeds"].items()
            }
    for name, training in config["trainings"].items():
        training["seeds"] = expanded(training["seeds"], f"trainings.{name}.seeds")
    return problems


def _transitions_kept(kept: Config, corpus: str) -> bool:
    """Whether a cut-down config still plays the study and method of a corpus's transitions."""
    spec = kept["corpora"][corpus].get("transitions")
    return spec is not None and spec["method"] in kept["studies"].get(spec["study"], {}).get("methods", [])


LORA_SHAPE = ("rank", "alpha", "dropout", "target_modules")  # what a stage-two training keeps of its warm start
STAGE_TWO = ("warm_start", "arm", "orbit_weight", "field_weight", "transition_batch", "eventful_share")


def _inherit_warm_starts(config: Config) -> list[str]:
    """A stage-two training takes its warm start's corpus, base model and LoRA shape; the problems of a
    warm start that is unknown or itself a stage-two training, a corpus or model other than its own,
    and seeds it lacks."""
    from hivebench.cells import seed_list

    problems = []
    trainings = config["trainings"]
    for name, training in trainings.items():
        if "warm_start" not in training:
            continue
        where, given = f"trainings.{name}", training["warm_start"]
        warm = trainings.get(given)
        if warm is None:
            problems.append(f"{where}.warm_start: unknown training {given!r} (defined: {', '.join(sorted(trainings))})")
            continue
        if "warm_start" in warm:
            problems.append(
                f"{where}.warm_start: {given!r} goes on from a warm start itself; stage two goes on from a "
                "decision distillation (a training without warm_start)"
            )
            continue
        for key in ("corpus", "model"):
            if key in training and training[key] != warm[key]:
                problems.append(f"{where}.{key}: {training[key]!r}, but its warm start {given!r} has {warm[key]!r}")
        training.update({key: warm[key] for key in ("corpus", "model", *LORA_SHAPE)})
        lacking = sorted(set(seed_list(training["seeds"])) - set(seed_list(warm["seeds"])))
        if lacking:
            problems.append(
                f"{where}.seeds: {', '.join(map(str, lacking))} not among its warm start {given!r}'s seeds (each "
                "seed goes on from that seed's adapter)"
            )
    return problems


def select_methods(config: Config, names: list[str], source: str) -> Config:
    """A validated config cut down to some of its methods (`--config methods=a,b`: the classical
    controls of a matrix whose model servers are not up yet): each study keeps those it lists, a
    study left with none is dropped, and so are the contrasts, view sets, corpora (and their trainings)
    that name another. A method with a trained adapter brings what makes it: its training's corpus's
    collection methods and model teacher. The cells are the same as the whole config's: a later run of
    the whole keeps them."""
    unknown = [name for name in names if name not in config["methods"]]
    if unknown:
        raise ConfigError(
            source,
            [f"--config methods: no method {name!r} (defined: {', '.join(config['methods'])})" for name in unknown],
        )
    names = _with_trainers(config, names)
    kept = copy.deepcopy(config)
    for study_name, study in config["studies"].items():
        methods = [m for m in study["methods"] if m in names]
        if not methods:
            del kept["studies"][study_name]
            continue
        cut = kept["studies"][study_name]
        cut["methods"] = methods
        for key in ("method_seeds", "method_populations"):
            cut[key] = {m: value for m, value in study.get(key, {}).items() if m in methods}
        contrasts = study.get("contrasts", {})
        pairs = [pair for pair in contrasts.get("pairs", []) if set(pair) <= set(methods)]
        if pairs or contrasts.get("reference") in methods:
            cut["contrasts"] = {**contrasts, **({"pairs": pairs} if "pairs" in contrasts else {})}
        else:
            cut.pop("contrasts", None)
    kept["viewsets"] = {
        name: viewset
        for name, viewset in config["viewsets"].items()
        if viewset["study"] in kept["studies"] and {viewset["method"], *viewset["controllers"]} <= set(names)
    }
    kept["corpora"] = {
        name: corpus
        for name, corpus in config["corpora"].items()
        if all(
            spec["study"] in kept["studies"] and spec["method"] in kept["studies"][spec["study"]]["methods"]
            for _, _, spec in corpus_parts(corpus)
        )
        and corpus["teacher"] in ("rule", *names)
    }
    kept["trainings"] = {
        name: t
        for name, t in config["trainings"].items()
        if t["corpus"] in kept["corpora"] and ("warm_start" not in t or _transitions_kept(kept, t["corpus"]))
    }
    if not kept["studies"]:
        raise ConfigError(source, [f"--config methods: no study runs any of {', '.join(names)}"])
    return kept


def load(path: str | Path) -> Config:
    """Read a YAML configuration file and validate it."""
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise ConfigError(str(path), ["the top level must be a mapping with tasks, methods and studies"])
    return validate(raw, str(path))


def resolved_task_params(task: dict[str, Any], base: Path) -> dict[str, Any]:
    """A config task's parameters as its cells hold them (its kind's `resolve` hook); raises
    TaskParamError naming the parameter."""
    from hivebench.registry import task_kind

    return task_kind(task["kind"]).hooks.resolve({k: v for k, v in task.items() if k != "kind"}, base)


def method_populations(study: dict[str, Any], method: str) -> list[int] | None:
    """The populations a study runs `method` at: its `method_populations` entry, else the study's."""
    return study.get("method_populations", {}).get(method, study.get("populations"))


def task_sizes(task: dict[str, Any], params: dict[str, Any], populations: list[int] | None) -> list[int] | None:
    """The populations a task runs at in a study: its own fixed size, else the study's (None if the
    study gives none)."""
    from hivebench.registry import task_kind

    fixed = task_kind(task["kind"]).hooks.fixed_size(params)
    return [fixed] if fixed is not None else populations


def _expand_members(config: Config, groups: dict[str, list[str]]) -> Iterator[str]:
    """Replace each task entry that stands for several tasks (its kind's `members` hook) by its
    members, `<entry>.<suffix>`, in the tasks and in every study that lists the entry; `groups` gets
    each such entry's members."""
    from hivebench.registry import task_kind

    tasks: dict[str, Any] = {}
    for name, task in config["tasks"].items():
        members = task_kind(task["kind"]).hooks.members({k: v for k, v in task.items() if k != "kind"})
        if members is None:
            tasks[name] = task
            continue
        groups[name] = [f"{name}.{suffix}" for suffix in members]
        tasks.update({f"{name}.{suffix}": {"kind": task["kind"], **params} for suffix, params in members.items()})
    for group, names in groups.items():
        for name in names:
            if name in config["tasks"]:
                yield f"tasks.{name}: the name of a member of tasks.{group}; rename one of them"
    config["tasks"] = tasks
    for study in config["studies"].values():
        study["tasks"] = list(dict.fromkeys(member for task in study["tasks"] for member in groups.get(task, [task])))


def _by_entry(problems: list[str], groups: dict[str, list[str]]) -> list[str]:
    """Problems of an entry's members named by the entry the user wrote, each once (members share
    every parameter but the one that tells them apart)."""
    for group, members in groups.items():
        for member in members:
            problems = [
                p.replace(f"tasks.{member}.", f"tasks.{group}.").replace(f"task {member!r}", f"task {group!r}")
                for p in problems
            ]
    return list(dict.fromkeys(problems))


def _cross_reference_problems(config: Config, base: Path) -> Iterator[str]:
    from hivebench.registry import METHODS, task_kind, task_suite
    from hivebench.suite import TaskParamError

    yield from _name_problems(config)
    yield from _spend_problems(config)
    yield from _perturbation_entry_problems(config, base)
    yield from _anchor_problems(config, base)
    yield from _viewset_problems(config)
    yield from _training_problems(config, base)
    yield from _adapter_problems(config, base)
    resolved = {}
    asked: set[tuple[str, str]] = set()  # (method, suite) pairs asked for their suite problems
    for name, task in config["tasks"].items():
        try:
            resolved[name] = resolved_task_params(task, base)
        except TaskParamError as exc:
            yield f"tasks.{name}.{exc.key}: {exc}"
            continue
        yield from (f"tasks.{name}.{problem}" for problem in task_kind(task["kind"]).hooks.problems(resolved[name]))
    for study_name, study in config["studies"].items():
        where = f"studies.{study_name}"
        for i, task in enumerate(study["tasks"]):
            if task not in config["tasks"]:
                yield f"{where}.tasks[{i}]: unknown task {task!r} (defined: {', '.join(sorted(config['tasks']))})"
        for i, method in enumerate(study["methods"]):
            if method not in config["methods"]:
                yield (
                    f"{where}.methods[{i}]: unknown method {method!r} (defined: {', '.join(sorted(config['methods']))})"
                )
        for key in ("method_seeds", "method_populations"):
            for name in study.get(key, {}):
                if name not in study["methods"]:
                    yield f"{where}.{key}.{name}: not one of this study's methods ({', '.join(study['methods'])})"
        for name, sizes in study.get("method_populations", {}).items():
            for i, n in enumerate(sizes):
                if n not in study.get("populations", []):
                    given = ", ".join(map(str, study.get("populations", []))) or "none"
                    yield f"{where}.method_populations.{name}[{i}]: {n} is not one of the study's populations ({given})"
        yield from _contrast_problems(config, study_name)
        yield from _perturbation_problems(config, study_name)
        yield from _mixed_problems(config, study_name)
        for task_name in study["tasks"]:
            if task_name not in config["tasks"]:
                continue
            suite = task_suite(config["tasks"][task_name]["kind"])
            for method_name in study["methods"]:
                kind = config["methods"].get(method_name, {}).get("kind")
                if kind is not None and suite not in METHODS[kind].impls:
                    yield (
                        f"{where}: method {method_name!r} (kind {kind}, a {'/'.join(METHODS[kind].impls)} method) "
                        f"cannot run task {task_name!r} of suite {suite}"
                    )
                elif kind is not None and (method_name, suite) not in asked:
                    asked.add((method_name, suite))  # once per method and suite, however many tasks
                    hooks = METHODS[kind].impl(suite).hooks
                    for problem in hooks.suite_problems(method_entry(config["methods"][method_name]), suite):
                        yield f"methods.{method_name}.{problem} (study {study_name!r}, task {task_name!r})"
        for task_name in study["tasks"]:
            if task_name not in resolved:
                continue
            yield from _text_setting_problems(config, study_name, task_name)
            params = resolved[task_name]
            hooks = task_kind(config["tasks"][task_name]["kind"]).hooks
            fixed = hooks.fixed_size(params)
            sizes = [fixed] if fixed is not None else study.get("populations")
            if sizes is None:
                yield f"{where}.populations: required, task {task_name!r} takes its size from it"
                continue
            if fixed is None:
                for i, n in enumerate(sizes):
                    for problem in hooks.population_problems(params, n):
                        yield f"{where}.populations[{i}]: {problem} (task {task_name!r})"
            for method_name in study["methods"]:
                method = config["methods"].get(method_name)
                if (
                    method is None
                    or task_suite(config["tasks"][task_name]["kind"]) not in METHODS[method["kind"]].impls
                ):
                    continue
                played = [fixed] if fixed is not None else method_populations(study, method_name)
                for problem in hooks.method_problems(params, method["kind"], played):
                    yield f"tasks.{task_name}.{problem} (study {study_name!r}, method {method_name!r})"
                _, block = _blocks(study, method_name, method["seeds_per_job"])  # a job's largest block
                for n in played:
                    each = hooks.episode_bytes(params, method["kind"], n)
                    held = held_episodes(block, n)
                    if held * each > MAX_JOB_BYTES:
                        yield _job_memory_problem(study_name, task_name, method_name, n, held, each)
            for n in sizes:
                steps = hooks.agent_steps(params, n)
                if steps > MAX_AGENT_STEPS:
                    yield (
                        f"{where}: task {task_name!r} at N = {n} is {steps:,} agent-steps in one episode; "
                        f"the limit is {MAX_AGENT_STEPS:,} (agents x decision rounds)"
                    )
    jobs, cells = map(sum, zip(*(_matrix_size(config, study, resolved) for study in config["studies"].values())))
    if jobs > MAX_JOBS:
        yield (
            f"studies: the config expands to {jobs:,} jobs; the limit is {MAX_JOBS:,} "
            "(raise the methods' seeds_per_job: a job runs a block of seeds)"
        )
    if cells > MAX_CELLS:
        yield f"studies: the config expands to {cells:,} cells; the limit is {MAX_CELLS:,}"
    used = {m for study in config["studies"].values() for m in study["methods"]}
    used |= {c for viewset in config["viewsets"].values() for c in viewset["controllers"]}  # in no study, maybe
    used |= {corpus["teacher"] for corpus in config["corpora"].values()}
    used |= {
        m
        for name in used & set(config["methods"])
        if config["methods"][name]["kind"] == MIXED
        for m in config["methods"][name]["members"]
    }
    for name in sorted(used & set(config["methods"])):
        yield from _method_problems(name, config["methods"][name], base)


def _perturbation_entry_problems(config: Config, base: Path) -> Iterator[str]:
    """Each defined perturbation's settings agree: its drawn ranges run upwards (`delay_max` from
    `delay`, `latency_max` from `latency`), clocks timed by their calls give no latency, latencies
    drawn from a cache come from a cache with calls timed, and `clocks` and `activation` are not given
    together (both say when agents act)."""
    for name, entry in config.get("perturbations", {}).items():
        for part, low, high in (("medium", "delay", "delay_max"), ("clocks", "latency", "latency_max")):
            settings = entry.get(part) or {}
            if high in settings and settings[high] < settings.get(low, 0):
                yield (
                    f"perturbations.{name}.{part}.{high}: {settings[high]} is below {low} ({settings.get(low, 0)}): "
                    f"{low}..{high} is the range a {low} is drawn from"
                )
        clocks = entry.get("clocks") or {}
        if "seconds_per_round" in clocks and (clocks.get("latency") or "latency_max" in clocks):
            yield (
                f"perturbations.{name}.clocks: `seconds_per_round` times decisions by calls' seconds (their own, "
                "or `latencies`'); give no latency"
            )
        if "latencies" in clocks:
            yield from _latencies_problems(f"perturbations.{name}.clocks", clocks, base)
        if entry.get("clocks") and entry.get("activation"):
            yield f"perturbations.{name}: `clocks` and `activation` both say when agents act; give one"


def _latencies_problems(where: str, clocks: dict[str, Any], base: Path) -> Iterator[str]:
    """Latencies drawn from a response cache: they need `seconds_per_round` (the seconds a round
    stands for), and a cache file that records some call's seconds."""
    from hivebench.method import file_problems
    from hivebench.models.cache import recorded_seconds

    if "seconds_per_round" not in clocks:
        yield f"{where}.latencies: give `seconds_per_round` too (how many seconds a round stands for)"
    path = base / clocks["latencies"]
    if not path.is_file():
        yield from file_problems(f"{where}.latencies", path)
    elif not recorded_seconds(path.read_bytes().splitlines()):
        yield f"{where}.latencies: {path} records no call's seconds (no line with a result's `latency_s` above 0)"


def _perturbation_problems(config: Config, study_name: str) -> Iterator[str]:
    """A study's perturbations are the config's (or `none`); one that changes messages runs only tasks
    whose agents send them (a task kind with a `medium`), one with adversarial agents only suites
    that define an adversary (or methods on the Waggle trace field, where they forge traces)."""
    from hivebench.registry import METHODS, SUITE_OBJECTS, task_kind, task_suite

    where = f"studies.{study_name}.perturbations"
    study = config["studies"][study_name]
    defined = config["perturbations"]
    for i, name in enumerate(study["perturbations"]):
        if name != NONE and name not in defined:
            known = ", ".join([NONE, *sorted(defined)])
            yield f"{where}[{i}]: unknown perturbation {name!r} (defined: {known})"
            continue
        parts = resolved_perturbation(name, defined[name]) if name != NONE else {}
        for task_name in study["tasks"]:
            task = config["tasks"].get(task_name)
            if task is None:
                continue
            if "medium" in parts and not task_kind(task["kind"]).medium:
                yield (
                    f"{where}[{i}]: perturbation {name!r} changes messages, and task {task_name!r} "
                    f"({task['kind']}) sends none"
                )
            suite = task_suite(task["kind"])
            if parts.get("faults", {}).get("kind") == "adversarial" and SUITE_OBJECTS[suite].adversary is None:
                for method in study["methods"]:
                    entry = config["methods"].get(method, {})
                    kinds = [config["methods"].get(m, {}).get("kind") for m in entry.get("members", {})]
                    kinds = kinds if entry.get("kind") == MIXED else [entry.get("kind")]
                    if any(
                        kind in METHODS and suite in METHODS[kind].impls and not METHODS[kind].impl(suite).adapted
                        for kind in kinds
                    ):
                        yield (
                            f"{where}[{i}]: perturbation {name!r} makes agents adversarial, and {suite} defines no "
                            f"adversary (method {method!r} is not on the Waggle trace field either)"
                        )


def _mixed_problems(config: Config, study_name: str) -> Iterator[str]:
    """A study's mixed populations: members the config defines, each a method without replicates that
    runs every suite of the study's tasks; shares that sum to 1, or lists with at most one `rest`."""
    from hivebench.registry import METHODS, task_suite

    study = config["studies"][study_name]
    suites = {task_suite(config["tasks"][t]["kind"]) for t in study["tasks"] if t in config["tasks"]}
    for name in study["methods"]:
        method = config["methods"].get(name, {})
        if method.get("kind") != MIXED:
            continue
        where = f"methods.{name}.members"
        shares = list(method["members"].values())
        lists = [s for s in shares if not isinstance(s, (int, float))]
        if not lists and not math.isclose(sum(shares), 1.0, abs_tol=1e-9):
            yield f"{where}: the shares sum to {sum(shares):g}, not 1"
        if lists and len(lists) != len(shares):
            yield f"{where}: give every member a share, or every member its agents (one may say rest)"
        if shares.count("rest") > 1:
            yield f"{where}: at most one member plays the rest"
        listed = [a for s in lists if s != "rest" for a in s]
        if len(listed) != len(set(listed)):
            yield f"{where}: an agent is listed for two members"
        for member in method["members"]:
            entry = config["methods"].get(member)
            if entry is None:
                yield f"{where}.{member}: unknown method (defined: {', '.join(sorted(config['methods']))})"
            elif entry["kind"] == MIXED or "replicates" in entry:
                yield f"{where}.{member}: a member is a method of one kind without replicates"
            else:
                for suite in sorted(suites - set(METHODS[entry["kind"]].impls)):
                    yield f"{where}.{member}: kind {entry['kind']} does not run suite {suite} (study {study_name!r})"


def _method_problems(name: str, method: dict[str, Any], base: Path) -> Iterator[str]:
    """A method's problems (its kind's `problems` hook), then each replicate's that the method's own
    entry does not have (a replicate's own model folder), named by the replicate's key path."""
    from hivebench.registry import METHODS

    hooks = METHODS[method["kind"]].hooks
    own = list(hooks.problems(method_entry(method), base))
    yield from (f"methods.{name}.{problem}" for problem in own)
    for label, entry in replicate_entries(method):
        if label is not None:
            problems = [p for p in hooks.problems(entry, base) if p not in own]
            yield from (f"methods.{name}.replicates.{label}.{problem}" for problem in problems)


def _text_setting_problems(config: Config, study_name: str, task_name: str) -> Iterator[str]:
    """A task's setting that acts only on methods reading the task as text (TaskHooks.text_settings),
    given in a study that runs none of them (`compat: reference` sets it for every method alike)."""
    from hivebench.registry import METHODS, task_kind, task_suite

    task = config["tasks"][task_name]
    given = [key for key in task_kind(task["kind"]).hooks.text_settings if key in task]
    suite = task_suite(task["kind"])
    readers = sorted(kind for kind, m in METHODS.items() if suite in m.impls and m.impl(suite).reads_text)
    methods = config["studies"][study_name]["methods"]
    kinds = [config["methods"][m]["kind"] for m in methods if m in config["methods"]]
    if not given or set(kinds) & set(readers):
        return
    for key in given:
        yield (
            f"tasks.{task_name}.{key}: acts only on methods that read the task as text ({', '.join(readers)}); "
            f"study {study_name!r} runs none of them ({', '.join(methods)}): it would change their cells alone"
        )


def method_entry(method: dict[str, Any]) -> dict[str, Any]:
    """A method's config entry as its hooks read it: without the keys that only size and place its
    jobs, nor its replicates (`replicate_entries`)."""
    return {k: v for k, v in method.items() if k not in (*JOB_KEYS, "replicates")}


def tasks_per_job(method: dict[str, Any], suite: str) -> int:
    """How many of a study's tasks one job of `method` plays (cells.study_jobs): its `tasks_per_job`,
    else one where it calls models and CLASSICAL_TASKS_PER_JOB where it does not."""
    from hivebench.registry import METHODS

    if "tasks_per_job" in method:
        return method["tasks_per_job"]
    return 1 if METHODS[method["kind"]].impl(suite).calls_models else CLASSICAL_TASKS_PER_JOB


def served_models(config: Config, name: str) -> list[str]:
    """The models a method calls at a server (backend openai), its replicates' and members' too."""
    method = config["methods"][name]
    if method["kind"] == "mixed":
        return [model for member in method["members"] for model in served_models(config, member)]
    models = [entry["model"] for _, entry in replicate_entries(method) if entry.get("backend") == "openai"]
    return list(dict.fromkeys(models))


def _spend_problems(config: Config) -> Iterator[str]:
    """A dollar budget over a study whose method, or over a view set's controller or a corpus's teacher
    (the run's budget caps them), calls a server model that `prices` does not price."""
    run_usd = "usd" in config["spend"].get("budget", {})
    callers = [  # (the budget's key, who calls, the method)
        (where, f"study {name}'s method", method)
        for name, study in config["studies"].items()
        for where in ["spend.budget"] * run_usd + [f"studies.{name}.budget"] * ("usd" in study.get("budget", {}))
        for method in study["methods"]
    ]
    if run_usd:
        callers += [
            ("spend.budget", f"view set {name}'s controller", c)
            for name, viewset in config["viewsets"].items()
            for c in viewset["controllers"]
        ]
        callers += [("spend.budget", f"corpus {name}'s teacher", c["teacher"]) for name, c in config["corpora"].items()]
    for where, who, method in callers:
        for model in served_models(config, method) if method in config["methods"] else []:
            if model not in config["prices"]:
                yield (
                    f"{where}.usd: {who} {method} calls {model} at a server, and prices has no entry for {model}: "
                    "a dollar budget cannot count its calls"
                )


def replicate_entries(method: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """(label, entry as its hooks read it) of each replicate of a validated method, in its order; one
    (None, entry) for a method without replicates."""
    if "replicates" not in method:
        return [(None, method_entry(method))]
    return [(label, method_entry(entry)) for label, entry in method["replicates"].items()]


def viewset_controllers(config: Config, viewset: dict[str, Any]) -> list[str]:
    """A view set's controllers, one per replicate: `name`, or `name@replicate` for a method with
    replicates (each decides every view)."""
    return [
        name if label is None else f"{name}@{label}"
        for name in viewset["controllers"]
        for label, _ in replicate_entries(config["methods"][name])
    ]


def controller_entry(config: Config, controller: str) -> dict[str, Any]:
    """The entry a view set's controller (`viewset_controllers`) decides with, as its hooks read it."""
    name, _, replicate = controller.partition("@")
    return dict(replicate_entries(config["methods"][name]))[replicate or None]


def replicate_count(method: dict[str, Any]) -> int:
    return len(method.get("replicates", ())) or 1


def _replicate_problems(config: Config) -> Iterator[str]:
    """Each method's `replicates` made a mapping of labels (as strings) to the whole entry the
    replicate runs with: the method's, with the replicate's parameters over it, validated and filled
    in as a method entry is."""
    definitions = {"$defs": schema()["$defs"], "$ref": "#/$defs/method"}
    for name, method in config["methods"].items():
        given = method.get("replicates")
        if given is None:
            continue
        where = f"methods.{name}.replicates"
        overrides = (
            {str(label): {} for label in given}
            if isinstance(given, list)
            else {str(label): values for label, values in given.items()}
        )
        if len(overrides) < len(given):
            yield f"{where}: labels repeat once read as text ({', '.join(map(repr, given))})"
            continue
        base = {k: v for k, v in method.items() if k != "replicates"}
        entries = {}
        for label, values in overrides.items():
            fixed = [key for key in (*JOB_KEYS, "replicates") if key in values]
            if fixed:
                yield f"{where}.{label}: sets {', '.join(fixed)}, which every replicate of a method shares"
                continue
            entry = {**copy.deepcopy(base), **copy.deepcopy(values)}
            errors = sorted(_FillingValidator(definitions).iter_errors(entry), key=lambda e: list(e.absolute_path))
            errors = [e for e in errors if not _consequence(e, errors)]
            for error in errors:  # named from the top: methods.<name>.replicates.<label>.<key>
                error.relative_path.extendleft(reversed(["methods", name, "replicates", label]))
                yield _describe(error)
            entries[label] = entry
        method["replicates"] = entries


def filled_method(entry: dict[str, Any]) -> dict[str, Any]:
    """A method entry made by the workflow (a training's student) with its schema's defaults filled in."""
    filled = copy.deepcopy(entry)
    definitions = {"$defs": schema()["$defs"], "$ref": "#/$defs/method"}
    errors = [_describe(error) for error in _FillingValidator(definitions).iter_errors(filled)]
    if errors:
        raise ValueError(f"a method entry {entry}: {'; '.join(errors)}")
    return filled


def held_episodes(block: int, n: int) -> int:
    """How many episodes of N agents a job of `block` missing seeds holds at once (engine/jobs.py,
    run_block): it plays them in groups of LOCKSTEP_AGENTS // N (at least one), each group's records
    held until written, and the last record of a group is still held while the next one plays."""
    group = max(1, LOCKSTEP_AGENTS // n)
    return block if block <= group else group + 1


def _job_memory_problem(study: str, task: str, method: str, n: int, side_by_side: int, each: int) -> str:
    """A job holds its seeds' episodes side by side: fewer seeds per job, or a smaller episode."""
    held = f"about {side_by_side * each / 2**30:,.1f} GiB, {each / 2**20:,.0f} MiB an episode"
    limit = f"the limit of a job is {MAX_JOB_BYTES / 2**30:g} GiB"
    fits = min(MAX_JOB_BYTES // each, max(1, LOCKSTEP_AGENTS // n))  # a block held whole, within the limit
    if fits == 0:
        return (
            f"studies.{study}: task {task!r} at N = {n:,} with method {method!r} holds {held}; "
            f"{limit}: lower N (or the task's rounds)"
        )
    return (
        f"methods.{method}.seeds_per_job: {side_by_side} episodes of task {task!r} at N = {n:,} (study {study!r}) "
        f"side by side hold {held}; {limit} (seeds_per_job: {fits} fits)"
    )


def _blocks(study: dict[str, Any], method: str, per_job: int) -> tuple[int, int]:
    """How many job blocks a method's seeds make in a study, and the most seeds one of them has
    (cells.study_blocks: a block is the seeds of one seed // seeds_per_job)."""
    seeds = study.get("method_seeds", {}).get(method, study["seeds"])
    if isinstance(seeds, int):
        return -(-seeds // per_job), min(per_job, seeds)
    sizes = Counter(s // per_job for s in seeds)
    return len(sizes), max(sizes.values(), default=0)


def _seed_count(study: dict[str, Any], method: str) -> int:
    seeds = study.get("method_seeds", {}).get(method, study["seeds"])
    return seeds if isinstance(seeds, int) else len(seeds)


# Snakemake refuses a wildcard value that ends in a piece repeated 20 times or more (it takes it for a
# rule matching its own output forever): a name like that could never run.
_PERIODIC = re.compile(r"(.+)\1{19,}\Z")


def _name_problems(config: Config) -> Iterator[str]:
    for section in ("tasks", "methods", "studies"):
        for name in config[section]:
            match = _PERIODIC.search(name)
            if match:
                yield (
                    f"{section}.{name}: the name ends in {match.group(1)!r} repeated "
                    f"{len(match.group(0)) // len(match.group(1))} times, which Snakemake refuses in a wildcard"
                )


def _anchor_problems(config: Config, base: Path) -> Iterator[str]:
    """The anchors file (the config's `anchors`, else the workbench's own) is well formed and has an
    anchor for every task a study normalises by one (scores would stop after the episodes ran)."""
    from hivebench.anchors import load_anchors
    from hivebench.registry import SUITE_OBJECTS, task_kind, task_suite

    path = base / config["anchors"] if "anchors" in config else DEFAULT_ANCHORS
    if "anchors" not in config and not path.is_file():
        return  # an installed package without the workbench's config folder
    try:
        anchors = load_anchors(path)
    except ConfigError as exc:
        yield from (f"anchors: {path}: {problem}" for problem in exc.problems)
        return
    missing: dict[tuple[str, str], str] = {}  # (suite, anchored task) -> the first config task needing it
    for name in dict.fromkeys(t for study in config["studies"].values() for t in study["tasks"]):
        task = config["tasks"].get(name)
        suite = SUITE_OBJECTS[task_suite(task["kind"])] if task is not None else None
        if suite is None or not any(m.normalised_by_anchor for m in suite.metrics):
            continue
        key = task_kind(task["kind"]).hooks.anchor_key(name, task)
        if (suite.anchored is None or key in suite.anchored) and (suite.name, key) not in anchors:
            missing.setdefault((suite.name, key), name)
    for (suite_name, key), name in missing.items():
        yield f"anchors: {path}: has no anchor for {suite_name}/{key}, by which task {name!r} is normalised"


def _viewset_problems(config: Config) -> Iterator[str]:
    """A view set's study and method (one that keeps the views it shows), its controllers (waggle
    methods) and its reference (one of them)."""

    for name, viewset in config["viewsets"].items():
        where = f"viewsets.{name}"
        study = config["studies"].get(viewset["study"])
        if study is None:
            yield f"{where}.study: unknown study {viewset['study']!r} (defined: {', '.join(sorted(config['studies']))})"
        else:
            yield from _showing_problems(config, where, viewset["study"], viewset["method"])
        for i, controller in enumerate(viewset["controllers"]):
            kind = config["methods"].get(controller, {}).get("kind")
            if kind != "waggle":
                what = "an unknown method" if kind is None else f"of kind {kind}"
                yield f"{where}.controllers[{i}]: {controller!r} is {what}; a view set's controllers are waggle methods"
        named = [c for c in viewset["controllers"] if c in config["methods"]]
        known = viewset_controllers(config, {**viewset, "controllers": named})
        if "reference" in viewset and viewset["reference"] not in known:
            yield (
                f"{where}.reference: {viewset['reference']!r} is not one of the view set's controllers "
                f"({', '.join(known)}: a method with replicates is one controller per replicate, name@replicate)"
            )


def _showing_problems(config: Config, where: str, study: str, method: str) -> Iterator[str]:
    """A study's method that shows views to keep: one of the study's, on the view runtime, keeping
    them in every replicate (`where`: the entry naming it; its `.method` key is the one at fault)."""
    from hivebench.registry import METHODS

    if method not in config["studies"][study]["methods"]:
        yield f"{where}.method: {method!r} is not one of study {study!r}'s methods"
        return
    kind = config["methods"].get(method, {}).get("kind")
    if kind is not None and not any("views" in impl.tables for impl in METHODS[kind].impls.values()):
        yield (
            f"{where}.method: {method!r} (kind {kind}) shows no views: a method on the view runtime (waggle, "
            "scripted_controller) keeps them"
        )
    elif kind is not None:
        for label, entry in replicate_entries(config["methods"][method]):
            if not entry.get("keep_views"):
                which = "" if label is None else f" (its replicate {label!r})"
                yield f"{where}.method: {method!r}{which} keeps no views: set its keep_views: true"


def corpus_parts(corpus: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """A corpus's parts: (suite, native | synthetic, its study and method and sizes)."""
    return [(suite, part, spec) for suite, parts in corpus["suites"].items() for part, spec in parts.items()]


def has_test_views(corpus: dict[str, Any]) -> bool:
    """Whether a corpus holds test bundles (its trainings' students, and diagnostics, are measured on them)."""
    return any(part == "synthetic" and spec["test"] > 0 for _, part, spec in corpus_parts(corpus))


def collections(corpus: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every collection a corpus draws from, where its config names it: its decision parts'
    (suites.<suite>.<part>) and its transitions'."""
    named = [(f"suites.{suite}.{part}", spec) for suite, part, spec in corpus_parts(corpus)]
    return named + ([("transitions", corpus["transitions"])] if "transitions" in corpus else [])


def _training_problems(config: Config, base: Path) -> Iterator[str]:
    """Corpora (their studies, methods, suites, sizes and teacher; training seeds that evaluation seeds
    meet) and trainings (their corpus, batch and base model)."""
    from hivebench.models.builtin import BUILTIN, is_hub_id
    from hivebench.registry import SUITE_OBJECTS, task_suite

    for name, corpus in config["corpora"].items():
        where = f"corpora.{name}"
        for suite, part, spec in corpus_parts(corpus):
            at = f"{where}.suites.{suite}.{part}"
            study = config["studies"].get(spec["study"])
            if suite not in SUITE_OBJECTS:
                yield f"{where}.suites.{suite}: not a suite ({', '.join(sorted(SUITE_OBJECTS))})"
            elif study is None:
                yield f"{at}.study: unknown study {spec['study']!r} (defined: {', '.join(sorted(config['studies']))})"
            else:
                yield from _showing_problems(config, at, spec["study"], spec["method"])
                other = sorted({task_suite(config["tasks"][t]["kind"]) for t in study["tasks"]} - {suite})
                if other:
                    yield f"{at}.study: {spec['study']!r} plays tasks of {', '.join(other)} too, not only {suite}'s"
            if part == "synthetic" and spec["validation"] + spec["test"] >= spec["bundles"]:
                held_out = f"{spec['validation']} validation and {spec['test']} test bundles"
                yield f"{at}: {held_out} leave none of {spec['bundles']} to train on"
        if "transitions" in corpus:
            spec = corpus["transitions"]
            if spec["study"] not in config["studies"]:
                studies = ", ".join(sorted(config["studies"]))
                yield f"{where}.transitions.study: unknown study {spec['study']!r} (defined: {studies})"
            else:
                yield from _showing_problems(config, f"{where}.transitions", spec["study"], spec["method"])
        teacher = corpus["teacher"]
        if teacher != "rule" and config["methods"].get(teacher, {}).get("kind") != "waggle":
            yield f"{where}.teacher: {teacher!r} is neither rule nor a method of kind waggle (a model as the teacher)"
        yield from _seed_overlap_problems(config, name)
    for name, training in config["trainings"].items():
        where = f"trainings.{name}"
        if training["corpus"] not in config["corpora"]:
            defined = ", ".join(sorted(config["corpora"])) or "none"
            yield f"{where}.corpus: unknown corpus {training['corpus']!r} (defined: {defined})"
        corpus = config["corpora"].get(training["corpus"], {})
        if "warm_start" in training and corpus and "transitions" not in corpus:
            yield (
                f"{where}.warm_start: stage two needs a transition corpus: corpora.{training['corpus']}.transitions "
                "names none"
            )
        if training["micro_batch"] > training["batch"]:
            yield f"{where}.micro_batch: {training['micro_batch']} a pass is more than the batch ({training['batch']})"
        model = training["model"]
        # org/name is a hub id unless `org` is a folder here (then it names a model folder that is missing)
        hub_id = is_hub_id(model) and not (base / model).parent.is_dir()
        if model not in BUILTIN and not (base / model / "config.json").is_file() and not hub_id:
            yield (
                f"{where}.model: {model!r} is neither a builtin model ({', '.join(BUILTIN)}), a transformers "
                "model folder (no config.json there) nor a Hugging Face hub id (org/name)"
            )


def _adapter_problems(config: Config, base: Path) -> Iterator[str]:
    """A method's `adapter` (and each replicate's) names a training of the config and one of its seeds,
    and, on a local model, is laid over the model it was trained on."""
    from hivebench.cells import seed_list

    for name, method in config["methods"].items():
        if method["kind"] != "waggle":
            continue
        for label, entry in replicate_entries(method):
            where = f"methods.{name}" + ("" if label is None else f".replicates.{label}")
            if not entry.get("adapter"):
                unused = [key for key in ("adapter_seed", "lora_module") if entry.get(key) not in (None, 0)]
                yield from (f"{where}.{key}: set, but the method names no adapter" for key in unused)
                continue
            if entry["backend"] == "scripted":
                yield f"{where}.adapter: a scripted model has no weights to adapt"
                continue
            training = config["trainings"].get(entry["adapter"])
            if training is None:
                defined = ", ".join(sorted(config["trainings"])) or "none"
                yield f"{where}.adapter: unknown training {entry['adapter']!r} (defined: {defined})"
                continue
            seeds = seed_list(training["seeds"])
            if entry["adapter_seed"] not in seeds:
                yield (
                    f"{where}.adapter_seed: {entry['adapter_seed']} is not a seed of training {entry['adapter']!r} "
                    f"({', '.join(map(str, seeds))})"
                )
            if entry["backend"] == "transformers" and not _same_model(entry["model"], training["model"], base):
                yield (
                    f"{where}.model: {entry['model']!r}, but training {entry['adapter']!r} trains its adapter on "
                    f"{training['model']!r}"
                )


def _same_model(model: str, trained_on: str, base: Path) -> bool:
    """A method's local model and a training's base model are the same builtin or the same folder."""
    if model == trained_on:
        return True
    return Path(model).resolve() == (base / trained_on).resolve()


def task_identity(task: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two config tasks the same task for the seeds' disjointness: the kind and the suite's
    own task (SwarmBench's and Silo-Bench's `task`, AgentsNet's problem and family), whatever else
    differs (an intervention, the rounds: a seed is the same initial state under either)."""
    return (task["kind"], task.get("task"), task.get("problem"), task.get("family"))


def study_seeds(study: dict[str, Any], method: str | None = None) -> set[int]:
    """The seeds a study plays (one method's, or every method's)."""
    from hivebench.cells import seed_list

    methods = study["methods"] if method is None else [method]
    return {s for m in methods for s in seed_list(study.get("method_seeds", {}).get(m, study["seeds"]))}


def _seed_overlap_problems(config: Config, corpus: str) -> Iterator[str]:
    """A corpus's training seeds that an evaluation study (one no corpus draws from) plays on the same
    task and N: "Native decision views and all sequential rollouts use collection seeds disjoint from
    formal evaluation"."""
    training = {spec["study"] for c in config["corpora"].values() for _, spec in collections(c)}
    tasks = config["tasks"]
    for part, spec in collections(config["corpora"][corpus]):
        study = config["studies"].get(spec["study"])
        if study is None or spec["method"] not in study["methods"]:
            continue
        seeds = study_seeds(study, spec["method"])
        for name, other in config["studies"].items():
            if name in training:
                continue
            met = set()
            for task in study["tasks"]:
                for evaluated in other["tasks"]:
                    if task_identity(tasks[task]) != task_identity(tasks[evaluated]):
                        continue
                    for n in sorted(set(study["populations"]) & set(other["populations"])):
                        common = seeds & study_seeds(other)
                        if common and (task, n) not in met:
                            met.add((task, n))
                            shown = ", ".join(map(str, sorted(common)[:5])) + (" ..." if len(common) > 5 else "")
                            yield (
                                f"corpora.{corpus}.{part}.study: study {spec['study']!r} plays task "
                                f"{task!r} at N = {n} on seeds {shown}, which study {name!r} evaluates "
                                f"({evaluated!r}): training seeds must be disjoint from evaluation seeds"
                            )


def _contrast_problems(config: Config, study_name: str) -> Iterator[str]:
    from hivebench.registry import SUITE_METRICS, task_suite

    study = config["studies"][study_name]
    where = f"studies.{study_name}.contrasts"
    contrasts = study.get("contrasts", {})
    named = ([contrasts["reference"]] if "reference" in contrasts else []) + [
        m for pair in contrasts.get("pairs", []) for m in pair
    ]
    arms = [arm(m, None if p == NONE else p) for p in study["perturbations"] for m in study["methods"]]
    for name in dict.fromkeys(named):
        if name not in arms:
            yield f"{where}: {name!r} is not one of this study's methods or arms ({', '.join(arms)})"
    for i, (a, b) in enumerate(contrasts.get("pairs", [])):
        if a == b:
            yield f"{where}.pairs[{i}]: a method contrasted with itself ({a!r}) is zero by construction"
    methods = config["methods"]
    reference = contrasts.get("reference", study["methods"][0])
    pairs = contrasts.get("pairs") or [(m, reference) for m in study["methods"] if m != reference]
    for a, b in pairs:
        labels = [sorted(methods.get(m.partition(ARM_JOIN)[0], {}).get("replicates", ())) for m in (a, b)]
        if all(labels) and labels[0] != labels[1]:
            yield (
                f"{where}: {a!r} and {b!r} both have replicates, with other labels ({', '.join(labels[0])} "
                f"against {', '.join(labels[1])}): a contrast pairs their replicates by label"
            )
    if "reference" in contrasts and len(study["methods"]) < 2:
        yield f"{where}.reference: the study has no other method to contrast with {contrasts['reference']!r}"
    suites = {task_suite(config["tasks"][t]["kind"]) for t in study["tasks"] if t in config["tasks"]}
    metrics = sorted({m.name for suite in suites for m in SUITE_METRICS[suite]})
    for i, metric in enumerate(contrasts.get("metrics", [])):
        if metric not in metrics:
            yield f"{where}.metrics[{i}]: {metric!r} is not a metric of this study's suites ({', '.join(metrics)})"
    if "weights" in contrasts:
        for suite in sorted(suites ^ set(contrasts["weights"])):
            problem = "has no weight" if suite in suites else "is not a suite of this study"
            yield f"{where}.weights: {suite!r} {problem} (suites: {', '.join(sorted(suites))})"


def _matrix_size(config: Config, study: dict[str, Any], resolved: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """How many job blocks and cells a study expands to (cells.study_blocks makes them), without
    making them."""
    blocks = cells = 0
    for method in study["methods"]:
        if method not in config["methods"]:
            continue
        sizes = sum(
            len(task_sizes(config["tasks"][task], resolved[task], method_populations(study, method)) or [])
            for task in study["tasks"]
            if task in resolved
        )
        copies = sizes * replicate_count(config["methods"][method])
        blocks += copies * _blocks(study, method, config["methods"][method]["seeds_per_job"])[0]
        cells += copies * _seed_count(study, method)
    return blocks, cells
