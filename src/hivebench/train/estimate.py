"""`hivebench estimate` for corpora and trainings: a corpus's teacher calls and tokens, and the tokens a
training's updates read, before anything runs.

A view's prompt and its record's tokens are the mean over one episode (seed 0) of each task its
collection studies play, with the scripted controller in the slot (agents.waggle.estimate.shown_views)
and the rule teacher's record as the answer, counted as characters / 4 (approximate, marked "~"). A
corpus's views are its native views and its bundles' eight each; a model teacher makes one call per
view (the rule teacher none). A training reads, per update, `batch` examples in stage one; in stage two
as many orbit partners beside them and `transition_batch` transitions' prompts. Validation passes
(the validation split at every checkpoint) are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hivebench.agents.waggle.estimate import shown_views
from hivebench.agents.waggle.prompt import messages
from hivebench.cells import Block, seed_list
from hivebench.config import corpus_parts
from hivebench.ids import canonical_json
from hivebench.models import approximate_count
from hivebench.train.examples import answer_text
from hivebench.train.teacher import record

CLASSES = 8  # views per synthetic bundle


@dataclass(frozen=True)
class CorpusEstimate:
    corpus: str
    teacher: str
    views: int
    calls: int
    input_tokens: int  # the teacher's prompts (a model teacher's; the rule teacher reads the same views)
    output_tokens: int  # the records


@dataclass(frozen=True)
class TrainingEstimate:
    training: str
    stage: int
    seeds: int
    updates: int
    rows_per_update: int  # forward rows: examples, partners, transitions
    tokens: int  # over every seed's updates


EpisodeTokens = list[tuple[int, int]]  # per view shown in one episode: (prompt tokens, record tokens)


def episode_tokens(shared: dict[str, Any]) -> EpisodeTokens:
    actions, views = shown_views(shared)
    return [
        (
            approximate_count(list(messages(view, list(actions)))),
            len(answer_text(record(view), list(actions))) // 4 + 1,
        )
        for view in views
    ]


def view_tokens(blocks: list[Block], played: dict[str, EpisodeTokens]) -> tuple[float, float]:
    """(a view's prompt tokens, its rule-teacher record's) on average over one episode of each task of
    `blocks`; `played` keeps each task's episode, which corpora and transitions on one collection share."""
    counts = []
    for key, shared in {canonical_json(b.shared | {"study": ""}): b.shared for b in blocks}.items():
        if key not in played:
            played[key] = episode_tokens(shared)
        counts += played[key]
    if not counts:
        return 0.0, 0.0
    return sum(p for p, _ in counts) / len(counts), sum(a for _, a in counts) / len(counts)


def corpus_views(corpus: dict[str, Any]) -> int:
    return sum(
        spec["views"] if part == "native" else spec["bundles"] * CLASSES for _, part, spec in corpus_parts(corpus)
    )


def estimates(
    config: dict[str, Any], blocks: dict[str, list[Block]]
) -> tuple[list[CorpusEstimate], list[TrainingEstimate]]:
    """Per corpus and per training of a validated config; `blocks`: each study's blocks."""

    def showing(study: str, method: str) -> list[Block]:
        return [b for b in blocks.get(study, []) if b.shared["method"]["name"] == method]

    sizes, corpora, played = {}, [], {}
    for name, corpus in config["corpora"].items():
        parts = [b for _, _, spec in corpus_parts(corpus) for b in showing(spec["study"], spec["method"])]
        prompt, answer = view_tokens(parts, played)
        views = corpus_views(corpus)
        calls = 0 if corpus["teacher"] == "rule" else views
        corpora.append(
            CorpusEstimate(name, corpus["teacher"], views, calls, round(views * prompt), round(views * answer))
        )
        rollouts = (
            showing(corpus["transitions"]["study"], corpus["transitions"]["method"]) if "transitions" in corpus else []
        )
        sizes[name] = (prompt, answer, view_tokens(rollouts, played)[0] if rollouts else prompt)
    trainings = []
    for name, training in config["trainings"].items():
        prompt, answer, transition = sizes[training["corpus"]]
        seeds, updates, batch = len(seed_list(training["seeds"])), training["updates"], training["batch"]
        if "warm_start" in training:
            rows = 2 * batch + training["transition_batch"]
            per_update = 2 * batch * (prompt + answer) + training["transition_batch"] * transition
        else:
            rows, per_update = batch, batch * (prompt + answer)
        stage = 2 if "warm_start" in training else 1
        trainings.append(TrainingEstimate(name, stage, seeds, updates, rows, round(seeds * updates * per_update)))
    return corpora, trainings


def table(corpora: list[CorpusEstimate], trainings: list[TrainingEstimate]) -> str:
    lines = ["corpus\tteacher\tviews\tteacher calls\tinput tokens\toutput tokens"]
    lines += [f"{c.corpus}\t{c.teacher}\t{c.views}\t{c.calls}\t~{c.input_tokens}\t~{c.output_tokens}" for c in corpora]
    lines += ["", "training\tstage\tseeds\tupdates\trows per update\ttokens (all seeds)"]
    lines += [f"{t.training}\t{t.stage}\t{t.seeds}\t{t.updates}\t{t.rows_per_update}\t~{t.tokens}" for t in trainings]
    return "\n".join(lines)
