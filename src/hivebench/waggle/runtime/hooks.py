"""What every method on the Waggle runtime declares: it runs the suites that have a Waggle adapter, and
its formal system's settings pass something through.

Standard library only: method declarations import this at parse time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.method import MethodHooks


class WaggleHooks(MethodHooks):
    """A method on the Waggle runtime runs the suites with a Waggle adapter (`Suite.waggle`)."""

    def suite_problems(self, entry: dict[str, Any], suite: str) -> Iterator[str]:
        from hivebench.registry import SUITE_OBJECTS

        if SUITE_OBJECTS[suite].waggle is None:
            adapted = sorted(name for name, s in SUITE_OBJECTS.items() if s.waggle is not None)
            yield f"kind: the Waggle runtime has no adapter for {suite} (it runs {', '.join(adapted)})"

    def problems(self, entry: dict[str, Any], base: Path) -> Iterator[str]:
        if "formal" in entry:
            yield from relay_problems(entry["formal"]["relay"])


def relay_problems(relay: dict[str, Any]) -> Iterator[str]:
    """A per-hop cap that no trace can pass: a relay is its source less `step` in support, novelty and
    TTL, so a minimum below what that leaves would be raised to it without a word."""
    if not relay["enabled"]:
        return
    step = relay["step"]
    for part, least in (("min_support", step), ("min_novelty", step), ("min_ttl", step + 1)):
        if relay[part] < least:
            yield (
                f"formal.relay.{part}: {relay[part]} is below what relay.step {step} leaves: a relay is its "
                f"source less {step}, so no source below {least} can be relayed (set {part} to at least {least}, "
                "or a smaller step)"
            )
