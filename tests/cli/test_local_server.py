"""``auger sql`` on its local background server: started on first use, reused, stopped.

Each test has a state directory (``$AUGER_HOME``) of its own, so the servers it starts are its
own; reuse is checked by the server's pid in its state file, never by timing. The life-cycle
tests run ``auger sql -e ""``: a client that connects and runs nothing, which needs no Spark.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from ..server.helpers import free_port

pytestmark = [pytest.mark.spark, pytest.mark.slow]

Auger = Callable[..., subprocess.CompletedProcess[str]]
WAIT = 300.0  # shared 2-core machines: a JVM start may take minutes


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    yield home
    subprocess.run(
        [sys.executable, "-m", "auger", "stop", "--all"],
        env={**os.environ, "AUGER_HOME": str(home)},
        capture_output=True,
        timeout=120,
    )


@pytest.fixture
def auger(home: Path) -> Auger:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "auger", *args],
            capture_output=True,
            text=True,
            timeout=WAIT,
            env={**os.environ, "AUGER_HOME": str(home)},
        )

    return run


def states(home: Path) -> dict[str, dict[str, object]]:
    return {p.name: json.loads(p.read_text()) for p in (home / "servers").glob("*.json")}


def only_state(home: Path) -> dict[str, object]:
    found = states(home)
    assert len(found) == 1, found
    return next(iter(found.values()))


def alive(pid: object) -> bool:
    try:
        os.kill(int(pid), 0)  # type: ignore[call-overload]
    except ProcessLookupError:
        return False
    return True


def starts(home: Path) -> int:
    """How many servers have started on this state directory (each logs one line)."""
    return sum(
        p.read_text().count("auger: Drill REST API on ") for p in (home / "logs").glob("local-*")
    )


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def idle_config(tmp_path: Path, seconds: float = 2) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    config = tmp_path / "auger.toml"
    config.write_text(
        f"[server]\nidle_timeout = {seconds}\n"
        f'[storage.dfs.workspaces.tmp]\nlocation = "{ws}"\nwritable = true\n'
        '[spark]\nmaster = "local[1]"\n'
    )
    return config


def test_first_call_starts_a_server_that_the_next_call_reuses_with_a_session_each(
    auger: Auger, home: Path
) -> None:
    first = auger(
        "sql",
        "-e",
        "CREATE TEMPORARY TABLE mine AS SELECT 7 AS a FROM (VALUES(1)); SELECT a FROM mine",
        "--output",
        "csv",
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.endswith("a\n7\n")
    state = only_state(home)
    assert alive(state["pid"]) and state["config"] is None
    path = home / "servers" / "default.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the token

    # the same server answers the next command, in a session of its own: the first one's
    # temporary table went with it, and the user is the one the command names
    second = auger("sql", "--user", "bob", "-e", "SELECT CURRENT_USER AS u FROM (VALUES(1))")
    assert second.returncode == 0, second.stderr
    assert "| bob |" in second.stdout
    gone = auger("sql", "-e", "SELECT a FROM mine")
    assert gone.returncode == 1 and "'mine' not found" in gone.stderr
    assert only_state(home)["pid"] == state["pid"]
    assert starts(home) == 1

    # 127.0.0.1 only, and nothing without the token
    url = f"http://127.0.0.1:{state['port']}"
    query = {"queryType": "SQL", "query": "SELECT 1 AS x FROM (VALUES(1))"}
    assert requests.post(url + "/query.json", json=query, timeout=30).status_code == 403
    wrong = requests.post(
        url + "/query.json", json=query, headers={"X-Auger-Token": "guess"}, timeout=30
    )
    assert wrong.status_code == 403

    stopped = auger("stop")
    assert stopped.returncode == 0 and f"pid {state['pid']}" in stopped.stdout
    assert not alive(state["pid"]) and states(home) == {}
    again = auger("stop")
    assert again.returncode == 0 and "No auger server is running" in again.stdout


def test_the_server_stops_itself_after_its_idle_timeout(home: Path, tmp_path: Path) -> None:
    config = idle_config(tmp_path, 2)
    client = subprocess.Popen(
        [sys.executable, "-m", "auger", "--config", str(config), "sql", "-e", ""],
        env={**os.environ, "AUGER_HOME": str(home)},
        stderr=subprocess.PIPE,
        text=True,
    )
    # The state is read while it is there: from the client's last request the server lives
    # for the idle timeout only, which a loaded machine can spend on the client's exit alone.
    seen: list[dict[str, object]] = []
    deadline = time.monotonic() + WAIT
    while not seen and time.monotonic() < deadline:
        seen = list(states(home).values())
        if not seen and client.poll() is not None:
            seen = list(states(home).values())
            break
        time.sleep(0.02)
    _, err = client.communicate(timeout=WAIT)
    assert client.returncode == 0, err
    assert len(seen) == 1, "the server's state file was never seen"
    state = seen[0]
    assert state["config"] == str(config)
    wait_until(lambda: not alive(state["pid"]), "the idle server never stopped")
    assert states(home) == {}  # it removed its state file on the way out


def test_a_state_file_of_a_dead_server_is_replaced(
    auger: Auger, home: Path, tmp_path: Path
) -> None:
    config = idle_config(tmp_path, 60)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    first = auger("--config", str(config), "sql", "-e", "")
    assert first.returncode == 0, first.stderr
    path = next((home / "servers").glob("*.json"))
    stale = {"pid": dead.pid, "port": free_port(), "token": "old", "config": str(config)}
    live = json.loads(path.read_text())
    os.kill(int(live["pid"]), 9)  # a crash: the state file stays behind
    wait_until(lambda: not alive(live["pid"]), "the killed server is still there")
    path.write_text(json.dumps(stale))

    done = auger("--config", str(config), "sql", "-e", "")
    assert done.returncode == 0, done.stderr
    state = only_state(home)
    assert state["pid"] not in (dead.pid, live["pid"]) and alive(state["pid"])
    assert state["token"] != "old"
    assert starts(home) == 2


def test_clients_started_at_once_share_one_server(home: Path, tmp_path: Path, auger: Auger) -> None:
    config = idle_config(tmp_path, 60)
    env = {**os.environ, "AUGER_HOME": str(home)}
    command = [sys.executable, "-m", "auger", "--config", str(config), "sql", "-e", ""]
    procs = [
        subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) for _ in range(3)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=WAIT)
        assert proc.returncode == 0, err
    assert starts(home) == 1
    assert alive(only_state(home)["pid"])


def test_embedded_runs_in_the_process_and_starts_no_server(auger: Auger, home: Path) -> None:
    done = auger("sql", "--embedded", "-e", "SELECT 1 AS x FROM (VALUES(1))", "--output", "csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "x\n1\n"
    assert not (home / "servers").exists() or states(home) == {}


def test_a_server_that_cannot_start_reports_why(auger: Auger, home: Path, tmp_path: Path) -> None:
    config = tmp_path / "auger.toml"
    config.write_text("[server]\nidle_timeout = -1\n")
    done = auger("--config", str(config), "sql", "-e", "SELECT 1 AS x FROM (VALUES(1))")
    assert done.returncode == 1
    assert done.stderr.startswith("VALIDATION ERROR: server.session_timeout, ")
    assert "idle_timeout" in done.stderr and "Traceback" not in done.stderr
    assert states(home) == {}
