"""The episode page in a real headless browser (Debian's chromium): the slider moves the drawing and
the panel, nothing is logged to the console, nothing is requested beyond the page's own file, and a
model's reply that holds markup shows as text."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from browser import choose_agent, console_problems, open_page, requested, set_step, start
from episode_pages import SUITE_CELLS, played, scripted_loopbench

from hivebench.view.episode import load
from hivebench.view.folder import write_bundle, write_pages
from hivebench.view.page import render

STEPS = 4
N = 3
AGENT_FILLS = (
    "return Array.from(document.querySelectorAll(\"g[class*='agents'] path\")).map(p => p.getAttribute('fill'))"
)
PANEL = "return document.getElementById('panel').innerText"


@pytest.fixture(scope="module")
def browser():
    driver = start()
    yield driver
    driver.quit()


def notes(round_: int, agent: int) -> str:
    return f"round {round_}: agent {agent} holds"


@pytest.fixture
def loop_page(tmp_path, monkeypatch):
    """LoopBench C3 under scripted replies: every agent flips its colour each round and writes notes
    naming the round (the replies go round by round, agent by agent)."""
    monkeypatch.chdir(tmp_path)
    replies = [{"color": r % 2, "notes": notes(r, v)} for r in range(1, STEPS + 1) for v in range(N)]
    episode = load(scripted_loopbench(tmp_path, replies, steps=STEPS, n=N))
    return render(episode, tmp_path / "page.html")


def test_the_slider_moves_the_drawing_and_the_panel_shows_that_states_notes(browser, loop_page, tmp_path):
    open_page(browser, loop_page)
    at_start = browser.execute_script(AGENT_FILLS)
    assert len(at_start) == N and len(set(at_start)) == 1  # every node starts on colour 0
    first = browser.get_screenshot_as_png()
    set_step(browser, 1)
    assert browser.execute_script(AGENT_FILLS) != at_start  # colour 1 now
    assert notes(1, 0) in browser.execute_script(PANEL)
    set_step(browser, 2)
    assert browser.execute_script(AGENT_FILLS) == at_start
    shown = browser.execute_script(PANEL)
    assert notes(2, 0) in shown and notes(1, 0) not in shown
    assert browser.get_screenshot_as_png() != first
    (tmp_path / "state2.png").write_bytes(browser.get_screenshot_as_png())
    choose_agent(browser, 2)
    assert notes(2, 2) in browser.execute_script(PANEL)
    assert browser.find_element("id", "step-label").text == f"state 2 of {STEPS}"
    assert console_problems(browser) == []
    assert requested(browser) == [loop_page.resolve().as_uri()]


def test_play_runs_through_the_states_to_the_last(browser, loop_page):
    open_page(browser, loop_page)
    browser.find_element("id", "play").click()
    set_step_reached = "return document.body.dataset.shown"
    for _ in range(200):
        if browser.execute_script(set_step_reached) == str(STEPS):
            break
        browser.execute_script("return new Promise(resolve => setTimeout(resolve, 50))")
    assert browser.execute_script(set_step_reached) == str(STEPS)
    assert browser.find_element("id", "play").text == "play"  # it stopped at the end
    assert console_problems(browser) == []


def test_a_reply_with_a_script_element_shows_as_text(browser, tmp_path, monkeypatch):
    from selenium.common.exceptions import NoAlertPresentException

    monkeypatch.chdir(tmp_path)
    attack = "</script><script>alert(1)</script>"
    replies = [{"color": 1, "notes": attack}, attack, {"color": 0, "notes": "<img src=x onerror=alert(2)>"}, attack]
    replies += [{"color": 0, "notes": "x"}] * N  # round 2
    page = render(load(scripted_loopbench(tmp_path, replies, steps=2, n=N)), tmp_path / "page.html")
    open_page(browser, page)
    set_step(browser, 1)
    assert attack in browser.execute_script(PANEL)  # agent 0's notes, as written
    choose_agent(browser, 1)
    assert attack in browser.execute_script(PANEL)  # agent 1's raw reply, a fallback
    choose_agent(browser, 2)
    assert "<img src=x onerror=alert(2)>" in browser.execute_script(PANEL)
    with pytest.raises(NoAlertPresentException):
        _ = browser.switch_to.alert
    assert browser.execute_script("return document.scripts.length") == 4
    assert browser.execute_script("return document.querySelectorAll('#panel img, #panel script').length") == 0
    assert console_problems(browser) == []


@pytest.mark.parametrize("suite", list(SUITE_CELLS))
def test_each_suites_page_draws_in_the_browser(browser, tmp_path, monkeypatch, suite):
    monkeypatch.chdir(tmp_path)
    task, method, n = SUITE_CELLS[suite]
    episode = load(played(tmp_path, task, method, n))
    page = render(episode, tmp_path / "page.html")
    open_page(browser, page)
    assert len(browser.execute_script(AGENT_FILLS)) == n
    set_step(browser, episode.steps)
    assert f"state {episode.steps}" in browser.execute_script(PANEL)
    assert console_problems(browser) == []
    assert requested(browser) == [page.resolve().as_uri()]


def test_a_page_of_a_reports_folder_loads_the_shared_bundle_and_nothing_else(browser, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task, method, n = SUITE_CELLS["agentsnet"]
    folder = tmp_path / "reports/s/episodes"
    bundle = write_bundle(tmp_path / "reports/vega.js")  # as the workflow shares it between studies
    (row,) = write_pages([str(played(tmp_path, task, method, n))], folder, bundle)
    page = folder / row["page"]
    open_page(browser, page)
    assert len(browser.execute_script(AGENT_FILLS)) == n
    assert console_problems(browser) == []
    assert requested(browser) == [page.resolve().as_uri(), bundle.resolve().as_uri()]


def test_the_event_buttons_step_through_the_chosen_agents_events(browser, tmp_path, monkeypatch):
    """On clocks and under churn the buttons visit exactly the states whose round held an event of the
    chosen agent (asked, a decision applied, left or came back), as its rows in the cell file say."""
    monkeypatch.chdir(tmp_path)
    task, method, n = SUITE_CELLS["loopbench"]
    perturbation = {"clocks": {"period": 3, "latency": 1, "latency_max": 2}, "churn": {"leave": 0.2, "join": 0.5}}
    path = played(tmp_path, {**task, "steps": 12}, method, n, perturbation=perturbation)
    rows = pq.read_table(path).to_pandas()
    mine = rows[rows.agent == 1].sort_values("step").reset_index(drop=True)
    moved = mine.present.ne(mine.present.shift(fill_value=True))
    eventful = (mine.step > 0) & (mine.asked | mine.staleness.notna() | moved)
    expected = [str(s) for s in mine.step[eventful]]
    assert moved.any() and mine.staleness.notna().any() and len(expected) < len(mine) - 1  # some rounds without
    open_page(browser, render(load(path), tmp_path / "page.html"))
    choose_agent(browser, 1)
    shown = "return document.body.dataset.shown"

    def visit(button: str, count: int) -> list[str]:
        visited = []
        for _ in range(count):
            before = browser.execute_script(shown)
            browser.find_element("id", button).click()
            browser.execute_script("return new Promise(resolve => setTimeout(resolve, 100))")
            if browser.execute_script(shown) != before:
                visited.append(browser.execute_script(shown))
        return visited

    assert visit("next-event", len(expected) + 2) == expected  # and no further: none after the last
    assert "events: " in browser.execute_script(PANEL)
    assert visit("previous-event", len(expected)) == expected[-2::-1]
    assert console_problems(browser) == []
