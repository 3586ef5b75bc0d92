"""One user's query never takes a real ``auger serve`` (``auth = true``) down for the others.

The server runs with a small heap (``spark.driver.memory``) and a small result limit, so each
attack stays quick: a gzip bomb, an answer past the limit, a query that runs out of memory, and
the JVM killed under the server. After each one another user's query still runs.
"""

from __future__ import annotations

import gzip
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from .helpers import Server, login, post_query, rows, warm_up

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ADMIN = ("root", "adm1n pw")
BOB = ("bob", "builder")
ALICE = ("alice", "wonder")
#: the server's result limit (auger.result.max_rows), small so the large answer stays quick
MAX_ROWS = 5000
#: what the bomb decompresses to; the server reads at most LOCAL_BYTES of a scan itself
BIG = 12_000_000
LOCAL_BYTES = 1_000_000
#: Seconds the server has to start Spark again after its JVM was killed (polled).
RESTART_BOUND = 180.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("survives"), {"auth": True})
    with srv.config.open("a") as cfg:
        cfg.write(
            "[spark.conf]\n"
            '"spark.driver.memory" = "512m"\n'
            "[options]\n"
            f'"auger.result.max_rows" = {MAX_ROWS}\n'
            f'"auger.scan.local_bytes" = {LOCAL_BYTES}\n'
        )
    srv.passwd(*ADMIN, admin=True)
    srv.passwd(*BOB)
    srv.passwd(*ALICE)
    line = b'{"a":"' + b"a" * BIG + b'"}\n'
    (srv.data / "bomb.json.gz").write_bytes(gzip.compress(line))
    (srv.data / "liar.json.gz").write_bytes(gzip.compress(line) + gzip.compress(b'{"a":"b"}\n'))
    (srv.data / "one.json").write_text('{"a":"b"}\n')
    (srv.data / "rows.csv").write_text("".join(f"{i}\n" for i in range(200)))
    (srv.data / "numbers.json").write_text("".join(f'{{"x":{i}}}\n' for i in range(100_000)))
    srv.start()
    warm_up(srv, ADMIN)  # Spark starts now, not inside a test's wait
    yield srv
    srv.stop()


@pytest.fixture
def bob(server: Server) -> Iterator[requests.Session]:
    http = login(server, *BOB)
    yield http
    http.close()


def others_still_run(server: Server) -> None:
    """Another user's query, on Spark's tasks, answers."""
    with login(server, *ALICE) as alice:
        got = rows(alice, server.url, "SELECT COUNT(*) AS n FROM dfs.data.`rows.csv`")
    assert got == [{"n": "200"}] or got == [{"n": 200}]


def wait_for(what: str, check: Callable[[], Any], bound: float) -> Any:
    deadline = time.monotonic() + bound
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {bound:g} s")
        time.sleep(0.2)


# --------------------------------------------------------------------- memory bounded by reads
@pytest.mark.parametrize("name", ["bomb", "liar"])
def test_a_gzip_bomb_is_read_by_spark_not_the_server(
    server: Server, bob: requests.Session, name: str
) -> None:
    size = (server.data / f"{name}.json.gz").stat().st_size
    assert size * 20 < BIG  # far smaller on disk than what it holds
    got = rows(
        bob,
        server.url,
        f"SELECT COUNT(*) AS n, MAX(LENGTH(a)) AS m FROM dfs.data.`{name}.json.gz`",
    )
    assert len(got) == 1 and int(got[0]["m"]) == BIG
    others_still_run(server)


def test_an_ordinary_user_cannot_raise_the_server_s_caps(
    server: Server, bob: requests.Session
) -> None:
    for name, value in (("auger.scan.local_bytes", 10**10), ("auger.result.max_rows", 0)):
        resp = post_query(bob, server.url, f"ALTER SESSION SET `{name}` = {value}")
        data = resp.json()
        assert data["queryState"] == "FAILED", data
        assert data["errorMessage"].startswith("PERMISSION ERROR:"), data
        assert name in data["errorMessage"]
    # lowering is allowed
    assert rows(bob, server.url, "ALTER SESSION SET `auger.scan.local_bytes` = 1000")
    with login(server, *ADMIN) as admin:  # an administrator may go past the system value
        assert rows(admin, server.url, f"ALTER SESSION SET `auger.result.max_rows` = {10**9}")
    others_still_run(server)


# --------------------------------------------------------------------- results stream
def test_a_large_answer_ends_with_a_resource_error_after_its_rows(
    server: Server, bob: requests.Session
) -> None:
    # 200 x 100 = 20,000 rows: four times the server's limit
    sql = (
        "SELECT a.columns[0] AS x, b.columns[0] AS y FROM dfs.data.`rows.csv` a "
        "CROSS JOIN (SELECT * FROM dfs.data.`rows.csv` LIMIT 100) b"
    )
    resp = post_query(bob, server.url, sql)
    assert resp.status_code == 200
    data = resp.json()
    assert data["queryState"] == "FAILED"
    assert data["columns"] == ["x", "y"]
    assert len(data["rows"]) == MAX_ROWS
    message = data["errorMessage"]
    assert message.startswith("RESOURCE ERROR:"), message
    assert f"{MAX_ROWS:,} rows" in message and "auger.result.max_rows" in message
    # within the limit the same query completes
    assert len(rows(bob, server.url, sql + " LIMIT 4000")) == 4000
    others_still_run(server)


# --------------------------------------------------------------------- out of memory
@pytest.mark.parametrize(
    "sql",
    [
        # in a Spark task: a string larger than the heap
        "SELECT LENGTH(REPEAT(a, 700000000)) AS n FROM dfs.data.`one.json`",
        # on the driver, while Spark folds a constant
        "SELECT LENGTH(REPEAT('x', 700000000)) AS n",
    ],
)
def test_running_out_of_memory_is_a_resource_error(
    server: Server, bob: requests.Session, sql: str
) -> None:
    assert rows(bob, server.url, "ALTER SESSION SET `auger.scan.local_bytes` = 0")
    data = post_query(bob, server.url, sql).json()
    assert data["queryState"] == "FAILED"
    assert data["errorMessage"].startswith(
        "RESOURCE ERROR: One or more nodes ran out of memory while executing the query."
    ), data["errorMessage"]
    assert _status(server, bob)["sparkRunning"] is True
    others_still_run(server)


# --------------------------------------------------------------------- Spark killed
def _jvm_pid(server: Server) -> int:
    """The Spark JVM that ``auger serve`` launched (its child ``java`` process)."""
    assert server.proc is not None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == server.proc.pid and comm == "java":
            return int(entry.name)
    raise AssertionError("no Spark JVM under the server")


def _status(server: Server, http: requests.Session) -> dict[str, Any]:
    resp = http.get(server.url + "/status", headers={"Accept": "application/json"}, timeout=30)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


def test_the_server_heals_when_spark_is_killed(server: Server, bob: requests.Session) -> None:
    assert rows(bob, server.url, "CREATE TEMPORARY TABLE kept AS SELECT 7 AS seven")
    endless = (
        "SELECT COUNT(*) AS n FROM dfs.data.`numbers.json` a "
        "CROSS JOIN dfs.data.`numbers.json` b WHERE a.x + b.x < 0"
    )
    answer: dict[str, Any] = {}

    def run() -> None:
        answer.update(post_query(bob, server.url, endless).json())

    in_flight = threading.Thread(target=run)
    in_flight.start()
    wait_for("the query runs", lambda: _status(server, bob)["runningQueries"] >= 1, 60)
    assert _status(server, bob)["sparkRunning"] is True
    os.kill(_jvm_pid(server), signal.SIGKILL)
    in_flight.join(RESTART_BOUND)
    assert not in_flight.is_alive()
    # the query in flight was told what happened
    assert answer["queryState"] == "FAILED", answer
    assert "Spark stopped while the query ran" in answer["errorMessage"], answer
    # /status says so from a live check, until a query starts Spark again
    assert _status(server, bob)["sparkRunning"] is False
    others_still_run(server)
    assert _status(server, bob)["sparkRunning"] is True
    # the session's temporary table lived in files: it is still there, still bob's
    assert rows(bob, server.url, "SELECT seven FROM kept") in ([{"seven": "7"}], [{"seven": 7}])
    with login(server, *ALICE) as alice:
        data = post_query(alice, server.url, "SELECT seven FROM kept").json()
        assert data["queryState"] == "FAILED"
    assert server.alive()
