"""Refactors keep results: a sample of cells of each suite, hashed per suite and compared with the
hashes the code wrote before issue 22's refactor (commit cbffe03): every table they write (the
per-agent table and its side tables, as Arrow data without the file's metadata) with its summary;
each cell's identity (the resolved cell and its hash, from the file's metadata); and every prompt
the LLM agent renders for them. (Not the files' bytes: Parquet's footer names the pyarrow that wrote
it, and the metadata hivebench's version.)

The sample is each suite's default tasks under each of its classical methods, the scripted LLM
backend and the replay method, at two populations (one for SwarmBench and Silo-Bench) and two seeds.
A change here that is meant to change results must bump the implementation's version and record the
new hash with the reason: the LLM agent's prompts changed once since (version 4, where its memory
moved from the suites' text views into the agent), so its cells' identities (which hold the
version) and the prompts have hashes of their own; the scripted episodes' tables did not change.
Issue 27 added two columns to the LLM agent's table for the episode viewer (VIEWER_COLUMNS: the raw
reply and the calls' response-cache keys) without changing any result or other column, and without a
version bump (that would rerun every LLM cell, paid calls included): the hash leaves them out, and the
test checks they are there.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hivebench.agents.llm.estimate import episode_estimate
from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.engine.loop import play_block
from hivebench.engine.writer import write_episode
from hivebench.ids import canonical_json
from hivebench.paths import cell_files
from hivebench.store import CELL_KEY, HASH_KEY

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
# What the code wrote before the refactor: {suite: (cells, sha256 of every cell's tables and summary,
# of the identities of the cells of every method but the LLM agent)}
BEFORE = {
    "loopbench": (
        28,
        "37275af51c69e046fffd85004258737162d159f431eb0a9d23c48ab6944f14c4",
        "5bfefdb69147deb3c8e07860caef8a5e027867021e50c14095c018e1b02551e6",
    ),
    "agentsnet": (
        160,
        "4256b422a3147d15ae625c5c1896ceeed23c449701ce2fbd2d44e429a2306aea",
        "f92b7547eff9cc88a47701086fdc386734c5eaba5453037265bb6a2e149eb812",
    ),
    "swarmbench": (
        40,
        "9180c456c19f7be184a5cad10f5545b12f8314267d2bd4320f089ab793f4fe02",
        "414d80b8e21ba9de81710294e9bbe56dc27a59fdf5876647cdfc407f7c6f2566",
    ),
    "silobench": (
        24,
        "db34d36f845064165ce09fab1d738be64b12449e9e88924610b8963c8cdb974d",
        # the identities since Silo-Bench's task version 2 (issue 23: partial credit for an answer of
        # the wrong size), so an LLM cell scored by the old rule reruns; the tables are as before
        "730ff47d714c21bc3d3504fd8721ce723a7ceb5ce6354ed0e81b5c346beb4e5c",
    ),
}
# The LLM agent's since its version 4 (its memory in the agent): {suite: (sha256 of its cells'
# identities, of its prompts)}
LLM_V4 = {
    "loopbench": (
        "84e6fe9da801f21b89a7ec03c077c2974db79521bd6fc558b4916e060f22c8d4",
        "ff606b769ff5ff824f6bcce0ecc162f61965dc56282baf70cf6da298ac681e9a",
    ),
    "agentsnet": (
        "25a4784027f6f5cab1abaa8db4e2821dc3cd4fb27094113eea67c2e9b00ab94e",
        "cf78feff89bb3dbae5faf9204ff0790caea2b3e7137033769b5be720e4e74480",
    ),
    "swarmbench": (
        "025c68a20bf481de658ce4a9e68b612cc7dd76ad914ce316ed76fed488f131ff",
        "2ee9f033e32973dae9eee7cbf15dc023706395001739a880ce9a36a6b58e79c5",
    ),
    "silobench": (
        "aaffdf90f74ec43bd0aebde8026cc724323aa2d1080048e1a4989be2a14f46da",  # Silo-Bench's task version 2
        "fab31e97770089b9ec30078aa5500dc8787359f329b6041bf15f4611d0a05484",
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


VIEWER_COLUMNS = ("reply", "call_keys")


def content(path: str) -> bytes:
    """A table as Arrow IPC bytes, without the file's metadata (the cell, its hash, the version) and
    without the LLM agent's VIEWER_COLUMNS."""
    table = pq.read_table(path)
    table = table.drop_columns([c for c in VIEWER_COLUMNS if c in table.column_names])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema.remove_metadata()) as writer:
        writer.write_table(table.replace_schema_metadata(None))
    return sink.getvalue().to_pybytes()


def identity(path: str) -> bytes:
    """The resolved cell and its hash, as the cell file's metadata holds them."""
    metadata = pq.read_schema(path).metadata
    return metadata[CELL_KEY] + metadata[HASH_KEY]


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
    blocks = all_blocks(validate(suite_config(suite, tmp_path), source), Path(source).parent)[suite]
    identities = {"llm": hashlib.sha256(), "other": hashlib.sha256()}
    tables, prompts, cells = hashlib.sha256(), hashlib.sha256(), 0
    for block in blocks:
        group = list(block.cells())
        llm = block.shared["method"]["kind"] == "llm"
        for cell, record in zip(group, play_block(group)):
            summary = write_episode(cell, cell_files(cell)[0], record)
            tables.update(canonical_json(summary).encode())
            identities["llm" if llm else "other"].update(identity(cell_files(cell)[0]))
            for path in cell_files(cell):
                tables.update(content(path))
            if llm:
                assert set(VIEWER_COLUMNS) <= set(pq.read_schema(cell_files(cell)[0]).names)
            cells += 1
        if llm and block.first == 0:
            episode_estimate(block.shared, prompt_hasher(prompts))
    assert (cells, tables.hexdigest(), identities["other"].hexdigest()) == BEFORE[suite]
    assert (identities["llm"].hexdigest(), prompts.hexdigest()) == LLM_V4[suite]
