"""The `replay` method: every agent's replies read from a file, through the suite's text view
(agent.py); its parameters (schema.yaml).

Standard library only: the Snakefile reads this declaration at parse time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.method import Method, MethodHooks, MethodImpl, file_param, file_problems


class ReplayHooks(MethodHooks):
    def resolve(self, entry: dict[str, Any], base: Path) -> dict[str, Any]:
        path, sha256 = file_param(entry["file"], base)
        return {**entry, "file": path, "file_sha256": sha256}

    def problems(self, entry: dict[str, Any], base: Path) -> Iterator[str]:
        return file_problems("file", base / entry["file"])


METHOD = Method(
    name="replay",
    impl=MethodImpl("hivebench.agents.replay.agent:ReplayAgent", version=1, reads_text=True, hooks=ReplayHooks()),
    schema="schema.yaml",
)
