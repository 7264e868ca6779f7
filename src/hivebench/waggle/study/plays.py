"""Which studies the Waggle matrix's report section serves (hivebench.waggle.study.matrix): those
where one of its tables has a row. Standard library only: the Snakefile decides it at parse time from
the config's blocks; `hivebench report` from a study's episodes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

AGGREGATED = ("pursuit", "foraging")  # the SwarmBench tasks of the extrapolation's aggregate
# The paper's key paired effects: (A, B, suite, metric, population) of each published row, the methods
# named as config/studies/waggle.yaml names them; "largest": the largest population the study played
# (N = 64 in the main matrix).
KEY_EFFECTS = {
    "Waggle - Decision-only": ("waggle", "decision-only", "agentsnet", "solved", "all"),
    "Waggle - FixedSwarm": ("waggle", "fixedswarm", "agentsnet", "solved", "all"),
    "Joint - oracle specialist": ("waggle", "specialist", "silobench", "success", "largest"),
}
# What a study plays, one row per block or episode: the episodes' columns has_tables reads
PLAY_COLUMNS = ["method", "suite", "swarm_task", "rounds", "population"]
Play = tuple[Any, ...]  # PLAY_COLUMNS' values; swarm_task only for SwarmBench, rounds only for Silo-Bench


def block_plays(shared_parts: Iterable[dict[str, Any]]) -> list[Play]:
    """What a study plays, from its blocks' shared parts (hivebench.cells.Block.shared)."""
    plays = []
    for shared in shared_parts:
        params, suite = shared["task"]["params"], shared["suite"]
        swarm_task = params["task"] if suite == "swarmbench" else None
        rounds = params["rounds"] if suite == "silobench" else None
        plays.append((shared["method"]["name"], suite, swarm_task, rounds, shared["population"]))
    return plays


def episode_plays(episodes: Any) -> list[Play]:
    """What a study played, from its episodes table (a pandas DataFrame)."""
    return list(episodes.reindex(columns=PLAY_COLUMNS).itertuples(index=False, name=None))


def has_tables(plays: Iterable[Play]) -> bool:
    """Whether one of the section's tables has a row for a study that plays these: a method with a
    measure (Silo-Bench's, or the Pursuit/Foraging aggregate) at two populations, or with Silo-Bench at
    two horizons at one population, or both methods of one of the paper's key effects on its suite."""
    populations: defaultdict[tuple, set] = defaultdict(set)
    horizons: defaultdict[tuple, set] = defaultdict(set)
    methods: defaultdict[str, set] = defaultdict(set)
    for method, suite, swarm_task, rounds, population in plays:
        methods[suite].add(method)
        if suite == "silobench" or (suite == "swarmbench" and swarm_task in AGGREGATED):
            populations[(method, suite)].add(population)
        if suite == "silobench":
            horizons[(method, population)].add(rounds)
    measured = (*populations.values(), *horizons.values())
    effects = any({a, b} <= methods[suite] for a, b, suite, *_ in KEY_EFFECTS.values())
    return any(len(levels) >= 2 for levels in measured) or effects
