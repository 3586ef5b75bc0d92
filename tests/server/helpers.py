"""A real ``auger serve`` process for the REST tests, and small helpers to talk to it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

AUGER = str(Path(sys.executable).with_name("auger"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PortTaken(RuntimeError):
    """``auger serve`` could not bind its port: something took it after it was picked."""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


class Server:
    """``auger serve`` on a free loopback port with its own workspaces, users, profiles and logs.

    ``env`` adds to the server process's environment (``AUGER_HOME`` for its state directory);
    ``args`` to its command line.
    """

    def __init__(
        self,
        root: Path,
        server: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        args: list[str] | None = None,
    ) -> None:
        self.root = root
        self.env = dict(env or {})
        self.args = list(args or [])
        self.tmp = root / "dfs_tmp"
        self.data = root / "data"
        self.users_file = root / "users.json"
        self.profiles_dir = root / "profiles"
        self.log_dir = root / "logs"
        for d in (self.tmp, self.data):
            d.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        # a server given a certificate serves HTTPS (its readiness check trusts any certificate)
        self.scheme = "https" if (server or {}).get("tls_certificate") else "http"
        self.url = f"{self.scheme}://127.0.0.1:{self.port}"
        settings = {
            "users_file": str(self.users_file),
            "profiles_dir": str(self.profiles_dir),
            "log_dir": str(self.log_dir),
            **(server or {}),
        }
        lines = [
            "[storage.dfs.workspaces.tmp]",
            f"location = {json.dumps(str(self.tmp))}",
            "writable = true",
            "[storage.dfs.workspaces.data]",
            f"location = {json.dumps(str(self.data))}",
            "writable = true",
            "[spark]",
            'master = "local[2]"',
            "[server]",
            *(f"{k} = {_toml_value(v)}" for k, v in settings.items()),
        ]
        self.config = root / "auger.toml"
        self.config.write_text("\n".join(lines) + "\n")
        self.log = root / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def passwd(self, user: str, password: str, admin: bool = False) -> subprocess.CompletedProcess:
        args = [AUGER, "passwd", user, "--config", str(self.config)]
        if admin:
            args.append("--admin")
        return subprocess.run(
            args, input=password + "\n", text=True, capture_output=True, timeout=60, check=True
        )

    def start(self) -> Server:
        for _ in range(3):
            try:
                return self._start()
            except PortTaken:
                # the port was free when picked and taken before the server bound it
                self.port = free_port()
                self.url = f"{self.scheme}://127.0.0.1:{self.port}"
        return self._start()

    def _start(self) -> Server:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        args = self.args
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [AUGER, "serve", "--config", str(self.config), "--port", str(self.port), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                text = self.log.read_text()
                if "address already in use" in text.lower():
                    raise PortTaken(text)
                raise RuntimeError(f"auger serve exited:\n{text}")
            try:
                ready = requests.get(self.url + "/status.json", timeout=2, verify=False)
                if ready.status_code == 200:
                    return self
            except requests.RequestException:  # not listening yet, or too busy starting up
                pass
            time.sleep(0.3)
        raise RuntimeError(f"auger serve did not come up:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def post_query(
    http: requests.Session | None, url: str, query: str, **fields: Any
) -> requests.Response:
    body = {"queryType": "SQL", "query": query, **fields}
    sender = http or requests
    return sender.post(url + "/query.json", json=body, timeout=120)


def ordered(resp: requests.Response) -> OrderedDict[str, Any]:
    """The JSON body with member order kept (Drill's order is part of the contract)."""
    return json.loads(resp.text, object_pairs_hook=OrderedDict)  # type: ignore[no-any-return]


def rows(http: requests.Session | None, url: str, query: str, **fields: Any) -> list[dict]:
    resp = post_query(http, url, query, **fields)
    data = resp.json()
    assert resp.status_code == 200, resp.text
    assert data["queryState"] == "COMPLETED", data
    return list(data["rows"])


def login(server: Server, user: str, password: str) -> requests.Session:
    """An HTTP session logged in through the console's form, as a browser would be."""
    http = requests.Session()
    resp = http.post(
        server.url + "/j_security_check",
        data={"j_username": user, "j_password": password},
        timeout=30,
    )
    assert resp.status_code == 200 and "Invalid username" not in resp.text, resp.text
    return http


def warm_up(server: Server, auth: tuple[str, str]) -> None:
    """Run one query as ``auth``: Spark starts with a server's first query, and a test's
    bounded wait should not pay for that."""
    with requests.Session() as warm:
        warm.auth = auth
        rows(warm, server.url, "SELECT 1 AS one")


@contextlib.contextmanager
def served_in_thread(app: Any, sock: socket.socket) -> Iterator[int]:
    """Serve ``app`` with uvicorn on ``sock`` (already bound, so nothing can take its port
    meanwhile) in a thread of this process, over the test's own engine; yields the port."""
    import uvicorn

    port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()
