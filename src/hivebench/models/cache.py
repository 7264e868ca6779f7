"""A content-addressed response cache: one append-only JSON Lines file per cell.

One file per cell keeps concurrent Snakemake jobs (and cluster nodes sharing a filesystem) from ever
writing the same file. Each line holds the key, the result, the model that answered (`model`, with a
local model's precision: `name:dtype`) and the chat that was asked (`messages`: what the episode viewer
shows as the prompt; a reader needs only the key and the result). Each
finished call is appended and flushed at once, so a killed episode keeps every reply it had paid for;
a torn last line (killed mid-write) is ignored on reading.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hivebench.models import ChatResult, Message


def cache_records(path: str | Path) -> Iterator[tuple[dict[str, Any], ChatResult]]:
    """A cache file's whole records, each with its result read (a line torn by a kill mid-write is
    skipped); none where there is no file."""
    if not Path(path).exists():
        return
    with Path(path).open("rb") as lines:  # bytes: a tear may split a multi-byte character
        yield from records_in(lines)


def records_in(lines: Iterable[bytes]) -> Iterator[tuple[dict[str, Any], ChatResult]]:
    """The records of a cache file's lines, each with its result read (a torn line skipped)."""
    for line in lines:
        try:
            record = json.loads(line)
            yield record, ChatResult.from_json(record["result"])
        except (ValueError, KeyError, TypeError):  # ValueError covers bad UTF-8 and JSON
            continue


def recorded_seconds(lines: Iterable[bytes]) -> list[float]:
    """The seconds each call of a cache file's lines took (its result's `latency_s`), of the calls
    that recorded any (a scripted reply records none), in the file's order."""
    return [result.usage.latency_s for _, result in records_in(lines) if result.usage.latency_s > 0]


class ResponseCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.entries: dict[str, ChatResult] = {}
        self.hits = 0
        # After a torn last line, the next record must start on a line of its own.
        self._torn = self.path.exists() and self.path.stat().st_size > 0 and not self.path.read_bytes().endswith(b"\n")
        records = list(cache_records(self.path))
        self.entries = {record["key"]: result for record, result in records}
        self.models = {record["model"] for record, _ in records if "model" in record}  # older files: none

    def get(self, key: str) -> ChatResult | None:
        result = self.entries.get(key)
        if result is not None:
            self.hits += 1
        return result

    def put(self, key: str, result: ChatResult, model: str, messages: Sequence[Message] = ()) -> None:
        self.entries[key] = result
        self.models.add(model)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        record = {"key": key, "result": result.to_json(), "model": model, "messages": list(messages)}
        line = json.dumps(record, ensure_ascii=False) + "\n"
        if self._torn:
            line, self._torn = "\n" + line, False
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())
