"""``auger sql --connect``: the shell's client of a running ``auger serve`` (with login).

One real server subprocess (auth on, one user) serves the whole module; the clients are the
``auger`` command (no JVM of its own) and :class:`auger.cli.remote.RemoteConnection`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from auger import dbapi
from auger.cli.remote import RemoteConnection, server_has_auth

from ..server.helpers import free_port

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from auger.server.users import UserStore

    home = tmp_path_factory.mktemp("serve")
    users = home / "users.json"
    UserStore(str(users)).set_password("alice", "s3cret", admin=True)
    workspace = home / "tmp"
    workspace.mkdir()
    config = home / "auger.toml"
    config.write_text(
        "[server]\n"
        "auth = true\n"
        f'users_file = "{users}"\n'
        "[storage.dfs.workspaces.tmp]\n"
        f'location = "{workspace}"\n'
        "writable = true\n"
        "[spark]\n"
        'master = "local[1]"\n'
    )
    port = free_port()
    log = open(home / "server.log", "w")  # noqa: SIM115 - closed after the server stops
    proc = subprocess.Popen(
        [sys.executable, "-m", "auger", "--config", str(config), "serve", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if requests.get(url + "/status.json", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert proc.poll() is None, (home / "server.log").read_text()
            assert time.monotonic() < deadline, "auger serve did not start"
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def auger_sql(
    url: str, *args: str, password: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("AUGER_PASSWORD", None)
    if password is not None:
        env["AUGER_PASSWORD"] = password
    return subprocess.run(
        [sys.executable, "-m", "auger", "sql", "--connect", url, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_shell_logs_in_and_keeps_one_session(server: str, tmp_path: Path) -> None:
    assert server_has_auth(server)
    script = tmp_path / "q.sql"
    script.write_text(
        "ALTER SESSION SET `store.format` = 'json';\n"
        "SELECT string_val FROM sys.options WHERE name = 'store.format';\n"
        "SELECT full_name FROM cp.`employee.json` LIMIT 2;\n"
    )
    done = auger_sql(
        server, "--user", "alice", "-f", str(script), "--output", "ndjson", password="s3cret"
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert lines == [
        {"ok": True, "summary": "store.format updated."},
        {"string_val": "json"},  # the option set by the first request holds in the second
        {"full_name": "Sheri Nowmer"},
        {"full_name": "Derrick Whelply"},
    ]
    assert "\x1b" not in done.stdout + done.stderr


def test_login_failures_and_server_errors_are_one_line(server: str) -> None:
    wrong = auger_sql(server, "--user", "alice", "-e", "SELECT 1", password="nope")
    assert wrong.returncode == 1
    assert "Invalid username/password credentials" in wrong.stderr
    anonymous = auger_sql(server, "-e", "SELECT 1")
    assert anonymous.returncode == 1 and "needs a login" in anonymous.stderr
    missing = auger_sql(
        server, "--user", "alice", "-e", "SELECT * FROM cp.`nope.json`", password="s3cret"
    )
    assert missing.returncode == 1
    assert missing.stderr.startswith("VALIDATION ERROR: Object 'nope.json' not found within 'cp'")
    for done in (wrong, anonymous, missing):
        assert "Traceback" not in done.stderr


def test_remote_connection_decodes_types_and_raises_pep_249_errors(server: str) -> None:
    with RemoteConnection(server, user="alice", password="s3cret") as conn:
        cur = conn.execute(
            "SELECT n_name, n_nationkey, CAST('2024-02-29' AS DATE) AS d "
            "FROM cp.`tpch/nation.parquet` WHERE n_nationkey < ? ORDER BY n_nationkey;",
            (2,),
        )
        assert [d[0] for d in cur.description] == ["n_name", "n_nationkey", "d"]
        assert cur.description[0][1] == dbapi.STRING and cur.description[1][1] == "INTEGER"
        assert cur.rowcount == 2
        import datetime as dt

        assert cur.fetchone() == ("ALGERIA", 0, dt.date(2024, 2, 29))
        assert cur.fetchall() == [("ARGENTINA", 1, dt.date(2024, 2, 29))]
        with pytest.raises(dbapi.ProgrammingError) as info:
            conn.execute("SELEC 1")
        assert str(info.value).startswith("PARSE ERROR: ")
        assert info.value.kind is not None and info.value.kind.value == "PARSE"


def test_unreachable_server_is_a_connection_error() -> None:
    done = auger_sql(f"http://127.0.0.1:{free_port()}", "-e", "SELECT 1")
    assert done.returncode == 1
    assert done.stderr.startswith("CONNECTION ERROR: Cannot reach the auger server at http://")
    assert "Traceback" not in done.stderr


def test_remote_shell_asks_for_the_password_in_a_terminal(
    server: str, tmp_path: Path, tmux: Any
) -> None:
    import shlex

    history = tmp_path / "history"
    cmd = (
        f"env -u AUGER_PASSWORD -u PAGER -u AUGER_PAGER -u LESS"
        f" AUGER_HISTORY={shlex.quote(str(history))} TERM=xterm "
        f"{shlex.quote(sys.executable)} -m auger sql --connect {server} --user alice"
        "; echo AUGER-EXIT=$?; sleep 600"
    )
    term = tmux(cmd)
    term.wait_for(r"^Password for alice:")
    term.line("s3cret")
    end = term.wait_for(r"^auger>").end()
    term.line("SELECT r_name FROM cp.`tpch/region.parquet`")
    term.line("ORDER BY r_name LIMIT 2;")
    end = term.wait_for(r"^\| AMERICA +\|\n^\+-+\+\n^2 rows selected", end).end()
    assert "s3cret" not in term.screen()  # the password was not echoed
    # The server sends one row past the shell's cap, not the whole result; .tables needs no ';'.
    term.line("SELECT full_name FROM cp.`employee.json`;")
    end = term.wait_for(r"^first 40 rows shown, more not fetched \(\d+\.\d{3} seconds\)", end)
    end = end.end()
    term.line(".tables")
    end = term.wait_for(
        r"^\| sys +\| version +\| SYSTEM_TABLE +\|\n(?:.*\n)*?^\d+ rows selected", end
    ).end()
    term.keys("C-d")
    term.wait_for(r"^AUGER-EXIT=0$", end)


def test_cancel_reaches_the_server_and_the_session_lives_on(server: str) -> None:
    import threading

    with RemoteConnection(server, user="alice", password="s3cret") as conn:
        cur = conn.cursor()
        failure: list[BaseException] = []

        def run() -> None:
            try:
                cur.execute(
                    "SELECT COUNT(a.employee_id + b.employee_id + c.employee_id) AS n "
                    "FROM cp.`employee.json` a CROSS JOIN cp.`employee.json` b "
                    "CROSS JOIN cp.`employee.json` c"
                )
            except BaseException as exc:
                failure.append(exc)

        worker = threading.Thread(target=run)
        worker.start()
        while cur.query_id is None and worker.is_alive():
            time.sleep(0.1)
        assert not cur.abandon_on_cancel  # the id arrived before the rows
        cur.cancel()
        worker.join(300)
        assert not worker.is_alive()
        assert len(failure) == 1 and isinstance(failure[0], dbapi.OperationalError)
        assert str(failure[0]) == dbapi.CANCELLED_MESSAGE
        assert conn.execute("SELECT 1 AS one").fetchall() == [(1,)]


def test_remote_shell_prints_the_scan_messages(server: str) -> None:
    sql = "SELECT full_nme FROM cp.`employee.json` LIMIT 1"
    expected = (
        "Column [full_nme] was not found in the file of cp.employee.json; did you mean [full_name]?"
    )
    with RemoteConnection(server, user="alice", password="s3cret") as conn:
        cur = conn.execute(sql)
        assert cur.fetchall() == [(None,)]
        assert cur.messages == [(dbapi.Warning, expected)]
        assert conn.execute("SELECT full_name FROM cp.`employee.json` LIMIT 1").messages == []
    done = auger_sql(server, "--user", "alice", "-e", sql, "--output", "csv", password="s3cret")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "full_nme"  # the csv on stdout stays clean
    assert done.stderr.strip() == f"Warning: {expected}"
