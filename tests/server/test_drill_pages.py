"""Drill's console URLs on a real ``auger serve``: a page for browsers, JSON for clients, and
profiles that belong to their server (its own state directory, no internal look-ups)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from auger.cli.remote import INTERNAL_HEADER as CLIENT_HEADER
from auger.cli.remote import RemoteConnection
from auger.cli.shell import Shell
from auger.server.profiles import ProfileStore
from auger.server.query_request import INTERNAL_HEADER as SERVER_HEADER
from auger.server.query_request import is_internal
from auger.server.settings import ServerSettings

from .helpers import Server, login, post_query

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
JSON = {"Accept": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("drill_pages")
    # no profiles_dir: the server must pick the store in its own state directory
    srv = Server(root, {"auth": True, "profiles_dir": ""}, env={"AUGER_HOME": str(root / "home")})
    srv.passwd("alice", "wonder land")
    srv.passwd("root", "s3cret", admin=True)
    srv.start()
    yield srv
    srv.stop()


def profile_ids(server: Server) -> set[str]:
    data = login(server, "root", "s3cret").get(server.url + "/profiles.json", timeout=30).json()
    return {p["queryId"] for p in data["runningQueries"] + data["finishedQueries"]}


# ------------------------------------------------------------------ profiles of this server
def test_default_profile_store_is_in_the_servers_state_directory(
    server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    alice = login(server, "alice", "wonder land")
    query_id = post_query(alice, server.url, "SELECT 1 AS one").json()["queryId"]
    home = server.root / "home"
    assert (home / "profiles" / f"{query_id}.json").is_file()
    assert not server.profiles_dir.exists()  # the helper's explicit store was not used

    # a server with another state directory opens another store, which has none of these
    monkeypatch.setenv("AUGER_HOME", str(tmp_path / "other"))
    other = ServerSettings.from_config({}).profiles_dir
    assert Path(other) == tmp_path / "other" / "profiles"
    assert ProfileStore(other).get(query_id) is None
    monkeypatch.setenv("AUGER_HOME", str(home))
    assert ProfileStore(ServerSettings.from_config({}).profiles_dir).get(query_id) is not None


def test_client_and_server_name_the_internal_header_alike() -> None:
    assert CLIENT_HEADER == SERVER_HEADER


def test_shell_completion_lookups_leave_no_profile(server: Server) -> None:
    conn = RemoteConnection(server.url, "alice", "wonder land", timeout=120)
    try:
        shell = Shell(conn, io.StringIO(), io.StringIO())
        before = profile_ids(server)
        assert "dfs.tmp" in shell.cache.schemas()  # the look-ups ran on the server
        assert "full_name" in shell.cache.columns("cp.`employee.json`")
        assert profile_ids(server) == before

        cur = conn.cursor()  # the user's own statement on the same connection is recorded
        cur.execute("SELECT 2 AS two")
        assert profile_ids(server) == before | {cur.query_id}
    finally:
        conn.close()


def test_internal_header_runs_the_statement_without_a_profile(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    before = profile_ids(server)
    resp = alice.post(
        server.url + "/query.json",
        json={"queryType": "SQL", "query": "SHOW SCHEMAS"},
        headers={SERVER_HEADER: "true"},
        timeout=120,
    )
    assert resp.json()["rows"], resp.text
    assert profile_ids(server) == before


def test_internal_header_does_not_hide_a_users_query(server: Server) -> None:
    """Only metadata look-ups go unrecorded: the header cannot hide work from administrators."""
    alice = login(server, "alice", "wonder land")
    before = profile_ids(server)
    resp = alice.post(
        server.url + "/query.json",
        json={"queryType": "SQL", "query": "SELECT 3 AS three"},
        headers={SERVER_HEADER: "true"},
        timeout=120,
    )
    assert resp.json()["rows"] == [{"three": 3}]
    assert resp.json()["queryId"] in profile_ids(server) - before


@pytest.mark.parametrize(
    ("statement", "internal"),
    [
        ("SHOW SCHEMAS", True),
        ("show files in dfs.tmp", True),
        ("DESCRIBE dfs.data.`a.csv`", True),
        ("SELECT * FROM dfs.data.`a.csv` LIMIT 0", True),
        ("SELECT * FROM t LIMIT 0;", True),
        ("SELECT * FROM t LIMIT 10", False),
        ("SELECT a FROM t LIMIT 0", False),
        ("SHOW SCHEMAS; DROP TABLE dfs.tmp.x", False),
        ("CREATE TABLE dfs.tmp.x AS SELECT * FROM t LIMIT 0", False),
    ],
)
def test_which_statements_the_internal_header_covers(statement: str, internal: bool) -> None:
    assert is_internal({SERVER_HEADER: "true"}, statement) is internal
    assert is_internal({}, statement) is False


# ------------------------------------------------------------------ Drill's URLs
PAGES = [
    ("/query", "query", "Query"),
    ("/profiles", "profiles", "Profiles"),
    ("/options", "options", "Options"),
    ("/status", "status", "Status"),
    ("/storage", "storage", "Storage"),
    ("/logs", "logs", "Logs"),
    ("/metrics", "metrics", "Metrics"),
    ("/threads", "threads", "Threads"),
]


@pytest.mark.parametrize(("path", "page", "title"), PAGES)
def test_drill_urls_answer_a_page_to_browsers(
    server: Server, path: str, page: str, title: str
) -> None:
    # the storage page is for administrators only
    user, password = ("root", "s3cret") if page == "storage" else ("alice", "wonder land")
    http = login(server, user, password)
    resp = http.get(server.url + path, headers=HTML, timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/html")
    assert f'<h1 id="page-title">{title}</h1>' in resp.text
    assert f'data-page="{page}"' in resp.text
    assert user in resp.text  # the logged-in user in the header


def test_profile_url_opens_that_profile(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    query_id = post_query(alice, server.url, "SELECT 4 AS four").json()["queryId"]
    page = alice.get(f"{server.url}/profiles/{query_id}", headers=HTML, timeout=30)
    assert page.status_code == 200
    assert f'data-profile="{query_id}"' in page.text
    assert '<h1 id="page-title">Profile</h1>' in page.text
    data = alice.get(f"{server.url}/profiles/{query_id}", headers=JSON, timeout=30).json()
    assert data["queryId"] == query_id and data["query"] == "SELECT 4 AS four"


def test_a_finished_querys_profile_plan_is_explains_tree_with_rows(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    sql = (
        "SELECT n_regionkey, COUNT(*) AS n FROM cp.`tpch/nation.parquet` "
        "GROUP BY n_regionkey ORDER BY n_regionkey"
    )
    resp = post_query(alice, server.url, sql)
    assert resp.status_code == 200 and len(resp.json()["rows"]) == 5
    query_id = resp.json()["queryId"]
    data = alice.get(f"{server.url}/profiles/{query_id}", headers=JSON, timeout=30).json()
    plan = data["planTree"]

    def walk(node: dict[str, Any]) -> list[dict[str, Any]]:
        return [node, *(n for c in node["children"] for n in walk(c))]

    assert plan["name"] == "Screen"
    names = [n["name"] for n in walk(plan)]
    assert "HashAgg" in names and "Sort" in names
    (scan,) = [n for n in walk(plan) if n["name"] == "Scan"]
    assert scan["detail"].startswith("Scan(table=[cp.tpch/nation.parquet]")
    assert "`n_regionkey`" in scan["detail"]
    assert scan["rows"] == 25
    assert data["plan"].splitlines()[0] == "Screen"


def test_drill_urls_answer_json_to_clients(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    root = login(server, "root", "s3cret")

    def get(http: requests.Session, path: str, headers: dict[str, str] = JSON) -> object:
        resp = http.get(server.url + path, headers=headers, timeout=30)
        assert resp.status_code == 200, (path, resp.text)
        assert resp.headers["content-type"].startswith("application/json"), path
        return resp.json()

    # what a client without an Accept preference (pydrill sends */*) gets, too
    profiles = get(alice, "/profiles", {"Accept": "*/*"})
    assert isinstance(profiles, dict) and "finishedQueries" in profiles
    options = get(alice, "/options")
    assert isinstance(options, list)
    assert "exec.errors.verbose" in {o["name"] for o in options}
    storage = get(root, "/storage")
    assert isinstance(storage, list) and "dfs" in {p["name"] for p in storage}
    assert alice.get(server.url + "/storage", headers=JSON, timeout=30).status_code == 403
    metrics = get(alice, "/metrics")
    assert isinstance(metrics, dict) and metrics["gauges"]["drill.sessions.open"]["value"] >= 2
    assert get(alice, "/query") == {"submit": "POST /query.json", "queryTypes": ["SQL"]}
    logs = get(root, "/logs")
    assert isinstance(logs, list)
    assert f"server-{server.port}.log" in {f["name"] for f in logs}

    status = get(requests.Session(), "/status")  # open to everyone, like Drill's
    assert isinstance(status, dict)
    assert status["status"] == "Running!"
    assert status["sparkMaster"] == "local[2]"
    assert status["openSessions"] >= 2
    assert status["version"] and status["uptime"].count(":") == 2
    if status["sparkRunning"]:
        assert status["executors"] >= 1
    # Drill's /status stays a page for a client that asks for nothing in particular
    plain = requests.get(server.url + "/status", timeout=30)
    assert "<strong>Running!</strong>" in plain.text


def test_pages_need_a_login_and_edits_need_an_admin(server: Server) -> None:
    anonymous = requests.Session()
    resp = anonymous.get(server.url + "/storage", headers=HTML, allow_redirects=False, timeout=30)
    assert resp.status_code == 307 and resp.headers["location"].startswith("/mainLogin")
    assert anonymous.get(server.url + "/profiles", headers=JSON, timeout=30).status_code == 401

    alice = login(server, "alice", "wonder land")
    edit = alice.post(
        server.url + "/storage/dfs.json", json={"name": "dfs", "config": {}}, timeout=30
    )
    assert edit.status_code == 403
    assert edit.json()["errorMessage"] == "User not authorized."
    assert alice.post(server.url + "/storage/dfs/enable/false", timeout=30).status_code == 403
    assert alice.get(server.url + "/logs", headers=JSON, timeout=30).status_code == 403

    root = login(server, "root", "s3cret")
    edit = root.post(
        server.url + "/storage/dfs.json", json={"name": "dfs", "config": {}}, timeout=30
    )
    assert edit.status_code != 403  # admins get past the check (the config file stays the source)


def test_console_files_are_served_from_the_package(server: Server) -> None:
    resp = requests.get(server.url + "/static/console.js", timeout=30)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/javascript")
    chart = requests.get(server.url + "/static/vendor/chart.umd.min.js", timeout=30)
    assert chart.status_code == 200 and "Chart.js v4" in chart.text[:200]
    licence = requests.get(server.url + "/static/vendor/chart.js.LICENSE.md", timeout=30)
    assert "MIT" in licence.text or "Permission is hereby granted" in licence.text
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/pages.py", "/static/x.js"):
        assert requests.get(server.url + path, timeout=30).status_code == 404, path


def test_options_are_set_per_session_and_system_wide_by_admins(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    root = login(server, "root", "s3cret")
    name = "exec.query.max_rows"

    def value(http: requests.Session, scope: str = "") -> object:
        query = "?scope=session" if scope else ""
        data = http.get(server.url + "/options.json" + query, headers=JSON, timeout=30).json()
        return next((o["value"], o["optionScope"]) for o in data if o["name"] == name)

    ok = alice.post(f"{server.url}/option/{name}", json={"value": "4", "scope": "SESSION"})
    assert ok.status_code == 200, ok.text
    assert value(alice, "session") == (4, "SESSION")
    assert value(root, "session") == (0, "BOOT")  # other sessions are untouched
    nations = post_query(alice, server.url, "SELECT * FROM cp.`tpch/nation.parquet`").json()
    assert len(nations["rows"]) == 4
    bad = alice.post(f"{server.url}/option/{name}", json={"value": "lots", "scope": "SESSION"})
    assert bad.status_code == 400 and "lots" in bad.json()["errorMessage"]
    unknown = alice.post(
        f"{server.url}/option/no.such.option", json={"value": 1, "scope": "SESSION"}
    )
    assert unknown.status_code == 400 and "does not exist" in unknown.json()["errorMessage"]
    # the system scope is for admins; Drill's own form (name, value, kind) sets it
    denied = alice.post(f"{server.url}/option/{name}", json={"value": 9, "scope": "SYSTEM"})
    assert denied.status_code == 403
    form = root.post(
        f"{server.url}/option/{name}", data={"name": name, "value": "9", "kind": "LONG"}
    )
    assert form.status_code == 200, form.text
    assert value(root) == (9, "SYSTEM")
    assert value(alice, "session") == (4, "SESSION")  # her own setting still wins
    assert alice.post(f"{server.url}/option/{name}/reset", json={"scope": "SESSION"}).ok
    assert value(alice, "session") == (9, "SYSTEM")
    assert root.post(f"{server.url}/option/{name}/reset", json={"scope": "SYSTEM"}).ok
    assert value(alice, "session") == (0, "BOOT")


def test_storage_changes_are_checked_before_they_are_saved(server: Server) -> None:
    root = login(server, "root", "s3cret")
    before = root.get(server.url + "/storage/dfs.json", timeout=30).json()["config"]

    def save(config: object) -> requests.Response:
        return root.post(server.url + "/storage/dfs.json", json={"name": "dfs", "config": config})

    broken = json.loads(json.dumps(before))
    broken["workspaces"]["tmp"]["writable"] = "yes"
    resp = save(broken)
    assert resp.status_code == 400 and "writable must be true or false" in resp.json()["result"]
    broken = json.loads(json.dumps(before))
    broken["formats"]["json"]["type"] = "yaml"
    assert "unknown type [yaml]" in save(broken).json()["result"]
    broken = json.loads(json.dumps(before))
    broken["workspaces"]["tmp"]["defaultInputFormat"] = "nope"
    assert "does not define" in save(broken).json()["result"]
    broken = json.loads(json.dumps(before))
    broken["workspaces"]["tmp"]["writable"] = False  # the temporary workspace must stay writable
    assert "immutable" in save(broken).json()["result"]
    assert save({**before, "type": "s3"}).status_code == 400
    assert root.post(server.url + "/storage/dfs.json", data=b"{", timeout=30).status_code == 400
    assert root.get(server.url + "/storage/dfs.json", timeout=30).json()["config"] == before


def test_log_files_are_read_by_name_only(server: Server) -> None:
    root = login(server, "root", "s3cret")
    alice = login(server, "alice", "wonder land")
    name = f"server-{server.port}.log"
    resp = root.get(f"{server.url}/log/{name}/content", timeout=30)
    assert resp.status_code == 200 and resp.json()["name"] == name
    assert any(
        "auger" in line.lower() or "uvicorn" in line.lower() for line in resp.json()["lines"]
    )
    assert alice.get(f"{server.url}/log/{name}/content", timeout=30).status_code == 403
    for bad in ("..%2Fauger.toml", ".hidden", "missing.log"):
        assert root.get(f"{server.url}/log/{bad}/content", timeout=30).status_code == 404, bad
