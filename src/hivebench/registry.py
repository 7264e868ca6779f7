"""Every suite, task kind and method kind hivebench knows, with their semantic versions.

A suite is one package and one line in SUITES; a method kind that every suite runs (through the
suites' text views) is one package and one line in METHOD_PACKAGES. Installed packages add their own
through entry points of the groups `hivebench.suites` and `hivebench.methods` (name = the package's
import path, e.g. `mine = "my_method"` in its pyproject.toml's
`[project.entry-points."hivebench.methods"]`). A suite's package declares a `SUITE`
(hivebench.suite.Suite), a method's a `METHOD` (hivebench.method.Method), with the standard library
alone, because the Snakefile reads the registry at parse time; runtime classes are imported on first
use. A package that cannot be registered (it fails to import, declares no `SUITE` / `METHOD`, or
another name, or takes a name already registered) stops every command and the workflow with a
PluginError naming its entry point. Bump a `version` when an implementation's results change: every
cell that uses it reruns, and no other.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module, resources
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from importlib.resources.abc import Traversable
from typing import Any

from hivebench.method import Method, MethodHooks, MethodImpl
from hivebench.suite import Metric, PluginError, Suite, TaskKind

SUITES: dict[str, str] = {
    "loopbench": "hivebench.suites.loopbench",
    "agentsnet": "hivebench.suites.agentsnet",
    "swarmbench": "hivebench.suites.swarmbench",
    "silobench": "hivebench.suites.silobench",
}
METHOD_PACKAGES: dict[str, str] = {
    "llm": "hivebench.agents.llm",
    "replay": "hivebench.agents.replay",
    "nocomm": "hivebench.agents.nocomm",
    "nativemsg": "hivebench.agents.nativemsg",
    "fixedswarm": "hivebench.agents.fixedswarm",
    "waggle": "hivebench.agents.waggle",
    "scripted_controller": "hivebench.agents.scripted_controller",
    "swarmsys": "hivebench.agents.swarmsys",
    "mixed": "hivebench.agents.mixed",
}
# Schema fragments that several methods' fragments refer to (owner -> package)
SHARED_SCHEMAS: dict[str, str] = {"the Waggle runtime": "hivebench.waggle.runtime"}
SUITE_GROUP, METHOD_GROUP = "hivebench.suites", "hivebench.methods"


@dataclass(frozen=True)
class MethodKind:
    """A method kind and the suites it serves, each with its implementation."""

    name: str
    impls: dict[str, MethodImpl]  # suite -> implementation

    @property
    def hooks(self) -> MethodHooks:
        """Its parse-time hooks (every suite's implementation of a kind has the same)."""
        return next(iter(self.impls.values())).hooks

    def impl(self, suite: str) -> MethodImpl:
        return self.impls[suite]


def _entry_point(point: EntryPoint) -> str:
    """An entry point as its package's pyproject.toml gives it, with the group and the distribution."""
    dist = getattr(point, "dist", None)
    installed = f", installed by {dist.name} {dist.version}" if dist is not None else ""
    return f"the entry point {point.name!r} = {point.value!r} (group {point.group}{installed})"


def _packages(builtin: dict[str, str], group: str, installed: EntryPoints) -> dict[str, str]:
    """name -> package: hivebench's own, then those installed packages register (entry points)."""
    found = dict(builtin)
    for point in installed.select(group=group):
        if point.name in found:
            raise PluginError(
                f"registry: {_entry_point(point)} takes a name already registered by {found[point.name]}; "
                "rename it, or uninstall the package that installs it"
            )
        found[point.name] = point.value
    return found


def _declaration(name: str, package: str, attribute: str, kind: type) -> Any:
    """A package's declaration (its `SUITE` or `METHOD`), checked against the name it is registered
    by; PluginError saying what is wrong (without the `registry:` prefix)."""
    try:
        module = import_module(package)
    except Exception as exc:  # an installed plug-in that breaks on import: name it, not a bare traceback
        text = " ".join(str(exc).split())  # one paragraph, however the error breaks its lines
        raise PluginError(
            f"{package} (registered as {name!r}) cannot be imported: {type(exc).__name__}: {text}"
        ) from None
    declared = getattr(module, attribute, None)
    if not isinstance(declared, kind):
        raise PluginError(
            f"{package} (registered as {name!r}) declares no {attribute} ({kind.__module__}.{kind.__name__})"
        )
    if declared.name != name:
        raise PluginError(f"{package} declares {declared.name!r}, registered as {name!r}")
    return declared


def _declarations(
    packages: dict[str, str], attribute: str, kind: type, points: dict[str, EntryPoint] | None = None
) -> dict[str, Any]:
    """Each package's declaration (`_declaration`); one an entry point (`points`, by name) registers
    is refused naming that entry point."""
    found = {}
    for name, package in packages.items():
        try:
            found[name] = _declaration(name, package, attribute, kind)
        except PluginError as exc:
            point = (points or {}).get(name)
            where = "" if point is None else f"{_entry_point(point)} cannot be used: "
            advice = "" if point is None else "; fix the package that installs it, or uninstall it"
            raise PluginError(f"registry: {where}{exc}{advice}") from None
    return found


def _task_kinds(suites: dict[str, Suite]) -> dict[str, tuple[str, TaskKind]]:
    kinds: dict[str, tuple[str, TaskKind]] = {}
    for suite in suites.values():
        for kind, task in suite.tasks.items():
            if kind in kinds:
                raise PluginError(f"registry: task kind {kind!r} is declared by {kinds[kind][0]} and {suite.name}")
            kinds[kind] = (suite.name, task)
    return kinds


def _method_kinds(suites: dict[str, Suite], generic: dict[str, Method]) -> dict[str, MethodKind]:
    impls: dict[str, dict[str, MethodImpl]] = {
        name: dict.fromkeys(suites, method.impl) for name, method in generic.items()
    }
    for suite in suites.values():
        for kind, impl in suite.methods.items():
            if kind in generic:
                raise PluginError(
                    f"registry: method kind {kind!r} is declared by suite {suite.name} and by {METHOD_PACKAGE_OF[kind]}"
                )
            impls.setdefault(kind, {})[suite.name] = impl
    for kind, by_suite in impls.items():
        if len({type(impl.hooks) for impl in by_suite.values()}) > 1:
            raise PluginError(
                f"registry: the suites implement method {kind!r} with different hooks ({', '.join(by_suite)})"
            )
    return {kind: MethodKind(kind, by_suite) for kind, by_suite in impls.items()}


def schema_fragments() -> list[tuple[str, Traversable]]:
    """(owner, file) of every suite's and method package's schema fragment."""
    owners = [(name, SUITE_PACKAGE_OF[name], suite.schema) for name, suite in SUITE_OBJECTS.items()]
    owners += [
        (name, METHOD_PACKAGE_OF[name], method.schema) for name, method in METHOD_OBJECTS.items() if method.schema
    ]
    owners += [(owner, package, "schema.yaml") for owner, package in SHARED_SCHEMAS.items()]
    return [(name, resources.files(package).joinpath(path)) for name, package, path in owners]


_INSTALLED = entry_points()  # every installed package's, read once
SUITE_PACKAGE_OF: dict[str, str] = _packages(SUITES, SUITE_GROUP, _INSTALLED)
METHOD_PACKAGE_OF: dict[str, str] = _packages(METHOD_PACKAGES, METHOD_GROUP, _INSTALLED)
SUITE_OBJECTS: dict[str, Suite] = _declarations(
    SUITE_PACKAGE_OF, "SUITE", Suite, {point.name: point for point in _INSTALLED.select(group=SUITE_GROUP)}
)
METHOD_OBJECTS: dict[str, Method] = _declarations(
    METHOD_PACKAGE_OF, "METHOD", Method, {point.name: point for point in _INSTALLED.select(group=METHOD_GROUP)}
)
TASK_KINDS: dict[str, tuple[str, TaskKind]] = _task_kinds(SUITE_OBJECTS)  # kind -> (suite, task)
METHODS: dict[str, MethodKind] = _method_kinds(SUITE_OBJECTS, METHOD_OBJECTS)
SUITE_METRICS: dict[str, tuple[Metric, ...]] = {name: suite.metrics for name, suite in SUITE_OBJECTS.items()}


def task_suite(kind: str) -> str:
    return TASK_KINDS[kind][0]


def task_kind(kind: str) -> TaskKind:
    return TASK_KINDS[kind][1]
