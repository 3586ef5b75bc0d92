"""The pieces of the local background server that need no server process: state files, the
token guard and the idle watch."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from auger.cli import local
from auger.server import local as server_local

from ..server.helpers import free_port


def test_client_and_server_name_the_same_headers() -> None:
    assert local.TOKEN_HEADER == server_local.TOKEN_HEADER
    assert local.USER_HEADER == server_local.USER_HEADER


def test_one_state_file_per_configuration_and_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGER_HOME", str(tmp_path / "a"))
    monkeypatch.delenv("AUGER_CONFIG", raising=False)
    default = local.state_file(None)
    assert default == tmp_path / "a" / "servers" / "default.json"
    one, two = local.state_file("x.toml"), local.state_file(str(tmp_path / "y.toml"))
    assert len({default, one, two}) == 3
    monkeypatch.chdir(tmp_path)
    assert local.state_file("x.toml") == local.state_file(str(tmp_path / "x.toml"))
    monkeypatch.setenv("AUGER_CONFIG", str(tmp_path / "x.toml"))
    assert local.state_file(None) == local.state_file("x.toml")  # $AUGER_CONFIG counts
    monkeypatch.setenv("AUGER_HOME", str(tmp_path / "b"))
    assert local.state_file(None).parent == tmp_path / "b" / "servers"


def test_unreadable_or_dead_state_is_no_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGER_HOME", str(tmp_path))
    monkeypatch.delenv("AUGER_CONFIG", raising=False)
    path = local.state_file(None)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert local.live_server(None) is None
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path.write_text(json.dumps({"pid": dead.pid, "port": 1, "token": "t"}))
    assert local.live_server(None) is None and path.exists()  # without the lock: left alone
    assert local.live_server(None, clean=True) is None and not path.exists()


def _call(guard: server_local.TokenGuard, headers: dict[str, str]) -> tuple[int, Any]:
    seen: dict[str, Any] = {}
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen["user"] = scope.get(server_local.USER_SCOPE_KEY)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard.app = app

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    asyncio.run(guard(scope, receive, send))
    return sent[0]["status"], seen.get("user")


def test_the_guard_lets_only_the_token_through_and_names_the_user() -> None:
    activity = server_local.Activity()
    guard = server_local.TokenGuard(None, "s3cret", activity)  # type: ignore[arg-type]
    assert _call(guard, {}) == (403, None)
    assert _call(guard, {"X-Auger-Token": "s3cre"}) == (403, None)
    assert _call(guard, {"X-Auger-Token": "s3cret"}) == (200, None)
    assert _call(guard, {"X-Auger-Token": "s3cret", "X-Auger-User": "bob"}) == (200, "bob")
    assert activity.in_flight == 0


class _Sessions:
    def __init__(self) -> None:
        self.open: list[object] = []

    def all(self) -> list[object]:
        return list(self.open)


def test_the_idle_watch_waits_for_no_session_and_no_request() -> None:
    activity = server_local.Activity()
    sessions = _Sessions()
    sessions.open.append(object())
    fired = threading.Event()
    stop = threading.Event()

    def on_idle() -> bool:
        fired.set()
        return True

    try:
        server_local.watch_idle(activity, sessions, 0.3, on_idle, stop)  # type: ignore[arg-type]
        time.sleep(1.0)
        assert not fired.is_set()  # an open session keeps the server
        activity.begin()  # before the session goes: the watch must never see neither
        sessions.open.clear()
        time.sleep(1.0)
        assert not fired.is_set()  # so does a request in flight
        activity.end()
        assert fired.wait(60)
    finally:
        stop.set()


# ------------------------------------------------------------------ which auger a server runs
def _fake_server(tmp_path: Path, name: str) -> tuple[subprocess.Popen[bytes], int]:
    """A process that answers ``GET /status.json`` with 200 on a free port, as a live local
    server does; reaped by a thread so that it is gone (no zombie) once it ends."""
    root = tmp_path / name
    root.mkdir()
    (root / "status.json").write_text('{"status": "Running!"}')
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    threading.Thread(target=proc.wait, daemon=True).start()
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"http://127.0.0.1:{port}/status.json", timeout=5).ok:
                return proc, port
        except requests.ConnectionError:
            pass
        assert time.monotonic() < deadline, "the fake server never answered"
        time.sleep(0.1)


def _gone(proc: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc.poll() is not None


def test_stop_stops_a_server_whatever_auger_wrote_its_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AUGER_CONFIG", raising=False)
    proc, _ = _fake_server(tmp_path, "old")
    path = local.state_file(None)
    path.parent.mkdir(parents=True)
    # a state file of another auger: a pid, and nothing this one would also need
    path.write_text(json.dumps({"pid": proc.pid, "version": "0.0.1", "address": "elsewhere"}))
    out = io.StringIO()
    assert local.stop_local(None, out) == 0
    assert f"Stopped the auger server (pid {proc.pid})" in out.getvalue()
    assert _gone(proc) and not path.exists()


def test_a_client_restarts_a_server_of_another_installation_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AUGER_CONFIG", raising=False)
    path = local.state_file(None)
    path.parent.mkdir(parents=True)
    old, old_port = _fake_server(tmp_path, "old")
    # the server a removed checkout started: same version, another package directory
    local._write_state(
        path,
        local.LocalServer(
            old.pid,
            old_port,
            "t0",
            version=local.__version__,
            installation="/removed/checkout/src/auger",
            python=sys.executable,
        ),
    )
    new, new_port = _fake_server(tmp_path, "new")
    started: list[int] = []

    def start(config: str | None) -> local.LocalServer:
        # what a server of this auger writes (starting a real one is the server tests' job)
        version, installation, python = local._identity()
        server = local.LocalServer(
            new.pid, new_port, "t1", None, "", [], version, installation, python
        )
        local._write_state(path, server)
        started.append(new.pid)
        return server

    monkeypatch.setattr(local, "_start", start)
    err = io.StringIO()
    first = local.connect_local(None, "u", err)
    assert started == [new.pid] and _gone(old)
    assert first.url == f"http://127.0.0.1:{new_port}"
    said = err.getvalue()
    assert said.count("restarting the background server") == 1
    assert "/removed/checkout/src/auger" in said and str(old.pid) in said

    again = io.StringIO()
    second = local.connect_local(None, "u", again)  # its own auger's server: used as it is
    assert second.url == first.url and started == [new.pid] and again.getvalue() == ""
    assert local.read_state(path) is not None
    local.stop_local(None, io.StringIO())
    assert _gone(new)


def test_a_state_file_naming_no_auger_is_not_this_auger(tmp_path: Path) -> None:
    older = local.LocalServer(1, 2, "t")  # what a state file of an older auger reads as
    assert not older.same_auger() and older.describe() == "an older auger"
    version, installation, python = local._identity()
    assert local.LocalServer(1, 2, "t", None, "", [], version, installation, python).same_auger()
    assert installation == str(Path(local.__file__).resolve().parents[1])


def test_the_installation_watch_reports_a_file_that_disappears(tmp_path: Path) -> None:
    kept, removed = tmp_path / "kept", tmp_path / "removed"
    kept.write_text("")
    removed.write_text("")
    gone: list[Path] = []
    fired = threading.Event()
    stop = threading.Event()

    def on_gone(path: Path) -> None:
        gone.append(path)
        fired.set()

    try:
        server_local.watch_installation([kept, removed], on_gone, 0.05, stop)
        removed.unlink()
        assert fired.wait(60)
        assert gone == [removed]
    finally:
        stop.set()


def test_the_local_server_watches_its_package_and_sample_data() -> None:
    files = local.installation_files()
    assert all(f.exists() for f in files)
    assert Path(local.__file__).resolve().parents[1] / "data" in files
