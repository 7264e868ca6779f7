"""Perturbations of a cell: what breaks a homogeneous, reliable, synchronous swarm (an unreliable
medium, faulty agents, partial activation), as a named, versioned part of the cell that wraps the
suite's medium and the method's policy without touching either (src/hivebench/perturb/README.md).

Standard library only: the Snakefile asks this at parse time (a cell's identity, its arm's name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hivebench.method import file_param

# Bump when what a perturbation does changes: every perturbed cell reruns (unperturbed ones keep).
# 2: Silo-Bench's adversary (on the Waggle runtime beside its forged traces); an LLM agent's history
# shows what it sent as sent; 3: the `transit` table in the per-agent file's metadata, no file of its own
# (and asynchronous clocks and churn, new); 4: the Silo-Bench Waggle adapter's flood told who acts (it
# had marked as passed on shards its held-back agents never sent), the clocks' draws from one stream
# (perturbation/clocks) instead of three, and Silo-Bench's gather told of calls lost with their agent;
# 5: clocks timed by calls (`seconds_per_round`) apply an answer at the deadline in the answer round (it
# had applied after the episode's end, so no answer counted)
VERSION = 5
NONE = "none"  # a study's unperturbed arm
ARM_JOIN = "+"  # an arm's name: `<method>+<perturbation>`; a config name cannot hold it


def arm(method: str, perturbation: str | None) -> str:
    """The name a method's cells go by in the tables and paths under a perturbation (None: unperturbed)."""
    return method if perturbation is None else f"{method}{ARM_JOIN}{perturbation}"


# The medium settings that change messages in transit (the others, `expiry`, act on the Waggle field)
TRANSIT_SETTINGS = ("loss", "delay", "delay_max", "duplicate", "reorder", "truncate")


def resolved(name: str, entry: dict[str, Any], base: Path | None = None) -> dict[str, Any]:
    """A perturbation as a cell holds it: its name, the version, and its parts that change anything
    (a loss of 0, a fault fraction of 0, an activation probability of 1 are left out, so that such a
    cell plays exactly as the unperturbed one). With `base` (the config file's folder) a file it reads
    (the clocks' `latencies`) enters as its path and content hash, so a changed file reruns the cell."""
    parts: dict[str, Any] = {}
    medium = dict(entry.get("medium") or {})
    if medium.get("delay_max") == medium.get("delay"):
        medium.pop("delay_max", None)
    if not medium.get("truncate"):
        medium.pop("truncate_chars", None)  # no cut: its length changes nothing
    if medium.get("transit", True) or not any(medium.get(key) for key in TRANSIT_SETTINGS):
        medium.pop("transit", None)  # the default (cells keep their identity), or nothing to record
    if any(medium.get(key) for key in (*TRANSIT_SETTINGS, "expiry")):
        parts["medium"] = medium
    faults = entry.get("faults")
    if faults and faults["fraction"] > 0:
        parts["faults"] = dict(faults)
    activation = dict(entry.get("activation") or {})
    if not activation.get("spare_answers", True):
        del activation["spare_answers"]  # the default: cells keep the identity they had before the setting
    if activation and activation.get("probability", 0) < 1:
        parts["activation"] = activation
    clocks = dict(entry.get("clocks") or {})
    if clocks.get("latency_max") == clocks.get("latency", 0):
        clocks.pop("latency_max", None)
    clocks = {key: value for key, value in clocks.items() if value != CLOCK_DEFAULTS.get(key)}
    if "latencies" in clocks and base is not None:
        path, sha256 = file_param(clocks["latencies"], base)
        clocks["latencies"] = {"file": path, "sha256": sha256}
    if clocks:  # period 1, jitter 0, latency 0: the synchronous loop, the unperturbed cell
        parts["clocks"] = clocks
    churn = entry.get("churn")
    if churn and churn["leave"] > 0:  # nobody leaves: nobody comes back either
        parts["churn"] = {key: value for key, value in churn.items() if (key, value) != ("join", 0)}
    return {"name": name, "version": VERSION, **parts}


# Each sweepable setting: its axis in the report's robustness curves, and where the unperturbed arm
# lies on it (None: at the population, `activation.count`).
AXES = {
    ("medium", "loss"): ("message loss", 0),
    ("medium", "delay"): ("message delay (rounds)", 0),
    ("medium", "duplicate"): ("message duplication", 0),
    ("medium", "expiry"): ("trace expiry (updates early)", 0),
    ("medium", "truncate"): ("message truncation", 0),
    ("activation", "probability"): ("activation probability", 1),
    ("activation", "count"): ("agents active per round", None),
    ("clocks", "period"): ("clock period (rounds)", 1),
    ("clocks", "jitter"): ("clock jitter (rounds)", 0),
    ("clocks", "latency"): ("decision latency (rounds)", 0),
    ("clocks", "latency_max"): ("decision latency, drawn from 0 up to (rounds)", 0),
    ("churn", "leave"): ("leave rate per round, no return", 0),
}
CLOCK_DEFAULTS = {"period": 1, "jitter": 0, "latency": 0}
MEDIUM_DEFAULTS = {
    "loss": 0,
    "unit": "message",
    "delay": 0,
    "duplicate": 0,
    "reorder": False,
    "expiry": 0,
    "truncate": 0,
    "transit": True,
}


def axis(perturbation: dict[str, Any]) -> tuple[str, float] | None:
    """The one setting a perturbation (as a cell holds it) moves away from the unperturbed run, as
    (axis, strength): `message loss`, 0.3; `crash fraction from round 0`, 0.25; None where it moves
    several (its arm is a point of its own)."""
    parts = [key for key in ("medium", "faults", "activation", "clocks", "churn") if key in perturbation]
    if len(parts) != 1:
        return None
    part = perturbation[parts[0]]
    if parts[0] == "churn":  # with returns, the rate of return is a second setting: a point of its own
        return (AXES[("churn", "leave")][0], part["leave"]) if not part.get("join") else None
    if parts[0] == "clocks":
        ((key, value),) = part.items() if len(part) == 1 else ((None, None),)
        return (AXES[("clocks", key)][0], value) if ("clocks", key) in AXES else None
    if parts[0] == "faults":
        return f"{part['kind']} fraction from round {part['onset']}", part["fraction"]
    if parts[0] == "activation":
        setting = "probability" if "probability" in part else "count"
        spared = ", answers spared" if part.get("spare_answers") else ""
        return AXES[("activation", setting)][0] + spared, part[setting]
    moved = [
        key
        for key, value in part.items()
        if key not in ("unit", "truncate_chars", "transit") and value != MEDIUM_DEFAULTS.get(key)
    ]
    if len(moved) != 1 or ("medium", moved[0]) not in AXES:
        return None
    return AXES[("medium", moved[0])][0], part[moved[0]]


def in_transit(perturbation: dict[str, Any] | None) -> bool:
    """Whether a perturbation (as a cell holds it) changes messages between rounds: wraps the task's medium."""
    medium = (perturbation or {}).get("medium", {})
    return any(medium.get(key) for key in TRANSIT_SETTINGS)


def inline_tables(perturbation: dict[str, Any] | None) -> tuple[str, ...]:
    """The side tables a perturbation adds to a cell, kept in its per-agent file's metadata: `transit`,
    each delivery its medium changed (unless its `transit` setting is off)."""
    return ("transit",) if in_transit(perturbation) and perturbation["medium"].get("transit", True) else ()
