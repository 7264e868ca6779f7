"""The episode viewer's pages without a browser: what each suite's drawing holds, the page's data and
its escaping, and `hivebench view` on good and bad input (tests/test_view_browser.py opens them)."""

from __future__ import annotations

import html
import json
import re

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from episode_pages import SUITE_CELLS, played, scripted_loopbench

from hivebench.cells import all_blocks
from hivebench.cli import main
from hivebench.config import validate
from hivebench.report.page import pages_html
from hivebench.view.bundle import vega_bundle
from hivebench.view.episode import load
from hivebench.view.page import render, scene_of
from hivebench.view.sample import page_of, read_index, sampled

SCRIPT = re.compile(r'<script type="application/json" id="(episode-[a-z]+)">(.*?)</script>', re.DOTALL)


def page_json(page: str) -> dict[str, object]:
    """The page's JSON data elements by id, parsed."""
    return {name: json.loads(text) for name, text in SCRIPT.findall(page)}


@pytest.fixture(scope="module")
def suite_pages(tmp_path_factory):
    """One played cell per suite, its Episode and its page's text."""
    folder = tmp_path_factory.mktemp("pages")
    pages = {}
    for suite, (task, method, n) in SUITE_CELLS.items():
        episode = load(played(folder, task, {**method, "seeds_per_job": 1}, n))
        pages[suite] = (episode, render(episode, folder / f"{suite}.html").read_text(encoding="utf-8"))
    return pages


@pytest.mark.parametrize("suite", list(SUITE_CELLS))
def test_each_suite_draws_every_agent_at_every_state(suite_pages, suite):
    episode, _ = suite_pages[suite]
    scene = scene_of(episode)
    states = range(episode.steps + 1)
    assert episode.steps > 0
    drawn = scene.agents.groupby("step")["agent"].nunique()
    assert list(drawn.index) == list(states)
    assert (drawn == episode.n).all()  # no agent of these tasks leaves its map
    assert scene.agents[["x", "y"]].notna().all().all()
    assert set(scene.metrics["step"]) == set(states)


def test_the_graph_suites_draw_their_contacts(suite_pages):
    loop, _ = suite_pages["loopbench"]
    assert len(scene_of(loop).edges) == loop.n  # a cycle: n edges
    net, _ = suite_pages["agentsnet"]
    assert len(scene_of(net).edges) == net.summary["edges"]
    silo, _ = suite_pages["silobench"]
    assert len(scene_of(silo).edges) == 3 * silo.n // 2  # degree-three ports


def test_swarmbench_draws_its_walled_grid_and_its_prey(suite_pages):
    episode, _ = suite_pages["swarmbench"]
    scene = scene_of(episode)
    size = episode.summary["size"]
    assert scene.grid and scene.size == size
    walls = scene.tiles[scene.tiles["kind"] == "wall"]
    border = walls[(walls["x"] == 0) | (walls["y"] == 0) | (walls["x"] == size - 1) | (walls["y"] == size - 1)]
    assert len(border) == 4 * (size - 1)  # the map is walled all round
    prey = scene.tiles[scene.tiles["kind"] == "prey"].sort_values("step")
    assert prey[["y", "x"]].to_numpy().tolist() == episode.summary["prey_path"]  # where the prey was, each state
    agents = scene.agents.merge(episode.agents, on=["step", "agent"])
    assert (agents["x"] == agents["col"]).all() and (agents["y"] == agents["row"]).all()


def test_messages_are_drawn_from_their_sender_to_their_receiver_at_the_state_they_left(suite_pages):
    episode, page = suite_pages["agentsnet"]
    messages = episode.tables["messages"]
    assert len(messages)
    spec = page_json(page)["episode-spec"]
    lines = next(
        rows for rows in spec["datasets"].values() if rows and set(rows[0]) == {"step", "x", "y", "x2", "y2", "kind"}
    )
    assert len(lines) == len(messages)
    scene = scene_of(episode)
    first = messages.iloc[0]
    place = scene.agents.set_index(["step", "agent"])
    start = place.loc[(first["step"], first["sender"])]
    end = place.loc[(first["step"], first["receiver"])]
    assert {
        "step": int(first["step"]),
        "x": start["x"],
        "y": start["y"],
        "x2": end["x"],
        "y2": end["y"],
        "kind": "messages",
    } in lines


def test_an_agents_colour_means_the_same_at_every_state(suite_pages):
    """The colour scale's domain is every state's values, not the shown state's (Vega would otherwise
    give colour 1 the first colour at a state where every node holds 1)."""
    episode, page = suite_pages["loopbench"]
    spec = page_json(page)["episode-spec"]
    agents_layer = next(layer for layer in spec["hconcat"][0]["layer"] if layer.get("name", "").startswith("agents"))
    assert agents_layer["encoding"]["color"]["scale"]["domain"] == sorted({str(c) for c in episode.agents["color"]})


def test_the_page_loads_nothing_and_carries_its_episode(suite_pages):
    episode, page = suite_pages["silobench"]
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert html.unescape(policy.group(1)).startswith("default-src 'none';")  # the page forbids every request
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?https?:""", page)
    data = page_json(page)["episode-data"]
    assert data["n"] == episode.n and data["steps"] == episode.steps
    assert data["agents"]["answer"] == [None if pd.isna(a) else a for a in episode.agents["answer"]]
    assert set(data["tables"]) == set(episode.tables)


def test_a_reply_that_would_close_the_script_element_is_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    attack = "</script><script>alert(1)</script>"
    # round 1: agent 0's notes, agent 1's reply (not JSON: asked again, the same again: a fallback);
    # round 2: valid replies
    replies = [{"color": 1, "notes": attack}, attack, {"color": 0, "notes": "<!-- <b>bold</b>"}, attack]
    replies += [{"color": 0, "notes": "x"}] * 3
    episode = load(scripted_loopbench(tmp_path, replies, steps=2))
    page = render(episode, tmp_path / "page.html").read_text(encoding="utf-8")
    assert attack not in page and "<!-- <b>" not in page
    assert page.count("<script") == 4 and page.count("</script>") == 4  # the page's own, and no other
    data = page_json(page)["episode-data"]
    assert data["agents"]["notes"][episode.n] == attack  # agent 0's notes after round 1, as written
    assert data["agents"]["reply"][episode.n + 1] == attack and data["agents"]["decision"][episode.n + 1] == "fallback"


def test_view_writes_the_page_beside_the_cell_and_names_a_bad_path(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    task, method, n = SUITE_CELLS["loopbench"]
    path = played(tmp_path, task, method, n)
    relative = str(path.relative_to(tmp_path / "results/episodes")).removesuffix(".parquet")
    assert main(["view", relative]) == 0
    assert capsys.readouterr().out.strip() == str(path.relative_to(tmp_path).with_suffix(".html"))
    assert main(["view", str(path), "--out", "elsewhere/page.html"]) == 0
    assert (tmp_path / "elsewhere/page.html").read_text().startswith("<!doctype html>")
    assert main(["view", "results/episodes/s/loopbench/t/m/n5/s9.parquet"]) == 2
    assert "results/episodes/s/loopbench/t/m/n5/s9.parquet: no such cell file" in capsys.readouterr().err
    pq.write_table(pa.table({"step": [0]}), tmp_path / "other.parquet")
    assert main(["view", "other.parquet"]) == 2
    assert "other.parquet: not a cell file" in capsys.readouterr().err
    assert main(["view"]) == 2 and "no cell to draw" in capsys.readouterr().err
    assert main(["view", "--bundle", "shared/vega.js", str(path)]) == 2
    assert "give no cells" in capsys.readouterr().err
    assert main(["view", "--bundle", "shared/vega.js"]) == 0
    assert (tmp_path / "shared/vega.js").read_text(encoding="utf-8") == vega_bundle()


def test_a_cached_call_shows_its_prompt_and_reply(tiny_model, tmp_path, monkeypatch):
    """A model behind the response cache: each decision names its calls, the cache holds the chat that
    was asked, and the page carries both for the panel."""
    monkeypatch.chdir(tmp_path)
    method = {"kind": "llm", "backend": "transformers", "model": str(tiny_model), "notes_chars": 12, "max_tokens": 24}
    task = {"kind": "coloring", "graph": "cycle", "steps": 2}
    episode = load(played(tmp_path, task, method, 3))
    decided = episode.agents.dropna(subset=["decision"])
    assert len(decided) == 2 * 3
    data = page_json(render(episode, tmp_path / "page.html").read_text(encoding="utf-8"))["episode-data"]
    for agent, keys, reply in zip(decided["agent"], decided["call_keys"], decided["reply"]):
        assert 1 <= len(keys) <= 2  # the call, and its repair where there was one
        calls = [data["calls"][key] for key in keys]
        assert calls[-1]["result"]["text"] == reply
        asked = calls[0]["messages"]
        assert asked[0]["role"] == "system" and asked[-1]["content"].startswith(f"You are agent {agent}.")
        if len(calls) == 2:  # the repair asks again after the rejected reply
            assert calls[1]["messages"][-2] == {"role": "assistant", "content": calls[0]["result"]["text"]}


@pytest.mark.parametrize("suite", list(SUITE_CELLS))
def test_the_spec_is_vega_lite(suite_pages, suite):
    """The page writes its Vega-Lite spec as plain data: Vega-Lite's schema (altair's copy) checks it."""
    import altair as alt

    _, page = suite_pages[suite]
    spec = page_json(page)["episode-spec"]
    alt.HConcatChart.from_dict(spec, validate=True)  # raises a SchemaValidationError naming what is wrong
    assert spec["params"] == [{"name": "step", "value": 0}]


def test_a_study_draws_the_first_seeds_of_each_method_task_and_population(tmp_path):
    config = {
        "tasks": {"t": {"kind": "coloring", "graph": "cycle", "steps": 3}},
        "methods": {"a": {"kind": "random", "seeds_per_job": 2}, "b": {"kind": "greedy", "seeds_per_job": 3}},
        "studies": {"s": {"tasks": ["t"], "methods": ["a", "b"], "populations": [3, 5], "seeds": 5}},
    }
    (blocks,) = all_blocks(validate(config, str(tmp_path / "c.yaml")), tmp_path).values()
    cells = [cell for block in reversed(blocks) for cell in block.cells()]  # seeds out of order
    drawn = sampled(cells, 2)
    assert sorted((c["method"]["name"], c["population"], c["seed"]) for c in drawn) == [
        (m, n, s) for m in ("a", "b") for n in (3, 5) for s in (0, 1)
    ]
    assert sampled(cells, 0) == []
    assert {page_of(c) for c in drawn} == {
        f"loopbench/t/{m}/n{n}/s{s}.html" for m in "ab" for n in (3, 5) for s in (0, 1)
    }


def test_a_folder_of_pages_shares_one_bundle_and_the_report_links_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = [
        str(played(tmp_path, *SUITE_CELLS[suite][:2], SUITE_CELLS[suite][2])) for suite in ("loopbench", "agentsnet")
    ]
    folder = tmp_path / "reports/s/episodes"
    assert main(["view", "--folder", str(folder), *files]) == 0
    rows = read_index(folder)
    assert [row["suite"] for row in rows] == ["loopbench", "agentsnet"]
    for row in rows:
        page = (folder / row["page"]).read_text(encoding="utf-8")
        assert len(page) < len(vega_bundle()) / 4  # the bundle is not in the page
        assert '<script src="../../../../vega.js"></script>' in page
    assert (folder / "vega.js").read_text(encoding="utf-8") == vega_bundle()
    links = re.findall(r'<a href="(episodes/[^"]+)">seed (\d+)</a>', pages_html(folder.parent))
    assert [(link, int(seed)) for link, seed in links] == [(f"episodes/{row['page']}", 0) for row in rows]
    assert pages_html(tmp_path) == ""  # a study without pages gets no section


def test_a_waggle_controllers_page_carries_its_records_and_replies(tmp_path, monkeypatch):
    from test_waggle_controller import GOOD

    monkeypatch.chdir(tmp_path)
    # four agents, two rounds: agent 0's first reply is cut short and its regeneration is whole
    (tmp_path / "replies.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ["{", *[GOOD] * 8]))
    method = {"kind": "waggle", "backend": "scripted", "model": "replies.jsonl"}
    episode = load(played(tmp_path, {"kind": "swarmbench", "task": "pursuit", "rounds": 2}, method, 4))
    data = page_json(render(episode, tmp_path / "page.html").read_text(encoding="utf-8"))["episode-data"]
    assert data["long"] == ["record", "reply"]  # shown whole in the panel
    first = episode.n  # agent 0 at state 1
    assert data["agents"]["reply"][first] == json.dumps(GOOD) and data["agents"]["rung"][first] == "repaired"
    assert json.loads(data["agents"]["record"][first])["task_action"] == GOOD["task_action"]
    assert data["agents"]["call_keys"][first] == []  # a scripted backend is not cached: no prompt on record
