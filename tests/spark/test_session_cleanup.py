"""Clean-up of temporary tables: session close, engine shutdown, SIGTERM, kill -9 + restart.

Also another default temporary workspace, two engines sharing one workspace directory, and the
workspace moved while the session ran.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Connection, Error
from auger.engine import Engine
from auger.storage.temporary import OWNER_MARKER

SELECT_A = "select 'A' as c1 from (values(1))"


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.cursor().execute(sql).fetchall()]


def error(conn: Any, sql: str) -> str:
    with pytest.raises(Error) as info:
        conn.cursor().execute(sql).fetchall()
    return str(info.value)


def config(tmp: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    workspaces = {"tmp": {"location": str(tmp), "writable": True}}
    workspaces.update(extra or {})
    return {"storage": {"dfs": {"type": "file", "workspaces": workspaces}}}


@pytest.fixture
def own_engine(spark: Any, tmp_path: Path) -> Any:
    """An engine of its own (sharing the test SparkSession) on a fresh temporary workspace."""
    made: list[Engine] = []

    def factory(cfg: dict[str, Any] | None = None) -> Engine:
        eng = Engine(cfg or config(tmp_path / "ws"))
        made.append(eng)
        return eng

    yield factory
    for eng in made:
        eng.shutdown()


def test_session_close_deletes_its_location(
    make_conn: Any, tmp_workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    conn, other = make_conn(), make_conn()
    rows(conn, f"create temporary table dropped_on_close as {SELECT_A}")
    rows(other, f"create temporary table survives as {SELECT_A}")
    location = tmp_workspace / conn.session.id
    assert location.is_dir()
    with caplog.at_level(logging.INFO):
        conn.close()
    assert not location.exists()
    assert (
        f"Deleted session temporary location [{location}] from file system [file:///]"
        in caplog.text
    )
    assert (tmp_workspace / other.session.id).is_dir()
    assert rows(other, "select * from survives") == [("A",)]


def test_session_without_temporary_tables_creates_no_location(
    make_conn: Any, tmp_workspace: Path
) -> None:
    conn = make_conn()
    rows(conn, SELECT_A)
    assert not (tmp_workspace / conn.session.id).exists()


def test_engine_shutdown_closes_every_session(own_engine: Any, tmp_path: Path) -> None:
    eng = own_engine()
    conns = [Connection(eng.open_session(user)) for user in ("a", "b")]
    for c in conns:
        rows(c, f"create temporary table t as {SELECT_A}")
    locations = [tmp_path / "ws" / c.session.id for c in conns]
    assert all(loc.is_dir() for loc in locations)
    eng.shutdown()
    assert not any(loc.exists() for loc in locations)
    assert eng.sessions() == []
    assert all(c.session.closed for c in conns)


def _update_workspace(
    eng: Engine, full_name: str, location: str | None = None, writable: bool | None = None
) -> None:
    """Change a workspace of a running engine behind its back (the storage editor refuses a
    read-only temporary workspace, and wants a moved one's folder made first)."""
    found = eng.config.workspace(full_name)
    assert found is not None
    plugin, ws = found
    changes: dict[str, Any] = {}
    if location is not None:
        changes["location"] = os.path.normpath(os.path.abspath(location))
        os.makedirs(changes["location"], exist_ok=True)
    if writable is not None:
        changes["writable"] = writable
    new_plugin = replace(plugin, workspaces={**plugin.workspaces, ws.name: replace(ws, **changes)})
    eng.config = replace(eng.config, plugins={**eng.config.plugins, plugin.name: new_plugin})


def test_locations_in_both_workspace_locations_are_deleted(own_engine: Any, tmp_path: Path) -> None:
    eng = own_engine()
    conn = Connection(eng.open_session())
    rows(conn, f"create temporary table dfs.tmp.temporary_table_automatic_drop_a as {SELECT_A}")
    first = tmp_path / "ws" / conn.session.id
    assert first.is_dir() and (first / OWNER_MARKER).is_file()
    _update_workspace(eng, "dfs.tmp", location=str(tmp_path / "moved"))
    rows(conn, f"create temporary table dfs.tmp.temporary_table_automatic_drop_b as {SELECT_A}")
    second = tmp_path / "moved" / conn.session.id
    assert second.is_dir() and (second / OWNER_MARKER).is_file()
    for location in (first, second):
        (table,) = [d for d in location.iterdir() if d.is_dir()]
        assert table.stat().st_mode & 0o777 == 0o700
    # both tables stay readable by name
    assert rows(conn, "select * from temporary_table_automatic_drop_a") == [("A",)]
    assert rows(conn, "select * from temporary_table_automatic_drop_b") == [("A",)]
    conn.close()
    assert not first.exists() and not second.exists()


def test_default_temporary_workspace_can_be_overridden(own_engine: Any, tmp_path: Path) -> None:
    cfg = config(
        tmp_path / "ws", {"scratch": {"location": str(tmp_path / "scratch"), "writable": True}}
    )
    cfg["exec"] = {"default_temporary_workspace": "dfs.scratch"}
    eng = own_engine(cfg)
    conn = Connection(eng.open_session())
    rows(conn, f"create temporary table moved_default as {SELECT_A}")
    assert (tmp_path / "scratch" / conn.session.id).is_dir()
    assert rows(conn, "select * from dfs.scratch.moved_default") == [("A",)]
    assert rows(conn, "select * from moved_default") == [("A",)]
    msg = error(conn, f"create temporary table dfs.tmp.not_here as {SELECT_A}")
    assert (
        "Temporary tables are not allowed to be created outside of default temporary workspace "
        "[dfs.scratch]." in msg
    )
    assert rows(conn, "drop table moved_default") == [
        (True, "Temporary table [moved_default] dropped")
    ]


def test_two_engines_share_one_workspace(own_engine: Any, tmp_path: Path) -> None:
    first, second = own_engine(), own_engine()
    a = Connection(first.open_session("alice"))
    rows(a, f"create temporary table on_first as {SELECT_A}")
    location = tmp_path / "ws" / a.session.id
    # a third engine starting on the same directory leaves the live session alone
    own_engine()
    assert location.is_dir()
    b = Connection(second.open_session("alice"))
    assert error(b, "select * from on_first").startswith("VALIDATION ERROR")
    generated = a.session.temporary.get("on_first").generated
    assert error(b, f"select * from dfs.tmp.`{generated}`").startswith("PERMISSION ERROR")
    rows(b, f"create temporary table on_first as {SELECT_A}")
    a.close()
    assert not location.exists()
    assert rows(b, "select * from on_first") == [("A",)]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _fake_location(ws: Path, name: str, owner: dict[str, Any] | None) -> Path:
    location = ws / name
    (location / "table").mkdir(parents=True)
    (location / "table" / "0_0_0.parquet").write_bytes(b"x")
    if owner is not None:
        (location / OWNER_MARKER).write_text(json.dumps(owner))
    return location


def test_startup_sweeps_only_dead_owners(own_engine: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    base = {"engine_id": "e", "pid_start": None, "started": 0.0, "session": "s", "user": "u"}
    host = socket.gethostname()
    dead = _fake_location(ws, "dead", {**base, "pid": _dead_pid(), "host": host})
    alive = _fake_location(ws, "alive", {**base, "pid": os.getppid(), "host": host})
    elsewhere = _fake_location(ws, "elsewhere", {**base, "pid": 1, "host": host + "-other"})
    unmarked = _fake_location(ws, "unmarked", None)
    own_engine()
    assert not dead.exists()
    assert alive.is_dir() and elsewhere.is_dir() and unmarked.is_dir()


def _script(ws: Path) -> str:
    cfg = json.dumps(
        {
            "storage": {
                "dfs": {
                    "type": "file",
                    "workspaces": {"tmp": {"location": str(ws), "writable": True}},
                }
            },
            "spark": {"master": "local[1]", "conf": {"spark.ui.enabled": "false"}},
        }
    )
    return textwrap.dedent(
        f"""
        import json, sys, time
        import auger
        conn = auger.connect(config=json.loads({cfg!r}))
        conn.cursor().execute("create temporary table t as select 1 as a from (values(1))")
        print(conn.session.id, flush=True)
        while True:
            time.sleep(0.2)
        """
    )


def _start(ws: Path, tmp_path: Path, tag: str) -> subprocess.Popen[str]:
    script = tmp_path / f"hold_{tag}.py"
    script.write_text(_script(ws))
    log = open(tmp_path / f"hold_{tag}.log", "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=log, text=True
    )


def _ready(proc: subprocess.Popen[str], tmp_path: Path, tag: str) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        proc.kill()
        log = (tmp_path / f"hold_{tag}.log").read_text()[-3000:]
        raise AssertionError(f"helper process {tag} failed:\n{log}")
    return line


def test_signals_clean_up_and_restart_sweeps_after_kill_9(own_engine: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    procs = {tag: _start(ws, tmp_path, tag) for tag in ("term", "int", "kill")}
    try:
        locations = {tag: ws / _ready(proc, tmp_path, tag) for tag, proc in procs.items()}
        for tag, location in locations.items():
            assert location.is_dir()
            assert json.loads((location / OWNER_MARKER).read_text())["pid"] == procs[tag].pid
        # an engine starting meanwhile never touches live sessions of other processes
        own_engine(config(ws))
        assert all(location.is_dir() for location in locations.values())

        procs["term"].send_signal(signal.SIGTERM)
        assert procs["term"].wait(timeout=120) == 128 + signal.SIGTERM
        assert not locations["term"].exists()

        procs["int"].send_signal(signal.SIGINT)  # Ctrl-C: KeyboardInterrupt, then exit hooks
        assert procs["int"].wait(timeout=120) != 0
        assert not locations["int"].exists()

        procs["kill"].kill()  # SIGKILL: nothing runs in the process
        procs["kill"].wait(timeout=60)
        assert locations["kill"].is_dir()
        own_engine(config(ws))  # a restart sweeps what the dead engine left
        assert not locations["kill"].exists()
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)


def test_read_only_temporary_workspace_refuses_creation(own_engine: Any) -> None:
    eng = own_engine()
    conn = Connection(eng.open_session())
    _update_workspace(eng, "dfs.tmp", writable=False)
    msg = error(conn, f"create temporary table t as {SELECT_A}")
    assert "Unable to create or drop tables/views. Schema [dfs.tmp] is immutable." in msg


def test_reused_pid_and_forgotten_engine_count_as_dead(own_engine: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    base = {"started": 0.0, "session": "s", "user": "u", "host": socket.gethostname()}
    # the pid runs, but it is another process than the one that wrote the marker
    reused = _fake_location(
        ws, "reused", {**base, "engine_id": "e", "pid": os.getppid(), "pid_start": "0"}
    )
    # this very process, but an engine id that no running engine here has
    forgotten = _fake_location(
        ws, "forgotten", {**base, "engine_id": "gone", "pid": os.getpid(), "pid_start": None}
    )
    live = own_engine()
    mine = _fake_location(
        ws, "mine", {**base, "engine_id": live.id, "pid": os.getpid(), "pid_start": None}
    )
    own_engine()
    assert not reused.exists() and not forgotten.exists()
    assert mine.is_dir()


def test_foreign_location_rules(tmp_path: Path) -> None:
    from auger.storage.temporary import foreign_location

    ws = tmp_path / "ws"
    mine, theirs = ws / "mine", ws / "theirs"
    for loc in (mine, theirs):
        (loc / "t").mkdir(parents=True)
        (loc / OWNER_MARKER).write_text("{}")
    (ws / "plain").mkdir()
    own = [str(mine)]
    assert foreign_location(str(theirs / "t" / "0_0_0.parquet"), own, [str(ws)]) == str(theirs)
    assert foreign_location(str(ws), own, [str(ws)]) == str(theirs)  # the whole workspace
    assert foreign_location(str(ws / "*" / "t"), own, [str(ws)]) == str(theirs)  # a glob
    assert foreign_location(str(mine / "t"), own, [str(ws)]) is None
    assert foreign_location(str(ws / "plain"), own, [str(ws)]) is None
    assert foreign_location(str(tmp_path / "elsewhere"), own, [str(ws)]) is None
    # known locations of other sessions count wherever they are
    assert foreign_location(str(tmp_path), own, [], [str(theirs)]) == str(theirs)


def test_no_sessions_after_shutdown(own_engine: Any) -> None:
    from auger.errors import UserError

    eng = own_engine()
    eng.shutdown()
    eng.shutdown()  # idempotent
    with pytest.raises(UserError, match="shut down"):
        eng.open_session()
