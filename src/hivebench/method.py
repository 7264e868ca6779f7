"""What a method kind plugs into hivebench: its policy class and version, its parse-time hooks (the
parameters a cell holds, problems found before any job starts, what a job asks the scheduler for,
what `hivebench estimate` says of it) and, for a method every suite runs, its schema fragment.

Standard library only, like hivebench.suite: the Snakefile asks these hooks at parse time. A method
kind that runs on every suite through the suites' text views is a package whose `__init__` declares a
`METHOD` (hivebench.method.Method), registered by one line in hivebench.registry or by an entry point
of the group `hivebench.methods`; one a suite implements for itself is declared by that suite
(`Suite.methods`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hivebench.suite import load

# A method's config keys that are not its parameters: its kind (stored beside them), the seeds and
# tasks one job runs and what its jobs ask the scheduler for. A hook may drop more (MethodHooks.resolve).
JOB_KEYS = ("kind", "seeds_per_job", "tasks_per_job", "resources")
# Tasks one job plays by default: a classical block takes seconds, about what a job's start-up costs,
# so ten share one; a block that calls models takes minutes or hours, and is a job of its own.
CLASSICAL_TASKS_PER_JOB = 10
# What a job asks the scheduler for by default: a classical block runs for minutes.
CLASSICAL_RESOURCES = {"runtime": 30, "mem_mb": 1000}


@dataclass(frozen=True)
class CellEstimate:
    """What one cell of a method that calls models costs, as `hivebench estimate` prints it: the
    expected figure (every reply valid the first time, at its cap of output tokens) and its bound."""

    model: str
    calls: int
    input_tokens: int
    output_tokens_max: int
    approximate: bool  # tokens counted as characters / 4, not with the model's tokenizer
    memory_mb: int | None  # a job's peak, where the method knows it
    # at most, the input tokens of the one more call each call may take (a repair, a regeneration), summed
    again_input_tokens: int = 0
    resends: int = 0  # times a backend may send a call again (a remote backend's `max_retries`)
    server: bool = False  # its model is called at a server (a call that costs; hivebench.spend)

    def bound(self) -> tuple[int, int, int]:
        """(calls, input tokens, output tokens) with each call the estimate renders followed by one more
        (its repair or regeneration), and every call resent as often as the backend may, each send
        counted as billed (a provider may bill a request the client gave up on). What the estimate does
        not render (other seeds, longer notes or messages) it does not bound: docs/llm-agents.md."""
        sends = 1 + self.resends
        return (
            2 * self.calls * sends,
            (self.input_tokens + self.again_input_tokens) * sends,
            2 * self.output_tokens_max * sends,
        )


# An error's own words (a validator's or parser's message, where it stands) and what text put into a
# chat's message may add where it meets the chat template, in tokens
ERROR_WORDS = 48


def again_tokens(count: Any, requests: list[Any], again: Any, max_tokens: int) -> int:
    """At most, the input tokens of one more call after each request's refused reply: the chat
    `again(request, "", "")` makes (with an empty refused reply and an empty error, as `count` counts
    chats), the refused reply (at most `max_tokens`), and the error: its own words quoting the reply
    and, at most, the request's schema (an enum's values, a pattern)."""
    total = 0
    for request in requests:
        schema = request.schema
        quoted = (
            0 if schema is None else count([{"role": "user", "content": json.dumps(schema, separators=(",", ":"))}])
        )
        total += count(list(again(request, "", "").messages)) + 2 * max_tokens + quoted + ERROR_WORDS
    return total


def resends(params: dict[str, Any]) -> int:
    """How often a method's backend may send a call again: a remote backend's `max_retries`."""
    return int(params.get("max_retries", 0)) if served(params) else 0


def served(params: dict[str, Any]) -> bool:
    """Whether a method's model is called at a server (OpenAI-compatible), not loaded here."""
    return params["backend"] == "openai"


class MethodHooks:
    """A method kind's parse-time answers about its parameters (standard library at import; a hook may
    import more when it is called). The defaults fit a classical method: no files, one core, minutes.

    `entry` is the method's config entry with defaults filled in and without JOB_KEYS; `params` are
    the parameters as a cell holds them (`resolve`'s result)."""

    def resolve(self, entry: dict[str, Any], base: Path) -> dict[str, Any]:
        """The parameters as a cell stores them: files it reads hashed, keys with no effect on results
        dropped. `base` is the config file's folder."""
        return entry

    def problems(self, entry: dict[str, Any], base: Path) -> Iterator[str]:
        """What would make the method fail mid-run (a missing file, an unset variable), each starting
        with the parameter's key; asked for methods a study uses."""
        return iter(())

    def suite_problems(self, entry: dict[str, Any], suite: str) -> Iterator[str]:
        """Why the method cannot run tasks of `suite` (an option that suite does not offer), each
        starting with the parameter's key; asked once per suite the config's studies run it on."""
        return iter(())

    def job_inputs(self, params: dict[str, Any]) -> list[str]:
        """Files a job reads that a rule of the workflow makes (a converted model folder)."""
        return []

    def job_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        """What a job asks the scheduler for unless the method's `resources` says otherwise."""
        return CLASSICAL_RESOURCES

    def job_memory_mb(self, shared: dict[str, Any], seeds: int) -> int | None:
        """The peak memory of a job of `seeds` cells of a block (its shared spec), where the method
        knows it better than `job_resources`; None: it does not."""
        return None

    def threads(self, params: dict[str, Any]) -> int:
        """Cores a job takes."""
        return 1

    def slot_resource(self, entry: dict[str, Any]) -> str | None:
        """A Snakemake resource each job holds one of (an endpoint's request slots), else None."""
        return None

    def estimate(self, shared: dict[str, Any], seeds: int) -> CellEstimate | None:
        """One cell's model calls and tokens (and a job of `seeds` cells' memory); None for a method
        that calls no model."""
        return None


@dataclass(frozen=True)
class MethodImpl:
    """A method kind as one suite runs it (or every suite, for a generic one such as `llm`)."""

    target: str  # the policy class ("package.module:Name")
    version: int  # bump when results change: every cell of this method reruns
    calls_models: bool = False  # its policy is given each cell's response cache (`cache_paths`)
    reads_text: bool = False  # its policy is given the suite's text view (`view`)
    adapted: bool = False  # its policy is given the suite's Waggle adapter (`adapter`; Suite.waggle)
    # its agents send a classical algorithm's messages (the suite's, or a Waggle proposal's), made by
    # rule and never cut: the task's message cap must fit them (hivebench.suite.message_cap_problems)
    classical_messages: bool = False
    tables: tuple[str, ...] = ()  # side tables its cells write beside the task's (Policy.tables)
    hooks: MethodHooks = field(default_factory=MethodHooks)

    def load(self) -> Any:
        return load(self.target)


@dataclass(frozen=True)
class Method:
    """A method kind that every suite runs through its text view, declared by its own package."""

    name: str  # the config's `kind`
    impl: MethodImpl
    # The `<name>_method` $defs fragment of its parameters: a YAML file of the declaring package
    # (a path inside it); None: the method takes no parameters.
    schema: str | None = None


def file_param(path: str, base: Path) -> tuple[str, str]:
    """A file a method reads, as a cell holds it: its path relative to the working directory (given
    relative to the config file) and its content hash, so a changed file reruns the cell."""
    full = base / path
    return os.path.relpath(full), hashlib.sha256(full.read_bytes()).hexdigest()


def file_problems(key: str, path: Path) -> Iterator[str]:
    """A file a method reads that is not there (or not a file), as `MethodHooks.problems` says it."""
    if not path.is_file():
        yield f"{key}: {'not a regular file' if path.exists() else 'no such file'}: {path}"
