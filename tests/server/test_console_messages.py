"""The console's Query page in headless Chromium shows what the shell shows: the scans'
messages beside the row count, and a chart that offers no column empty in every row; the
profiles say which server ran each query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from .browser import chromium, run_sql, wait
from .helpers import Server, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("console-messages"))
    (srv.data / "orders.json").write_text(
        '{"customer": "ann", "total": 3}\n{"customer": "bob", "total": 5}\n'
    )
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    driver = chromium(Path(tmp_path_factory.mktemp("downloads")))
    yield driver
    driver.quit()


def test_scan_messages_sit_beside_the_row_count(server: Server, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server.url + "/query")
    wait(browser, lambda d: d.find_elements(By.ID, "sql"))
    run_sql(browser, "SELECT customr, total FROM dfs.data.`orders.json`")
    messages = wait(
        browser,
        lambda d: [li.text for li in d.find_elements(By.CSS_SELECTOR, "#query-messages li")],
    )
    assert any(
        "Column [customr] was not found" in m and "did you mean [customer]?" in m for m in messages
    ), messages
    status = browser.find_element(By.ID, "status").text
    assert "2 row(s)" in status and "1 message" in status
    # the chart offers the columns that hold something, not the one empty in every row
    offered_x = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#chart-x option")]
    offered_y = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#chart-y option")]
    assert "customr" not in offered_x + offered_y and "total" in offered_x + offered_y

    # a clean query clears them
    run_sql(browser, "SELECT customer, total FROM dfs.data.`orders.json`")
    wait(browser, lambda d: not d.find_element(By.ID, "query-messages").is_displayed())
    assert "message" not in browser.find_element(By.ID, "status").text


def test_profiles_name_the_server_that_ran_each_query(server: Server) -> None:
    rows(None, server.url, "SELECT 1 AS one FROM (VALUES(1))")
    listed = requests.get(server.url + "/profiles.json", timeout=30).json()["finishedQueries"]
    assert listed and all(p["server"].endswith(f":{server.port}") for p in listed)
    one = requests.get(
        listed[0]["link"].replace(listed[0]["link"].split("/profiles/")[0], server.url), timeout=30
    )
    assert one.json()["server"] == listed[0]["server"]
