"""Attacks on paths against a real ``auger serve`` with ``auth = true``, as a non-admin user:
view names that climb out of their workspace, and SQL that reads the server's own files. Also
the start-up sweep's log lines in the server log."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from auger.storage.processes import host_key

from .helpers import Server, post_query, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ONE = "SELECT 1 AS a FROM (VALUES(1))"

#: the staging directory a killed CTAS left before the server started, and its dead pid
LEFT_BEHIND: dict[str, Any] = {}


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("security_paths"), {"auth": True})
    srv.passwd("root", "s3cret", admin=True)
    srv.passwd("bob", "builder")
    srv.profiles_dir.mkdir()
    (srv.profiles_dir / "old-query.json").write_text('{"query": "select secret"}\n')
    # what a CTAS killed with -9 left behind, before this server starts
    pid = _dead_pid()
    stale = srv.data / f".t.auger-staging-{host_key()}-{pid}-0-{uuid.uuid4().hex}"
    stale.mkdir()
    LEFT_BEHIND.update(path=stale, pid=pid)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def bob(server: Server) -> requests.Session:
    http = requests.Session()
    resp = http.post(
        server.url + "/j_security_check",
        data={"j_username": "bob", "j_password": "builder"},
        timeout=30,
    )
    assert resp.status_code == 200 and "Invalid username" not in resp.text
    return http


def failed(http: requests.Session, server: Server, sql: str) -> str:
    resp = post_query(http, server.url, sql)
    data: dict[str, Any] = resp.json()
    assert resp.status_code == 200 and data["queryState"] == "FAILED", (sql, data)
    return str(data["errorMessage"])


def test_startup_sweep_is_in_the_server_log(server: Server) -> None:
    stale = LEFT_BEHIND["path"]
    assert not stale.exists()
    log = server.log.read_text()
    assert f"Removed staging directory [{stale}]" in log
    assert f"(pid {LEFT_BEHIND['pid']}) no longer runs" in log


def test_view_names_cannot_climb_out(server: Server, bob: requests.Session) -> None:
    name = f"x_{uuid.uuid4().hex}"
    for sql in (
        f"CREATE VIEW dfs.data.`../../{name}` AS {ONE}",
        f"CREATE OR REPLACE VIEW dfs.data.`../../{name}` AS {ONE}",
    ):
        msg = failed(bob, server, sql)
        assert msg.startswith(
            f"PERMISSION ERROR: Path [../../{name}] is outside workspace [dfs.data]"
        ), msg
    assert not (server.root.parent / f"{name}.view.drill").exists()

    victim = server.root / "victim.view.drill"
    victim.write_text("{}")
    msg = failed(bob, server, "DROP VIEW dfs.data.`../victim`")
    assert msg.startswith("PERMISSION ERROR: Path [../victim] is outside workspace [dfs.data]")
    assert victim.exists()

    planted = server.data / "planted.view.drill"
    planted.write_text("{}")
    msg = failed(bob, server, "DROP VIEW dfs.tmp.`../data/planted`")
    assert msg.startswith("PERMISSION ERROR: Path [../data/planted] is outside workspace [dfs.tmp]")
    assert planted.exists()
    assert [p.name for p in server.root.glob("*.view.drill")] == ["victim.view.drill"]


def test_server_files_are_not_readable(server: Server, bob: requests.Session) -> None:
    cases = {
        server.users_file: "the server's users file",
        server.profiles_dir: "the server's query profiles",
        server.profiles_dir / "old-query.json": "the server's query profiles",
        server.config: "the config file",
    }
    for path, what in cases.items():
        for sql in (
            f"SELECT * FROM dfs.root.`{path}`",
            f"SELECT * FROM table(dfs.root.`{path}`(type => 'json'))",
            f"DESCRIBE dfs.root.`{path}`",
            f"CREATE TABLE dfs.data.`stolen` AS SELECT * FROM dfs.root.`{path}`",
        ):
            msg = failed(bob, server, sql)
            assert msg.startswith(f"PERMISSION ERROR: Path [{path}] reaches {what}"), (sql, msg)
            assert "scrypt" not in msg
    assert not (server.data / "stolen").exists()
    # a glob over the server's directory reaches them too
    msg = failed(bob, server, f"SELECT * FROM dfs.root.`{server.root}/*.json`")
    assert msg.startswith("PERMISSION ERROR") and "users file" in msg


def test_listings_do_not_show_server_files(server: Server, bob: requests.Session) -> None:
    shown = {r["name"] for r in rows(bob, server.url, f"SHOW FILES IN dfs.root.`{server.root}`")}
    assert "users.json" not in shown and "auger.toml" not in shown and "profiles" not in shown
    assert {"data", "dfs_tmp"} <= shown
    msg = failed(bob, server, f"SHOW FILES IN dfs.root.`{server.profiles_dir}`")
    assert msg.startswith("PERMISSION ERROR") and "query profiles" in msg


def test_an_admin_is_refused_too(server: Server) -> None:
    root = requests.Session()
    resp = root.post(
        server.url + "/j_security_check",
        data={"j_username": "root", "j_password": "s3cret"},
        timeout=30,
    )
    assert resp.status_code == 200
    assert "users file" in failed(root, server, f"SELECT * FROM dfs.root.`{server.users_file}`")
    assert server.users_file.is_file() and os.path.isdir(server.profiles_dir)
