"""Results on disk: file modes, temporary files of killed writes, damaged cells found and redone,
job records for `hivebench status`, and errors on unwritable paths."""

from __future__ import annotations

import base64
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import read_only, write_config

from hivebench import cli, verify
from hivebench.cells import Block, Job, all_jobs, job_cells
from hivebench.config import validate
from hivebench.damage import job_damage, job_record, study_damage
from hivebench.engine.jobs import run_job
from hivebench.ids import canonical_json, digest
from hivebench.paths import cell_path
from hivebench.status import lock_note, status
from hivebench.store import (
    CELL_KEY,
    HASH_KEY,
    SEAL_KEY,
    SUMMARY_KEY,
    read_cell,
    sealed,
    temp_files,
    write_atomic,
    write_json,
)
from hivebench.verify import deep_damage


def job_command(block: Job) -> list[str]:
    """The episode job of a block, as the workflow's rule runs it."""
    spec = ["--spec", canonical_json(block.spec()), "--summary", block.summary_path, "--record", block.record_path]
    return [sys.executable, "-m", "hivebench", "episodes", *spec]


@pytest.fixture
def blocks(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return all_jobs(validate(config, "test"), tmp_path)["tiny"]


def run(block):
    return run_job(block.spec(), block.summary_path)


def keep_time(path: Path, change) -> None:
    """Change a file in place, then give it back its old modification time (as a disk error, or a
    copy restored with `cp -p`, would)."""
    before = path.stat()
    change(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def damage_a_page(path: Path) -> None:
    """Flip a byte inside the first column chunk's data page: the footer still reads."""
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset + chunk.total_compressed_size - 1] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_results_are_created_as_the_umask_says(tmp_path, umask, mode):
    import pyarrow as pa

    old = os.umask(umask)
    try:
        write_atomic(pa.table({"x": [1]}), tmp_path / "r" / "t.parquet")
    finally:
        os.umask(old)
    assert (tmp_path / "r" / "t.parquet").stat().st_mode & 0o777 == mode


def test_temporary_files_of_killed_writes_are_reaped_by_the_next_run(blocks):
    block = blocks[0]
    run(block)
    cells = [cell_path(cell) for cell in block.cells()]
    # What kill -9 leaves: the temporary file beside a cell that was being written, one beside a cell
    # that had been written before (kept by the rerun), and one of the block summary.
    for path in (cells[0], cells[3], block.summary_path):
        Path(path).with_name(f".{Path(path).name}.dead1234.tmp").write_bytes(b"PAR1")
    Path(cells[0]).unlink()
    assert run(block) == 1
    assert not any(temp_files(path) for path in (*cells, block.summary_path))


def test_a_killed_job_is_reported_and_its_rerun_completes(config, tmp_path, monkeypatch):
    config["tasks"]["cycle"]["steps"] = 400
    config["studies"]["tiny"]["populations"] = [3001]
    config["methods"]["random"]["seeds_per_job"] = 10
    block = all_jobs(validate(config, "test"), tmp_path)["tiny"][0]
    command = job_command(block)
    job = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.DEVNULL)
    first = tmp_path / cell_path(next(block.cells()))
    deadline = time.monotonic() + 60
    while not first.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    job.send_signal(signal.SIGKILL)
    job.wait()
    record = json.loads((tmp_path / block.record_path).read_text())
    assert record["state"] == "running" and record["pid"] == job.pid
    monkeypatch.chdir(tmp_path)  # restored after the test (other tests read files relative to it)
    report = status({"tiny": [block]}, {})
    assert report.rows[0]["failed"] > 0 and report.rows[0]["done"] >= 1
    assert f"job {block.summary_path}: killed (process {job.pid} is gone" in report.problems[0]
    subprocess.run(command, cwd=tmp_path, check=True, stderr=subprocess.DEVNULL)
    assert json.loads((tmp_path / block.record_path).read_text())["state"] == "done"
    assert status({"tiny": [block]}, {}).rows[0]["done"] == 10
    assert not list(tmp_path.rglob("*.tmp"))


def test_an_unwritable_cell_folder_is_one_line_naming_the_path(blocks, tmp_path):
    block = blocks[0]
    folder = Path(cell_path(next(block.cells()))).parent
    command = job_command(block)
    with read_only(folder):
        result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"hivebench episodes: error: [Errno {errno.EPERM if os.geteuid() == 0 else errno.EACCES}] "
        f"cannot write {folder}/s0.parquet: {'Operation not permitted' if os.geteuid() == 0 else 'Permission denied'}"
    ]
    record = json.loads(Path(block.record_path).read_text())
    assert (
        record["state"] == "failed" and record["exit"] == 2 and f"cannot write {folder}/s0.parquet" in record["error"]
    )
    report = status({"tiny": [block]}, {})
    assert report.rows[0]["failed"] == 5 and "failed (exit 2): [Errno" in report.problems[0]


def test_damage_is_judged_from_times_and_framing(blocks):
    block = blocks[0]
    assert job_damage(block) == {}  # not run: nothing to judge
    run(block)
    assert job_damage(block) == {}
    cells = [Path(cell_path(cell)) for cell in block.cells()]
    cells[0].write_bytes(cells[0].read_bytes()[:100])  # truncated
    keep_time(cells[1], lambda p: p.write_bytes(b"garbage, same old time"))
    cells[2].unlink()
    time.sleep(0.01)
    cells[3].touch()  # changed after the job: even if whole, it is not what the job wrote
    assert job_damage(block) == {
        str(cells[0]): "changed after its job finished",
        str(cells[1]): "not a whole Parquet file",
        str(cells[2]): "missing",
        str(cells[3]): "changed after its job finished",
    }
    keep_time(Path(block.summary_path), lambda p: p.write_bytes(b"PAR1 but cut"))
    assert job_damage(block)[block.summary_path] == "not a whole Parquet file"
    assert list(study_damage("tiny", blocks)) == [block.summary_path] and Path(block.summary_path).exists()
    assert run(block) == 3  # the damaged cells; the touched one reads back whole with its hash and is kept
    assert job_damage(block) == {}


def test_damage_inside_a_whole_file_is_found_by_reading_it_back(blocks):
    block = blocks[0]
    run(block)
    cell = Path(cell_path(next(block.cells())))
    keep_time(cell, damage_a_page)
    assert job_damage(block) == {} and pq.read_schema(cell).metadata  # invisible to the quick check
    assert deep_damage(block) == {str(cell): "does not read back whole"}
    assert run(block) == 1 and deep_damage(block) == {}


def test_a_cell_file_of_another_cell_is_redone(blocks):
    block = blocks[0]
    run(block)
    first, second = (Path(cell_path(cell)) for cell in list(block.cells())[:2])
    keep_time(second, lambda p: p.write_bytes(first.read_bytes()))
    assert deep_damage(block) == {str(second): "holds another cell (not its hash), or no summary"}


def test_status_says_when_a_killed_run_left_the_directory_locked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert lock_note() is None
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("results/x\n")
    assert "no Snakemake process runs here: a run was killed. `snakemake --unlock` frees it" in lock_note()


def test_seeds_the_config_has_just_added_are_pending_not_missing(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config["studies"]["tiny"]["seeds"] = 3
    block = all_jobs(validate(config, "test"), tmp_path)["tiny"][0]
    command = job_command(block)
    subprocess.run(command, check=True, capture_output=True)
    assert json.loads(Path(block.record_path).read_text())["seeds"] == [0, 1, 2]
    config["studies"]["tiny"]["seeds"] = 5  # the same aligned block of five seeds, grown
    grown = all_jobs(validate(config, "test"), tmp_path)["tiny"][0]
    assert grown.summary_path == block.summary_path and job_damage(grown) == {}
    Path(cell_path(next(grown.cells()))).unlink()
    assert job_damage(grown) == {cell_path(next(grown.cells())): "missing"}
    rows = status({"tiny": [grown]}, {}).rows[0]
    assert (rows["done"], rows["damaged"], rows["pending"]) == (2, 1, 2)


def change_summary(path: Path, copy: str = "arrow") -> None:
    """Change one digit of the summary in a cell file's footer: in the serialised Arrow schema (the
    copy pyarrow's table readers give), in Parquet's key-value copy beside it (the one
    `pq.ParquetFile(...).read()` gives), or in both (the file written again, its seal kept). Page
    checksums cover none of them."""
    if copy == "both":
        table = pq.read_table(path)
        summary = json.loads(table.schema.metadata[SUMMARY_KEY])
        summary["proximity"] += 1
        table = table.replace_schema_metadata({**table.schema.metadata, SUMMARY_KEY: json.dumps(summary).encode()})
        pq.write_table(table, path, write_page_checksum=True)
        return
    data = path.read_bytes()
    at, text = 0, data
    if copy == "arrow":
        text = pq.ParquetFile(path).metadata.metadata[b"ARROW:schema"]
        at = data.index(text)
        text = base64.b64decode(text)
    changed = bytearray(text)
    digit = changed.index(b'"proximity": ') + len(b'"proximity": ')
    changed[digit] = ord("1") if changed[digit] != ord("1") else ord("2")
    changed = base64.b64encode(changed) if copy == "arrow" else changed  # as long as before
    path.write_bytes(data[:at] + changed + data[at + len(changed) :])


@pytest.mark.parametrize(
    "copy,problem",
    [
        ("arrow", "its footer's two copies of its metadata differ"),
        ("parquet", "its footer's two copies of its metadata differ"),
        ("both", "its metadata (cell, summary, side-table hashes, columns) does not match its seal"),
    ],
)
def test_a_changed_summary_in_a_footer_is_found_and_its_cell_redone(blocks, copy, problem):
    block = blocks[0]
    run(block)
    cell = Path(cell_path(next(block.cells())))
    right = pq.read_table(block.summary_path).column("proximity")[0].as_py()
    keep_time(cell, lambda p: change_summary(p, copy))
    assert job_damage(block) == {}  # file times and framing intact
    assert deep_damage(block) == {str(cell): problem}
    assert run(block) == 1  # not kept
    assert pq.read_table(block.summary_path).column("proximity")[0].as_py() == right and deep_damage(block) == {}


def test_a_cell_file_written_before_seals_is_kept(blocks):
    block = blocks[0]
    run(block)
    cell = Path(cell_path(next(block.cells())))
    table = pq.read_table(cell)
    unsealed = {k: v for k, v in table.schema.metadata.items() if k != SEAL_KEY}
    keep_time(cell, lambda p: pq.write_table(table.replace_schema_metadata(unsealed), p, write_page_checksum=True))
    assert deep_damage(block) == {} and run(block) == 0


def test_the_seal_covers_every_hivebench_key_and_the_columns():
    import pyarrow as pa

    metadata = {CELL_KEY: b"{}", HASH_KEY: b"abc", SUMMARY_KEY: b'{"x": 1}', b"other": b"not covered"}
    columns = pa.schema([("agent", pa.int64()), ("color", pa.string())])
    assert (
        sealed(metadata, columns)[SEAL_KEY]
        != sealed(metadata, pa.schema([("agenT", pa.int64()), ("color", pa.string())]))[SEAL_KEY]
    )
    assert (
        sealed(metadata, columns)[SEAL_KEY]
        != sealed(metadata, pa.schema([("agent", pa.int32()), ("color", pa.string())]))[SEAL_KEY]
    )
    assert sealed(metadata, columns)[SEAL_KEY] == sealed(metadata, columns.with_metadata({b"other": b"x"}))[SEAL_KEY]
    seal = sealed(metadata)[SEAL_KEY]
    assert sealed({**metadata, b"other": b"changed"})[SEAL_KEY] == seal
    assert sealed({**metadata, SUMMARY_KEY: b'{"x": 2}'})[SEAL_KEY] != seal
    renamed = {(b"hivebench.summarY" if k == SUMMARY_KEY else k): v for k, v in metadata.items()}
    assert sealed(renamed)[SEAL_KEY] != seal
    assert sealed({k: v for k, v in metadata.items() if k != HASH_KEY})[SEAL_KEY] != seal


def test_a_cell_file_with_a_list_column_reads_back_whole(tmp_path):
    """A model method's cells keep each decision's cache keys as a list column: Arrow names its items
    `item` and Parquet `element`, and the seal must hold across the two (else every such cell reran)."""
    import pyarrow as pa

    table = pa.table({"agent": [0, 1], "call_keys": pa.array([["k1", "k2"], None], pa.list_(pa.string()))})
    metadata = {CELL_KEY: b"{}", HASH_KEY: b"abc", SUMMARY_KEY: b'{"x": 1}'}
    path = tmp_path / "s0.parquet"
    write_atomic(table.replace_schema_metadata(sealed(metadata, table.schema)), path)
    assert str(pq.read_schema(path).field("call_keys").type) == "list<element: string>"  # renamed on disk
    assert read_cell(path, "abc") == ({"x": 1}, {})


def test_a_cell_file_of_another_cell_is_damage_to_the_quick_check_once_its_job_recorded_its_cells(blocks):
    block = blocks[0]
    run(block)
    first, second = (Path(cell_path(cell)) for cell in list(block.cells())[:2])
    keep_time(second, lambda p: p.write_bytes(first.read_bytes()))
    assert job_damage(block) == {}  # no record: the quick check cannot tell it from a cell the config changed
    write_json({"state": "done", **job_cells(block.spec())}, block.record_path)
    assert job_damage(block) == {str(second): "holds another cell (its footer lacks the cell's hash)"}
    # A parameter change keeps the path, and the spec differs: the cells are stale (pending), not damage.
    shared = {**block.shared, "task": {**block.shared["task"], "version": "changed"}}
    changed = Job((Block(shared, block.seeds, block.first, block.last),))
    assert changed.summary_path == block.summary_path and job_damage(changed) == {}


def test_a_renamed_column_in_a_cell_footer_is_found_and_its_cell_redone(blocks):
    """Review of issue 21: a byte of a column name changed in the footer's schema (file size and time
    kept) was read back as a renamed column, and the file counted whole."""
    block = blocks[0]
    run(block)
    cell = Path(cell_path(next(block.cells())))
    name = pq.read_schema(cell).names[0]

    def rename(path: Path) -> None:
        data = bytearray(path.read_bytes())
        footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
        at = data.index(name.encode(), footer)  # the footer's schema comes first in it
        data[at] = ord(name[0].swapcase())
        path.write_bytes(bytes(data))

    keep_time(cell, rename)
    assert pq.read_table(cell).column_names[0] == name[0].swapcase() + name[1:]  # read back renamed
    assert job_damage(block) == {}  # file times and framing intact
    problem = "its metadata (cell, summary, side-table hashes, columns) does not match its seal"
    assert read_cell(cell, digest(next(block.cells()))) == (None, {str(cell): problem})
    assert deep_damage(block) == {str(cell): problem}
    assert run(block) == 1 and deep_damage(block) == {} and pq.read_schema(cell).names[0] == name


@pytest.mark.parametrize(
    "record",
    [
        {"state": "done", "seeds": 5},
        {"state": "done", "seeds": [0, "1"]},
        {"state": "done", "seeds": [0, 1, 2, 3, 4], "hashes": [1, 2, 3, 4, 5]},  # its spec's hash is set below
        {"state": "done", "hashes": "abc"},
        {"damage": ["x"], "damage_summary_mtime_ns": 0},
        {"damage": {"x": 1}},
        {"damage_summary_mtime_ns": "now"},
        {"state": ["failed"]},
        {"state": "running", "pid": "12"},
        ["not", "an", "object"],
    ],
)
def test_a_malformed_job_record_is_as_good_as_none(blocks, record):
    """Review of issue 21: a record edited by hand ("seeds": 5, an integer hash) raised TypeError or
    AttributeError in the quick damage check (then Block.damage), in every Snakemake run's parse."""
    block = blocks[0]
    run(block)
    if isinstance(record, dict) and "hashes" in record and "seeds" in record:
        record["spec"] = digest(block.spec())
    write_json(record, block.record_path)
    assert job_damage(block) == {}
    assert status({"tiny": [block]}, {}).rows[0]["done"] == 5
    assert job_record(block) == {}


def verify_main(tmp_path: Path, config: dict) -> int:
    write_config(tmp_path / "config.yaml", config)
    return cli.main(["verify", "config.yaml"])


def test_verify_keeps_no_damage_of_files_a_job_wrote_again_while_it_read_them(
    config, blocks, tmp_path, monkeypatch, capsys
):
    """Review of issue 21: the summary's time was taken when the record was written, so damage found
    in the old files was attached to the summary a job had written meanwhile."""
    block = blocks[0]
    run(block)
    keep_time(Path(cell_path(next(block.cells()))), damage_a_page)
    read = verify.deep_damage

    def read_while_the_job_reruns(block):
        damage = read(block)
        if damage:
            time.sleep(0.01)
            run(block)  # the job redoes the damaged cell and writes its summary again
        return damage

    monkeypatch.setattr(verify, "deep_damage", read_while_the_job_reruns)
    assert verify_main(tmp_path, config) == 1
    assert job_damage(block) == {} and "damage" not in job_record(block)  # the rerun's files are whole
    assert f"{block.summary_path}: written again while verify read it: not judged" in capsys.readouterr().out
    monkeypatch.setattr(verify, "deep_damage", read)
    assert verify_main(tmp_path, config) == 0


def test_verify_refuses_while_a_snakemake_run_holds_the_lock(config, blocks, tmp_path, monkeypatch, capsys):
    """Review of issue 21: verify read files and wrote job records while a running job wrote them."""
    from hivebench import status as status_module

    run(blocks[0])
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("results/x\n")
    monkeypatch.setattr(status_module, "_snakemake_processes_here", lambda: [4321])
    assert verify_main(tmp_path, config) == 2
    assert "a Snakemake run is in progress in this directory (process 4321)" in capsys.readouterr().err
    assert "damage" not in job_record(blocks[0])
    monkeypatch.setattr(status_module, "_snakemake_processes_here", lambda: [])  # a killed run's lock
    assert verify_main(tmp_path, config) == 0
