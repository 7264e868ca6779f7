"""A real headless browser for the page tests: Debian's chromium driven through its chromedriver
(`make test` and .ci/run install both with apt where they are missing)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def start() -> Any:
    """A headless chromium that keeps its console and network logs; skips where it is not installed
    (a failure in CI)."""
    if shutil.which(CHROMIUM) is None or shutil.which(CHROMEDRIVER) is None:
        pytest.skip(f"no {CHROMIUM} and {CHROMEDRIVER}: install Debian's chromium and chromium-driver (apt)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1500,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def open_page(driver: Any, page: Path, timeout: float = 120.0) -> float:
    """Load the page and wait until its drawing is ready (the viewer marks <body>); the seconds it took."""
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get_log("performance")
    begun = time.perf_counter()
    driver.get(page.resolve().as_uri())
    while not driver.execute_script("return document.body.dataset.ready === 'true'"):
        if time.perf_counter() - begun > timeout:
            raise AssertionError(f"{page} did not finish drawing in {timeout} s: {driver.get_log('browser')}")
        time.sleep(0.02)
    return time.perf_counter() - begun


def requested(driver: Any) -> list[str]:
    """Every URL the page asked for since it was opened (its own file included)."""
    events = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
    return [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]


def console_problems(driver: Any) -> list[dict[str, Any]]:
    """Console errors and warnings the page logged."""
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def set_step(driver: Any, state: int) -> None:
    """Move the step slider as a person would drag it (the input event the page listens to)."""
    slider = driver.find_element("id", "step")
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", slider, state
    )
    begun = time.perf_counter()
    while driver.execute_script("return document.body.dataset.shown") != str(state):
        if time.perf_counter() - begun > 60:  # a ceiling: it waits on the page, which a loaded machine slows
            raise AssertionError(f"the drawing did not move to state {state}")
        time.sleep(0.02)


def choose_agent(driver: Any, agent: int) -> None:
    """Pick an agent in the panel's menu."""
    from selenium.webdriver.support.select import Select

    Select(driver.find_element("id", "agent")).select_by_value(str(agent))
