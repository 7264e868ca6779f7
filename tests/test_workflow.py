"""The real Snakemake workflow on a tiny config in a temporary directory."""

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from conftest import snakemake_command, write_config

pytestmark = pytest.mark.workflow


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    command = snakemake_command(workdir, "--cores", "2", "--scheduler", "greedy", *args)
    result = subprocess.run(command, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def planned_jobs(workdir: Path) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table of a dry run."""
    out = snakemake(workdir, "-n").stdout
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", out, re.M) if m[1] != "total"}


def rerun_of(blocks: int, pages: bool) -> dict[str, int]:
    """The jobs a run plans once `blocks` episode blocks of the tiny LoopBench study must run again;
    `pages`: one of them holds a drawn episode (a first seed), so the study's episode pages are redrawn."""
    steps = ("collect", "scores", "contrasts", "report", "report_loopbench", "landing", "all")
    return {"episodes": blocks, **dict.fromkeys(steps, 1), **({"episode_pages": 1} if pages else {})}


def pending_episode_blocks(workdir: Path) -> list[str]:
    """Episode outputs that `snakemake --summary` plans to update."""
    rows = [line.split("\t") for line in snakemake(workdir, "--summary").stdout.splitlines()]
    return [row[0] for row in rows if row[0].startswith("results/episodes/") and row[-1] != "no update"]


@pytest.fixture(scope="module")
def workdir(tiny_study, tmp_path_factory):
    """The finished run of tiny_config() (conftest's tiny_study), copied once for the tests that only read it."""
    return shutil.copytree(tiny_study, tmp_path_factory.mktemp("study") / "study", symlinks=True)


@pytest.fixture
def own_run(workdir, tmp_path):
    """A copy of the finished run for a test that changes it (copytree keeps the mtimes Snakemake reads)."""
    return shutil.copytree(workdir, tmp_path / "study", symlinks=True)


def test_the_run_writes_episodes_and_the_report(workdir):
    episodes = pd.read_parquet(workdir / "results/tiny/episodes.parquet")
    assert len(episodes) == 2 * 2 * 10  # methods x populations x seeds
    assert episodes.groupby(["method", "graph"]).seed.nunique().eq(10).all()
    cells = list((workdir / "results/episodes/tiny/loopbench/cycle").rglob("s*.parquet"))
    assert len(cells) == 40
    table = pd.read_csv(workdir / "reports/tiny/loopbench/table1.csv")
    assert list(table.columns) == [
        "method",
        "graph",
        "proximity",
        "proximity_lo",
        "proximity_hi",
        "stability",
        "stability_lo",
        "stability_hi",
        "reached_optimum",
        "final_optimal",
        "first_optimal_step",
        "episodes",
        "proximity_episodes",
    ]
    assert table[["method", "graph"]].values.tolist() == [
        ["random", "C3"],
        ["random", "C5"],
        ["soft_fp", "C3"],
        ["soft_fp", "C5"],
    ]
    assert (table.episodes == 10).all()
    assert ((table.proximity_lo <= table.proximity) & (table.proximity <= table.proximity_hi)).all()
    # the table's means are the episodes' means
    means = episodes.groupby(["method", "graph"])[["proximity", "reached_optimum", "first_optimal_step"]].mean()
    for row in table.itertuples():
        expected = means.loc[(row.method, row.graph)]
        assert row.proximity == pytest.approx(expected.proximity, abs=1e-4)
        assert row.reached_optimum == pytest.approx(expected.reached_optimum)
        assert row.first_optimal_step == pytest.approx(expected.first_optimal_step, nan_ok=True)
    index = (workdir / "reports/tiny/index.html").read_text()
    first = table.iloc[0]
    assert f"{first.proximity:.1f} [{first.proximity_lo:.1f}, {first.proximity_hi:.1f}]" in index
    assert (
        "loopbench/conflicts.png" in index
        and (workdir / "reports/tiny/loopbench/conflicts.png").read_bytes()[:4] == b"\x89PNG"
    )
    chart = (workdir / "reports/tiny/loopbench/conflicts.html").read_text()
    assert "https://cdn" not in chart and "vega" in chart  # self-contained: opens offline
    assert "\\begin{tabular}" in (workdir / "reports/tiny/loopbench/table1.tex").read_text()
    assert "C5 Proximity (%)" in (workdir / "reports/tiny/loopbench/table1.md").read_text()
    # the paper's Table 1 beside ours, with its provenance from config/anchors.yaml
    assert "The paper&#x27;s Table 1" in index or "The paper's Table 1" in index
    assert "computed over the full trajectory" in index and "Soft Colorer CFP" in index


class Tables(HTMLParser):
    """The cells of every <table class="data"> in a page, as rows of text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.inside = False

    def handle_starttag(self, tag, attrs):
        if tag == "table" and "data" in (dict(attrs).get("class") or "").split():
            self.inside = True
            self.tables.append([])
        elif self.inside and tag == "tr":
            self.tables[-1].append([])
        elif self.inside and tag in ("td", "th"):
            self.tables[-1][-1].append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False

    def handle_data(self, data):
        if self.inside and self.tables[-1] and self.tables[-1][-1]:
            self.tables[-1][-1][-1] += data.strip()


def test_scores_contrasts_and_their_report_tables_agree(workdir):
    scores = pd.read_parquet(workdir / "results/tiny/scores.parquet")
    contrasts = pd.read_parquet(workdir / "results/tiny/contrasts.parquet")
    assert len(scores) == 2 * 2 * 5  # methods x populations x metrics
    # Default contrasts: every method against the study's first; per population and over all.
    assert set(zip(contrasts.a, contrasts.b)) == {("soft_fp", "random")}
    assert sorted(contrasts.population.unique()) == ["3", "5", "all"]
    assert (contrasts.n_units[contrasts.population == "all"] == 20).all() and (contrasts.dropped_units == 0).all()
    assert (contrasts.resamples == 1000).all()
    parser = Tables()
    parser.feed((workdir / "reports/tiny/index.html").read_text())
    contrast_rows, score_rows = (table[1:] for table in parser.tables)
    assert len(contrast_rows) == len(contrasts) and len(score_rows) == len(scores)
    for row, cells in zip(contrasts.itertuples(), contrast_rows):
        assert cells[:4] == [row.metric, row.a, row.b, row.population]
        assert [float(c) for c in cells[4:7]] == pytest.approx([row.estimate, row.lo, row.hi], abs=0.006)
    for row, cells in zip(scores.itertuples(), score_rows):
        assert cells[2] == row.method and float(cells[5]) == pytest.approx(row.mean, abs=0.006)
    assert (workdir / "reports/tiny/forest.png").read_bytes()[:4] == b"\x89PNG"
    assert "\\begin{tabular}" in (workdir / "reports/tiny/contrasts.tex").read_text()


def test_nothing_to_do_after_a_run(workdir):
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout


def test_changing_one_method_parameter_reschedules_only_its_cells(own_run):
    from conftest import tiny_config

    workdir = own_run
    config = tiny_config()
    config["methods"]["soft_fp"]["p"] = 0.5
    write_config(workdir / "config.yaml", config)
    # `--list-changes params` is not used: in Snakemake 9.27 it lists every output that has params
    # recorded, changed or not (ParamsChange.__or__ keeps the files of an empty change).
    assert sorted(pending_episode_blocks(workdir)) == sorted(
        f"results/episodes/tiny/loopbench/cycle/soft_fp/n{n}/block{a}-{b}.parquet"
        for n in (3, 5)
        for a, b in ((0, 4), (5, 9))
    )
    reasons = re.findall(r"reason: (.*)", snakemake(workdir, "-n").stdout)
    assert sum("Params have changed" in r for r in reasons) == 4
    assert planned_jobs(workdir) == rerun_of(4, pages=True)
    random_cell = workdir / "results/episodes/tiny/loopbench/cycle/random/n3/s0.parquet"
    fp_cell = workdir / "results/episodes/tiny/loopbench/cycle/soft_fp/n3/s0.parquet"
    stamps = random_cell.stat().st_mtime_ns, fp_cell.stat().st_mtime_ns
    snakemake(workdir)
    assert random_cell.stat().st_mtime_ns == stamps[0]
    assert fp_cell.stat().st_mtime_ns != stamps[1]


def test_adding_seeds_runs_only_the_new_cells(own_run):
    from conftest import tiny_config

    workdir = own_run
    config = tiny_config()
    config["studies"]["tiny"]["seeds"] = 12
    write_config(workdir / "config.yaml", config)
    assert planned_jobs(workdir) == rerun_of(4, pages=False)  # the new blocks 10-14 (seeds 0 are drawn)
    done = workdir / "results/episodes/tiny/loopbench/cycle/random/n5/s9.parquet"
    stamp = done.stat().st_mtime_ns
    snakemake(workdir)
    assert done.stat().st_mtime_ns == stamp
    assert len(pd.read_parquet(workdir / "results/tiny/episodes.parquet")) == 48
    # growing a partly filled block again: the job runs, but its finished cells are kept
    config["studies"]["tiny"]["seeds"] = 14
    write_config(workdir / "config.yaml", config)
    kept = workdir / "results/episodes/tiny/loopbench/cycle/random/n5/s11.parquet"
    stamp = kept.stat().st_mtime_ns
    snakemake(workdir)
    assert kept.stat().st_mtime_ns == stamp
    log = (workdir / "logs/episodes/tiny/loopbench/cycle/random/n5/block10-14.log").read_text()
    assert "2 of 4 cells computed, 2 already done" in log


def test_a_bad_config_stops_before_any_job(tmp_path):
    from conftest import tiny_config

    config = tiny_config()
    config["methods"]["soft_fp"]["p"] = 1.5
    write_config(tmp_path / "config.yaml", config)
    result = snakemake(tmp_path, check=False)
    assert result.returncode != 0
    assert "methods.soft_fp.p: 1.5 is greater than the maximum of 1" in result.stderr
    assert str(tmp_path / "config.yaml") in result.stderr
    assert not (tmp_path / "results").exists()
