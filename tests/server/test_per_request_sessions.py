"""``server.anonymous_sessions = "per_request"``: Drill's strict anonymous behaviour, where each
request is its own session. Served in-process by uvicorn over the shared test engine."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from auger.server.app import build_app
from auger.server.settings import ServerSettings

from .helpers import post_query, rows, served_in_thread


@pytest.fixture(scope="module")
def url(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
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
    app = build_app(engine=engine, settings=settings)
    with served_in_thread(app, sock) as port:
        yield f"http://127.0.0.1:{port}"


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
