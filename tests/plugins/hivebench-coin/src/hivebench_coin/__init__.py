"""The `coin` method: each agent, with probability `p`, replies at random within the JSON Schema its
suite's text view gives for its reply this round; otherwise (or where it cannot make a valid reply)
it takes the view's fallback. Declared with the standard library alone, as hivebench asks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hivebench.method import Method, MethodHooks, MethodImpl


class CoinHooks(MethodHooks):
    def problems(self, entry: dict[str, Any], base: Path) -> Iterator[str]:
        if entry["p"] == 0 and entry["mode"] == "schema":
            yield "p: 0 never answers: use the suite's fallback method instead"

    def job_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"runtime": 5, "mem_mb": 500}


METHOD = Method(
    name="coin",
    impl=MethodImpl("hivebench_coin.agent:CoinAgent", version=1, reads_text=True, hooks=CoinHooks()),
    schema="schema.yaml",
)
