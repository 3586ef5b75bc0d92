"""A server stops when asked even while a client holds an answer it stopped reading.

gRPC's shutdown and uvicorn's graceful shutdown both wait for every open call or request, and
a client that reads the start of a large answer and then pauses (a BI tool left open, a
debugger) holds its own open: ``auger serve`` then never ended on Ctrl-C or SIGTERM. It now
waits a bounded time (``STOP_WAIT``) for them, cancels what is left, cleans up its sessions as on
any stop, and ends.
"""

from __future__ import annotations

import contextlib
import gc
import json
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from auger.server.settings import STOP_WAIT

from .helpers import Server, free_port

adbc = pytest.importorskip("adbc_driver_flightsql.dbapi")

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: 9 M rows: far more than the kernel's and gRPC's buffers hold while nobody reads
CROSS_JOIN = (
    "SELECT a.columns[0] AS x, b.columns[0] AS y "
    "FROM dfs.data.`nums.csv` a CROSS JOIN dfs.data.`nums.csv` b"
)


def started(tmp_path: Path, *args: str) -> Server:
    srv = Server(tmp_path, args=list(args))
    (srv.data / "nums.csv").write_text("".join(f"{i}\n" for i in range(3000)))
    return srv.start()


def stopped(srv: Server) -> int:
    """SIGINT, as Ctrl-C sends it; the status the server ends with."""
    assert srv.proc is not None
    srv.proc.send_signal(signal.SIGINT)
    try:
        return srv.proc.wait(timeout=STOP_WAIT + 60)  # a bound against a hang only
    except subprocess.TimeoutExpired:
        srv.proc.kill()
        pytest.fail("the server did not stop while a client held an unread answer")


# the driver's statement, closed after its server is gone, complains again when collected
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_client_that_stopped_reading_does_not_keep_the_server_running(tmp_path: Path) -> None:
    port = free_port()
    srv = started(tmp_path, "--flight-port", str(port))
    conn = adbc.connect(f"grpc://127.0.0.1:{port}", autocommit=True)
    cur = conn.cursor()
    reader = None
    try:
        cur.execute("CREATE TEMPORARY TABLE dfs.tmp.kept AS SELECT 1 AS a FROM (VALUES(1))")
        assert [p for p in srv.tmp.iterdir() if p.is_dir()], "no session folder in dfs.tmp"
        cur.execute(CROSS_JOIN)
        reader = cur.fetch_record_batch()
        assert reader.read_next_batch().num_rows > 0  # then the client reads no more

        assert stopped(srv) == 0
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
        # collected here, where its complaint is expected, not in a later test
        del reader, cur, conn, closing
        gc.collect()


def test_a_rest_client_that_stopped_reading_does_not_keep_the_server_running(
    tmp_path: Path,
) -> None:
    plain = started(tmp_path / "plain")
    status = stopped(plain)  # what any Ctrl-C of a server ends with

    srv = started(tmp_path / "stalled")
    body = json.dumps({"queryType": "SQL", "query": CROSS_JOIN}).encode()
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting
    try:
        client.connect(("127.0.0.1", srv.port))
        client.sendall(
            b"POST /query.json HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert client.recv(4096).startswith(b"HTTP/1.1 200")  # then the client reads no more
        assert stopped(srv) == status
    finally:
        client.close()
        srv.stop()
