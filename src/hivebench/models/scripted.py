"""A backend that answers from a file: for tests, demonstrations and dry runs without a model.

`backend: scripted` with `model: replies.jsonl` (relative to the config file): each line is one reply,
given in order to the episode's requests (round by round, agent by agent, a round's repairs after
it). A line holding a JSON string is the reply's text; any other JSON value is the reply itself
(`{"color": 1, "notes": "hold"}`). Every episode starts again at the first line, and its replies do not
go through the response cache (they cost nothing, and a rerun must read the file again from the top).
"""

from __future__ import annotations

import json
from pathlib import Path

from hivebench.models import BackendError, ChatRequest, ChatResult, OnResult, Usage


class RepliesError(BackendError):
    """A scripted file that cannot answer an episode: not UTF-8, a line that is not JSON, or too few
    replies. Validation refuses the first two (hivebench.models.hooks); the count an episode needs is
    known only as it plays (repairs ask again), so running out is said in the job, with the config key
    (hivebench.engine.loop.play_block)."""


def read_replies(path: str | Path) -> list[str]:
    """The reply texts of a scripted file; RepliesError naming the file (and line) for one that is not
    UTF-8 or has a line that is not JSON."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RepliesError(f"{path}: not UTF-8 text (an invalid byte at offset {exc.start})") from None
    replies = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RepliesError(f"{path}:{number}: not a JSON value ({exc.msg})") from None
        replies.append(value if isinstance(value, str) else json.dumps(value))
    return replies


class ScriptedBackend:
    name = "scripted"
    cacheable = False

    def __init__(self, path: str | Path):
        self.model = str(path)
        self.replies = read_replies(path)
        self.used = 0

    def complete(self, requests: list[ChatRequest], on_result: OnResult) -> list[ChatResult]:
        results = []
        for index, _ in enumerate(requests):
            if self.used >= len(self.replies):
                raise RepliesError(
                    f"{self.model}: {len(self.replies)} scripted replies, and request {self.used + 1} needs one more"
                )
            results.append(ChatResult(self.replies[self.used], Usage(), mode="scripted"))
            self.used += 1
            on_result(index, results[-1])
        return results
