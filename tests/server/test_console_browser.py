"""The web console in headless Chromium (Debian's ``chromium`` + ``chromium-driver``, driven by
Selenium): log in through the form, run a query into the results grid, open the profile with
its Spark stage chart, and read the options page."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import Server

pytestmark = [pytest.mark.spark, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("console"), {"auth": True})
    srv.passwd("dora", "explorer")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert CHROMIUM and CHROMEDRIVER, (
        "the console test needs Debian's chromium and chromium-driver: "
        "apt-get install -y chromium chromium-driver"
    )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _wait(driver: Any, condition: Any, seconds: float = 180) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds, poll_frequency=0.2).until(condition)


def test_console_login_query_profiles_options(server: Server, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    # an unauthenticated browser is sent to the login page
    browser.get(server.url + "/profiles.json")
    _wait(browser, lambda d: "/mainLogin" in d.current_url)
    browser.find_element(By.LINK_TEXT, "Log in with a user name and password").click()
    _wait(browser, lambda d: d.find_elements(By.NAME, "j_username"))

    # a wrong password shows Drill's message, the right one lands on the console
    browser.find_element(By.NAME, "j_username").send_keys("dora")
    browser.find_element(By.NAME, "j_password").send_keys("wrong")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    _wait(browser, lambda d: "Invalid username/password credentials." in d.page_source)
    browser.find_element(By.NAME, "j_username").send_keys("dora")
    browser.find_element(By.NAME, "j_password").send_keys("explorer")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # back to the page asked for before the login, now readable
    _wait(browser, lambda d: d.current_url.endswith("/profiles.json"))
    assert "finishedQueries" in browser.page_source
    browser.get(server.url + "/")
    _wait(browser, lambda d: d.find_elements(By.ID, "sql"))
    assert "dora" in browser.find_element(By.CSS_SELECTOR, "header .who").text

    # query page: results grid
    sql = browser.find_element(By.ID, "sql")
    sql.clear()
    sql.send_keys("SELECT r_regionkey, r_name FROM cp.`tpch/region.parquet` ORDER BY r_regionkey")
    browser.find_element(By.ID, "run").click()
    _wait(browser, lambda d: "row(s)" in d.find_element(By.ID, "status").text)
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#grid th")]
    assert headers == ["r_regionkey", "r_name"]
    cells = browser.find_elements(By.CSS_SELECTOR, "#grid tr:nth-child(2) td")
    assert [c.text for c in cells] == ["0", "AFRICA"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#grid tr")) == 6

    # a failing query shows its error
    sql.clear()
    sql.send_keys("SELECT * FROM cp.`nothing.parquet`")
    browser.find_element(By.ID, "run").click()
    _wait(browser, lambda d: d.find_element(By.ID, "error").text)
    assert "VALIDATION ERROR" in browser.find_element(By.ID, "error").text

    # profiles list, then the profile of the grid query with its stage chart
    browser.find_element(By.CSS_SELECTOR, "a[data-tab=profiles]").click()
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#profile-list tr")) >= 3)
    rows = browser.find_elements(By.CSS_SELECTOR, "#profile-list tr")
    texts = [r.text for r in rows]
    assert any("tpch/region.parquet" in t and "Succeeded" in t for t in texts)
    assert any("nothing.parquet" in t and "Failed" in t for t in texts)
    target = next(r for r in rows if "tpch/region.parquet" in r.text)
    target.find_element(By.CSS_SELECTOR, "a[data-query]").click()
    _wait(browser, lambda d: d.find_elements(By.ID, "stage-chart"))
    bars = browser.find_elements(By.CSS_SELECTOR, "#stage-chart .bar")
    assert bars and all(b.size["width"] >= 2 for b in bars)
    assert "State COMPLETED" in browser.find_element(By.ID, "profile-detail").text

    # options page
    browser.find_element(By.CSS_SELECTOR, "a[data-tab=options]").click()
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#option-list tr")) > 5)
    assert "exec.query.max_rows" in browser.find_element(By.ID, "option-list").text

    # log out: the console is back to a login link
    browser.get(server.url + "/logout")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "header .who a"))
    assert browser.find_element(By.CSS_SELECTOR, "header .who").text == "Log in"


def test_console_pages_at_drill_urls(server: Server, browser: Any) -> None:
    """Each Drill URL opens the console at its page, and the page fills from the JSON."""
    from selenium.webdriver.common.by import By

    browser.get(server.url + "/login?redirect=/profiles")
    _wait(browser, lambda d: d.find_elements(By.NAME, "j_username"))
    browser.find_element(By.NAME, "j_username").send_keys("dora")
    browser.find_element(By.NAME, "j_password").send_keys("explorer")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    _wait(browser, lambda d: d.current_url.endswith("/profiles"))
    assert browser.find_element(By.ID, "page-title").text == "Profiles"
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#profile-list tr")) >= 2)

    # a profile's own URL opens it
    link = browser.find_element(By.CSS_SELECTOR, "#profile-list a[data-query]")
    query_id = link.get_attribute("data-query")
    browser.get(f"{server.url}/profiles/{query_id}")
    _wait(browser, lambda d: f"Query {query_id}" in d.find_element(By.ID, "profile-detail").text)

    browser.get(server.url + "/storage")
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#storage-list tr")) >= 3)
    assert "dfs" in browser.find_element(By.ID, "storage-list").text

    browser.get(server.url + "/metrics")
    _wait(browser, lambda d: "drill.sessions.open" in d.find_element(By.ID, "metric-list").text)

    browser.get(server.url + "/status")
    _wait(browser, lambda d: "sparkMaster" in d.find_element(By.ID, "status-list").text)
    assert "local[2]" in browser.find_element(By.ID, "status-list").text
    assert browser.find_element(By.ID, "page-title").text == "Status"

    # dora is no admin: the Logs page says so instead of listing files
    browser.get(server.url + "/logs")
    _wait(browser, lambda d: "User not authorized." in d.find_element(By.ID, "log-list").text)
