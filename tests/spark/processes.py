"""Helpers for tests that start Spark (or auger) processes of their own and drive them from a
client script in another process: ports, waiting for a listener, stopping a process group,
reading the client's ``RESULT {json}`` line, and a script on an embedded engine of its own."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ..server.helpers import free_port

__all__ = ["free_port", "listening", "run_client", "run_embedded", "stop_group", "wait_until"]


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_until(
    ready: Callable[[], bool],
    procs: list[subprocess.Popen[bytes]],
    timeout: float,
    failure: Callable[[], str],
    step: float = 0.5,
) -> None:
    """Poll ``ready`` until it holds; fail the test with ``failure()`` when a process dies first
    or the time runs out."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            pytest.fail(failure())
        time.sleep(step)


def stop_group(proc: subprocess.Popen[bytes], grace: float = 20) -> None:
    """Stop a process started with ``start_new_session``, and everything in its group (a
    script, spark-submit and the JVM it starts)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
    try:  # a JVM may outlive the script that started it for a moment
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_client(
    script: str, tmp_path: Path, args: list[str], env: Mapping[str, str], timeout: float
) -> dict[str, Any]:
    """Run ``script`` with this Python and return what its last ``RESULT {json}`` line says."""
    path = tmp_path / "client.py"
    path.write_text(script)
    proc = subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(env),
        cwd=tmp_path,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    return dict(json.loads(lines[-1][len("RESULT ") :]))


def run_embedded(
    script: str, tmp_path: Path, *args: str, master: str = "local[2]", warm_up: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with ``args`` in a fresh interpreter whose auger has a config of
    ``master`` alone, its own state directory under ``tmp_path``, and the idle warm-up on or
    off (tests of what a process prints and how it ends); its output is captured."""
    config = tmp_path / "auger.toml"
    config.write_text(f'[spark]\nmaster = "{master}"\n')
    path = tmp_path / "embedded.py"
    path.write_text(script)
    env = {
        **os.environ,
        "AUGER_CONFIG": str(config),
        "AUGER_HOME": str(tmp_path / "home"),
        "AUGER_WARM_UP": "1" if warm_up else "0",
    }
    return subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, env=env, timeout=300
    )
