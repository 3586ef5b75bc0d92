"""Session life over REST: temporary tables live and die with the cookie session (logout, idle
timeout), and many concurrent sessions using the same temporary table names stay apart."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from .helpers import Server, post_query, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TIMEOUT_S = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("rest_sessions"), {"session_timeout": TIMEOUT_S})
    srv.start()
    yield srv
    srv.stop()


def _session_dirs(server: Server) -> list[str]:
    return sorted(p.name for p in server.tmp.iterdir())


def _wait_for(predicate: Any, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def test_logout_drops_temporary_tables(server: Server) -> None:
    with requests.Session() as http:
        rows(http, server.url, "CREATE TEMPORARY TABLE gone AS SELECT 1 a")
        assert rows(http, server.url, "SELECT a FROM gone") == [{"a": 1}]
        assert _session_dirs(server)
        http.get(server.url + "/logout", timeout=10)
        _wait_for(lambda: not _session_dirs(server), "the session directory to go")
        resp = post_query(http, server.url, "SELECT a FROM gone")
        assert resp.json()["queryState"] == "FAILED"


def test_idle_timeout_closes_session_and_drops_tables(server: Server) -> None:
    with requests.Session() as http:
        rows(http, server.url, "CREATE TEMPORARY TABLE idle_t AS SELECT 'x' v")
        rows(http, server.url, "USE cp")
        cookie = http.cookies.get("Drill-Session-Id")
        assert _session_dirs(server)
        # the reaper closes it on its own, without any further request
        _wait_for(lambda: not _session_dirs(server), "the idle session to be reaped")
        resp = post_query(http, server.url, "SELECT v FROM idle_t")
        assert resp.json()["queryState"] == "FAILED"
        assert http.cookies.get("Drill-Session-Id") != cookie
        # and the USE is gone with it
        resp = post_query(http, server.url, "SELECT r_name FROM `tpch/region.parquet`")
        assert resp.json()["queryState"] == "FAILED"


def test_concurrent_sessions_keep_their_own_temporary_tables(server: Server) -> None:
    clients, per_client = 8, 4
    errors: list[str] = []

    def client(i: int) -> None:
        try:
            with requests.Session() as http:
                rows(http, server.url, f"CREATE TEMPORARY TABLE same_name AS SELECT {i} AS who")
                for _ in range(per_client):
                    got = rows(http, server.url, "SELECT who FROM same_name")
                    if got != [{"who": i}]:
                        errors.append(f"client {i} read {got}")
                http.get(server.url + "/logout", timeout=30)
        except Exception as exc:  # collected and asserted below
            errors.append(f"client {i}: {exc!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert errors == []
    _wait_for(lambda: not _session_dirs(server), "every session directory to go")


def test_per_client_use_does_not_leak(server: Server) -> None:
    with requests.Session() as a, requests.Session() as b:
        rows(a, server.url, "USE cp")
        rows(b, server.url, "USE sys")
        assert len(rows(a, server.url, "SELECT r_name FROM `tpch/region.parquet`")) == 5
        assert rows(b, server.url, "SELECT version FROM version")[0]["version"] >= "1.19"


def test_shutdown_closes_sessions_and_drops_tables(server: Server) -> None:
    """Runs last in this module: stopping the server ends every session."""
    http = requests.Session()
    rows(http, server.url, "CREATE TEMPORARY TABLE at_exit AS SELECT 1 a")
    assert _session_dirs(server)
    server.stop()
    assert not server.alive()
    assert _session_dirs(server) == []
