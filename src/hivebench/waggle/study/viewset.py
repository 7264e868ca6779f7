"""View sets: local views as a controller was shown them, kept apart from their episodes, and a
controller's decisions on them judged record by record ("Decision-level evaluation uses 800 held-out
local views": validity, the admission ladder, the derived modes, six-mode macro-F1 and exact
full-record match against a reference set of records, and orbit consistency).

- `sample` draws views from cells' `views` tables (a method on the view runtime writes one).
- `ViewBlock` stands the views as the agents of one block, each with only what its view holds: its own
  evidence, its incident traces (the channels it holds), its legal actions, its proposal. The ladder
  and the validator run on it exactly as in an episode.
- `decide` asks a controller (any `waggle` method's model settings) about every view, through one
  response cache, and admits each reply by the ladder.
- `orbit` relabels a view the way the runtime may: channel handles and claim handles through random
  bijections, incident records reshuffled; a consistent controller answers with the relabelled record.
- `evaluate` compares records with a reference set's and with their orbit's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from hivebench.agents.waggle.controller import ask
from hivebench.agents.waggle.ladder import RUNGS, Ladder
from hivebench.ids import canonical_json
from hivebench.models import Sampling
from hivebench.models.open import decider_for
from hivebench.waggle.runtime.adapter import Evidence
from hivebench.waggle.runtime.admit import Admitted, admit, keys
from hivebench.waggle.runtime.field import WIDTH, Incident
from hivebench.waggle.runtime.records import CLAIM_MAX, COMPASS, MODES, NONE, Decisions, parse
from hivebench.waggle.runtime.view import trace_values

SOURCE = ("study", "suite", "task", "method", "population", "seed", "step", "agent")  # where a view was shown
HANDLES = 256  # channel handles an orbit draws from (the field's pool)


def read_views(cells: list[dict[str, Any]]) -> pd.DataFrame:
    """Every view of the `views` tables of `cells` (each {"path", and the SOURCE fields but step and
    agent}), in the cells' order, with where it was shown and the record admitted on it (`record`;
    null in a table written before the runtime kept it)."""
    frames = []
    for cell in cells:
        table = pq.read_table(cell["path"]).to_pandas()
        for key in SOURCE[:6]:
            table[key] = cell[key]
        frames.append(table)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True).reindex(columns=[*SOURCE, "actions", "view", "record"])


def sample(cells: list[dict[str, Any]], count: int, seed: int) -> pd.DataFrame:
    """`count` views drawn without replacement by `seed` from the `views` tables of `cells`, all of them
    where there are fewer; in the cells' order."""
    views = read_views(cells).drop(columns="record", errors="ignore")  # the showing method's, not a controller's
    if len(views) > count:
        views = views.iloc[np.sort(np.random.default_rng(seed).choice(len(views), count, replace=False))]
    return views.reset_index(drop=True)


class ViewBlock:
    """Views as the agents of one block (agent i: views[i]), all with the same action names."""

    def __init__(self, views: list[dict[str, Any]], actions: tuple[str, ...]):
        self.views, self.actions = views, actions
        self.proposal = np.array([actions.index(v["worker_proposal"]) for v in views], dtype=np.int64)
        self.legal = np.array([[a in v["task_contract"]["actions"] for a in actions] for v in views], dtype=bool)
        seen = [(i, e) for i, v in enumerate(views) for e in v["private_state"]["evidence"] if not e.get("refuted")]
        self.evidence = Evidence(
            np.array([i for i, _ in seen], dtype=np.int64),
            np.array([e["claim"] for _, e in seen], dtype=np.int64),
            np.array([COMPASS.index(e["direction"]) if "direction" in e else NONE for _, e in seen], dtype=np.int64),
            np.zeros(len(seen), dtype=bool),
        )
        refuted = [
            (i, e["claim"]) for i, v in enumerate(views) for e in v["private_state"]["evidence"] if e.get("refuted")
        ]
        self.refuted = np.unique(
            keys(np.array([i for i, _ in refuted], dtype=np.int64), np.array([c for _, c in refuted], dtype=np.int64))
        )
        rows = [[i, NONE, *trace_values(t), 0] for i, v in enumerate(views) for t in v["incident_fields"]]
        self.incident = Incident(np.array(rows, dtype=np.int64).reshape(-1, WIDTH))
        self.channels = np.unique(keys(self.incident.receiver, self.incident.traces[:, 0]))

    def check(self, decisions: Decisions) -> Admitted:
        """The validator, against what each view holds and nothing else."""
        return admit(
            decisions,
            self.proposal,
            self.legal,
            self.evidence,
            self.incident,
            lambda agent, claim: np.isin(keys(agent, claim), self.refuted),
            lambda agent, handle: np.isin(keys(agent, handle), self.channels),
        )

    def modes(self, records: list[str]) -> list[str]:
        """The derived mode of each view's admitted record (canonical JSON)."""
        decisions = Decisions.private(self.proposal)
        for agent, record in enumerate(records):
            decisions.put(agent, parse(json.loads(record), self.actions))
        return [MODES[m] for m in self.check(decisions).mode]


def decide(views: pd.DataFrame, params: dict[str, Any], cache: str | Path, seed: int) -> pd.DataFrame:
    """A controller's admitted record for every view (the `waggle` method's `params`), each reply
    through the response cache `cache`; its sample index drawn from `seed` per view."""
    decider = decider_for(params, [cache])
    sampling = Sampling.of(params)
    samples = np.random.default_rng(seed).integers(0, 2**31 - 1, len(views))
    out = pd.DataFrame(
        index=views.index, columns=["rung", "first_code", "calls", "input_tokens", "output_tokens", "record"]
    )
    for positions, block in view_blocks(views):
        draws = {i: (int(samples[p]), 0) for i, p in enumerate(positions)}
        ladder = Ladder(block.actions, block.proposal, block.check)
        _, turns = ask(decider, sampling, dict(enumerate(block.views)), block.actions, draws, ladder)
        for i, p in enumerate(positions):
            t = turns[i]
            out.iloc[p] = [t.rung, t.first, t.calls, t.usage.input_tokens, t.usage.output_tokens, t.record]
    return out


def orbit(view: dict[str, Any], rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, dict[int, int]]]:
    """The view relabelled as the runtime may relabel it (its channel handles, in its incident traces
    and delivered frames, and its claim handles through random bijections, its incident records
    reshuffled) and the maps used ({"channel": .., "claim": ..})."""
    incident = view["incident_fields"]
    evidence = view["private_state"]["evidence"]
    held = view["local_commitment"]
    frames = view["private_state"].get("frames")  # NativeMsg's delivered frames, by channel
    channels = sorted({t["channel"] for t in incident} | {f["channel"] for f in frames or ()})
    claims = sorted(
        {t["claim"] for t in incident} | {e["claim"] for e in evidence} | ({held["claim"]} if held else set())
    )
    maps = {
        "channel": dict(zip(channels, (rng.choice(HANDLES, len(channels), replace=False) + 1).tolist())),
        "claim": dict(zip(claims, (rng.choice(CLAIM_MAX, len(claims), replace=False) + 1).tolist())),
    }
    moved = [
        {**t, "channel": maps["channel"][t["channel"]], "claim": maps["claim"][t["claim"]]}
        for t in (incident[i] for i in rng.permutation(len(incident)))
    ]
    private = {**view["private_state"], "evidence": [{**e, "claim": maps["claim"][e["claim"]]} for e in evidence]}
    if frames is not None:
        moved_frames = [{**f, "channel": maps["channel"][f["channel"]]} for f in frames]
        private["frames"] = sorted(moved_frames, key=lambda f: f["channel"])
    relabelled = {
        **view,
        "private_state": private,
        "incident_fields": moved,
        "local_commitment": {**held, "claim": maps["claim"][held["claim"]]} if held else None,
    }
    return relabelled, maps


def relabel(record: dict[str, Any], maps: dict[str, dict[int, int]]) -> dict[str, Any]:
    """An admitted record with its channels and claims through `maps` (channel 0, every channel, stays)."""
    channel, claim = maps["channel"], maps["claim"]
    deposits = [
        {**d, "channel": channel.get(d["channel"], d["channel"]), "claim": claim.get(d["claim"], d["claim"])}
        for d in record["deposits"]
    ]
    commit = record["commit"] and {
        **record["commit"],
        "claim": claim.get(record["commit"]["claim"], record["commit"]["claim"]),
    }
    return {**record, "deposits": deposits, "commit": commit}


def orbit_views(views: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Every view relabelled (`orbit`), with the maps that relabelled it (`maps`, JSON)."""
    rng = np.random.default_rng(seed)
    pairs = [orbit(json.loads(v), rng) for v in views["view"]]
    out = views.copy()
    out["view"] = [canonical_json(v) for v, _ in pairs]
    out["maps"] = [json.dumps({k: [[a, b] for a, b in m.items()] for k, m in maps.items()}) for _, maps in pairs]
    return out


def macro_f1(truth: list[str], predicted: list[str]) -> float:
    """The mean over the modes either list holds of each mode's F1 (the harmonic mean of its precision
    and recall)."""
    scores = []
    for mode in sorted(set(truth) | set(predicted)):
        hits = sum(t == p == mode for t, p in zip(truth, predicted))
        scores.append(2 * hits / (truth.count(mode) + predicted.count(mode)))
    return float(np.mean(scores)) if scores else float("nan")


def evaluate(
    views: pd.DataFrame,
    records: dict[str, pd.DataFrame],
    reference: str | None = None,
    orbits: dict[str, tuple[pd.DataFrame, pd.DataFrame]] | None = None,
) -> pd.DataFrame:
    """Per controller: views, each rung's count, the share of executable first decodes, the derived
    modes' shares; against `reference` (one of `records`): six-mode macro-F1 and exact full-record
    match (%); with its records on the orbit views (`orbits[name]`: those views and those records):
    the share of views whose orbit record is their record relabelled (%)."""
    blocks = view_blocks(views)
    modes = {name: _modes(blocks, r["record"].tolist()) for name, r in records.items()}
    rows = []
    for name, r in records.items():
        row: dict[str, Any] = {"controller": name, "views": len(r)}
        row |= {rung: int((r["rung"] == rung).sum()) for rung in RUNGS}
        row["executable (%)"] = 100 * row["executable"] / max(len(r), 1)
        row |= {f"{mode} (%)": 100 * modes[name].count(mode) / max(len(r), 1) for mode in MODES}
        if reference is not None:
            row["mode macro-F1 (%)"] = 100 * macro_f1(modes[reference], modes[name])
            same = [_canonical(a) == _canonical(b) for a, b in zip(r["record"], records[reference]["record"])]
            row["exact match (%)"] = 100 * float(np.mean(same)) if same else float("nan")
        if orbits and name in orbits:
            orbit_set, orbit_records = orbits[name]
            maps = [{k: dict(map(tuple, m)) for k, m in json.loads(text).items()} for text in orbit_set["maps"]]
            same = [
                canonical_json(relabel(json.loads(a), m)) == _canonical(b)
                for a, m, b in zip(r["record"], maps, orbit_records["record"])
            ]
            row["orbit consistency (%)"] = 100 * float(np.mean(same)) if same else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def view_blocks(views: pd.DataFrame) -> list[tuple[list[int], ViewBlock]]:
    """The views as blocks, one per set of action names, each with the views' positions."""
    blocks = []
    for actions_json, group in views.groupby("actions", sort=False):
        positions = [views.index.get_loc(i) for i in group.index]
        blocks.append((positions, ViewBlock([json.loads(v) for v in group["view"]], tuple(json.loads(actions_json)))))
    return blocks


def _modes(blocks: list[tuple[list[int], ViewBlock]], records: list[str]) -> list[str]:
    """Each view's derived mode of its record."""
    out: list[str] = [""] * len(records)
    for positions, block in blocks:
        for p, mode in zip(positions, block.modes([records[p] for p in positions])):
            out[p] = mode
    return out


def _canonical(record: str) -> str:
    return canonical_json(json.loads(record))


def write(frame: pd.DataFrame, path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
