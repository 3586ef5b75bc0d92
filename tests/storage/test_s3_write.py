"""Writes into an S3 workspace (a local S3-compatible server) through SQL: CTAS and CTTAS in
every ``store.format``, the pending-marker commit (a failed write leaves no table and no
objects, readers skip an uncommitted table), DROP TABLE, temporary tables removed at session
close, and the start-up sweep of what a server with an expired lease left behind."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from auger.dbapi import Connection
from auger.engine import Engine
from auger.storage import filesystem as fs
from auger.storage import object_tables
from tests.sql.helpers import error, rows
from tests.storage.s3_helpers import LocalS3

BUCKET = "auger-write"
CSV = "id,name,g\n1,ann,a\n2,bob,b\n3,cy,a\n"
ROOT = f"s3a://{BUCKET}/tmp"


@pytest.fixture(scope="module")
def s3_engine(spark: Any, local_s3: LocalS3) -> Iterator[Engine]:
    local_s3.bucket(BUCKET)
    local_s3.put(BUCKET, "data/people.csvh", CSV)
    eng = Engine(
        {
            "storage": {"s3": local_s3.plugin(BUCKET)},
            "exec": {"default_temporary_workspace": "s3.tmp", "lease_interval_seconds": 60},
            "spark": {"master": "local[2]"},
        }
    )
    yield eng
    eng.shutdown()


@pytest.fixture
def s3(s3_engine: Engine) -> Iterator[Connection]:
    c = Connection(s3_engine.open_session("tester"))
    yield c
    c.close()


def _data_keys(local_s3: LocalS3, prefix: str) -> list[str]:
    """The objects under ``prefix`` but leases and the empty directory objects pyarrow makes."""
    return [
        k for k in local_s3.keys(BUCKET, prefix) if "/.auger-servers/" not in k and k[-1] != "/"
    ]


SOURCE = "SELECT CAST(id AS INT) AS id, name, g FROM s3.root.`data/people.csvh`"


@pytest.mark.parametrize("store_format", ["parquet", "json", "csvh", "csv", "tsv", "psv"])
def test_ctas_in_each_format_reads_back(
    s3: Connection, local_s3: LocalS3, store_format: str
) -> None:
    cur = s3.cursor()
    cur.execute(f"ALTER SESSION SET `store.format` = '{store_format}'")
    table = f"people_{store_format}"
    got = rows(s3, f"CREATE TABLE s3.tmp.{table} AS {SOURCE}")
    assert got == [("0_0", 3)]
    keys = _data_keys(local_s3, f"tmp/{table}/")
    assert keys and all(k.endswith("." + store_format) for k in keys), keys
    assert not any(object_tables.PENDING_MARKER in k for k in keys)
    if store_format in ("csv", "tsv", "psv"):
        back = rows(s3, f"SELECT columns[0], columns[1] FROM s3.tmp.{table}")
    else:
        back = rows(s3, f"SELECT id, name FROM s3.tmp.{table}")
    assert sorted((str(i), n) for i, n in back) == [("1", "ann"), ("2", "bob"), ("3", "cy")]
    cur.execute(f"DROP TABLE s3.tmp.{table}")
    assert _data_keys(local_s3, f"tmp/{table}/") == []


def test_partitioned_parquet_writes_a_file_per_value(s3: Connection, local_s3: LocalS3) -> None:
    s3.cursor().execute("ALTER SESSION SET `store.format` = 'parquet'")
    rows(s3, f"CREATE TABLE s3.tmp.parted PARTITION BY (g) AS {SOURCE}")
    assert len(_data_keys(local_s3, "tmp/parted/")) == 2
    back = rows(s3, "SELECT g, COUNT(*) FROM s3.tmp.parted GROUP BY g ORDER BY g")
    assert back == [("a", 2), ("b", 1)]
    s3.cursor().execute("DROP TABLE s3.tmp.parted")


def test_empty_result_is_a_table_with_its_schema(s3: Connection) -> None:
    s3.cursor().execute("ALTER SESSION SET `store.format` = 'parquet'")
    assert rows(s3, f"CREATE TABLE s3.tmp.nothing AS {SOURCE} WHERE id > 99") == [("0_0", 0)]
    assert rows(s3, "SELECT COUNT(*) FROM s3.tmp.nothing") == [(0,)]
    s3.cursor().execute("DROP TABLE s3.tmp.nothing")


def test_failed_write_leaves_no_table_and_no_objects(
    s3: Connection, local_s3: LocalS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []

    def fail(table: str) -> None:  # the data objects are written, the commit never happens
        seen.append(local_s3.keys(BUCKET, "tmp/broken/"))
        # meanwhile readers see no table
        assert "not found" in error(s3, "SELECT * FROM s3.tmp.broken")
        raise OSError("injected failure before the commit")

    monkeypatch.setattr(object_tables, "commit", fail)
    s3.cursor().execute("ALTER SESSION SET `store.format` = 'json'")
    msg = error(s3, f"CREATE TABLE s3.tmp.broken AS {SOURCE}")
    assert "injected failure" in msg
    assert any(k.endswith(".json") for k in seen[0])  # it failed mid-write
    assert f"tmp/broken/{object_tables.PENDING_MARKER}" in seen[0]
    assert _data_keys(local_s3, "tmp/broken") == []
    assert "not found" in error(s3, "SELECT * FROM s3.tmp.broken")


def test_query_failing_in_the_tasks_leaves_nothing(s3: Connection, local_s3: LocalS3) -> None:
    local_s3.put(BUCKET, "data/bad.csvh", "id\n1\nx\n")
    s3.cursor().execute("ALTER SESSION SET `store.format` = 'csvh'")
    error(
        s3,
        "CREATE TABLE s3.tmp.badcast AS SELECT CAST(id AS INT) AS i FROM s3.root.`data/bad.csvh`",
    )
    assert _data_keys(local_s3, "tmp/badcast") == []


def test_readers_skip_an_uncommitted_table(s3: Connection, local_s3: LocalS3) -> None:
    local_s3.put(BUCKET, "tmp/dir/done/a.csvh", "id\n1\n")
    local_s3.put(BUCKET, "tmp/dir/half/a.csvh", "id\n2\n")
    object_tables.begin(f"{ROOT}/dir/half", "some-writer", "CREATE TABLE")
    try:
        assert rows(s3, "SELECT id FROM s3.tmp.`dir`") == [("1",)]
        assert "not found" in error(s3, "SELECT id FROM s3.tmp.`dir/half`")
        # the name is taken while the write runs
        assert "already exists" in error(s3, "CREATE TABLE s3.tmp.`dir/half` AS SELECT 1 AS a")
        object_tables.commit(f"{ROOT}/dir/half")
        assert sorted(rows(s3, "SELECT id FROM s3.tmp.`dir`")) == [("1",), ("2",)]
    finally:
        object_tables.remove_table(f"{ROOT}/dir", "test")
    assert _data_keys(local_s3, "tmp/dir/") == []


def test_drop_table_errors_as_drill(s3: Connection) -> None:
    # s3.tmp is the temporary workspace: the name could have meant a temporary table
    assert error(s3, "DROP TABLE s3.tmp.missing").startswith(
        "VALIDATION ERROR: Table [missing] is not found."
    )
    assert rows(s3, "DROP TABLE IF EXISTS s3.tmp.missing") == [(False, "Table [missing] not found")]
    s3.cursor().execute("ALTER SESSION SET `store.format` = 'json'")
    rows(s3, f"CREATE TABLE s3.tmp.twice AS {SOURCE}")
    assert error(s3, f"CREATE TABLE s3.tmp.twice AS {SOURCE}").startswith(
        "VALIDATION ERROR: A table or view with given name [twice] already exists in schema "
        "[s3.tmp]"
    )
    assert rows(s3, "DROP TABLE s3.tmp.twice") == [(True, "Table [twice] dropped")]


def test_temporary_tables_go_with_the_session(s3_engine: Engine, local_s3: LocalS3) -> None:
    conn = Connection(s3_engine.open_session("tester"))
    session_id = conn.session.id  # the location is named after it
    conn.cursor().execute("ALTER SESSION SET `store.format` = 'parquet'")
    assert rows(conn, f"CREATE TEMPORARY TABLE tt AS {SOURCE}") == [("0_0", 3)]
    assert rows(conn, "SELECT COUNT(*) FROM tt") == [(3,)]
    keys = local_s3.keys(BUCKET, f"tmp/{session_id}/")
    assert f"tmp/{session_id}/.auger-owner" in keys
    assert any(k.endswith(".parquet") for k in keys)
    rows(conn, f"CREATE TEMPORARY TABLE tt2 AS {SOURCE}")
    assert rows(conn, "DROP TABLE tt2") == [(True, "Temporary table [tt2] dropped")]
    conn.close()
    assert _data_keys(local_s3, f"tmp/{session_id}/") == []


def test_sweep_removes_what_a_dead_server_left(s3_engine: Engine, local_s3: LocalS3) -> None:
    now = 1_000_000.0
    dead = object_tables.ServerLease("dead-server", [ROOT], interval=10, clock=lambda: now)
    live = object_tables.ServerLease("live-server", [ROOT], interval=10, clock=lambda: now + 25)
    dead.refresh()
    live.refresh()
    for owner in ("dead-server", "live-server", "no-lease-server"):
        object_tables.write_json(f"{ROOT}/sess-{owner}/.auger-owner", {"engine_id": owner})
        local_s3.put(BUCKET, f"tmp/sess-{owner}/t/0_0_0.json", "{}\n")
        object_tables.begin(f"{ROOT}/ctas-{owner}", owner, "CREATE TABLE")
        local_s3.put(BUCKET, f"tmp/ctas-{owner}/0_0_0.json", "{}\n")
    # 31 s after the dead lease was written: three intervals of 10 s have passed
    removed = object_tables.sweep_workspace(ROOT, [s3_engine.id], clock=lambda: now + 31)
    assert sorted(removed) == sorted(
        f"{ROOT}/{kind}-{owner}"
        for kind in ("sess", "ctas")
        for owner in ("dead-server", "no-lease-server")
    )
    left = local_s3.keys(BUCKET, "tmp/")
    assert not any("dead-server" in k or "no-lease-server" in k for k in left)
    assert "tmp/ctas-live-server/0_0_0.json" in left
    assert "tmp/sess-live-server/t/0_0_0.json" in left
    assert "tmp/.auger-servers/live-server.json" in left
    assert f"tmp/.auger-servers/{s3_engine.id}.json" in left  # this engine's own lease
    live.stop()
    object_tables.remove_table(f"{ROOT}/ctas-live-server", "test")
    object_tables.remove_table(f"{ROOT}/sess-live-server", "test")


@pytest.fixture
def lease_root(local_s3: LocalS3) -> str:
    """``ROOT``, reachable without the engine (the lease tests need no Spark, and run alone or
    under ``-m "not spark"`` too): the bucket exists and its settings are registered."""
    local_s3.client.create_bucket(Bucket=BUCKET)  # the same owner again: a no-op
    remote = fs.config_for_plugin(ROOT, local_s3.plugin(BUCKET)["config"])
    assert remote is not None
    fs.register(remote)
    return ROOT


def test_lease_is_refreshed_and_removed_at_stop(local_s3: LocalS3, lease_root: str) -> None:
    ticks = iter(range(1, 1000))
    lease = object_tables.ServerLease("ticking", [ROOT], interval=0.05, clock=lambda: next(ticks))
    lease.start()
    try:
        first = object_tables.read_json(f"{ROOT}/.auger-servers/ticking.json")["written"]
        deadline = time.monotonic() + 60  # a bound for a loaded machine; usually 0.05 s
        while time.monotonic() < deadline:
            again = object_tables.read_json(f"{ROOT}/.auger-servers/ticking.json")
            if again and again["written"] > first:
                break
            time.sleep(0.05)
        assert again["written"] > first
    finally:
        lease.stop()
    assert "tmp/.auger-servers/ticking.json" not in local_s3.keys(BUCKET, "tmp/")


def test_a_refresh_under_way_at_stop_does_not_outlive_the_delete(
    local_s3: LocalS3, lease_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = object_tables.ServerLease("slow", [ROOT], interval=30)
    lease.start()
    uploading = threading.Event()
    real_write = object_tables.write_json

    def slow_write(path: str, body: dict[str, object]) -> None:
        uploading.set()
        time.sleep(0.5)  # the upload completes after stop() was called
        real_write(path, body)

    monkeypatch.setattr(object_tables, "write_json", slow_write)
    refresher = threading.Thread(target=lease.refresh)
    refresher.start()
    assert uploading.wait(60)
    lease.stop()
    refresher.join()
    assert "tmp/.auger-servers/slow.json" not in local_s3.keys(BUCKET, "tmp/")
    lease.refresh()  # a refresh after stop writes nothing
    assert "tmp/.auger-servers/slow.json" not in local_s3.keys(BUCKET, "tmp/")


def test_other_sessions_cannot_reach_a_temporary_location(
    s3_engine: Engine, s3: Connection, local_s3: LocalS3
) -> None:
    owner = Connection(s3_engine.open_session("owner"))
    try:
        owner.cursor().execute("ALTER SESSION SET `store.format` = 'json'")
        rows(owner, f"CREATE TEMPORARY TABLE mine AS {SOURCE}")
        location = owner.session.id
        # another session of this server
        msg = error(s3, f"SELECT * FROM s3.tmp.`{location}`")
        assert msg.startswith("PERMISSION ERROR: Table [")
        assert "temporary location of another session" in msg
        # a session of another server on the same bucket knows it by its owner marker
        other = Engine(
            {
                "storage": {"s3": local_s3.plugin(BUCKET)},
                "exec": {"default_temporary_workspace": "s3.tmp"},
            }
        )
        try:
            c = Connection(other.open_session("someone"))
            assert "temporary location of another session" in error(
                c, f"SELECT * FROM s3.tmp.`{location}`"
            )
            c.close()
        finally:
            other.shutdown()
        assert rows(owner, "SELECT COUNT(*) FROM mine") == [(3,)]
    finally:
        owner.close()
