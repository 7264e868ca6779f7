"""Contact graphs of the colouring task: cycles and fixed edge lists (standard library only)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Edge = tuple[int, int]

# Largest c**n searched exhaustively for conf_best (a few seconds of numpy at most).
BRUTE_FORCE_LIMIT = 2**22
MAX_NODE = 99_999  # node numbers of a fixed graph: at most the largest population (docs/limits.md)


class GraphError(ValueError):
    """A graph specification that cannot be used."""


@dataclass(frozen=True)
class GraphSpec:
    """A cycle (size from the population) or a fixed graph (size from its edges)."""

    edges: tuple[Edge, ...] | None  # None: a cycle

    @property
    def fixed_size(self) -> int | None:
        if self.edges is None:
            return None
        return 1 + max(max(edge) for edge in self.edges)

    def brute_force_feasible(self, colors: int) -> bool:
        n = self.fixed_size
        return n is not None and colors**n <= BRUTE_FORCE_LIMIT

    def as_param(self) -> str | list[list[int]]:
        """The canonical form stored in a cell: "cycle" or a sorted edge list."""
        return "cycle" if self.edges is None else [list(e) for e in self.edges]


def cycle_conf_best(n: int, colors: int) -> int:
    """The fewest conflicting edges of C_n with `colors` colours: one for an odd cycle with two."""
    return 1 if colors == 2 and n % 2 == 1 else 0


def cycle_edges(n: int) -> list[Edge]:
    if n < 3:
        raise GraphError(f"a cycle needs at least 3 nodes, got {n}")
    return [(i, (i + 1) % n) for i in range(n)]


def _canonical_edges(pairs: list[list[int]] | list[Edge], where: str) -> tuple[Edge, ...]:
    edges: set[Edge] = set()
    for u, v in pairs:
        if u == v:
            raise GraphError(f"{where}: self-loop on node {u}")
        edge = (min(u, v), max(u, v))
        if edge in edges:
            raise GraphError(f"{where}: edge {list(edge)} is listed twice")
        edges.add(edge)
    nodes = {node for edge in edges for node in edge}
    missing = sorted(set(range(max(nodes) + 1)) - nodes)
    if missing:
        raise GraphError(f"{where}: nodes must be numbered 0..n-1 with every node on an edge; missing {missing[:5]}")
    return tuple(sorted(edges))


def read_edges_file(path: Path) -> list[Edge]:
    """One edge per line as `u v` or `u,v`; `#` starts a comment. Errors name the file and line but
    never quote it: a mistyped path may point at a file that is nobody's business."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GraphError(f"{path}: not UTF-8 text (byte {exc.start}); expected one edge 'u v' per line") from None
    except OSError as exc:
        raise GraphError(f"{path}: cannot be read ({exc.strerror})") from None
    pairs = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = [f for f in re.split(r"[,\s]+", line) if f]
        if len(fields) != 2 or not all(f.isascii() and f.isdigit() for f in fields):
            raise GraphError(f"{path}:{lineno}: expected two node numbers separated by a space or a comma")
        u, v = int(fields[0]), int(fields[1])
        if max(u, v) > MAX_NODE:
            raise GraphError(f"{path}:{lineno}: node {max(u, v)} is above the largest node number, {MAX_NODE}")
        pairs.append((u, v))
    if not pairs:
        raise GraphError(f"{path}: no edges")
    return pairs


def resolve_graph(spec: Any, base: Path) -> GraphSpec:
    """Turn a config `graph` value into a GraphSpec; relative edge files are read from `base`."""
    if spec == "cycle":
        return GraphSpec(edges=None)
    if "edges" in spec:
        return GraphSpec(edges=_canonical_edges(spec["edges"], "edges"))
    path = Path(spec["edges_file"])
    if not path.is_absolute():
        path = base / path
    if not path.exists():
        raise GraphError(f"edges_file {str(path)!r} does not exist")
    if not path.is_file():
        raise GraphError(f"edges_file {str(path)!r} is not a regular file")
    return GraphSpec(edges=_canonical_edges(read_edges_file(path), str(path)))
