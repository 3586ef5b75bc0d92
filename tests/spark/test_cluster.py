"""auger on a real Spark standalone cluster: a master and a worker with two cores on 127.0.0.1,
started from the installed pyspark, queried from a separate process (this process's local
SparkSession cannot switch masters), then stopped. The client asks for executors of one core, so
the worker runs two of them: two executor processes, as two workers would give, for one JVM less
to start."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from .processes import free_port, run_client, stop_group, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SPARK_HOME = Path(pyspark.__file__).resolve().parent


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    env["PYSPARK_PYTHON"] = sys.executable
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), *args],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )


def _master_ui(log: Path) -> str | None:
    """The address the master's web UI is bound to, from its log: the port asked for may have
    been taken meanwhile (a port from ``free_port`` is free only when it is picked), and the
    master then moves to the next one."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    found = re.findall(r"MasterWebUI.*?(http://[\w.:-]+)", text)
    return found[-1] if found else None


def _master_url(log: Path) -> str | None:
    """The ``spark://`` address the master listens on, from its log, for the same reason."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    found = re.findall(r"Starting Spark master at (spark://[\w.:-]+)", text)
    return found[-1] if found else None


def _alive_workers(master_log: Path) -> int:
    ui = _master_ui(master_log)
    if ui is None:
        return -1
    try:
        with urllib.request.urlopen(f"{ui}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except (OSError, ValueError):  # not up yet, or not the master's page
        return -1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("cluster")
    port, ui = free_port(), free_port()
    procs = [
        _start(
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
            ],
            tmp / "master.log",
        )
    ]
    master_log = tmp / "master.log"

    def failure() -> str:
        return "the standalone cluster did not come up:\n" + "\n".join(
            p.read_text()[-2000:] for p in sorted(tmp.glob("*.log"))
        )

    try:
        wait_until(
            lambda: _master_url(master_log) is not None and _master_ui(master_log) is not None,
            procs,
            60,
            failure,
        )
        url = _master_url(master_log)
        assert url is not None
        work = tmp / "work"
        work.mkdir()
        procs.append(
            _start(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "2",
                    "--memory",
                    "1g",
                    "--webui-port",
                    str(free_port()),
                    "--work-dir",
                    str(work),
                ],
                tmp / "worker.log",
            )
        )
        wait_until(lambda: _alive_workers(master_log) >= 1, procs, 60, failure)
        yield url
    finally:
        for p in reversed(procs):
            stop_group(p, grace=15)


CLIENT = textwrap.dedent(
    """
    import json, sys
    import auger

    master, data = sys.argv[1], sys.argv[2]
    conn = auger.connect(config={
        "storage": {"dfs": {"type": "file", "workspaces": {
            "data": {"location": data, "writable": True}}}},
        "spark": {"master": master, "conf": {
            "spark.executor.memory": "512m", "spark.executor.cores": "1",
            "spark.cores.max": "2", "spark.sql.shuffle.partitions": "2",
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}},
    })
    cur = conn.cursor()
    out = {}
    cur.execute(
        "SELECT dir0, COUNT(*) AS n, SUM(CAST(columns[1] AS INT)) AS s "
        "FROM dfs.data.`tree` GROUP BY dir0 ORDER BY dir0")
    out["agg"] = cur.fetchall()
    out["agg_stats"] = cur.scan_statistics
    cur.execute("ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    cur.execute("SELECT id FROM dfs.data.`skips` ORDER BY id")
    out["skips"] = [cur.fetchall(), [text for _, text in cur.messages]]
    cur.execute("ALTER SESSION RESET `store.json.reader.skip_invalid_records`")
    cur.execute("SELECT COUNT(*) FROM dfs.data.`tree` WHERE dir0 = 'b'")
    out["pruned"] = cur.fetchall()
    spark = conn.session.engine.spark
    out["master"] = spark.sparkContext.master
    out["auger_on_executor"] = (
        spark.sparkContext.parallelize([0], 1)
        .map(lambda _: __import__("auger").__file__).collect()[0])
    out["executor_hosts"] = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    try:
        cur.execute("SELECT columns[0] FROM dfs.data.`bad`").fetchall()
    except auger.dbapi.Error as exc:
        out["error"] = str(exc)
    conn.close()
    print("RESULT " + json.dumps(out))
    """
)


def test_queries_run_on_a_standalone_cluster(cluster: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    for name, rows in (("a", 30), ("b", 20), ("c", 10)):
        d = data / "tree" / name
        d.mkdir(parents=True)
        for part in range(3):
            lines = "".join(f"{name},{i}\n" for i in range(part, rows, 3))
            (d / f"p{part}.csv").write_text(lines)
    (data / "bad").mkdir()
    (data / "bad" / "x.csv").write_bytes(b"ok\n\xff\xfe\n")
    (data / "skips").mkdir()
    (data / "skips" / "a.json").write_text('{"id": 1}\n{"id": x}\n')
    (data / "skips" / "b.json").write_text('{"id": 2}\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    out = run_client(CLIENT, tmp_path, [cluster, str(data)], env, timeout=420)
    assert out["master"] == cluster
    assert out["executor_hosts"] >= 1
    assert out["agg"] == [
        ["a", 30, sum(range(30))],
        ["b", 20, sum(range(20))],
        ["c", 10, sum(range(10))],
    ]
    assert out["pruned"] == [[20]]
    # what the executors read reaches the driver: figures, and records skipped with their line
    assert out["agg_stats"] == [
        {
            "table": "dfs.data.tree",
            "files_listed": 9,
            "files_pruned": 0,
            "files_read": 9,
            "rows_read": 60,
            "records_skipped": 0,
        }
    ]
    assert out["skips"] == [
        [[1], [2]],
        ["Skipped 1 invalid record of a.json in dfs.data.skips (line 2)"],
    ]
    # the engine shipped its own package: executors import auger from the shipped zip
    assert "auger.zip" in out["auger_on_executor"]
    assert out["error"].startswith("DATA_READ ERROR")
    assert str(data / "bad" / "x.csv") in out["error"]
