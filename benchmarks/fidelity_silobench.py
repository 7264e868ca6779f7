"""Silo-Bench beside its reference: what each difference (hivebench.suites.silobench.DIFFERENCES)
changes, measured with the classical baselines where it acts on them and on the LLM agent's prompt
where it acts on that alone.

    .venv/bin/python benchmarks/fidelity_silobench.py [--sweep]

- the default config's silobench study (config/config.yaml: I-09, II-11, III-23 on degree-three
  ports, R = 9, N = 8 and 16, 10 seeds, distributed and local) under hivebench's rules and under
  `compat: reference`: mean S, success, P, density, messages, diameter and rounds used;
- `--sweep`: every task x distributed, local, random x {p2p, broadcast, store on the complete
  topology; p2p and broadcast on regular3} x N = 4, 8, 16 x 3 seeds in both modes: the cells whose
  scores or messages differ, and the rounds used;
- the prompt: `received` (p2p, N = 8, R = 9, every shard sent in round 0, `history: 2`: the other
  shards in the answer round's prompt) and `store_view` (N = 64, every shard written in round 0: the
  other shards in agent 0's prompt by round, and its length; `calls` lists in round 1 and reads
  every key in round 2);
- the partial credit of the three over-long answers of issue 23.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.suites.silobench.instances import instance
from hivebench.suites.silobench.scoring import judge
from hivebench.suites.silobench.task import SiloTask
from hivebench.suites.silobench.text import SiloView

FIELDS = ("exact", "success", "partial", "density", "messages", "diameter", "rounds_used")
SWEEP = [
    ("p2p", "complete", 1),
    ("broadcast", "complete", 2),
    ("store", "complete", 1),
    ("p2p", "regular3", 2),
    ("broadcast", "regular3", 3),
    ("p2p", "regular3", 9),
]
CAPS = {"message_chars": 16000, "store_chars": 10**6, "writes_per_round": 8, "oracle": False}


def summaries(tasks: dict, methods: list[str], populations: list[int], seeds: int) -> dict[tuple, dict[str, Any]]:
    """(method, task ID, N, seed) -> the episode's summary, every cell played by the engine."""
    config = {
        "tasks": tasks,
        "methods": {m: {"kind": m, "seeds_per_job": 100} for m in methods},
        "studies": {"s": {"tasks": list(tasks), "methods": methods, "populations": populations, "seeds": seeds}},
    }
    out = {}
    for block in all_blocks(validate(config, "x.yaml"), Path("."))["s"]:
        cells = list(block.cells())
        for cell, record in zip(cells, play_block(cells)):
            key = (cell["method"]["kind"], cell["task"]["name"], cell["population"], cell["seed"])
            out[key] = record.summary
    return out


def default_study() -> None:
    config = yaml.safe_load(open("config/config.yaml"))
    study = config["studies"]["silobench"]
    for mode in ("hivebench", "reference"):
        runs = summaries(
            {"silo": {**config["tasks"]["silo"], "compat": mode}},
            study["methods"],
            study["populations"],
            study["seeds"],
        )
        groups = defaultdict(list)
        for (method, _, n, _), summary in runs.items():
            groups[(method, summary["silo_task"], n)].append(summary)
        print(f"\ndefault study, compat: {mode} (means over {study['seeds']} seeds)")
        print("method task N | " + " ".join(FIELDS))
        for key, group in sorted(groups.items()):
            means = [sum(s.get(f, s["rounds"]) for s in group) / len(group) for f in FIELDS]  # rounds_used: R
            print(*key, "|", " ".join(f"{m:.4g}" for m in means))


def sweep() -> None:
    runs = {}
    for mode in ("hivebench", "reference"):
        for protocol, topology, rounds in SWEEP:
            task = {"kind": "silobench", "task": "all", "protocol": protocol, "topology": topology, "rounds": rounds}
            found = summaries({"t": {**task, "compat": mode}}, ["distributed", "local", "random"], [4, 8, 16], 3)
            runs.update({(mode, protocol, topology, rounds, *key): s for key, s in found.items()})
    compared = ("exact", "success", "partial", "messages", "deliveries", "message_chars")
    ours = {key[1:]: s for key, s in runs.items() if key[0] == "hivebench"}
    theirs = {key[1:]: s for key, s in runs.items() if key[0] == "reference"}
    differ = [key for key in ours if any(ours[key][f] != theirs[key][f] for f in compared)]
    print(f"\nsweep: {len(ours)} cells a mode; {len(differ)} differ in {', '.join(compared)}")
    used = defaultdict(list)
    for (protocol, topology, rounds, method, *_), summary in theirs.items():
        used[(method, protocol, topology, rounds)].append(summary["rounds_used"])
    for (method, protocol, topology, rounds), values in sorted(used.items()):
        print(f"  {method} {protocol} {topology} R = {rounds}: {sum(values) / len(values):.2f} rounds used")


def shards_seen(text: str, shards: tuple, agent: int) -> int:
    return sum(json.dumps(shard) in text for v, shard in enumerate(shards) if v != agent)


def prompts() -> None:
    view, n, rounds, window = SiloView(), 8, 9, 2
    for received in ("window", "all"):
        params = {"task": "I-01", **CAPS, "protocol": "p2p", "topology": "complete", "rounds": rounds}
        game = SiloTask({**params, "received": received}, n)
        game.reset([0])
        shards = game.instances[0].shards
        for t in range(rounds):
            sends = [{str(u): json.dumps(shards[v]) for u in range(n) if u != v} if t == 0 else {} for v in range(n)]
            game.step(view.actions(game.observe(), [{"messages": m} for m in sends]))
        text = view.turn(game.observe(), 0, window)
        print(
            f"\nreceived: {received}, p2p N = {n}, R = {rounds}, history: {window}: the answer round's prompt holds "
            f"{shards_seen(text, shards, 0)} of {n - 1} other shards, {len(text)} characters"
        )
    n = 64
    for store_view in ("whole", "calls"):
        params = {"task": "I-01", **CAPS, "protocol": "store", "topology": "complete", "rounds": 4}
        game = SiloTask({**params, "store_view": store_view}, n)
        game.reset([0])
        shards, seen = game.instances[0].shards, []
        for t in range(4):
            views = game.observe()
            text = view.turn(views, 0, 0)
            seen.append(f"round {t + 1}: {shards_seen(text, shards, 0)} ({len(text)} characters)")
            calls = {"list": t == 0, "read": [str(v) for v in range(n)] if t == 1 else []}
            replies = [
                {"writes": {str(v): json.dumps(shards[v])} if t == 0 else {}, **(calls if views.by_calls else {})}
                for v in range(n)
            ]
            game.step(view.actions(views, replies))
        print(f"store_view: {store_view}, N = {n}: other shards in agent 0's prompt: {'; '.join(seen)}")


def over_long() -> None:
    own = instance("II-11", 4, 0).expected(1)
    inst = instance("III-21", 4, 0)
    whole = sorted(value for shard in inst.shards for value in shard)
    centroids = instance("III-25", 4, 0).expected(0)
    print("\nover-long answers, partial credit:")
    print("  II-11 own slice + 5 junk:", judge([*own, 0, 0, 0, 0, 0], own, "II")[1])
    print("  III-21 whole sorted list (N = 4):", judge(whole, inst.expected(2), "III")[1])
    print("  III-25 3 centroids + 2:", judge([*centroids, [0.0, 0.0], [1.0, 1.0]], centroids, "III")[1])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="also every task in both modes (a few seconds)")
    args = parser.parse_args()
    default_study()
    if args.sweep:
        sweep()
    prompts()
    over_long()
