"""Spark's Python workers end quietly when their task is cancelled.

A cancelled task's worker finds its socket closed in the middle of a write; pyspark's own
daemon printed that ``BrokenPipeError``'s traceback on the console of the process that
cancelled. With a local master auger runs Spark's daemon as :mod:`auger.spark.worker_daemon`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auger.spark import worker_daemon
from auger.spark.bootstrap import DAEMON_MODULE, daemon_defaults
from tests.spark.processes import run_embedded


def test_a_closed_socket_ends_a_worker_as_work_done() -> None:
    def closed(sock: Any, authenticated: bool) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def reset(sock: Any, authenticated: bool) -> int:
        raise ConnectionResetError(104, "Connection reset by peer")

    assert worker_daemon._quiet(closed, None, True) == 1
    assert worker_daemon._quiet(reset, None, True) == 1
    assert worker_daemon._quiet(lambda sock, authenticated: 0, None, True) == 0


def test_any_other_error_of_a_worker_still_reaches_the_daemon() -> None:
    def broken(sock: Any, authenticated: bool) -> int:
        raise ValueError("a worker's own failure")

    with pytest.raises(ValueError, match="own failure"):
        worker_daemon._quiet(broken, None, True)


def test_the_daemon_is_auger_s_with_a_local_master_only(spark: Any) -> None:
    assert daemon_defaults("local[2]") == {"spark.python.daemon.module": DAEMON_MODULE}
    assert daemon_defaults("spark://head:7077") == {}
    assert daemon_defaults("yarn") == {}
    assert spark.sparkContext.getConf().get("spark.python.daemon.module") == DAEMON_MODULE


#: Cancels a scan of the file twice, each time once its tasks run in Python workers (the scan
#: takes about a second), then runs it whole; prints the answers.
_CANCELLED = """
import sys, threading, time
import auger
from auger.spark.bootstrap import get_spark

path = sys.argv[1]
conn = auger.connect()
cur = conn.cursor()
for option in ("auger.cache.enabled` = false", "auger.scan.local_bytes` = 0"):
    cur.execute("ALTER SESSION SET `" + option)
query = f"SELECT s, COUNT(*) AS n FROM dfs.`{path}` GROUP BY s"
cur.execute(query).fetchall()  # the workers are up
tracker = get_spark().sparkContext.statusTracker()


def cancel_when_running() -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if tracker.getActiveStageIds():
            time.sleep(0.3)  # the scan's tasks run, their workers writing rows
            cur.cancel()
            return
        time.sleep(0.01)


for _ in range(2):
    threading.Thread(target=cancel_when_running).start()
    try:
        cur.execute(query).fetchall()
        print("answered")
    except auger.Error as exc:
        print(str(exc).splitlines()[0])
print(sorted(cur.execute(query).fetchall()))
"""


def test_a_cancelled_scan_prints_no_worker_traceback(tmp_path: Path) -> None:
    data = tmp_path / "rows.json"
    with data.open("w") as out:  # 85 MB
        for i in range(1_500_000):
            out.write(json.dumps({"id": i, "s": f"v{i % 3}", "pad": "x" * 20}) + "\n")
    done = run_embedded(_CANCELLED, tmp_path, str(data))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert lines[:2] == ["EXECUTION ERROR: Query cancelled by the user"] * 2, done.stdout
    assert lines[2] == str([("v0", 500_000), ("v1", 500_000), ("v2", 500_000)])
    assert "BrokenPipeError" not in done.stderr, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
