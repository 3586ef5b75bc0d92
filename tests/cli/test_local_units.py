"""The pieces of the local background server that need no server process: state files, the
token guard and the idle watch."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from auger.cli import local
from auger.server import local as server_local


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
