"""auger over Spark Connect: a real Connect server started from the installed pyspark on
127.0.0.1 (``start-connect-server.sh --wait``, its Python workers running this interpreter so
they import auger), queried from a separate process with ``master = "sc://127.0.0.1:PORT"``,
then stopped.

The client runs in a subprocess because PySpark switches its whole Python API to Connect once a
remote session exists in a process; the session-scoped local SparkSession of the other tests
must not see that. The last test checks that auger refuses to mix the two in one process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pyspark
import pytest

from auger.errors import UserError

from .processes import free_port, listening, run_client, stop_group, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SPARK_HOME = Path(pyspark.__file__).resolve().parent


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("connect")
    port = free_port()
    log = tmp / "server.log"
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(tmp / "logs"),
        "SPARK_PID_DIR": str(tmp),
        # the server's Python workers run the data source: they must import auger
        "PYSPARK_PYTHON": sys.executable,
    }
    proc = subprocess.Popen(
        [
            str(SPARK_HOME / "sbin" / "start-connect-server.sh"),
            "--wait",
            "--master",
            "local[2]",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp,
        start_new_session=True,
    )
    try:
        wait_until(
            lambda: listening(port),
            [proc],
            120,
            lambda: f"the Spark Connect server did not come up:\n{log.read_text()[-3000:]}",
        )
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop_group(proc)


CLIENT = textwrap.dedent(
    """
    import io, json, sys, threading
    import auger
    from auger.cli.runner import ProgressMeter
    from auger.spark.handles import is_connect

    master, data = sys.argv[1], sys.argv[2]
    conn = auger.connect(config={
        "storage": {"dfs": {"type": "file", "workspaces": {
            "data": {"location": data, "writable": True}}}},
        "spark": {"master": master},
    })
    out = {}

    def run(key, sql):
        cur = conn.cursor()
        cur.execute(sql)
        out[key] = [list(r) for r in cur.fetchall()]
        out[key + "_names"] = [d[0] for d in cur.description]
        cur.close()

    spark = conn.session.engine.spark
    out["connect"] = is_connect(spark)
    run("csv", "SELECT dir0, COUNT(*) AS n, SUM(CAST(columns[1] AS INT)) AS s "
               "FROM dfs.data.`tree` GROUP BY dir0 ORDER BY dir0")
    run("json", "SELECT t.m.k AS k, t.m.s AS s FROM dfs.data.`maps.json` t ORDER BY k")
    run("parquet", "SELECT id, name, ts FROM dfs.data.`p.parquet` ORDER BY id")
    run("ctas", "CREATE TABLE dfs.data.copied AS SELECT dir0 AS d, CAST(columns[1] AS INT) AS v "
                "FROM dfs.data.`tree`")
    run("ctas_read", "SELECT d, SUM(v) AS s FROM dfs.data.copied GROUP BY d ORDER BY d")
    run("view", "CREATE VIEW dfs.data.big AS SELECT dir0 AS d, CAST(columns[1] AS INT) AS v "
                "FROM dfs.data.`tree` WHERE CAST(columns[1] AS INT) >= 5")
    run("view_read", "SELECT d, COUNT(*) AS n FROM dfs.data.big GROUP BY d ORDER BY d")
    run("temp", "CREATE TEMPORARY TABLE small AS SELECT t.m.s AS s FROM dfs.data.`maps.json` t")
    run("temp_read", "SELECT s FROM small ORDER BY s")
    try:
        conn.cursor().execute("SELECT columns[0] FROM dfs.data.`bad`").fetchall()
    except auger.dbapi.Error as exc:
        out["error"] = str(exc)
        out["error_type"] = type(exc).__name__
    # cancel() from another thread interrupts the running operation (its tag) on the server;
    # uncancelled, this count of 27 billion joined rows would not end within the test
    cur = conn.cursor()
    done = threading.Event()

    def cancel_until_done():
        # the shell's progress line: stages the server reports for the statement's tag
        meter = ProgressMeter(io.StringIO(), cur, True)
        for _ in range(240):
            out["progress"] = meter._status()
            if out["progress"] or done.wait(0.5):
                break
        while not done.wait(1.0):
            cur.cancel()

    threading.Thread(target=cancel_until_done, daemon=True).start()
    try:
        cur.execute("SELECT COUNT(*) FROM dfs.data.`big.csv` a CROSS JOIN dfs.data.`big.csv` b "
                    "CROSS JOIN dfs.data.`big.csv` c")
        out["cancelled"] = cur.fetchall()
    except auger.dbapi.Error as exc:
        out["cancelled"] = type(exc).__name__ + ": " + str(exc)
    done.set()
    cur.close()
    run("after_cancel", "SELECT COUNT(*) AS n FROM dfs.data.`tree`")
    # a query's DataFrame keeps working after others ran: its tables travel with its plan
    kept = conn.sql("SELECT d, v FROM dfs.data.copied WHERE v > 4 ORDER BY v")
    run("between", "SELECT COUNT(*) AS n FROM dfs.data.`maps.json`")
    out["kept"] = [list(r) for r in kept.collect()]
    run("braces", "SELECT '{x}' AS b, COUNT(*) AS n FROM dfs.data.`tree` WHERE columns[0] <> '{}'")
    out["views_in_server"] = sorted(t.name for t in spark.catalog.listTables() if t.isTemporary)
    conn.close()
    print("RESULT " + json.dumps(out, default=str))
    """
)


def test_queries_run_through_spark_connect(connect_url: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    for name, rows in (("a", 6), ("b", 4), ("c", 2)):
        d = data / "tree" / name
        d.mkdir(parents=True)
        for part in range(2):
            (d / f"p{part}.csv").write_text(
                "".join(f"{name}{i},{i}\n" for i in range(part, rows, 2))
            )
    (data / "maps.json").write_text(
        '{"m": {"k": 2, "s": "two"}}\n{"m": {"k": 1, "s": "one"}}\n{"m": {"k": 3, "s": "three"}}\n'
    )
    pq.write_table(
        pa.table(
            {
                "id": pa.array([2, 1], pa.int32()),
                "name": ["b", "a"],
                "ts": pa.array([1_700_000_000_000_000, 0], pa.timestamp("us")),
            }
        ),
        data / "p.parquet",
    )
    (data / "big.csv").write_text("".join(f"{i}\n" for i in range(3000)))
    (data / "bad").mkdir()
    (data / "bad" / "x.csv").write_bytes(b"ok\n\xff\xfe\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    out = run_client(CLIENT, tmp_path, [connect_url, str(data)], env, timeout=300)
    assert out["connect"] is True
    assert out["csv"] == [["a", 6, 15], ["b", 4, 6], ["c", 2, 1]]
    assert out["csv_names"] == ["dir0", "n", "s"]
    assert out["json"] == [[1, "one"], [2, "two"], [3, "three"]]
    # zone-less timestamps come back as Drill's: the same wall clock, no zone
    assert out["parquet"] == [[1, "a", "1970-01-01 00:00:00"], [2, "b", "2023-11-14 22:13:20"]]
    assert out["ctas"][0][1] == 12  # records written
    assert out["ctas_read"] == [["a", 15], ["b", 6], ["c", 1]]
    assert out["view_read"] == [["a", 1]]  # only a5 has a value >= 5
    assert out["temp"][0][1] == 3
    assert out["temp_read"] == [["one"], ["three"], ["two"]]
    assert out["error_type"] == "DataError"
    assert out["error"].startswith("DATA_READ ERROR"), out["error"]
    assert str(data / "bad" / "x.csv") in out["error"]
    assert out["cancelled"] == "OperationalError: EXECUTION ERROR: Query cancelled by the user"
    assert out["progress"].startswith("[Stage "), out["progress"]
    assert out["after_cancel"] == [[12]]
    assert out["kept"] == [["a", 5]]
    assert out["braces"] == [["{x}", 12]]
    # the planner's tables are passed with each query: nothing is left in the server's catalog
    assert out["views_in_server"] == []


def test_rest_server_answers_and_cancels_through_spark_connect(
    connect_url: str, tmp_path: Path
) -> None:
    """``auger serve`` on a Connect master: a query answers, and cancelling a running one
    interrupts its tagged operations on the Connect server."""
    import requests

    data = tmp_path / "data"
    data.mkdir()
    (data / "rows.csv").write_text("a,1\nb,2\n")
    (data / "big.csv").write_text("".join(f"{i}\n" for i in range(3000)))
    config = tmp_path / "auger.toml"
    config.write_text(
        f'[spark]\nmaster = "{connect_url}"\n'
        f'[storage.dfs.workspaces.data]\nlocation = "{data}"\nwritable = false\n'
    )
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    log = tmp_path / "serve.log"
    server = subprocess.Popen(
        [sys.executable, "-m", "auger", "serve", "--port", str(port), "--config", str(config)],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: listening(port),
            [server],
            120,  # auger serve as the other tests wait for it: a loaded machine starts slowly
            lambda: f"auger serve did not come up:\n{log.read_text()[-3000:]}",
            step=0.3,
        )

        def query(sql: str) -> dict[str, Any]:
            body = {"queryType": "SQL", "query": sql}
            return dict(requests.post(f"{url}/query.json", json=body, timeout=240).json())

        ok = query("SELECT columns[0] AS c FROM dfs.data.`rows.csv` ORDER BY c")
        assert ok["queryState"] == "COMPLETED", ok
        assert ok["rows"] == [{"c": "a"}, {"c": "b"}]

        slow = (
            "SELECT COUNT(*) AS n FROM dfs.data.`big.csv` a CROSS JOIN dfs.data.`big.csv` b "
            "CROSS JOIN dfs.data.`big.csv` c"
        )
        box: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: box.update(query(slow)), daemon=True)
        thread.start()
        query_id = None
        for _ in range(600):
            running = requests.get(f"{url}/profiles.json", timeout=10).json()["runningQueries"]
            query_id = next((q["queryId"] for q in running if q["query"] == slow[:150]), None)
            if query_id:
                break
            time.sleep(0.1)
        assert query_id, "the slow query never showed up as running"
        time.sleep(2)  # let it reach the Connect server: its operation must be interrupted
        resp = requests.get(f"{url}/profiles/cancel/{query_id}", timeout=10)
        assert resp.text == f"Cancelled query {query_id} on locally running node."
        thread.join(120)
        assert box.get("queryState") == "CANCELED", box
    finally:
        stop_group(server)


def test_connect_master_in_a_process_running_local_spark_is_one_clear_error(spark: Any) -> None:
    from auger.spark.bootstrap import get_spark

    with pytest.raises(UserError) as info:
        get_spark("sc://127.0.0.1:15002")
    assert "cannot mix" in info.value.message
    assert get_spark("local[2]") is spark  # the local session is untouched
