"""The web console in headless Chromium with logins on: a user (dora) and an admin (ada) log in
through the form and use every page — the Query page's editor, schema browser, cancel, export,
chart and history; a profile's own page with its plan graph; storage and option editing; threads
and logs."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from .browser import chromium, log_in, run_sql, wait
from .helpers import Server, login, post_query

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DORA = ("dora", "explorer")
ADA = ("ada", "lovelace")
#: Rows of a file whose self cross join runs until it is cancelled (9 * 10^8 pairs).
SLOW_ROWS = 30_000
SLOW = (
    "SELECT COUNT(*) AS n FROM dfs.data.`numbers.json` a "
    "CROSS JOIN dfs.data.`numbers.json` b WHERE a.x + b.x < 0"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("console"), {"auth": True})
    srv.passwd(*DORA)
    srv.passwd(*ADA, admin=True)
    (srv.data / "numbers.json").write_text("".join(f'{{"x":{i}}}\n' for i in range(SLOW_ROWS)))
    wide = []
    for r in range(3):
        cols = {f"c{i:02d}": r * i for i in range(30)}
        wide.append({**cols, "long": "y" * 10_000, "nested": {"a": [1, 2, r], "b": {"c": f"v{r}"}}})
    (srv.data / "wide.json").write_text("".join(json.dumps(w) + "\n" for w in wide))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[Any]:
    driver = chromium(downloads)
    yield driver
    driver.quit()


def _by() -> Any:
    from selenium.webdriver.common.by import By

    return By


def test_console_login_query_profiles_options(server: Server, browser: Any) -> None:
    By = _by()
    # an unauthenticated browser is sent to the login page
    browser.get(server.url + "/profiles.json")
    wait(browser, lambda d: "/mainLogin" in d.current_url)
    browser.find_element(By.LINK_TEXT, "Log in with a user name and password").click()
    wait(browser, lambda d: d.find_elements(By.NAME, "j_username"))

    # a wrong password shows Drill's message, the right one lands on the console
    browser.find_element(By.NAME, "j_username").send_keys("dora")
    browser.find_element(By.NAME, "j_password").send_keys("wrong")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser, lambda d: "Invalid username/password credentials." in d.page_source)
    browser.find_element(By.NAME, "j_username").send_keys("dora")
    browser.find_element(By.NAME, "j_password").send_keys("explorer")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # back to the page asked for before the login, now readable
    wait(browser, lambda d: d.current_url.endswith("/profiles.json"))
    assert "finishedQueries" in browser.page_source
    browser.get(server.url + "/")
    wait(browser, lambda d: d.find_elements(By.ID, "sql"))
    assert "dora" in browser.find_element(By.CSS_SELECTOR, "header .who").text
    assert "Log out" in browser.find_element(By.CSS_SELECTOR, "header .who").text

    # query page: results grid
    status = run_sql(
        browser, "SELECT r_regionkey, r_name FROM cp.`tpch/region.parquet` ORDER BY r_regionkey"
    )
    assert "row(s)" in status
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#grid th")]
    assert headers == ["r_regionkey", "r_name"]
    cells = browser.find_elements(By.CSS_SELECTOR, "#grid tr:nth-child(2) td")
    assert [c.text for c in cells] == ["0", "AFRICA"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#grid tr")) == 6

    # a failing query shows its error
    run_sql(browser, "SELECT * FROM cp.`nothing.parquet`")
    assert "VALIDATION ERROR" in browser.find_element(By.ID, "error").text

    # profiles list, then the profile of the grid query on its own page with its stage chart
    browser.find_element(By.CSS_SELECTOR, "a[data-tab=profiles]").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#profile-list tr")) >= 3)
    assert browser.current_url.endswith("/profiles")
    rows = browser.find_elements(By.CSS_SELECTOR, "#profile-list tr")
    texts = [r.text for r in rows]
    assert any("tpch/region.parquet" in t and "Succeeded" in t for t in texts)
    assert any("nothing.parquet" in t and "Failed" in t for t in texts)
    # the console's own look-ups (schemas, completion) are not in the list
    assert not any("SHOW SCHEMAS" in t for t in texts)
    target = next(r for r in rows if "tpch/region.parquet" in r.text)
    query_id = target.find_element(By.CSS_SELECTOR, "a[data-query]").get_attribute("data-query")
    target.find_element(By.CSS_SELECTOR, "a[data-query]").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#stage-chart .bar"))
    assert browser.current_url.endswith(f"/profiles/{query_id}")
    bars = browser.find_elements(By.CSS_SELECTOR, "#stage-chart .bar")
    assert bars and all(b.size["width"] >= 2 for b in bars)
    assert "COMPLETED" in browser.find_element(By.CSS_SELECTOR, "#profile-detail .badge").text

    # options page
    browser.find_element(By.CSS_SELECTOR, "a[data-tab=options]").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#option-list tr")) > 5)
    assert "exec.query.max_rows" in browser.find_element(By.ID, "option-list").text

    # log out: the console is back to a login link
    browser.get(server.url + "/logout")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "header .who a"))
    assert browser.find_element(By.CSS_SELECTOR, "header .who").text == "Log in"


def test_console_pages_at_drill_urls(server: Server, browser: Any) -> None:
    """Each Drill URL opens the console at its page, and the page fills from the JSON."""
    By = _by()
    post_query(login(server, *DORA), server.url, "SELECT 1 AS one")
    log_in(browser, server, *DORA, page="/profiles")
    assert browser.find_element(By.ID, "page-title").text == "Profiles"
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#profile-list tr")) >= 2)

    # filter by text and state; paging
    from selenium.webdriver.support.ui import Select

    def listed() -> list[str]:
        return [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#profile-list tr")[1:]]

    browser.find_element(By.ID, "profile-filter").send_keys("AS one")
    wait(browser, lambda d: listed() and all("SELECT 1 AS one" in t for t in listed()))
    Select(browser.find_element(By.ID, "profile-state")).select_by_visible_text("Failed")
    wait(
        browser,
        lambda d: "No query matches the filter." in d.find_element(By.ID, "profile-list").text,
    )
    browser.find_element(By.ID, "profile-filter").clear()
    Select(browser.find_element(By.ID, "profile-state")).select_by_visible_text("all")
    Select(browser.find_element(By.ID, "profile-page-size")).select_by_visible_text("10")
    wait(browser, lambda d: "page 1 of" in d.find_element(By.ID, "profile-page").text)
    assert 1 <= len(listed()) <= 10

    # a profile's own URL opens it
    link = browser.find_element(By.CSS_SELECTOR, "#profile-list a[data-query]")
    query_id = link.get_attribute("data-query")
    browser.get(f"{server.url}/profiles/{query_id}")
    wait(browser, lambda d: f"Query {query_id}" in d.find_element(By.ID, "profile-detail").text)

    log_in(browser, server, *ADA, page="/storage")  # the storage page is for administrators
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#storage-list tr")) >= 3)
    assert "dfs" in browser.find_element(By.ID, "storage-list").text

    log_in(browser, server, *DORA, page="/metrics")  # dora again, for the rest of the pages
    wait(browser, lambda d: "drill.sessions.open" in d.find_element(By.ID, "metric-list").text)

    browser.get(server.url + "/status")
    wait(browser, lambda d: "sparkMaster" in d.find_element(By.ID, "status-list").text)
    assert "local[2]" in browser.find_element(By.ID, "status-list").text
    assert browser.find_element(By.ID, "page-title").text == "Status"

    # threads: one entry per thread, filtered by name
    browser.get(server.url + "/threads")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#thread-list details"))
    total = len(browser.find_elements(By.CSS_SELECTOR, "#thread-list details"))
    browser.find_element(By.ID, "thread-filter").send_keys("MainThread")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#thread-list details")) < total)
    assert "MainThread" in browser.find_element(By.ID, "thread-list").text

    # dora is no admin: the Logs page says so instead of listing files
    browser.get(server.url + "/logs")
    wait(browser, lambda d: "User not authorized." in d.find_element(By.ID, "log-list").text)

    # ada is: she lists the log files and reads one
    log_in(browser, server, *ADA, page="/logs")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#log-list button[data-log]"))
    browser.find_element(By.CSS_SELECTOR, "#log-list button[data-log]").click()
    wait(browser, lambda d: "serving on" in d.find_element(By.ID, "log-content").text)
    browser.find_element(By.ID, "log-filter").send_keys("no line has this")
    wait(browser, lambda d: d.find_element(By.ID, "log-content").text == "(no lines)")


def test_query_page_editor_browser_export_chart_history(
    server: Server, browser: Any, downloads: Path
) -> None:
    from selenium.webdriver.common.keys import Keys

    By = _by()
    log_in(browser, server, *DORA)
    box = browser.find_element(By.ID, "sql")

    # highlighting: keywords, strings and quoted names get their own colours
    browser.execute_script("arguments[0].value = ''", box)
    box.send_keys("SELECT 'text', 42 FROM ")
    kinds = {
        s.get_attribute("class"): s.text
        for s in browser.find_elements(By.CSS_SELECTOR, "#sql-highlight span")
    }
    assert kinds["tok-kw"] in ("SELECT", "FROM") and kinds["tok-str"] == "'text'"
    assert kinds["tok-num"] == "42"

    # completion: schemas after a plugin name, then the schema's files
    box.send_keys("cp.")
    wait(browser, lambda d: "cp.default" in d.find_element(By.ID, "completions").text)
    box.send_keys(Keys.ENTER)
    assert box.get_attribute("value").endswith("FROM cp.default")
    box.send_keys(".emp")
    box.send_keys(Keys.CONTROL, " ")
    wait(browser, lambda d: "employee.json" in d.find_element(By.ID, "completions").text)
    box.send_keys(Keys.TAB)
    assert box.get_attribute("value").endswith("FROM cp.default.`employee.json`")
    # columns of the tables the statement names
    browser.execute_script(
        "arguments[0].value = 'SELECT  FROM cp.`employee.json`'; "
        "arguments[0].setSelectionRange(7, 7);",
        box,
    )
    box.send_keys("full")
    box.send_keys(Keys.CONTROL, " ")
    wait(browser, lambda d: "full_name" in d.find_element(By.ID, "completions").text)
    box.send_keys(Keys.ENTER)
    assert box.get_attribute("value") == "SELECT full_name FROM cp.`employee.json`"

    # schema browser: plugin → workspace → table → columns with types; a click inserts a name
    browser.execute_script("arguments[0].value = 'SELECT * FROM '", box)
    tree = browser.find_element(By.ID, "schema-tree")
    wait(browser, lambda d: tree.find_elements(By.CSS_SELECTOR, "button.name[data-insert=dfs]"))
    toggle = "li:has(> button.name[data-insert='{}']) > button.toggle"
    tree.find_element(By.CSS_SELECTOR, toggle.format("dfs")).click()
    wait(browser, lambda d: tree.find_elements(By.CSS_SELECTOR, toggle.format("dfs.data")))
    tree.find_element(By.CSS_SELECTOR, toggle.format("dfs.data")).click()
    wide = "dfs.data.`wide.json`"
    wait(browser, lambda d: tree.find_elements(By.CSS_SELECTOR, toggle.format(wide)))
    tree.find_element(By.CSS_SELECTOR, toggle.format(wide)).click()
    wait(browser, lambda d: tree.find_elements(By.CSS_SELECTOR, "button.name[data-insert=c29]"))
    column = tree.find_element(By.CSS_SELECTOR, "li:has(> button.name[data-insert=c29])")
    assert "BIGINT" in column.text
    browser.execute_script(
        "arguments[0].setSelectionRange(arguments[0].value.length, arguments[0].value.length)",
        box,
    )
    tree.find_element(By.CSS_SELECTOR, f"button.name[data-insert='{wide}']").click()
    assert box.get_attribute("value") == f"SELECT * FROM {wide}"

    # Ctrl+Enter runs; 30 columns and a 10,000-character value stay inside the page
    box.send_keys(Keys.CONTROL, Keys.ENTER)
    wait(browser, lambda d: "3 row(s)" in d.find_element(By.ID, "status").text)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#grid th")) == 32
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 1400
    wrap = browser.find_element(By.ID, "grid-wrap")
    assert browser.execute_script(
        "return arguments[0].scrollWidth > arguments[0].clientWidth", wrap
    )
    long_cell = browser.find_element(By.XPATH, "//table[@id='grid']//tr[2]/td[31]")
    assert len(long_cell.text) < 300
    long_cell.find_element(By.CSS_SELECTOR, "button.more").click()
    assert long_cell.text == "y" * 10_000
    # a nested value opens into its JSON
    nested = browser.find_element(By.XPATH, "//table[@id='grid']//tr[4]/td[32]")
    nested.find_element(By.TAG_NAME, "summary").click()
    # the JSON is added by the details' toggle event, which the browser fires after the click
    pre = wait(browser, lambda d: nested.find_element(By.TAG_NAME, "pre"))
    assert json.loads(pre.text) == {
        "a": [1, 2, 2],
        "b": {"c": "v2"},
    }

    # export as CSV and JSON
    browser.find_element(By.ID, "download-csv").click()
    browser.find_element(By.ID, "download-json").click()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        files = sorted(p.name for p in downloads.iterdir() if not p.name.endswith(".crdownload"))
        if len(files) >= 2:
            break
        time.sleep(0.2)
    csv_file = next(downloads.glob("query-*.csv"))
    table = list(csv.reader(csv_file.open(newline="")))
    assert table[0][:2] == ["c00", "c01"] and len(table) == 4
    assert table[2][1] == "1" and table[3][29] == "58"
    exported = json.loads(next(downloads.glob("query-*.json")).read_text())
    assert [r["c02"] for r in exported] == [0, 2, 4]
    assert exported[1]["nested"] == {"a": [1, 2, 1], "b": {"c": "v1"}}

    # one click charts the result: x and y chosen from its columns
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "chart-type")).select_by_visible_text("line")
    Select(browser.find_element(By.ID, "chart-x")).select_by_visible_text("c01")
    Select(browser.find_element(By.ID, "chart-y")).select_by_visible_text("c03")
    browser.find_element(By.ID, "chart-button").click()
    drawn = browser.execute_script(
        "const c = Chart.getChart(document.getElementById('chart'));"
        "return c && [c.config.type, c.data.labels, c.data.datasets[0].data];"
    )
    assert drawn == ["line", ["0", "1", "2"], [0, 3, 6]]
    assert browser.find_element(By.ID, "chart").size["height"] > 100

    # the history lists this statement; a click puts it back in the editor
    first = browser.find_element(By.CSS_SELECTOR, "#history li button")
    assert first.text == f"SELECT * FROM {wide}"
    browser.execute_script("arguments[0].value = ''", box)
    first.click()
    assert box.get_attribute("value") == f"SELECT * FROM {wide}"


def test_cancel_shows_progress_then_stops_the_query(server: Server, browser: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    By = _by()
    log_in(browser, server, *DORA)
    box = browser.find_element(By.ID, "sql")
    browser.execute_script("arguments[0].value = arguments[1]", box, SLOW)
    box.send_keys(Keys.CONTROL, Keys.ENTER)
    cancel = browser.find_element(By.ID, "cancel")
    wait(browser, lambda d: cancel.is_displayed())
    assert not browser.find_element(By.ID, "run").is_enabled()
    # the progress line follows the query's Spark stages
    wait(browser, lambda d: "stage" in d.find_element(By.ID, "progress-text").text)
    cancel.click()
    wait(browser, lambda d: d.find_element(By.ID, "status").text.startswith("CANCELED"), 120)
    assert not cancel.is_displayed()
    assert "cancelled" in browser.find_element(By.ID, "error").text
    state = browser.find_element(By.CSS_SELECTOR, "#history li span[aria-label]")
    assert state.get_attribute("aria-label") == "CANCELED"


def test_profile_page_plan_graph_stages_and_errors(server: Server, browser: Any) -> None:
    By = _by()
    log_in(browser, server, *DORA)
    status = run_sql(
        browser,
        "SELECT n_regionkey, COUNT(*) AS n FROM cp.`tpch/nation.parquet` "
        "GROUP BY n_regionkey ORDER BY n_regionkey",
    )
    assert "5 row(s)" in status
    browser.find_element(By.CSS_SELECTOR, "#status a").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#plan-graph .plan-node"))
    facts = browser.find_element(By.ID, "profile-facts").text
    for label in ("User\ndora", "Rows\n5", "Queued", "Planning", "Execution"):
        assert label in facts
    assert "GROUP BY n_regionkey" in browser.find_element(By.ID, "profile-sql").text
    # the plan is EXPLAIN's graph of operators, the scan with the rows Spark counted
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#plan-graph .plan-node .op")]
    assert len(names) >= 3 and names[0] == "Screen"
    assert "HashAgg" in names and "Scan" in names
    metrics = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#plan-graph .metric")]
    assert any("25 rows" in m for m in metrics)
    nested = browser.find_elements(By.CSS_SELECTOR, "#plan-graph .plan-node ~ ul .plan-node")
    assert nested  # children hang below their parent
    # stages are named by what they do, not by the line of auger's code that ran them
    labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#stage-chart .label")]
    assert labels and not any("queries.py" in lb or "toArrow" in lb for lb in labels)
    assert any("shuffle" in lb or "scan" in lb for lb in labels)

    # a failed query's profile shows the error with its context lines
    browser.get(server.url + "/query")
    wait(browser, lambda d: d.find_element(By.ID, "sql").is_displayed())
    run_sql(browser, "SELECT * FROM dfs.data.`nothing_here.json`")
    browser.find_element(By.CSS_SELECTOR, "#status a").click()
    wait(browser, lambda d: d.find_elements(By.ID, "profile-error"))
    error = browser.find_element(By.ID, "profile-error").text
    assert "nothing_here.json" in error and "\n" in error
    assert "FAILED" in browser.find_element(By.CSS_SELECTOR, "#profile-detail .badge").text

    # a query that names a column no file has: its profile page lists the scan's message
    (server.data / "regions.csvh").write_text("region,amount\neast,1\n")
    browser.get(server.url + "/query")
    wait(browser, lambda d: d.find_element(By.ID, "sql").is_displayed())
    assert "1 row(s)" in run_sql(browser, "SELECT regoin FROM dfs.data.`regions.csvh`")
    browser.find_element(By.CSS_SELECTOR, "#status a").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#profile-warnings li"))
    items = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#profile-warnings li")]
    assert items == [
        "Column [regoin] was not found in the file of dfs.data.regions.csvh; did you mean [region]?"
    ]


def test_storage_editing_is_for_admins_and_checked(server: Server, browser: Any) -> None:
    By = _by()
    # dora is offered no storage page, and cannot open it
    log_in(browser, server, *DORA, page="/query")
    assert not browser.find_elements(By.CSS_SELECTOR, "a[data-tab=storage]")
    page = login(server, *DORA).get(server.url + "/storage", headers={"Accept": "text/html"})
    assert page.status_code == 403

    log_in(browser, server, *ADA, page="/storage")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "button[data-plugin=dfs]"))
    browser.find_element(By.CSS_SELECTOR, "button[data-plugin=dfs]").click()
    editor = browser.find_element(By.ID, "storage-config")
    config = json.loads(editor.get_attribute("value"))
    assert config["workspaces"]["data"]["location"] == str(server.data)

    def save(cfg: dict[str, Any]) -> str:
        browser.execute_script("arguments[0].value = arguments[1]", editor, json.dumps(cfg))
        result = browser.find_element(By.ID, "storage-result")
        browser.execute_script("arguments[0].textContent = ''", result)
        browser.find_element(By.ID, "storage-save").click()
        wait(browser, lambda d: result.text)
        return str(result.text)

    # a location that is no directory is refused, and nothing changes
    bad = json.loads(json.dumps(config))
    bad["workspaces"]["data"]["location"] = str(server.root / "no-such-dir")
    assert "is not a directory" in save(bad)
    # so is JSON that does not parse
    browser.execute_script("arguments[0].value = '{\"workspaces\": '", editor)
    browser.find_element(By.ID, "storage-save").click()
    wait(browser, lambda d: "Not valid JSON" in d.find_element(By.ID, "storage-result").text)

    http = login(server, *ADA)
    current = http.get(server.url + "/storage/dfs.json", timeout=30).json()["config"]
    assert current["workspaces"]["data"]["location"] == str(server.data)

    # a new workspace is saved and can be queried at once
    (server.root / "more").mkdir()
    (server.root / "more" / "t.json").write_text('{"k": 7}\n')
    good = json.loads(json.dumps(config))
    good["workspaces"]["more"] = {"location": str(server.root / "more"), "writable": False}
    assert save(good) == "Success"
    current = http.get(server.url + "/storage/dfs.json", timeout=30).json()["config"]
    assert current["workspaces"]["more"]["location"] == str(server.root / "more")
    resp = http.post(
        server.url + "/query.json",
        json={"queryType": "SQL", "query": "SELECT k FROM dfs.more.`t.json`"},
        timeout=120,
    )
    assert resp.json()["rows"] == [{"k": 7}]

    # disable, then enable again, from the list
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "button[data-enable=cp]"))
    browser.find_element(By.CSS_SELECTOR, "button[data-enable=cp]").click()
    wait(
        browser,
        lambda d: d.find_element(By.CSS_SELECTOR, "button[data-enable=cp]").text == "Enable",
    )
    assert (
        http.get(server.url + "/storage/cp.json", timeout=30).json()["config"]["enabled"] is False
    )
    browser.find_element(By.CSS_SELECTOR, "button[data-enable=cp]").click()
    wait(
        browser,
        lambda d: d.find_element(By.CSS_SELECTOR, "button[data-enable=cp]").text == "Disable",
    )
    assert http.get(server.url + "/storage/cp.json", timeout=30).json()["config"]["enabled"] is True

    # non-admins cannot save over REST either
    dora = login(server, *DORA)
    resp = dora.post(server.url + "/storage/dfs.json", json={"name": "dfs", "config": good})
    assert resp.status_code == 403


def test_options_filter_edit_and_reset(server: Server, browser: Any) -> None:
    By = _by()
    option = "exec.query.max_rows"
    row = f"#option-list tr[data-option='{option}']"

    def edit(value: str, action: str) -> None:
        field = browser.find_element(By.CSS_SELECTOR, f"{row} input")
        field.clear()
        field.send_keys(value)
        browser.find_element(By.CSS_SELECTOR, f"{row} button.{action}").click()

    def scope() -> str:
        return str(browser.find_elements(By.CSS_SELECTOR, f"{row} td")[2].text)

    log_in(browser, server, *DORA, page="/options")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#option-list tr")) > 5)
    browser.find_element(By.ID, "option-filter").send_keys("query.max_rows")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#option-list tr")) == 2)
    # dora may only change her own session
    assert not browser.find_elements(By.CSS_SELECTOR, f"{row} button.set-system")
    edit("3", "set-session")
    wait(browser, lambda d: scope() == "SESSION")
    assert browser.find_element(By.CSS_SELECTOR, f"{row} input").get_attribute("value") == "3"
    # the session's queries see it
    browser.get(server.url + "/query")
    wait(browser, lambda d: d.find_elements(By.ID, "sql"))
    assert "3 row(s)" in run_sql(browser, "SELECT * FROM cp.`tpch/nation.parquet`")
    # a bad value is refused with the reason
    browser.get(server.url + "/options")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, row))
    edit("many", "set-session")
    wait(browser, lambda d: d.find_element(By.ID, "option-result").text)
    assert "fail" in browser.find_element(By.ID, "option-result").get_attribute("class")
    # only changed options, then reset to the default
    changed = browser.find_element(By.ID, "option-changed")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", changed)
    changed.click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#option-list tr")) >= 2)
    assert all(
        "changed" in r.get_attribute("class")
        for r in browser.find_elements(By.CSS_SELECTOR, "#option-list tr[data-option]")
    )
    browser.find_element(By.CSS_SELECTOR, f"{row} button.reset").click()
    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, row))

    # ada sets the system value for everyone, then resets it
    log_in(browser, server, *ADA, page="/options")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, row))
    edit("7", "set-system")
    wait(browser, lambda d: scope() == "SYSTEM")
    system = requests.get(server.url + "/options.json", auth=DORA, timeout=30).json()
    assert next(o for o in system if o["name"] == option)["value"] == 7
    browser.find_element(By.CSS_SELECTOR, f"{row} button.reset").click()
    wait(browser, lambda d: scope() == "BOOT")
