"""`hivebench status`: done, pending and failed cells from the files on disk."""

from __future__ import annotations

from hivebench.cells import all_blocks
from hivebench.config import validate
from hivebench.runtime import run_block
from hivebench.status import block_log, status


def test_status_counts_done_pending_and_failed(config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = all_blocks(validate(config, "test"), tmp_path)
    random_blocks = [b for b in blocks["tiny"] if b.shared["method"]["name"] == "random"]
    run_block(random_blocks[0].spec(), random_blocks[0].summary_path)  # 5 cells done
    log = block_log(random_blocks[1])
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("Traceback (most recent call last):\n  ...\nValueError: boom\n")  # 5 cells failed
    rows = {r["method"]: r for r in status(blocks, {})}
    assert (rows["random"]["cells"], rows["random"]["done"], rows["random"]["failed"], rows["random"]["pending"]) == (20, 5, 5, 10)
    assert (rows["soft_fp"]["done"], rows["soft_fp"]["pending"]) == (0, 20)
    config["methods"]["random"]["seeds_per_job"] = 5
    config["tasks"]["cycle"]["steps"] = 16  # a parameter change: finished cells become stale
    stale = {r["method"]: r for r in status(all_blocks(validate(config, "test"), tmp_path), {})}
    assert stale["random"]["done"] == 0
