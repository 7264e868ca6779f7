"""The report pages' tables as the papers lay them out: tasks as rows, populations as column groups, the
methods side by side, intervals on one line; empty columns left out of the page; SwarmBench's frames
in time order."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from episode_pages import played

from hivebench.report import Section
from hivebench.report.layout import interval_text, paper_layout
from hivebench.report.page import html_table
from hivebench.suites.agentsnet.report import render as agentsnet_section
from hivebench.suites.swarmbench.report import episode_chart


def test_the_paper_layout_puts_tasks_in_rows_and_methods_side_by_side_in_each_group():
    table = pd.DataFrame(
        {
            "task": ["b", "b", "a", "a", "b"],
            "n": [8, 8, 8, 8, 16],
            "method": ["x", "y", "x", "y", "y"],
            "cell": ["1", "2", "3", "4", "5"],
        }
    )
    wide = paper_layout(table, "task", "n", "method", "cell", lambda n: f"N = {n}")
    assert list(wide.index) == ["b", "a"]  # as first seen
    assert list(wide.columns) == [("N = 8", "x"), ("N = 8", "y"), ("N = 16", "y")]
    assert wide.to_numpy().tolist() == [["1", "2", "5"], ["3", "4", ""]]


def test_an_interval_is_one_line_to_a_fixed_precision():
    assert interval_text(0.5, 0.25, 0.875, 2) == "0.50 [0.25, 0.88]"
    assert interval_text(0.5, np.nan, np.nan, 1) == "0.5"
    assert interval_text(np.nan, 0.0, 1.0, 2) == ""


def test_a_page_leaves_out_the_columns_that_hold_nothing():
    frame = pd.DataFrame({"method": ["a", "b"], "tokens": [np.nan, np.nan], "rcc": [np.nan, 0.25], "note": ["", ""]})
    page = html_table(frame)
    headers = re.findall(r"<th>([^<]*)</th>", page)
    assert headers == ["method", "rcc"]
    assert "<td>0.25</td>" in page and "nan" not in page


def agentsnet_episodes() -> pd.DataFrame:
    """Two methods on two problems, two families each, at n = 4 and 8, four instances per cell."""
    rows = []
    for problem in ("coloring", "consensus"):
        for family in ("watts_strogatz", "delaunay"):
            for n in (4, 8):
                for method, score in (("distributed", 1.0), ("random", 0.25)):
                    for seed in range(4):
                        rows.append(
                            {
                                "task": f"{problem}-{family[:2]}",
                                "problem": problem,
                                "family": family,
                                "population": n,
                                "method": method,
                                "seed": seed,
                                "score": score,
                                "solved": float(score == 1.0),
                                "rounds": 5,
                            }
                        )
    return pd.DataFrame(rows)


def test_agentsnets_headline_is_problems_by_n_with_the_methods_and_the_papers_rows_side_by_side(tmp_path):
    leaderboard = {
        "provenance": "a test's leaderboard",
        "columns": ["Coloring", "Vertex cover", "Consensus"],
        "rows": {"Model A": {4: [0.5, 0.1, 0.75], 8: [0.25, 0.0, 0.5]}},
    }
    section = Section(agentsnet_episodes(), tmp_path, "", 200, 0.95, 0, {"leaderboard": leaderboard}, {})
    page = agentsnet_section(section)
    headline = page.split('<table class="dataframe data paper">')[1].split("</table>")[0]
    groups = re.findall(r'<th colspan="(\d+)" halign="left">([^<]+)</th>', headline)
    assert groups == [("3", "n = 4"), ("3", "n = 8")]  # per n: both methods and the paper's model
    assert (
        re.findall(r"<th>(distributed|random|Model A \(paper\))</th>", headline)
        == [
            "distributed",
            "random",
            "Model A (paper)",
        ]
        * 2
    )
    rows = {
        m.group(1): re.findall(r"<td>([^<]*)</td>", m.group(2))
        for m in re.finditer(r"<th>(\w+)</th>\s*((?:<td>[^<]*</td>\s*)+)", headline)
    }
    # every instance of a method scores the same: a zero-width interval, on one line
    assert rows["coloring"] == [
        "1.00 [1.00, 1.00]",
        "0.25 [0.25, 0.25]",
        "0.50",
        "1.00 [1.00, 1.00]",
        "0.25 [0.25, 0.25]",
        "0.25",
    ]
    assert rows["consensus"][2::3] == ["0.75", "0.50"]
    assert rows["vertex_cover"] == ["", "", "0.10", "", "", "0.00"]  # the paper's alone
    assert "a test&#x27;s leaderboard" in page


def test_swarmbenchs_frames_are_in_time_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = played(tmp_path, {"kind": "swarmbench", "task": "pursuit", "rounds": 12}, {"kind": "heuristic"}, 8)
    metadata = pq.read_schema(path).metadata
    summary = json.loads(metadata[b"hivebench.summary"])
    cell = json.loads(metadata[b"hivebench.cell"])
    row = {**summary, "study": "s", "suite": "swarmbench", "task": cell["task"]["name"], "method": "m"}
    row |= {"population": 8, "seed": 0}
    spec = episode_chart(pd.DataFrame([row])).to_dict()
    assert spec["facet"]["column"]["sort"] == ["t = 0", "t = 6", "t = 12"]


def test_the_landing_page_lists_every_study_with_its_models_calls_and_cost(tmp_path, monkeypatch):
    from hivebench.config import validate
    from hivebench.report.landing import render_landing

    config = {
        "tasks": {"t": {"kind": "coloring", "graph": "cycle", "steps": 3}},
        "methods": {
            "random": {"kind": "random"},
            "gpt": {
                "kind": "llm",
                "backend": "openai",
                "model": "gpt-test",
                "base_url": "http://secret.example:8000/v1",
                "api_key_env": "MY_KEY",
            },
        },
        "studies": {
            "done": {
                "description": "<b>both</b>",
                "tasks": ["t"],
                "methods": ["random", "gpt"],
                "populations": [3],
                "seeds": 2,
            },
            "later": {"tasks": ["t"], "methods": ["random"], "populations": [3, 5], "seeds": 2},
        },
    }
    monkeypatch.setenv("MY_KEY", "sk-test-secret")
    config = validate(config, str(tmp_path / "c.yaml"))
    table = tmp_path / "results/done/episodes.parquet"
    table.parent.mkdir(parents=True)
    episodes = pd.DataFrame(
        {
            "seed": [0, 1, 0, 1],
            "llm_calls": [0, 0, 30, 36],
            "input_tokens": [0, 0, 900, 1100],
            "output_tokens": [0, 0, 60, 70],
        }
    )
    episodes.assign(cost_usd=[0.0, 0.0, 0.25, 0.5]).to_parquet(table)
    page = render_landing(config, "c.yaml", tmp_path / "reports/index.html", tmp_path).read_text(encoding="utf-8")
    rows = re.findall(r"<tr>(.*?)</tr>", page.split("<tbody>")[1])
    assert [re.findall(r'href="([^"]+)"', row) for row in rows] == [["done/index.html"], ["later/index.html"]]
    done = re.findall(r"<td>([^<]*)</td>", rows[0])
    assert "&lt;b&gt;both&lt;/b&gt;" in done and "gpt: gpt-test (openai)" in done
    assert "66" in done and "2,000 in / 130 out" in done and "0.75 USD" in done
    assert "not collected yet" in rows[1]
    assert "secret.example" not in page and "MY_KEY" not in page and "sk-test-secret" not in page
    assert re.search(r"commit ([0-9a-f]{12}( \+ uncommitted changes)?|not a git checkout)", page)


def test_silobenchs_headline_is_levels_by_n_with_the_papers_figures_where_the_study_plays_that_n():
    from hivebench.suites.silobench.report import headline, paper_headline

    setting = {"method": "distributed", "compat": "hivebench", "protocol": "p2p", "topology": "regular3", "rounds": 9}
    cells = [
        {**setting, "n": 8, "level": level, "success": 0.5, "success_sd": 0.5, "success_lo": 0.25, "success_hi": 0.75}
        for level in ("I", "all")
    ]
    per_n = pd.DataFrame(cells)
    over_n = per_n.drop(columns="n")
    published = {
        "levels": {"rows": {"Model": {"overall": [36.9], "I": [62.0]}}},
        "populations": {"rows": {"Model": {5: [48.5], 8: [40.0]}}},
    }
    wide = paper_layout(paper_headline(headline(per_n, over_n), published), "level", "group", "method", "success")
    assert list(wide.index) == ["all", "I"]
    assert list(wide.columns) == [
        ("N = 8", "distributed"),
        ("N = 8", "Model (paper)"),
        ("all N", "distributed"),
        ("all N", "Model (paper)"),
    ]  # the paper's N = 5 is not played: left to the full table
    assert wide.to_numpy().tolist() == [
        ["50.0 ± 50.0 [25.0, 75.0]", "40.0", "50.0 ± 50.0 [25.0, 75.0]", "36.9"],
        ["50.0 ± 50.0 [25.0, 75.0]", "", "50.0 ± 50.0 [25.0, 75.0]", "62.0"],
    ]
