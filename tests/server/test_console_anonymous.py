"""The web console in headless Chromium with logins off: no Log in / Log out in the header, and
the anonymous user, who may do everything, runs and charts a query, edits options for the
session and the system, and edits storage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from .browser import chromium, run_sql, wait
from .helpers import Server

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("console-anonymous"))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = chromium(Path(tmp_path_factory.mktemp("downloads")), width=1024, height=768)
    yield driver
    driver.quit()


def test_console_without_logins(server: Server, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server.url + "/query")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#schema-tree button.name"))
    who = browser.find_element(By.CSS_SELECTOR, "header .who").text
    assert who == "anonymous" and not browser.find_elements(By.CSS_SELECTOR, "header .who a")

    # a query on a laptop-sized window: the grid scrolls inside the page, the chart draws
    status = run_sql(
        browser,
        "SELECT n_regionkey AS region, COUNT(*) AS nations FROM cp.`tpch/nation.parquet` "
        "GROUP BY n_regionkey ORDER BY region",
    )
    assert "5 row(s)" in status
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 1024
    Select(browser.find_element(By.ID, "chart-type")).select_by_visible_text("bar")
    browser.find_element(By.ID, "chart-button").click()
    bars = browser.execute_script(
        "const c = Chart.getChart(document.getElementById('chart'));"
        "return c.getDatasetMeta(0).data.map(b => Math.round(b.height));"
    )
    assert len(bars) == 5 and all(h > 0 for h in bars)
    assert browser.execute_script(
        "return Chart.getChart(document.getElementById('chart')).data.datasets[0].data"
    ) == [5, 5, 5, 5, 5]
    # the status line links to the query's own profile page
    browser.find_element(By.CSS_SELECTOR, "#status a").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-graph .plan-node"))
    assert "User\nanonymous" in browser.find_element(By.ID, "profile-facts").text

    # the anonymous user may set system options
    browser.get(server.url + "/options")
    row = "#option-list tr[data-option='exec.errors.verbose']"
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, row))
    field = browser.find_element(By.CSS_SELECTOR, f"{row} input")
    field.clear()
    field.send_keys("true")
    browser.find_element(By.CSS_SELECTOR, f"{row} button.set-system").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f"{row}.changed"))
    system = requests.get(server.url + "/options.json", timeout=30).json()
    assert next(o for o in system if o["name"] == "exec.errors.verbose")["value"] is True

    # and edit storage: a workspace becomes read-only
    browser.get(server.url + "/storage")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "button[data-plugin=dfs]"))
    browser.find_element(By.CSS_SELECTOR, "button[data-plugin=dfs]").click()
    editor = browser.find_element(By.ID, "storage-config")
    config = json.loads(editor.get_attribute("value"))
    config["workspaces"]["data"]["writable"] = False
    browser.execute_script("arguments[0].value = arguments[1]", editor, json.dumps(config))
    browser.find_element(By.ID, "storage-save").click()
    wait(browser, lambda d: d.find_element(By.ID, "storage-result").text == "Success")
    saved = requests.get(server.url + "/storage/dfs.json", timeout=30).json()
    assert saved["config"]["workspaces"]["data"]["writable"] is False

    # every page keeps to the window at laptop width
    for page in ("/profiles", "/storage", "/options", "/threads", "/status"):
        browser.get(server.url + page)
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "main > section.active"))
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 1024, page
