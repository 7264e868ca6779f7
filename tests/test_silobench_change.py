"""Silo-Bench's late-counterevidence intervention (`change_at`, III-26 on p2p ports): one owner's shard
changes at that round; the flood passes the new version on, and an agent answers the new data exactly
when the new version could reach it (its distance from the owner, in hops, at most the rounds left),
the old data otherwise. Without `change_at` nothing changes (tests/test_same_results.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from hivebench.cells import all_blocks
from hivebench.config import ConfigError, validate
from hivebench.engine.loop import make_policy, make_task, play_block, run

N, ROUNDS = 16, 9


def played(kind: str, change_at: int, seeds: int = 3):
    config = {
        "tasks": {
            "t": {
                "kind": "silobench",
                "task": "III-26",
                "topology": "regular3",
                "rounds": ROUNDS,
                "change_at": change_at,
            }
        },
        "methods": {"m": {"kind": kind}},
        "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": seeds}},
    }
    (block,) = all_blocks(validate(config, "test"), Path("test").parent)["s"]
    cells = list(block.cells())
    task = make_task(cells[0])
    task.reset([cell["seed"] for cell in cells])
    return task, run(task, make_policy(cells))


def reach(task, episode: int) -> np.ndarray:
    """Hops from the changed owner to every agent of the episode."""
    g = task.block.graphs[episode]
    adjacency = csr_matrix((np.ones(len(g.indices)), g.indices, g.indptr), shape=(N, N))
    return shortest_path(adjacency, unweighted=True, indices=int(task.changed[episode]))


@pytest.mark.parametrize("kind", ["distributed", "fixedswarm"])
@pytest.mark.parametrize("change_at", [5, 7, 8])
def test_an_agent_answers_the_new_data_when_the_new_version_could_reach_it(kind, change_at):
    task, records = played(kind, change_at)
    for s, record in enumerate(records):
        near = reach(task, s) <= ROUNDS - change_at
        assert record.summary["recovery"] == pytest.approx(near.mean())
        assert record.summary["stale_answers"] == pytest.approx(1 - near.mean())  # III-26 moves the count
        exact = np.array(record.agents["exact"])[-N:]
        assert (exact == near).all()


def test_the_changed_instance_differs_in_one_shard_and_the_answer_is_the_new_datas():
    task, _ = played("local", 3, seeds=4)
    for before, after, owner in zip(task.before, task.instances, task.changed):
        differ = [i for i, (a, b) in enumerate(zip(before.shards, after.shards)) if a != b]
        assert differ == [owner]
        assert after.answer == len({v for shard in after.shards for v in shard}) != before.answer


def test_the_change_is_iii26_on_p2p_only_and_in_a_communication_round():
    base = {"kind": "silobench", "task": "III-26", "topology": "regular3", "rounds": ROUNDS}
    cases = [
        ({**base, "task": "I-04", "change_at": 3}, "tasks.t.change_at: the shard change runs III-26 on p2p ports"),
        ({**base, "protocol": "broadcast", "change_at": 3}, "protocol broadcast"),
        ({**base, "change_at": ROUNDS}, "is not a communication round"),
    ]
    for task, message in cases:
        config = {
            "tasks": {"t": task},
            "methods": {"m": {"kind": "distributed"}},
            "studies": {"s": {"tasks": ["t"], "methods": ["m"], "populations": [N], "seeds": 1}},
        }
        with pytest.raises(ConfigError, match=message):
            validate(config, "test")
    served = {"backend": "openai", "model": "x", "base_url": "http://localhost:1/v1"}
    # an LLM agent's messages and SwarmSys's posts (over the complete topology it routes on) alike
    for kind, topology in (("llm", base.get("topology", "regular3")), ("swarmsys", "complete")):
        config["tasks"]["t"] = {**base, "topology": topology, "change_at": 3}
        config["methods"]["m"] = {"kind": kind, **served}
        with pytest.raises(ConfigError, match=f"change_at: a {kind} method passes shards on as text its model writes"):
            validate(config, "test")


# Hashes of what each talking control wrote at 08ede4d (before the shard versions): its tables and its
# summary, without the mode counts added since. The flood's rewritten bookkeeping must not change them.
# Since then every method on the runtime counts more of the formal system's telemetry (ADDED_SINCE), and
# a commitment on Silo-Bench no longer ends the round it is made (issue 38's first bug): FixedSwarm now
# commits, which changes its records' modes and commitment counts and nothing else, so its hash is of
# what it wrote at b3c3e13 (the bug's last commit) without those.
BEFORE_VERSIONS = {"nativemsg": "3b980c47c48079bc", "fixedswarm": "1555af426f41482a"}
ADDED_SINCE = {
    "challenge_repeats_blocked",
    "relay_repeats_blocked",
    "relays_capped",
    "commits_gated",
    "commits_inhibited",
    "verified_challenges",
}
COMMITMENTS = {"commits", "reopenings", "commitments_expired"}


@pytest.mark.parametrize("kind", sorted(BEFORE_VERSIONS))
def test_without_a_change_the_talking_controls_write_what_they_wrote_before(kind):
    config = {
        "tasks": {
            "silo": {"kind": "silobench", "task": ["I-09", "III-23", "III-26"], "topology": "regular3", "rounds": 9}
        },
        "methods": {"m": {"kind": kind}},
        "studies": {"s": {"tasks": ["silo"], "methods": ["m"], "populations": [8], "seeds": 2}},
    }
    digest = hashlib.sha256()
    for block in all_blocks(validate(config, "pin"), Path("pin").parent)["s"]:
        for record in play_block(list(block.cells())):
            for name, table in [("agents", record.agents), *sorted(record.tables.items())]:
                digest.update(name.encode())
                columns = pa.table(table).to_pydict()
                if kind == "fixedswarm" and name == "agents":
                    columns.pop("mode")
                digest.update(json.dumps(columns, sort_keys=True, default=str).encode())
            dropped = ADDED_SINCE | (COMMITMENTS if kind == "fixedswarm" else set())
            kept = {k: v for k, v in record.summary.items() if not k.startswith("mode_") and k not in dropped}
            digest.update(json.dumps(kept, sort_keys=True, default=str).encode())
    assert digest.hexdigest()[:16] == BEFORE_VERSIONS[kind]
