"""The 30 Silo-Bench tasks by stable ID, in the paper's order (standard library only: the config check
and the Snakefile read it at parse time)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    id: str  # I-01 ... III-30
    name: str
    level: str  # I aggregation, II mesh (neighbour exchange), III global shuffle
    segmented: bool  # each agent answers its own slice of the answer, not the whole of it


def _entries() -> tuple[Entry, ...]:
    names = {
        "I": [
            "global_max",
            "word_frequency",
            "distributed_vote",
            "any_match",
            "range_count",
            "xor_checksum",
            "average",
            "set_union_size",
            "top_k",
            "std_dev",
        ],
        "II": [
            "prefix_sum",
            "moving_average",
            "longest_palindrome",
            "life_game",
            "pattern_search",
            "trapping_rain_water",
            "difference_array",
            "list_ranking",
            "merge_neighbours",
            "pipeline_hash",
        ],
        "III": [
            "distributed_sort",
            "median_of_medians",
            "graph_components",
            "bfs_distance",
            "kmeans_iteration",
            "global_distinct",
            "collaborative_filtering",
            "pagerank_step",
            "load_balance",
            "matrix_multiply",
        ],
    }
    segmented = {"II-11", "II-14", "II-20", "III-21"}
    entries, number = [], 0
    for level, level_names in names.items():
        for name in level_names:
            number += 1
            task_id = f"{level}-{number:02d}"
            entries.append(Entry(task_id, name, level, task_id in segmented))
    return tuple(entries)


TASKS: tuple[Entry, ...] = _entries()
BY_ID: dict[str, Entry] = {entry.id: entry for entry in TASKS}
LEVELS = ("I", "II", "III")


def selected(spec: str | list[str]) -> list[str]:
    """The task IDs a `task` parameter names: an ID, a level ("I", "II", "III"), "all", or a list of
    those (in the catalogue's order, each once); ValueError naming an unknown one."""
    wanted = set()
    for item in [spec] if isinstance(spec, str) else spec:
        if item == "all":
            wanted |= set(BY_ID)
        elif item in LEVELS:
            wanted |= {e.id for e in TASKS if e.level == item}
        elif item in BY_ID:
            wanted.add(item)
        else:
            raise ValueError(f"unknown Silo-Bench task {item!r} (IDs I-01 ... III-30, a level I, II or III, or all)")
    return [e.id for e in TASKS if e.id in wanted]
