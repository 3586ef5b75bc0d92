"""auger on a real Spark standalone cluster: a master and a worker with two cores on 127.0.0.1,
started from the installed pyspark, queried from a separate process (this process's local
SparkSession cannot switch masters; one client runs both tests' queries), then stopped. The
client asks for executors of one core, so the worker runs two of them: two executor processes,
as two workers would give, for one JVM less to start."""

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
from typing import Any

import pyspark
import pytest

from .processes import free_port, run_client, stop_group, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SPARK_HOME = Path(pyspark.__file__).resolve().parent


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    env["PYSPARK_PYTHON"] = sys.executable
    # the master's and worker's JVMs take the options the tests give spark-submit's (conftest)
    env["SPARK_DAEMON_JAVA_OPTS"] = os.environ.get("SPARK_SUBMIT_OPTS", "")
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
            120,  # JVMs start slowly on a loaded machine; the wait ends when it is up
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
        wait_until(lambda: _alive_workers(master_log) >= 1, procs, 120, failure)
        yield url
    finally:
        for p in reversed(procs):
            stop_group(p, grace=15)


#: one client (one driver, one pair of executors) runs the queries of both tests: starting them
#: is most of a test's time. Its storage: the local data of the first test (dfs.data), the
#: objects of a local S3 server (s3.data) and a local copy of them (dfs.local) to compare with.
CLIENT = textwrap.dedent(
    """
    import json, os, sys
    import auger
    from auger.spark.object_store import hadoop_reads, s3a_on_classpath

    master, data, endpoint, local = sys.argv[1:5]
    conn = auger.connect(config={
        "storage": {
            "dfs": {"type": "file", "workspaces": {
                "data": {"location": data, "writable": True},
                "local": {"location": local}}},
            "s3": {"type": "file", "connection": "s3a://cluster-data",
                   "config": {"fs.s3a.endpoint": endpoint, "fs.s3a.access.key": "k",
                              "fs.s3a.secret.key": "s", "fs.s3a.path.style.access": "true"},
                   "workspaces": {"data": {"location": "/"}}},
        },
        "spark": {"master": master, "conf": {
            "spark.executor.memory": "512m", "spark.executor.cores": "1",
            "spark.cores.max": "2", "spark.sql.shuffle.partitions": "2",
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
            # the executors' JVMs take the options the tests give the driver's (conftest)
            "spark.executor.defaultJavaOptions": os.environ.get("SPARK_SUBMIT_OPTS", "")}},
    })
    cur = conn.cursor()
    spark = conn.session.engine.spark

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
    out["master"] = spark.sparkContext.master
    out["auger_on_executor"] = (
        spark.sparkContext.parallelize([0], 1)
        .map(lambda _: __import__("auger").__file__).collect()[0])
    out["executor_hosts"] = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    try:
        cur.execute("SELECT columns[0] FROM dfs.data.`bad`").fetchall()
    except auger.dbapi.Error as exc:
        out["error"] = str(exc)
    plain = out

    queries = {
        "csv": "SELECT dir0, COUNT(*) AS n, SUM(CAST(columns[1] AS INT)) AS s "
               "FROM {ws}.`tree` GROUP BY dir0 ORDER BY dir0",
        "json": "SELECT name, SUM(v) AS v FROM {ws}.`events` GROUP BY name ORDER BY name",
        "parquet": "SELECT id, name FROM {ws}.`people.parquet` WHERE id > 1 ORDER BY id",
        "parquet_count": "SELECT COUNT(*) FROM {ws}.`people.parquet`",
    }
    out = {"s3": {}, "local": {}, "stats": {}}
    for label, sql in queries.items():
        for side, ws in (("s3", "s3.data"), ("local", "dfs.local")):
            cur.execute(sql.format(ws=ws))
            out[side][label] = cur.fetchall()
            if side == "s3":
                out["stats"][label] = cur.scan_statistics
    cur.execute("SELECT DISTINCT fqn FROM s3.data.`events` ORDER BY fqn")
    out["fqn"] = cur.fetchall()
    out["master"] = spark.sparkContext.master
    out["s3a_on_classpath"] = s3a_on_classpath(spark)
    out["native_for_s3"] = hadoop_reads(spark, ["s3a://cluster-data/people.parquet"])
    out["native_for_local"] = hadoop_reads(spark, [local + "/people.parquet"])
    try:
        cur.execute("SELECT * FROM s3.data.`nope.csv`").fetchall()
    except auger.dbapi.Error as exc:
        out["missing"] = str(exc)
    conn.close()
    print("RESULT " + json.dumps({"plain": plain, "s3": out}))
    """
)


def _local_data(data: Path) -> None:
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


def _objects() -> dict[str, bytes]:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    objects: dict[str, bytes] = {}
    for name, rows in (("a", 6), ("b", 4)):
        for part in range(2):
            lines = "".join(f"{name},{i}\n" for i in range(part, rows, 2))
            objects[f"tree/{name}/p{part}.csv"] = lines.encode()
    events = [{"name": n, "v": v} for n, v in (("x", 1), ("y", 2), ("x", 3))]
    for i, event in enumerate(events):
        objects[f"events/e{i}.json"] = (json.dumps(event) + "\n").encode()
    buf = io.BytesIO()
    table = pa.table({"id": [1, 2, 3, 4], "name": ["ann", "bob", "cy", "dee"]})
    pq.write_table(table, buf, row_group_size=2)
    objects["people.parquet"] = buf.getvalue()
    return objects


@pytest.fixture(scope="module")
def answers(cluster: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the client found: under ``plain`` for the first test, ``s3`` for the second."""
    from tests.storage.s3_helpers import start_local_s3

    tmp_path = tmp_path_factory.mktemp("client")
    data = tmp_path / "data"
    _local_data(data)
    objects = _objects()
    local = tmp_path / "local"
    for key, body in objects.items():
        (local / key).parent.mkdir(parents=True, exist_ok=True)
        (local / key).write_bytes(body)
    servers = start_local_s3()
    s3 = next(servers)
    try:
        s3.bucket("cluster-data")
        for key, body in objects.items():
            s3.put("cluster-data", key, body)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        args = [cluster, str(data), s3.endpoint, str(local)]
        out: dict[str, Any] = run_client(CLIENT, tmp_path, args, env, timeout=600)
    finally:
        servers.close()
    out["data"] = str(data)
    return out


def test_queries_run_on_a_standalone_cluster(cluster: str, answers: dict[str, Any]) -> None:
    out = answers["plain"]
    data = Path(answers["data"])
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
            "files_from_cache": 0,
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


def test_executors_read_objects_from_s3(cluster: str, answers: dict[str, Any]) -> None:
    """The data lives in a local S3 server only (the local copy is for comparing answers):
    executors on the workers read it through auger's data source and pyarrow's S3 file system,
    without S3A jars, and answer as over local disk."""
    out = answers["s3"]
    assert out["master"] == cluster
    assert out["s3"] == out["local"]
    assert out["s3"]["csv"] == [["a", 6, sum(range(6))], ["b", 4, sum(range(4))]]
    assert out["s3"]["json"] == [["x", 4], ["y", 2]]
    assert out["s3"]["parquet"] == [[2, "bob"], [3, "cy"], [4, "dee"]]
    assert out["s3"]["parquet_count"] == [[4]]
    # the executors' own reports of what they read reach the driver
    csv_stats = out["stats"]["csv"][0]
    assert (csv_stats["files_read"], csv_stats["rows_read"]) == (4, 10)
    assert out["fqn"] == [[f"s3a://cluster-data/events/e{i}.json"] for i in range(3)]
    # no S3A classes on this Spark: its native Parquet reader is not offered the objects
    assert out["s3a_on_classpath"] is False
    assert out["native_for_s3"] is False and out["native_for_local"] is True
    assert out["missing"].startswith("VALIDATION ERROR: Object 'nope.csv' not found")
    assert "s3a://cluster-data/nope.csv" in out["missing"]
