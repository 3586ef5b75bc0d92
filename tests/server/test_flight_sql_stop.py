"""A server stops when asked even while a Flight SQL client holds an answer it stopped reading.

gRPC's shutdown waits for every open call, and a client that reads one batch of a large answer
and then pauses (a BI tool left open, a debugger) holds its call open: ``auger serve`` then
never ended on Ctrl-C or SIGTERM. It now waits a bounded time for the calls, cleans up its
sessions as on any stop, and ends with status 0.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from pathlib import Path

import pytest

from auger.server.flight_sql import STOP_WAIT

from .helpers import Server, free_port

adbc = pytest.importorskip("adbc_driver_flightsql.dbapi")

pytestmark = [pytest.mark.spark, pytest.mark.slow]


# the driver's statement, closed after its server is gone, complains again when collected
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_client_that_stopped_reading_does_not_keep_the_server_running(tmp_path: Path) -> None:
    port = free_port()
    srv = Server(tmp_path, args=["--flight-port", str(port)])
    (srv.data / "nums.csv").write_text("".join(f"{i}\n" for i in range(3000)))
    srv.start()
    conn = adbc.connect(f"grpc://127.0.0.1:{port}", autocommit=True)
    cur = conn.cursor()
    reader = None
    try:
        cur.execute("CREATE TEMPORARY TABLE dfs.tmp.kept AS SELECT 1 AS a FROM (VALUES(1))")
        assert [p for p in srv.tmp.iterdir() if p.is_dir()], "no session folder in dfs.tmp"
        # 9 M rows: far more than gRPC's buffers hold while nobody reads
        cur.execute(
            "SELECT a.columns[0] AS x, b.columns[0] AS y "
            "FROM dfs.data.`nums.csv` a CROSS JOIN dfs.data.`nums.csv` b"
        )
        reader = cur.fetch_record_batch()
        assert reader.read_next_batch().num_rows > 0  # then the client reads no more

        assert srv.proc is not None
        srv.proc.send_signal(signal.SIGINT)
        try:
            status = srv.proc.wait(timeout=STOP_WAIT + 60)  # a bound against a hang only
        except subprocess.TimeoutExpired:
            srv.proc.kill()
            pytest.fail("the server did not stop while a client held an unread answer")
        assert status == 0
        logged = "".join(p.read_text() for p in srv.log_dir.glob("*.log"))
        assert "Arrow Flight SQL: calls still open" in logged
        # the session ended as on any stop: its temporary table's folder is gone
        assert not [p for p in srv.tmp.iterdir() if p.is_dir()]
    finally:
        srv.stop()
        for closing in (reader, cur, conn):
            with contextlib.suppress(Exception):  # the server is gone: the driver says so
                if closing is not None:
                    closing.close()
