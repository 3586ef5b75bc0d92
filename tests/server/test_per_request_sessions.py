"""``server.anonymous_sessions = "per_request"``: Drill's strict anonymous behaviour, where each
request is its own session. Served in-process by uvicorn over the shared test engine."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from auger.server.app import build_app
from auger.server.settings import ServerSettings

from .helpers import post_query, rows


@pytest.fixture(scope="module")
def url(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import uvicorn

    root: Path = tmp_path_factory.mktemp("per_request")
    settings = ServerSettings.from_config(
        {
            "anonymous_sessions": "per_request",
            "profiles_dir": str(root / "profiles"),
            "users_file": str(root / "users.json"),
        }
    )
    # bound here, to a port the system picks, and handed over: nothing can take it meanwhile
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = build_app(engine=engine, settings=settings)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(60)
    sock.close()


def test_no_state_between_requests(url: str, engine: Any) -> None:
    before = len(engine.sessions())
    with requests.Session() as http:
        assert rows(http, url, "USE cp")[0]["ok"] is True
        assert "Drill-Session-Id" not in http.cookies
        resp = post_query(http, url, "SELECT r_name FROM `tpch/region.parquet`")
        assert resp.json()["queryState"] == "FAILED"
        assert rows(http, url, "CREATE TEMPORARY TABLE once AS SELECT 1 a")
        assert post_query(http, url, "SELECT a FROM once").json()["queryState"] == "FAILED"
    # every request's session was closed after its answer
    deadline = time.monotonic() + 30
    while len(engine.sessions()) > before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(engine.sessions()) == before


def test_request_fields_still_apply_within_the_request(url: str) -> None:
    got = rows(
        None, url, "SELECT r_name FROM `tpch/region.parquet`", defaultSchema="cp", autoLimit=2
    )
    assert len(got) == 2
