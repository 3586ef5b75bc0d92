"""Attacks on a real ``auger serve`` with ``auth = true``, an admin and a non-admin user.

* Abandoned queries: a client that drops its connection mid-query (a script, a killed shell)
  gets its query cancelled; the query's profile says so and it leaves the running list.
* HTTP Basic without cookies does not open a session per request.
* Cross-site requests (a foreign ``Origin`` or ``Referer``) are refused before they run.
* Identity and roles: SQL sees the logged-in user; admin endpoints answer 403 to others.

The waits below are bounded polls: they pass as soon as the server gets there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from .helpers import Server, login, post_query, rows, warm_up

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ADMIN = ("root", "adm1n pw")
BOB = ("bob", "builder")
ALLOWED = "https://notebook.example"
#: Rows of the generated file; the self cross join below pairs each with each (10^12 pairs:
#: far more work than any wait here, so only a cancel ends it), while every row of the outer
#: side is a short step, so Spark's tasks notice a cancel quickly.
ROWS = 1_000_000
ENDLESS = (
    "SELECT COUNT(*) AS n FROM dfs.data.`numbers.json` a "
    "CROSS JOIN dfs.data.`numbers.json` b WHERE a.x + b.x < 0"
)
#: Seconds the server has to notice a client that went away and stop its query (planning,
#: which a cancel cannot interrupt, may still have to finish on a loaded machine).
CANCEL_BOUND = 90.0  # polled: a quick stop ends the wait at once


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(
        tmp_path_factory.mktemp("security"),
        {"auth": True, "allowed_origins": [ALLOWED]},
    )
    srv.passwd(*ADMIN, admin=True)
    srv.passwd(*BOB)
    (srv.data / "numbers.json").write_text("".join(f'{{"x":{i}}}\n' for i in range(ROWS)))
    srv.start()
    warm_up(srv, ADMIN)  # Spark starts now, not inside a test's wait
    yield srv
    srv.stop()


@pytest.fixture
def admin(server: Server) -> Iterator[requests.Session]:
    http = login(server, *ADMIN)
    yield http
    http.close()


def wait_for(what: str, check: Callable[[], Any], bound: float = CANCEL_BOUND) -> Any:
    """Poll ``check`` until it returns something true, for at most ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {bound:g} s")
        time.sleep(0.2)


def running_ids(server: Server, admin: requests.Session) -> set[str]:
    data = admin.get(server.url + "/profiles/running.json", timeout=10).json()
    return {q["queryId"] for q in data["runningQueries"]}


def running_endless(server: Server, admin: requests.Session, user: str) -> str:
    """The id of the one running ENDLESS query of ``user``, once the server runs it."""

    def find() -> str | None:
        data = admin.get(server.url + "/profiles/running.json", timeout=10).json()
        ids = [
            q["queryId"]
            for q in data["runningQueries"]
            if q["user"] == user and q["query"] == ENDLESS
        ]
        return ids[0] if len(ids) == 1 else None

    return str(wait_for("the query to run", find, bound=120))


def assert_cancelled_for_client_gone(server: Server, admin: requests.Session, qid: str) -> None:
    wait_for("the query to leave the running list", lambda: qid not in running_ids(server, admin))
    profile = admin.get(f"{server.url}/profiles/{qid}.json", timeout=10).json()
    assert profile["stateName"] == "CANCELED", profile
    assert "client closed the connection" in profile["error"]


# ------------------------------------------------------------------ abandoned queries
def test_dropped_connection_cancels_the_query(server: Server, admin: requests.Session) -> None:
    bob = login(server, *BOB)
    answer = bob.post(
        server.url + "/query.json",
        json={"queryType": "SQL", "query": ENDLESS},
        stream=True,
        timeout=60,
    )
    assert answer.status_code == 200
    qid = running_endless(server, admin, "bob")
    time.sleep(3)  # most likely into Spark's tasks by now (planning is cancelled too, later)
    answer.raw.shutdown()  # the client vanishes: its socket closes
    answer.close()
    bob.close()
    assert_cancelled_for_client_gone(server, admin, qid)
    # the server and the user's other work go on
    assert rows(login(server, *BOB), server.url, "SELECT 1 AS one")[0]["one"] == 1


def _shell(server: Server) -> subprocess.Popen[bytes]:
    """``auger sql --connect`` logged in as bob, reading statements from a pipe."""
    env = {**os.environ, "AUGER_PASSWORD": BOB[1]}
    return subprocess.Popen(
        [sys.executable, "-m", "auger", "sql", "--connect", server.url, "--user", BOB[0]],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


@pytest.mark.parametrize("how", ["kill", "terminate"])
def test_shell_that_exits_mid_query_cancels_it(
    server: Server, admin: requests.Session, how: str
) -> None:
    shell = _shell(server)
    assert shell.stdin is not None
    shell.stdin.write((ENDLESS + ";\n").encode())
    shell.stdin.close()
    try:
        qid = running_endless(server, admin, "bob")
        getattr(shell, how)()
        shell.wait(30)
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait(30)
    assert_cancelled_for_client_gone(server, admin, qid)


def test_shell_ctrl_c_cancels_the_query(server: Server, admin: requests.Session) -> None:
    shell = _shell(server)
    assert shell.stdin is not None
    shell.stdin.write((ENDLESS + ";\n").encode())
    shell.stdin.close()
    try:
        qid = running_endless(server, admin, "bob")
        shell.send_signal(signal.SIGINT)
        gone = lambda: qid not in running_ids(server, admin)  # noqa: E731
        wait_for("the query to leave the running list", gone)
        assert shell.wait(30) == 130  # the shell reports a cancelled statement
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait(30)
    profile = admin.get(f"{server.url}/profiles/{qid}.json", timeout=10).json()
    assert profile["stateName"] == "CANCELED"


# ------------------------------------------------------------------ HTTP Basic sessions
def test_basic_requests_without_cookie_share_one_session(server: Server) -> None:
    def open_sessions() -> int:
        data = requests.get(server.url + "/status/metrics", timeout=10).json()
        return int(data["gauges"]["drill.sessions.open"]["value"])

    before = open_sessions()
    for _ in range(100):
        resp = requests.post(
            server.url + "/query.json",
            json={"queryType": "SQL", "query": "SELECT CURRENT_USER AS u"},
            auth=BOB,
            timeout=60,
        )
        assert resp.status_code == 200 and resp.json()["rows"] == [{"u": "bob"}]
        assert "Drill-Session-Id" not in resp.cookies
    assert open_sessions() <= before + 1
    # the shared session is the user's own: another user's Basic requests get another one
    other = requests.post(
        server.url + "/query.json",
        json={"queryType": "SQL", "query": "SELECT CURRENT_USER AS u"},
        auth=ADMIN,
        timeout=60,
    )
    assert other.json()["rows"] == [{"u": "root"}]
    assert open_sessions() <= before + 2
    # and a wrong password is refused, whatever session exists for the name
    wrong = requests.post(
        server.url + "/query.json",
        json={"queryType": "SQL", "query": "SELECT 1"},
        auth=(BOB[0], "wrong"),
        timeout=60,
    )
    assert wrong.status_code == 401


# ------------------------------------------------------------------ cross-site requests
def _table_exists(server: Server, name: str) -> bool:
    return (server.tmp / name).exists()


@pytest.mark.parametrize("body", ["form", "json"])
def test_foreign_origin_is_refused_before_running(
    server: Server, admin: requests.Session, body: str
) -> None:
    name = f"csrf_{body}"
    sql = f"CREATE TABLE dfs.tmp.{name} AS SELECT 1 AS a"
    payload: dict[str, Any] = {"queryType": "SQL", "query": sql}
    kwargs: dict[str, Any] = {"data": payload} if body == "form" else {"json": payload}
    for header in ({"Origin": "http://evil.example"}, {"Referer": "http://evil.example/x"}):
        resp = admin.post(server.url + "/query.json", headers=header, timeout=60, **kwargs)
        assert resp.status_code == 403
        assert resp.json()["errorMessage"].startswith("Cross-site request refused")
    assert not _table_exists(server, name)
    own = {"Origin": server.url}
    resp = admin.post(server.url + "/query.json", headers=own, timeout=60, **kwargs)
    assert resp.status_code == 200 and resp.json()["queryState"] == "COMPLETED", resp.text
    assert _table_exists(server, name)


def test_same_origin_allowed_origin_and_no_origin_are_accepted(
    server: Server, admin: requests.Session
) -> None:
    for headers in ({"Origin": server.url}, {"Origin": ALLOWED}, {}):
        resp = admin.post(
            server.url + "/query.json",
            json={"queryType": "SQL", "query": "SELECT 1 AS one"},
            headers=headers,
            timeout=60,
        )
        assert resp.status_code == 200 and resp.json()["rows"] == [{"one": 1}], headers


def test_login_logout_and_cancel_from_another_site_are_refused(
    server: Server, admin: requests.Session
) -> None:
    evil = {"Origin": "http://evil.example"}
    resp = requests.post(
        server.url + "/j_security_check",
        data={"j_username": BOB[0], "j_password": BOB[1]},
        headers=evil,
        allow_redirects=False,
        timeout=30,
    )
    assert resp.status_code == 403 and "Drill-Session-Id" not in resp.cookies
    for method, path in (("POST", "/logout"), ("GET", "/logout")):
        refused = admin.request(
            method, server.url + path, headers={"Referer": "http://evil.example/"}, timeout=10
        )
        assert refused.status_code == 403, path
    # the admin's session survived the attempts
    assert rows(admin, server.url, "SELECT 1 AS one")[0]["one"] == 1
    cancel = admin.get(
        server.url + "/profiles/cancel/some-id",
        headers={"Referer": "http://evil.example/"},
        timeout=10,
    )
    assert cancel.status_code == 403


# ------------------------------------------------------------------ identity and roles
def test_sql_sees_the_logged_in_user(server: Server) -> None:
    bob = login(server, *BOB)
    got = rows(bob, server.url, "SELECT CURRENT_USER AS c, SESSION_USER AS s, USER AS u")
    assert got == [{"c": "bob", "s": "bob", "u": "bob"}]


def test_admin_endpoints_forbid_other_users(server: Server, admin: requests.Session) -> None:
    bob = login(server, *BOB)
    for method, path in (
        ("GET", "/storage.json"),
        ("GET", "/storage/enabled-plugins.json"),
        ("GET", "/storage/dfs.json"),
        ("POST", "/storage/dfs.json"),
        ("GET", "/storage/dfs/enable/false"),
    ):
        resp = bob.request(method, server.url + path, timeout=10)
        assert resp.status_code == 403, (method, path)
        assert resp.json() == {"errorMessage": "User not authorized."}
    assert admin.get(server.url + "/storage.json", timeout=10).status_code == 200
    assert post_query(bob, server.url, "SELECT 1").status_code == 200
