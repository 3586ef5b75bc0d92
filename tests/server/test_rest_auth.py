"""``auger serve`` with ``server.auth = true``: form and Basic login, Drill's failure-page
markers, 401/307 for unauthenticated calls, roles, profiles per user, and both real clients
logging in."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator

import pytest
import requests

from .helpers import AUGER, Server, login, post_query, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MARK_FORM = 'action="/j_security_check"'
MARK_ERROR = '<p style="color:red">Invalid username/password credentials.</p>'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("rest_auth"), {"auth": True})
    srv.passwd("alice", "wonder land")
    srv.passwd("bob", "builder")
    srv.passwd("root", "s3cret", admin=True)
    srv.start()
    yield srv
    srv.stop()


# ------------------------------------------------------------------ the users file
def test_users_file_holds_salted_scrypt_hashes(server: Server) -> None:
    data = json.loads(server.users_file.read_text())
    users = data["users"]
    assert set(users) == {"alice", "bob", "root"}
    assert users["root"]["admin"] is True and users["alice"]["admin"] is False
    assert all(u["password_hash"].startswith("scrypt$") for u in users.values())
    assert "wonder land" not in server.users_file.read_text()
    salts = {u["password_hash"].split("$")[4] for u in users.values()}
    assert len(salts) == 3
    assert stat.S_IMODE(os.stat(server.users_file).st_mode) == 0o600


def test_passwd_keeps_role_and_rejects_empty(server: Server) -> None:
    import subprocess

    done = subprocess.run(
        [AUGER, "passwd", "carol", "--config", str(server.config)],
        input="\n",
        text=True,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "empty password" in done.stderr
    server.passwd("root", "s3cret")  # no --admin: the role stays
    assert json.loads(server.users_file.read_text())["users"]["root"]["admin"] is True


# ------------------------------------------------------------------ login
def test_form_login_success_redirects_and_sets_cookie(server: Server) -> None:
    http = requests.Session()
    resp = http.post(
        server.url + "/j_security_check",
        data={"j_username": "alice", "j_password": "wonder land"},
        allow_redirects=False,
        timeout=30,
    )
    assert resp.status_code == 303
    assert resp.headers["location"] == "/"
    assert "Drill-Session-Id" in resp.cookies
    home = http.get(server.url + "/", timeout=10)
    assert home.status_code == 200 and MARK_FORM not in home.text
    assert rows(http, server.url, "select 1 one") == [{"one": 1}]


@pytest.mark.parametrize(("user", "password"), [("alice", "wrong"), ("nobody", "x"), ("alice", "")])
def test_form_login_failure_page(server: Server, user: str, password: str) -> None:
    resp = requests.post(
        server.url + "/j_security_check",
        data={"j_username": user, "j_password": password},
        timeout=30,
    )
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/html")
    assert MARK_FORM in resp.text and MARK_ERROR in resp.text
    assert "Drill-Session-Id" not in resp.cookies


def test_login_ignores_basic_header(server: Server) -> None:
    resp = requests.post(
        server.url + "/j_security_check",
        data={"j_username": "alice", "j_password": "wonder land"},
        auth=("alice", "not the password"),
        allow_redirects=False,
        timeout=30,
    )
    assert resp.status_code == 303


# ------------------------------------------------------------------ unauthenticated
def test_unauthenticated_api_call_is_401_json(server: Server) -> None:
    resp = post_query(None, server.url, "select 1")
    assert resp.status_code == 401
    assert "errorMessage" in resp.json()
    for path in ("/options.json", "/profiles.json", "/storage.json"):
        assert requests.get(server.url + path, timeout=10).status_code == 401


def test_unauthenticated_browser_is_redirected_to_login(server: Server) -> None:
    resp = requests.get(
        server.url + "/profiles.json",
        headers={"Accept": "text/html"},
        allow_redirects=False,
        timeout=10,
    )
    assert resp.status_code == 307
    assert resp.headers["location"] == "/mainLogin?redirect=%2Fprofiles.json"


def test_open_endpoints_need_no_login(server: Server) -> None:
    assert requests.head(server.url + "/", timeout=10).status_code == 200
    assert requests.get(server.url + "/status.json", timeout=10).status_code == 200
    assert requests.get(server.url + "/cluster.json", timeout=10).json()["authEnabled"] is True
    page = requests.get(server.url + "/login", timeout=10)
    assert MARK_FORM in page.text and MARK_ERROR not in page.text


def test_basic_auth_on_any_request(server: Server) -> None:
    with requests.Session() as http:
        http.auth = ("bob", "builder")
        assert rows(http, server.url, "USE cp")[0]["ok"] is True
        # no cookie: the user's Basic requests share one session, which carries the schema
        assert not http.cookies.get("Drill-Session-Id")
        got = rows(http, server.url, "SELECT r_name FROM `tpch/region.parquet` LIMIT 1")
        assert len(got) == 1
    bad = post_query(None, server.url, "select 1", **{})
    assert bad.status_code == 401
    wrong = requests.post(
        server.url + "/query.json",
        json={"queryType": "SQL", "query": "select 1"},
        auth=("bob", "nope"),
        timeout=30,
    )
    assert wrong.status_code == 401


def test_logout_requires_login_again(server: Server) -> None:
    http = login(server, "alice", "wonder land")
    rows(http, server.url, "select 1")
    http.get(server.url + "/logout", timeout=10)
    assert post_query(http, server.url, "select 1").status_code == 401


# ------------------------------------------------------------------ users and roles
def test_session_user_and_profiles_per_user(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    bob = login(server, "bob", "builder")
    root = login(server, "root", "s3cret")
    a_id = post_query(alice, server.url, "SELECT 'alice' who").json()["queryId"]
    b_id = post_query(bob, server.url, "SELECT 'bob' who").json()["queryId"]
    seen_by_alice = {
        q["queryId"]: q["user"]
        for q in alice.get(server.url + "/profiles.json", timeout=10).json()["finishedQueries"]
    }
    assert seen_by_alice.get(a_id) == "alice"
    assert b_id not in seen_by_alice
    assert set(seen_by_alice.values()) == {"alice"}
    seen_by_root = {
        q["queryId"]
        for q in root.get(server.url + "/profiles.json", timeout=10).json()["finishedQueries"]
    }
    assert {a_id, b_id} <= seen_by_root
    assert alice.get(f"{server.url}/profiles/{b_id}.json", timeout=10).status_code == 403
    profile = root.get(f"{server.url}/profiles/{a_id}.json", timeout=10).json()
    assert profile["user"] == "alice"


def test_storage_is_admin_only(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    resp = alice.get(server.url + "/storage.json", timeout=10)
    assert resp.status_code == 403
    assert resp.json()["errorMessage"] == "User not authorized."
    root = login(server, "root", "s3cret")
    assert "dfs" in [p["name"] for p in root.get(server.url + "/storage.json", timeout=10).json()]
    assert alice.get(server.url + "/options.json", timeout=10).status_code == 200


def test_alter_system_is_admin_only(server: Server) -> None:
    alice = login(server, "alice", "wonder land")
    resp = post_query(alice, server.url, "ALTER SYSTEM SET `planner.slice_target` = 5000")
    data = resp.json()
    assert resp.status_code == 200 and data["queryState"] == "FAILED"
    assert data["errorMessage"].startswith("PERMISSION ERROR")
    root = login(server, "root", "s3cret")
    assert rows(root, server.url, "ALTER SYSTEM SET `planner.slice_target` = 5000")[0]["ok"]
    rows(root, server.url, "ALTER SYSTEM RESET `planner.slice_target`")
    # ALTER SESSION stays open to everybody
    assert rows(alice, server.url, "ALTER SESSION SET `planner.slice_target` = 7")[0]["ok"]


def test_password_change_takes_effect_without_restart(server: Server) -> None:
    server.passwd("bob", "new one")
    failed = requests.post(
        server.url + "/j_security_check",
        data={"j_username": "bob", "j_password": "builder"},
        timeout=30,
    )
    assert MARK_ERROR in failed.text
    login(server, "bob", "new one")
    server.passwd("bob", "builder")


# ------------------------------------------------------------------ real clients
def test_pydrill_with_auth(server: Server) -> None:
    from pydrill.client import PyDrill
    from pydrill.exceptions import TransportError

    drill = PyDrill(host="127.0.0.1", port=server.port, auth="alice:wonder land")
    assert drill.is_active()
    result = drill.query("SELECT r_name FROM cp.`tpch/region.parquet` ORDER BY r_name LIMIT 1")
    assert result.rows == [{"r_name": "AFRICA"}]
    assert drill.profiles().data["finishedQueries"][0]["user"] == "alice"
    with pytest.raises(TransportError) as err:
        PyDrill(host="127.0.0.1", port=server.port, auth="alice:bad").query("select 1")
    assert "Invalid username/password credentials." in str(err.value)


def test_sqlalchemy_drill_with_login(server: Server) -> None:
    import sqlalchemy as sa
    from sqlalchemy_drill.drilldbapi import api_exceptions

    url = f"drill+sadrill://alice:wonder%20land@127.0.0.1:{server.port}/cp?use_ssl=False"
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        got = conn.execute(
            sa.text("SELECT r_name FROM `tpch/region.parquet` ORDER BY r_name LIMIT 2")
        ).fetchall()
        assert got == [("AFRICA",), ("AMERICA",)]
        conn.execute(sa.text("USE dfs.tmp"))
        conn.execute(
            sa.text("CREATE TEMPORARY TABLE regions AS SELECT r_name FROM cp.`tpch/region.parquet`")
        ).fetchall()
        got = conn.execute(sa.text("SELECT COUNT(r_name) n FROM regions")).fetchall()
        assert got == [(5,)]
    engine.dispose()
    bad = sa.create_engine(f"drill+sadrill://alice:nope@127.0.0.1:{server.port}/cp?use_ssl=False")
    with pytest.raises(Exception) as err:
        bad.connect()
    orig = getattr(err.value, "orig", err.value)  # SQLAlchemy wraps DB-API errors
    assert isinstance(orig, api_exceptions.AuthError)
    bad.dispose()


def test_server_still_alive(server: Server) -> None:
    assert server.alive()


def test_airflow_drillhook_style_connection(server: Server) -> None:
    """What Airflow's DrillHook does: a raw DB-API connection from a login URL ending in the
    storage plugin, then ``select 1`` and a statement ending in ``;``."""
    import sqlalchemy as sa

    engine = sa.create_engine(f"drill+sadrill://bob:builder@127.0.0.1:{server.port}/dfs")
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        cur.execute("select 1")
        assert cur.fetchall() == [(1,)]
        cur.execute("SELECT r_name FROM cp.`tpch/region.parquet` ORDER BY r_name LIMIT 1;")
        assert cur.description[0][0] == "r_name"
        assert cur.fetchall() == [("AFRICA",)]
    finally:
        raw.close()
        engine.dispose()
