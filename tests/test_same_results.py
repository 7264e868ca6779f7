"""Refactors keep results: every file a sample of cells of each suite writes (the per-agent table and
its side tables, metadata included), byte for byte; their tables and summaries alone (what an
episode is, without the cell's identity, which holds the methods' versions); and every prompt the LLM
agent renders for them: hashed per suite and compared with the hashes the code wrote before issue
22's refactor (commit cbffe03).

The sample is each suite's default tasks under each of its classical methods, the scripted LLM
backend and the replay method, at two populations (one for SwarmBench and Silo-Bench) and two seeds.
A change here that is meant to change results must bump the implementation's version and record the
new hash with the reason: the LLM agent's prompts changed once since (version 4, where its memory
moved from the suites' text views into the agent), so its cells' files (whose metadata holds the
version) and the prompts have hashes of their own; the scripted episodes' tables did not change.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hivebench.agents.llm.estimate import episode_estimate
from hivebench.cells import expand_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.engine.writer import write_episode
from hivebench.ids import canonical_json
from hivebench.paths import cell_files

AGENTSNET = {
    f"{problem}-{family[:2]}": {"kind": "agentsnet", "problem": problem, "family": family}
    for problem in ("coloring", "vertex_cover", "matching", "leader_election", "consensus")
    for family in ("watts_strogatz", "delaunay")
}
SWARMBENCH = {
    f"swarm-{task}": {"kind": "swarmbench", "task": task}
    for task in ("pursuit", "synchronization", "foraging", "flocking", "transport")
}
SUITES = {
    "loopbench": (
        {"cycle": {"kind": "coloring", "steps": 6}},
        ["soft_fp", "soft_cfp", "conservative_random", "random", "greedy"],
        [3, 5],
    ),
    "agentsnet": (AGENTSNET, ["distributed", "random"], [4, 8]),
    "swarmbench": (SWARMBENCH, ["heuristic", "random"], [8]),
    "silobench": (
        {"silo": {"kind": "silobench", "task": ["I-09", "II-11", "III-23"], "topology": "regular3", "rounds": 4}},
        ["distributed", "local"],
        [8],
    ),
}
# The scripted model's replies, in turn: valid in one suite, invalid in the others (so repairs and
# fallbacks are in the sample too).
REPLIES = [
    {"color": 1, "notes": "hold"},
    {"action": "stay", "message": "here", "notes": "n"},
    {"answer": "1", "notes": "agreed"},
    "not json",
    {"messages": {}, "notes": ""},
]
# What the code wrote before the refactor: {suite: (cells, sha256 of the files of the cells of every
# method but the LLM agent, of every cell's tables and summary)}
BEFORE = {
    "loopbench": (
        28,
        "a8922863b6fea86cef03174709cde8c5372b78e065d7f83c9f53b78e78570cc0",
        "37275af51c69e046fffd85004258737162d159f431eb0a9d23c48ab6944f14c4",
    ),
    "agentsnet": (
        160,
        "c01b4615de1b3743316696829a2c9224a8e0f102442d082aa1ae2e5511e058ce",
        "4256b422a3147d15ae625c5c1896ceeed23c449701ce2fbd2d44e429a2306aea",
    ),
    "swarmbench": (
        40,
        "111dd9d8526617e7e7e717a7e65d2e5946ea7cea1cf649338102c271ca797c24",
        "9180c456c19f7be184a5cad10f5545b12f8314267d2bd4320f089ab793f4fe02",
    ),
    "silobench": (
        24,
        "aae2354fe0cddffe76b73b9336f80d2af302b4f8976e3b84db5ec3280d156967",
        "db34d36f845064165ce09fab1d738be64b12449e9e88924610b8963c8cdb974d",
    ),
}
# The LLM agent's since its version 4 (its memory in the agent): {suite: (sha256 of its cells' files, of its prompts)}
LLM_V4 = {
    "loopbench": (
        "09561aa54446b0f00e3232003f9fc6fa0806561bffb39b41ef0d5feb89f341c6",
        "8be331d87a8b3a0174a428b46b41cd6b7c51eca0327d4e718b301acf0ca8ae53",
    ),
    "agentsnet": (
        "abb09b02d5e950976782ff621de12161d7a06fead9a215639956068a7aee4d43",
        "409572400f2fa3abcb54a143f31808adde9145b33cb6d841847345bdcce981aa",
    ),
    "swarmbench": (
        "4de1bcb7d8763025c4dfdb3fbf227e0c8bd6676bc84b5dabb7e47b5d42e4bcce",
        "6940015fcd24bb7a5ef6056a90f34eeb0adf93b7afa1c738af13d27bf58224db",
    ),
    "silobench": (
        "166cf2e1b3eb790c0aaf30cd9c6b47d02b5777df9fda363c7e55f80f8312edc3",
        "2f9b64ca8ed72bad40ce3bc815d675c104353fe8bb0dfed9e4238249bd70bdd2",
    ),
}


def suite_config(suite: str, folder: Path) -> dict:
    tasks, classical, populations = SUITES[suite]
    (folder / "replies.jsonl").write_text("".join(json.dumps(REPLIES[i % len(REPLIES)]) + "\n" for i in range(20_000)))
    replay = [
        {"step": t, "agent": v, "reply": REPLIES[(t + v) % len(REPLIES)]}
        for t in range(4)
        for v in range(8)
        if isinstance(REPLIES[(t + v) % len(REPLIES)], dict)
    ]
    (folder / "replay.jsonl").write_text("".join(json.dumps(line) + "\n" for line in replay))
    methods = {name: {"kind": name} for name in classical}
    methods["scripted"] = {
        "kind": "llm",
        "backend": "scripted",
        "model": "replies.jsonl",
        "notes_chars": 24,
        "history": 2,
    }
    methods["replay"] = {"kind": "replay", "file": "replay.jsonl"}
    study = {"tasks": list(tasks), "methods": list(methods), "populations": populations, "seeds": 2}
    return {"tasks": tasks, "methods": methods, "studies": {suite: study}}


def content(path: str) -> bytes:
    """A table as Arrow IPC bytes, without the file's metadata (the cell, its hash, the version)."""
    table = pq.read_table(path)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema.remove_metadata()) as writer:
        writer.write_table(table.replace_schema_metadata(None))
    return sink.getvalue().to_pybytes()


def prompt_hasher(hasher: hashlib._Hash):
    def count(messages: list[dict[str, str]]) -> int:
        hasher.update(canonical_json(messages).encode())
        return 0

    return count


@pytest.mark.parametrize(
    "suite", [pytest.param(s, marks=[pytest.mark.slow] if s == "swarmbench" else []) for s in SUITES]
)  # SwarmBench's ~6 s
def test_a_sample_of_cells_writes_the_same_files_and_prompts_as_before(suite, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = str(tmp_path / "config.yaml")
    blocks = expand_blocks(validate(suite_config(suite, tmp_path), source), source)[suite]
    files = {"llm": hashlib.sha256(), "other": hashlib.sha256()}
    tables, prompts, cells = hashlib.sha256(), hashlib.sha256(), 0
    for block in blocks:
        group = list(block.cells())
        llm = block.shared["method"]["kind"] == "llm"
        for cell, record in zip(group, play_block(group)):
            summary = write_episode(cell, cell_files(cell)[0], record)
            tables.update(canonical_json(summary).encode())
            for path in cell_files(cell):
                files["llm" if llm else "other"].update(Path(path).read_bytes())
                tables.update(content(path))
            cells += 1
        if llm and block.first == 0:
            episode_estimate(block.shared, prompt_hasher(prompts))
    assert (cells, files["other"].hexdigest(), tables.hexdigest()) == BEFORE[suite]
    assert (files["llm"].hexdigest(), prompts.hexdigest()) == LLM_V4[suite]
