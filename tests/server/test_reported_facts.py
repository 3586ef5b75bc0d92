"""What the server reports about itself is true: the ports it really listens on (never Drill's
31010/31011/31012, where nothing listens), and every ``*.json`` address answers JSON whatever
the client's Accept header. Served in-process by uvicorn over the shared test engine, on a
socket bound here and recorded as the server records its own."""

from __future__ import annotations

import datetime as dt
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from auger.server.app import ROUTES, build_app, listening
from auger.server.settings import ServerSettings

from .helpers import post_query, rows, served_in_thread

DRILL_DEFAULT_PORTS = {31010, 31011, 31012}
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@dataclass
class Served:
    url: str
    port: int


@pytest.fixture(scope="module")
def served(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("reported_facts")
    settings = ServerSettings.from_config(
        {
            "profiles_dir": str(root / "profiles"),
            "users_file": str(root / "users.json"),
            "log_dir": str(root / "logs"),
        }
    )
    sock = socket.create_server(("127.0.0.1", 0))
    app = build_app(engine=engine, settings=settings)
    listener = listening(app, sock)
    try:
        with served_in_thread(app, sock) as port:
            yield Served(f"http://127.0.0.1:{port}", port)
    finally:
        engine.unlisten(listener)


def _json_addresses() -> list[str]:
    """Every GET route ending in ``.json``, its path parameters filled with real values."""
    fill = {"{name:str}": "dfs", "{which:str}": "running"}
    out = []
    for route in ROUTES:
        if route.path.endswith(".json") and "GET" in (route.methods or ()):
            path = route.path
            for pattern, value in fill.items():
                path = path.replace(pattern, value)
            out.append(path)
    return out


def test_every_json_address_is_found() -> None:
    got = _json_addresses()
    assert "/options.json" in got and "/internal_options.json" in got
    assert "/profiles/running.json" in got and "/storage/dfs.json" in got


@pytest.mark.parametrize("address", _json_addresses())
def test_json_addresses_answer_json_to_a_browser(served: Served, address: str) -> None:
    resp = requests.get(served.url + address, headers=BROWSER, timeout=60)
    assert resp.status_code == 200, resp.text[:300]
    assert resp.headers["content-type"].startswith("application/json"), address
    resp.json()  # parses


def test_pages_still_answer_html_to_a_browser(served: Served) -> None:
    resp = requests.get(served.url + "/options", headers=BROWSER, timeout=60)
    assert resp.headers["content-type"].startswith("text/html")


def test_cluster_json_has_the_port_listened_on_and_no_invented_ones(served: Served) -> None:
    (bit,) = requests.get(served.url + "/cluster.json", timeout=30).json()["drillbits"]
    assert bit["httpPort"] == str(served.port)
    assert "userPort" not in bit and "controlPort" not in bit and "dataPort" not in bit
    stats = requests.get(served.url + "/stats.json", timeout=30).text
    assert not any(str(p) in stats for p in DRILL_DEFAULT_PORTS)
    assert f"127.0.0.1:{served.port}" in stats


def test_sys_drillbits_over_the_server_has_its_http_port(served: Served) -> None:
    (got,) = rows(
        None,
        served.url,
        "SELECT user_port, control_port, data_port, http_port FROM sys.drillbits",
    )
    assert got == {
        "user_port": None,
        "control_port": None,
        "data_port": None,
        "http_port": served.port,
    }


def test_a_profile_names_the_port_listened_on(served: Served) -> None:
    query_id = post_query(None, served.url, "SELECT 1 AS one").json()["queryId"]
    profile = requests.get(f"{served.url}/profiles/{query_id}.json", timeout=30).json()
    assert profile["foreman"]["httpPort"] == served.port
    assert not set(profile["foreman"].values()) & DRILL_DEFAULT_PORTS


def test_an_error_id_names_the_port_listened_on(served: Served) -> None:
    message = post_query(None, served.url, "SELECT * FROM dfs.tmp.`no_such_table`").json()[
        "errorMessage"
    ]
    assert message.rstrip().endswith(f":{served.port}]"), message
    assert not any(f":{p}]" in message for p in DRILL_DEFAULT_PORTS)


def test_embedded_sys_drillbits_invents_no_port(conn: Any, engine: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT user_port, control_port, data_port, http_port FROM sys.drillbits")
    (got,) = [tuple(r) for r in cur.fetchall()]
    ports = engine.drill_ports()
    assert got == (ports["user"], ports["control"], ports["data"], ports["http"])
    assert got[:3] == (None, None, None)
    assert not set(got) & DRILL_DEFAULT_PORTS


def test_sys_version_build_time_is_the_installations(conn: Any) -> None:
    from auger.version import build_time

    cur = conn.cursor()
    cur.execute("SELECT build_time FROM sys.version")
    ((got,),) = [tuple(r) for r in cur.fetchall()]
    assert got == build_time()
    assert got != dt.date.today().isoformat()  # not the clock of the query that asks
