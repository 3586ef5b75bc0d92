"""The remote cursor's cancel closes the answer's connection when the server cannot be asked.

A stand-in server answers ``POST /query.json`` with headers and then silence (no query id, as a
server still waiting for a thread or a buffering proxy would), so ``/profiles/cancel`` cannot
be called: the only way to stop the query is to hang up, which the real server takes as a
cancel. No Spark needed.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from auger import dbapi
from auger.cli.remote import RemoteConnection


class SilentServer:
    """Accepts one query, sends the answer's headers and one blank, then waits for EOF."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.answering = threading.Event()
        self.hung_up = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(60)
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n1\r\n \r\n"
            )
            self.answering.set()
            try:
                while conn.recv(65536):  # anything more the client sends
                    pass
                self.hung_up.set()
            except OSError:
                self.hung_up.set()  # a reset is a hang-up too

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def test_cancel_without_query_id_hangs_up(silent: SilentServer) -> None:
    conn = RemoteConnection(silent.url)
    cur = conn.cursor()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            cur.execute("SELECT 1")
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    assert silent.answering.wait(30)
    # the cursor holds the answer once its headers are in; wait for that hand-over
    for _ in range(300):
        if getattr(cur, "_answer", None) is not None:
            break
        threading.Event().wait(0.05)
    assert cur.abandon_on_cancel  # no query id: nothing to ask the server
    cur.cancel()
    assert silent.hung_up.wait(30), "the connection stayed open"
    worker.join(30)
    assert not worker.is_alive()
    assert len(failure) == 1 and isinstance(failure[0], dbapi.OperationalError)
    assert str(failure[0]) == dbapi.CANCELLED_MESSAGE
