"""The start-up sweep of CTAS staging directories: a dead writer's is removed and logged, a live
one's (another process, this process, another host) survives; in an object store, by lease."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from auger.engine import Engine
from auger.errors import UserError
from auger.storage import object_tables
from auger.storage.processes import host_key, process_start
from auger.storage.table_files import staging_path, sweep_dead_staging
from tests.storage.s3_helpers import LocalS3

HEX = "0123456789abcdef" * 2


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _staging(parent: Path, table: str, pid: int, start: str | None = None, host: str = "") -> Path:
    owner_start = start if start is not None else (process_start(pid) or "0")
    path = parent / f".{table}.auger-staging-{host or host_key()}-{pid}-{owner_start}-{HEX}"
    path.mkdir(parents=True)
    (path / "part-0000.parquet").write_bytes(b"x")
    return path


def test_staging_names_record_this_process() -> None:
    name = os.path.basename(staging_path("/w/t"))
    assert name.startswith(f".t.auger-staging-{host_key()}-{os.getpid()}-")


def test_sweep_removes_dead_writers_only(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "ws"
    dead = _staging(root, "t", _dead_pid())
    nested = _staging(root / "a" / "b", "deep", _dead_pid())
    reused = _staging(root, "reused", os.getppid(), start="1")  # the pid runs, as another process
    live = _staging(root, "live", os.getppid())
    mine = _staging(root, "mine", os.getpid())
    elsewhere = _staging(
        root, "far", _dead_pid(), host="ffffffff" if host_key() != "ffffffff" else "eeeeeeee"
    )
    unnamed = root / f".old.auger-staging-{HEX}"  # an older auger's name: owner unknown
    unnamed.mkdir()
    table = root / "t2"
    table.mkdir()
    with caplog.at_level(logging.WARNING, logger="auger.storage.table_files"):
        removed = sweep_dead_staging(str(root))
    assert sorted(removed) == sorted(str(p) for p in (dead, nested, reused))
    assert not dead.exists() and not nested.exists() and not reused.exists()
    assert live.is_dir() and mine.is_dir() and elsewhere.is_dir() and unnamed.is_dir()
    assert table.is_dir()
    for path in (dead, nested):
        assert any(
            str(path) in r.getMessage() and "no longer runs" in r.getMessage()
            for r in caplog.records
        )


def test_sweep_stops_at_its_depth(tmp_path: Path) -> None:
    too_deep = _staging(tmp_path / "a" / "b" / "c", "t", _dead_pid())
    assert sweep_dead_staging(str(tmp_path), depth=3) == []
    assert too_deep.is_dir()
    assert sweep_dead_staging(str(tmp_path), depth=4) == [str(too_deep)]


def test_engine_start_sweeps_every_writable_workspace(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data, tmp, ro = tmp_path / "data", tmp_path / "tmp", tmp_path / "ro"
    in_data = _staging(data, "t", _dead_pid())
    in_tmp = _staging(tmp / "sub", "t", _dead_pid())
    in_read_only = _staging(ro, "t", _dead_pid())
    workspaces = {
        "tmp": {"location": str(tmp), "writable": True},
        "data": {"location": str(data), "writable": True},
        "ro": {"location": str(ro), "writable": False},
    }
    with caplog.at_level(logging.WARNING):
        engine = Engine({"storage": {"dfs": {"type": "file", "workspaces": workspaces}}})
    engine.shutdown()
    assert not in_data.exists() and not in_tmp.exists()
    assert in_read_only.is_dir()  # nothing writes there, so nothing is swept there
    assert f"Removed staging directory [{in_data}]" in caplog.text


def _ctas_script(config: dict) -> str:
    return textwrap.dedent(
        f"""
        import json
        import auger
        conn = auger.connect(config=json.loads({json.dumps(config)!r}))
        cur = conn.cursor()
        cur.execute("select count(*) from dfs.data.`n.json`").fetchall()
        print("ready", flush=True)
        cur.execute(
            "create table dfs.data.big as select a.x * 100000 + b.x as v, "
            "repeat('y', 200) as pad from dfs.data.`n.json` a cross join dfs.data.`n.json` b"
        ).fetchall()
        """
    )


@pytest.mark.spark
@pytest.mark.slow
def test_kill_9_during_ctas_then_restart_sweeps(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "n.json").write_text("".join(f'{{"x": {i}}}\n' for i in range(4000)))
    config = {
        "storage": {
            "dfs": {
                "type": "file",
                "workspaces": {
                    "tmp": {"location": str(tmp_path / "tmp"), "writable": True},
                    "data": {"location": str(data), "writable": True},
                },
            }
        },
        "spark": {"master": "local[1]", "conf": {"spark.ui.enabled": "false"}},
    }
    script = tmp_path / "ctas.py"
    script.write_text(_ctas_script(config))
    log = tmp_path / "ctas.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=err, text=True
        )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", log.read_text()[-3000:]
        staging: list[Path] = []
        while not staging and proc.poll() is None:
            staging = list(data.glob(".big.auger-staging-*"))
            time.sleep(0.05)
        assert staging, (
            f"the CTAS ended before its staging directory was seen:\n{log.read_text()[-3000:]}"
        )
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    # Spark's executor threads died with the process: the staging directory stays behind
    assert staging[0].is_dir() and not (data / "big").exists()
    with caplog.at_level(logging.WARNING):
        Engine(config).shutdown()
    assert not staging[0].exists()
    assert f"Removed staging directory [{staging[0]}]" in caplog.text
    assert f"(pid {proc.pid})" in caplog.text


@pytest.mark.spark
@pytest.mark.slow
def test_the_cli_shows_what_the_sweep_removed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    stale = _staging(ws, "t", _dead_pid())
    config = tmp_path / "auger.toml"
    config.write_text(
        f'[storage.dfs.workspaces.tmp]\nlocation = "{ws}"\nwritable = true\n'
        '[spark]\nmaster = "local[1]"\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "auger", "--config", str(config), "sql", "-e", "SELECT 1 AS a"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert not stale.exists()
    assert f"Removed staging directory [{stale}]" in done.stderr


def test_engine_start_sweeps_object_stores_by_lease(local_s3: LocalS3) -> None:
    """In an object store a pid says nothing across hosts: an engine starting up removes the
    uncommitted tables and session locations of servers whose lease is missing or expired, and
    keeps those of a server that refreshes its lease."""
    bucket = local_s3.bucket("auger-sweep")
    root = f"s3a://{bucket}/tmp"
    config = {
        "storage": {"s3": local_s3.plugin(bucket)},
        "exec": {"default_temporary_workspace": "s3.tmp", "lease_interval_seconds": 60},
    }
    first = Engine(config)  # registers the bucket's settings, writes its lease
    alive = object_tables.ServerLease("other-host-server", [root], interval=60)
    alive.refresh()
    for owner in ("killed-server", "other-host-server"):
        object_tables.begin(f"{root}/t-{owner}", owner, "CREATE TABLE")
        local_s3.put(bucket, f"tmp/t-{owner}/0_3_0.parquet", b"x")
    first.shutdown()
    assert f"tmp/.auger-servers/{first.id}.json" not in local_s3.keys(bucket)  # a clean stop
    second = Engine(config)
    try:
        keys = local_s3.keys(bucket, "tmp/")
        assert not any("killed-server" in k for k in keys)
        assert "tmp/t-other-host-server/0_3_0.parquet" in keys
        assert f"tmp/.auger-servers/{second.id}.json" in keys
    finally:
        second.shutdown()
        alive.stop()
        object_tables.remove_table(f"{root}/t-other-host-server", "test")


def test_lease_interval_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="lease_interval_seconds must be a positive"):
        Engine({"exec": {"lease_interval_seconds": 0}})
