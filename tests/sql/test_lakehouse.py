"""Iceberg and Delta tables read as tables, not as the files in their directories: the
snapshot's or version's data files only, the table's own schema, time travel, metadata tables,
and errors that name the table and the snapshot or version."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.types import LongType, StringType

from auger.errors import UserError
from tests.sql.delta_deletion_vectors import delete_positions
from tests.sql.helpers import error, rows
from tests.sql.helpers import names as names_of
from tests.sql.iceberg_deletes import add_equality_deletes, add_position_deletes


class Iceberg:
    """An Iceberg table with history: two appends, a delete that rewrites a file, a column
    added, one more append."""

    def __init__(self, root: Path) -> None:
        catalog = SqlCatalog("test", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
        catalog.create_namespace("ns")
        table = catalog.create_table(
            "ns.people", schema=pa.schema([("id", pa.int64()), ("name", pa.string())])
        )
        table.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}))
        self.first = table.current_snapshot().snapshot_id
        self.first_ms = table.current_snapshot().timestamp_ms
        time.sleep(0.01)
        table.append(pa.table({"id": [4, 5], "name": ["d", "e"]}))
        self.second = table.current_snapshot().snapshot_id
        table.delete("id = 2")
        with table.update_schema() as update:
            update.add_column("score", LongType())
        table.append(pa.table({"id": [6], "name": ["f"], "score": [60]}))
        self.last = table.current_snapshot().snapshot_id
        self.location = str(root / "ns" / "people")
        self.files = sorted(str(p) for p in (root / "ns" / "people" / "data").glob("*.parquet"))


class Delta:
    """A partitioned Delta table: a write, an append, a delete that removes a file."""

    def __init__(self, root: Path) -> None:
        self.location = str(root)
        write_deltalake(self.location, pa.table({"id": [1, 2, 3], "p": ["x", "y", "x"]}),
                        partition_by=["p"])  # fmt: skip
        time.sleep(0.01)
        write_deltalake(self.location, pa.table({"id": [4], "p": ["y"]}), mode="append")
        self.version1_ms = int(time.time() * 1000)
        time.sleep(0.05)
        DeltaTable(self.location).delete("id = 1")


@pytest.fixture(scope="module")
def lake(data_dir: Path) -> dict[str, Any]:
    root = data_dir / "lake"
    if root.exists():
        shutil.rmtree(root)
    (root / "ice").mkdir(parents=True)
    return {"ice": Iceberg(root / "ice"), "delta": Delta(root / "delta")}


ICE = "dfs.data.`lake/ice/ns/people`"
DELTA = "dfs.data.`lake/delta`"


# ------------------------------------------------------------------------------------ Iceberg
def test_iceberg_reads_the_current_snapshot_with_the_table_schema(conn: Any, lake: Any) -> None:
    got = rows(conn, f"SELECT * FROM {ICE} ORDER BY id")
    # the deleted row's old file is still on disk; the column added later reads NULL in the
    # files written before it
    assert got == [(1, "a", None), (3, "c", None), (4, "d", None), (5, "e", None), (6, "f", 60)]
    assert len(lake["ice"].files) > 3  # the directory does hold the removed file


def test_iceberg_time_travel_by_snapshot_id_and_time(conn: Any, lake: Any) -> None:
    ice = lake["ice"]
    table = "dfs.data.`lake/ice/ns/people`"
    first = rows(conn, f"SELECT * FROM table({table}(snapshotId => {ice.first})) ORDER BY id")
    assert first == [(1, "a"), (2, "b"), (3, "c")]  # and the schema of that snapshot
    as_of = rows(
        conn,
        f"SELECT COUNT(*) FROM table({table}(type => 'iceberg', "
        f"snapshotAsOfTime => {ice.first_ms}))",
    )
    assert as_of == [(3,)]
    appended = rows(
        conn,
        f"SELECT id FROM table({table}(fromSnapshotId => {ice.first}, "
        f"toSnapshotId => {ice.second})) ORDER BY id",
    )
    assert appended == [(4,), (5,)]


def test_iceberg_unknown_snapshot_is_a_validation_error(conn: Any, lake: Any) -> None:
    text = error(conn, f"SELECT * FROM table({ICE}(snapshotId => 42))")
    assert "VALIDATION ERROR: Snapshot [42] not found in Iceberg table" in text
    assert "lake/ice/ns/people" in text
    assert str(lake["ice"].last) in text  # the snapshots there are
    assert "Traceback" not in text and "pyiceberg" not in text
    text = error(conn, f"SELECT * FROM table({ICE}(snapshotAsOfTime => 1000))")
    assert "has no snapshot as of [1000]" in text


def test_iceberg_metadata_tables(conn: Any, lake: Any) -> None:
    ice = lake["ice"]
    snapshots = rows(conn, f"SELECT snapshot_id, operation FROM {ICE[:-1]}#snapshots`")
    assert snapshots[0][0] == ice.first and snapshots[-1][0] == ice.last
    assert {op for _, op in snapshots} >= {"append"}
    assert rows(conn, f"SELECT COUNT(*) FROM {ICE[:-1]}#history`") == [(len(snapshots),)]
    files = rows(conn, f"SELECT SUM(record_count) FROM {ICE[:-1]}#files`")
    assert files == [(5,)]
    for name in ("manifests", "partitions", "entries"):
        assert rows(conn, f"SELECT COUNT(*) FROM {ICE[:-1]}#{name}`")[0][0] >= 1
    text = error(conn, f"SELECT * FROM {ICE[:-1]}#nonesuch`")
    assert "Unknown Iceberg metadata table [nonesuch]" in text


def test_iceberg_version_hint_chooses_the_metadata_file(
    lake: Any, make_conn: Any, data_dir: Path
) -> None:
    ice = lake["ice"]
    copy = data_dir / "lake" / "hinted"
    shutil.copytree(ice.location, copy)
    metadata = sorted((copy / "metadata").glob("*.metadata.json"))
    # the first metadata file with a snapshot is version 1's: point the hint at it
    (copy / "metadata" / "v1.metadata.json").write_bytes(metadata[1].read_bytes())
    (copy / "metadata" / "version-hint.text").write_text("1")
    conn = make_conn()
    assert rows(conn, "SELECT COUNT(*) FROM dfs.data.`lake/hinted`") == [(3,)]


def test_iceberg_unreadable_metadata_names_the_file(
    lake: Any, make_conn: Any, data_dir: Path
) -> None:
    copy = data_dir / "lake" / "broken"
    shutil.copytree(lake["ice"].location, copy)
    (copy / "metadata" / "99999-broken.metadata.json").write_text("{not json")
    text = error(make_conn(), "SELECT * FROM dfs.data.`lake/broken`")
    assert "VALIDATION ERROR: Iceberg table" in text and "cannot be read" in text
    assert "99999-broken.metadata.json" in text


def test_iceberg_table_around_the_scan(conn: Any, lake: Any, tmp_workspace: Path) -> None:
    assert rows(conn, f"DESCRIBE {ICE}") == [
        ("id", "BIGINT", "YES"),
        ("name", "CHARACTER VARYING", "YES"),
        ("score", "BIGINT", "YES"),
    ]
    names = rows(conn, f"SELECT DISTINCT filename FROM {ICE}")
    assert names and all(n.endswith(".parquet") for (n,) in names)
    rows(conn, f"CREATE VIEW dfs.tmp.people_v AS SELECT id, name FROM {ICE} WHERE id > 3")
    try:
        assert rows(conn, "SELECT COUNT(*) FROM dfs.tmp.people_v") == [(3,)]
    finally:
        rows(conn, "DROP VIEW dfs.tmp.people_v")
    rows(conn, f"CREATE TABLE dfs.tmp.people_copy AS SELECT * FROM {ICE}")
    try:
        assert rows(conn, "SELECT SUM(score), COUNT(*) FROM dfs.tmp.people_copy") == [(60, 5)]
    finally:
        rows(conn, "DROP TABLE dfs.tmp.people_copy")
    typed = rows(
        conn,
        f"SELECT id FROM table({ICE}(schema => 'inline=(id varchar)')) WHERE id = '6'",
    )
    assert typed == [("6",)]


def test_iceberg_through_the_data_source(spark: Any, lake: Any) -> None:
    df = spark.read.format("auger").load(lake["ice"].location)
    assert sorted(r["id"] for r in df.collect()) == [1, 3, 4, 5, 6]
    old = spark.read.format("auger").option("snapshotId", lake["ice"].first)
    assert old.load(lake["ice"].location).count() == 3


# -------------------------------------------------------------------------------------- Delta
def test_delta_reads_only_the_live_files(conn: Any, lake: Any) -> None:
    # id 1's file was removed by the delete but is still on disk
    assert rows(conn, f"SELECT id, p FROM {DELTA} ORDER BY id") == [(2, "y"), (3, "x"), (4, "y")]
    on_disk = list(Path(lake["delta"].location).rglob("*.parquet"))
    assert len(on_disk) == 4


def test_delta_partition_column_filters(conn: Any, lake: Any) -> None:
    assert rows(conn, f"SELECT id FROM {DELTA} WHERE p = 'y' ORDER BY id") == [(2,), (4,)]
    # the table's own column order: a partition column is where the schema has it
    assert rows(conn, f"SELECT * FROM {DELTA} WHERE id = 3") == [(3, "x")]


def test_delta_partition_columns_have_the_tables_types(make_conn: Any, data_dir: Path) -> None:
    path = str(data_dir / "lake" / "typed_parts")
    shutil.rmtree(path, ignore_errors=True)
    stamp = dt.datetime(2024, 1, 1, 10, 30)
    write_deltalake(
        path,
        pa.table(
            {
                "id": [1, 2, 3],
                "y": pa.array([2024, 2025, None], pa.int32()),
                "day": [dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 2)],
                "at": [stamp, None, stamp],
                "tag": ["a b", "c:d", "e"],
            }
        ),
        partition_by=["y", "day", "at", "tag"],
    )
    conn = make_conn()
    name = "dfs.data.`lake/typed_parts`"
    # values from the log, not the (escaped) directory names, as the table types them
    assert rows(conn, f"SELECT * FROM {name} ORDER BY id") == [
        (1, 2024, dt.date(2024, 1, 1), stamp, "a b"),
        (2, 2025, dt.date(2024, 1, 2), None, "c:d"),
        (3, None, dt.date(2024, 1, 2), stamp, "e"),
    ]
    assert rows(conn, f"SELECT id, y + 1 FROM {name} WHERE y = 2024") == [(1, 2025)]
    assert rows(conn, f"SELECT id FROM {name} WHERE tag = 'c:d'") == [(2,)]
    assert rows(conn, f"SELECT typeof(y), typeof(`day`) FROM {name} LIMIT 1") == [("INT", "DATE")]


def test_delta_time_travel_by_version_and_timestamp(conn: Any, lake: Any) -> None:
    first = rows(conn, f"SELECT id FROM table({DELTA}(version => 0)) ORDER BY id")
    assert first == [(1,), (2,), (3,)]
    at = lake["delta"].version1_ms
    then = rows(
        conn, f"SELECT id FROM table({DELTA}(type => 'delta', timestamp => {at})) ORDER BY id"
    )
    assert then == [(1,), (2,), (3,), (4,)]


def test_delta_unknown_version_is_a_validation_error(conn: Any, lake: Any) -> None:
    text = error(conn, f"SELECT * FROM table({DELTA}(version => 99))")
    assert "VALIDATION ERROR: Version [99] not found in Delta table" in text
    assert "Latest version: 2" in text
    assert "Traceback" not in text and "kernel" not in text.lower()


def test_delta_checkpoint_is_read(lake: Any, make_conn: Any, data_dir: Path) -> None:
    copy = data_dir / "lake" / "checkpointed"
    shutil.copytree(lake["delta"].location, copy)
    table = DeltaTable(str(copy))
    table.create_checkpoint()
    write_deltalake(str(copy), pa.table({"id": [5], "p": ["x"]}), mode="append")
    for name in os.listdir(copy / "_delta_log"):
        if (
            name.startswith("0000000000000000000")
            and name.endswith(".json")
            and name < "00000000000000000002.json"
        ):
            os.remove(copy / "_delta_log" / name)  # only the checkpoint knows versions 0-1
    got = rows(make_conn(), "SELECT id FROM dfs.data.`lake/checkpointed` ORDER BY id")
    assert got == [(2,), (3,), (4,), (5,)]


def test_delta_column_mapping_reads_the_physical_columns(make_conn: Any, data_dir: Path) -> None:
    path = str(data_dir / "lake" / "mapped")
    write_deltalake(path, pa.table({"id": [1, 2], "name": ["a", "b"]}),
                    configuration={"delta.columnMapping.mode": "name"})  # fmt: skip
    write_deltalake(path, pa.table({"id": [3], "name": ["c"]}), mode="append")
    conn = make_conn()
    # the files name the columns col-<uuid>; the table's names read them
    got = rows(conn, "SELECT * FROM dfs.data.`lake/mapped` ORDER BY id")
    assert got == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(conn, "SELECT name FROM dfs.data.`lake/mapped` WHERE id >= 2 ORDER BY id") == [
        ("b",),
        ("c",),
    ]


def test_delta_column_mapping_reads_struct_members_by_physical_name(
    make_conn: Any, data_dir: Path
) -> None:
    path = data_dir / "lake" / "mapped_struct"
    data = pa.table({"id": [1, 2, 3], "s": [{"x": 1, "y": "p"}, None, {"x": 3, "y": "r"}]})
    write_deltalake(str(path), data, configuration={"delta.columnMapping.mode": "name"})
    schema = pq.read_schema(next(path.rglob("*.parquet")))
    inner = schema.field(1).type
    assert schema.names[1] != "s" and inner[0].name != "x"  # the files hold physical names
    conn = make_conn()
    name = "dfs.data.`lake/mapped_struct`"
    assert rows(conn, f"SELECT t.s.x, t.s.y FROM {name} t ORDER BY id") == [
        (1, "p"),
        (None, None),
        (3, "r"),
    ]
    assert rows(conn, f"SELECT id FROM {name} t WHERE t.s.y = 'r'") == [(3,)]
    got = rows(conn, f"SELECT * FROM {name} ORDER BY id")
    assert [r[0] for r in got] == [1, 2, 3]
    assert "x" in str(got[0][1]) and "p" in str(got[0][1])


def test_delta_column_mapping_of_structs_in_a_list_and_a_map(
    make_conn: Any, data_dir: Path
) -> None:
    path = data_dir / "lake" / "mapped_list"
    member = pa.struct([("x", pa.int64()), ("y", pa.string())])
    data = pa.table(
        {
            "id": [1, 2],
            "l": [[{"x": 1, "y": "p"}, None], []],
            "m": [[("k", {"x": 10, "y": "q"})], None],
        },
        pa.schema(
            [("id", pa.int64()), ("l", pa.list_(member)), ("m", pa.map_(pa.string(), member))]
        ),
    )
    write_deltalake(str(path), data, configuration={"delta.columnMapping.mode": "name"})
    inner = pq.read_schema(next(path.rglob("*.parquet"))).field(1).type.value_type
    assert "x" not in inner.names  # the members in the files have physical names
    conn = make_conn()
    name = "dfs.data.`lake/mapped_list`"
    assert rows(conn, f"SELECT t.l[0].x, t.l[0].y FROM {name} t WHERE id = 1") == [(1, "p")]
    got = rows(conn, f"SELECT id, l, m FROM {name} ORDER BY id")
    assert got[0][1][0] == {"x": 1, "y": "p"}, got
    assert got[0][2] == [("k", {"x": 10, "y": "q"})], got


def _fresh_catalog(root: Path) -> SqlCatalog:
    """A SQL catalog on SQLite in an emptied ``root``, with the namespace ``ns``."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    catalog = SqlCatalog("m", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("ns")
    return catalog


def test_iceberg_renamed_struct_member_reads_by_field_id(make_conn: Any, data_dir: Path) -> None:
    root = data_dir / "lake" / "renamed_member"
    catalog = _fresh_catalog(root)
    struct = pa.struct([("a", pa.int64()), ("c", pa.string())])
    table = catalog.create_table("ns.t", schema=pa.schema([("id", pa.int64()), ("s", struct)]))
    first = {"id": [1, 2], "s": [{"a": 10, "c": "u"}, {"a": 20, "c": "v"}]}
    table.append(pa.table(first, table.schema().as_arrow()))
    with table.update_schema() as update:
        update.rename_column("s.a", "b")
    table.append(pa.table({"id": [3], "s": [{"b": 30, "c": "w"}]}, table.schema().as_arrow()))
    conn = make_conn()
    name = "dfs.data.`lake/renamed_member/ns/t`"
    # the first file names the member `a`; its field id says it is `b` now
    assert rows(conn, f"SELECT t.s.b, t.s.c FROM {name} t ORDER BY id") == [
        (10, "u"),
        (20, "v"),
        (30, "w"),
    ]
    assert rows(conn, f"SELECT id FROM {name} t WHERE t.s.b >= 20 ORDER BY id") == [(2,), (3,)]
    got = rows(conn, f"SELECT * FROM {name} ORDER BY id")
    assert [r[0] for r in got] == [1, 2, 3]
    assert all("b" in str(r[1]) and "'a'" not in str(r[1]) for r in got), got


def test_iceberg_renamed_members_of_structs_in_a_list_and_a_map(
    make_conn: Any, data_dir: Path
) -> None:
    root = data_dir / "lake" / "renamed_nested"
    catalog = _fresh_catalog(root)
    element = pa.struct([("a", pa.int64()), ("c", pa.string())])
    value = pa.struct([("a", pa.int64())])
    schema = pa.schema(
        [("id", pa.int64()), ("l", pa.list_(element)), ("m", pa.map_(pa.string(), value))]
    )
    table = catalog.create_table("ns.t", schema=schema)
    first = {"id": [1], "l": [[{"a": 1, "c": "x"}, {"a": 2, "c": "y"}]], "m": [[("k", {"a": 10})]]}
    table.append(pa.table(first, table.schema().as_arrow()))
    with table.update_schema() as update:
        update.rename_column("l.element.a", "b")
        update.rename_column("m.value.a", "b")
    later = {"id": [2], "l": [[{"b": 3, "c": "z"}]], "m": [[("k", {"b": 20})]]}
    table.append(pa.table(later, table.schema().as_arrow()))
    conn = make_conn()
    name = "dfs.data.`lake/renamed_nested/ns/t`"
    # the first file names the members `a`; their field ids say they are `b` now
    assert rows(conn, f"SELECT id, t.l[0].b, t.l[1].b, t.l[0].c FROM {name} t ORDER BY id") == [
        (1, 1, 2, "x"),
        (2, 3, None, "z"),
    ]
    got = rows(conn, f"SELECT id, m FROM {name} ORDER BY id")
    assert [r[1] for r in got] == [[("k", {"b": 10})], [("k", {"b": 20})]], got


def test_iceberg_renamed_and_reused_column_names_read_by_field_id(
    make_conn: Any, data_dir: Path
) -> None:
    root = data_dir / "lake" / "renamed"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    catalog = SqlCatalog("r", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("ns")
    table = catalog.create_table(
        "ns.t", schema=pa.schema([("id", pa.int64()), ("a", pa.string()), ("b", pa.int64())])
    )
    table.append(pa.table({"id": [1, 2], "a": ["x", "y"], "b": [10, 20]}))
    with table.update_schema() as update:
        update.rename_column("a", "label")
    with table.update_schema() as update:
        update.delete_column("b")
    with table.update_schema() as update:
        update.add_column("b", StringType())  # the old name, a new column
    table.append(pa.table({"id": [3], "label": ["z"], "b": ["new"]}))
    conn = make_conn()
    name = "dfs.data.`lake/renamed/ns/t`"
    # the first file holds `a` and the old `b`: `a` is `label` now, the old `b` is gone
    assert rows(conn, f"SELECT * FROM {name} ORDER BY id") == [
        (1, "x", None),
        (2, "y", None),
        (3, "z", "new"),
    ]
    assert rows(conn, f"SELECT label FROM {name} WHERE label > 'x' ORDER BY id") == [
        ("y",),
        ("z",),
    ]
    assert rows(conn, f"SELECT COUNT(*) FROM {name} WHERE b IS NULL") == [(2,)]


def test_a_lakehouse_format_switched_off_reads_the_directory(lake: Any) -> None:
    from auger.formats.lakehouse import table_kind

    assert table_kind(lake["delta"].location) == "delta"
    assert table_kind(lake["ice"].location) == "iceberg"
    assert table_kind(str(Path(lake["ice"].location) / "data")) is None


def test_read_snapshot_errors_are_user_errors(tmp_path: Path) -> None:
    from auger.formats.lakehouse import read_snapshot

    (tmp_path / "metadata").mkdir()
    with pytest.raises(UserError) as info:
        read_snapshot("iceberg", str(tmp_path), {})
    assert "has no metadata file" in str(info.value)


def test_information_schema_lists_a_lakehouse_tables_columns(
    make_conn: Any, data_dir: Path
) -> None:
    path = data_dir / "listed_delta"
    write_deltalake(str(path), pa.table({"id": [1], "label": ["a"]}))
    conn = make_conn()
    assert ("dfs.data", "listed_delta") in rows(conn, "SHOW TABLES IN dfs.data")
    got = rows(
        conn,
        "SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.`COLUMNS` "
        "WHERE TABLE_SCHEMA = 'dfs.data' AND TABLE_NAME = 'listed_delta' ORDER BY ORDINAL_POSITION",
    )
    assert got == [("id", "BIGINT"), ("label", "CHARACTER VARYING")]


def test_statistics_rule_files_out(make_conn: Any, data_dir: Path, lake: Any) -> None:
    # Iceberg: three appends, three files with id ranges [1,3], [4,5], [6,6]
    conn = make_conn()
    cur = conn.cursor()
    cur.execute(f"SELECT name FROM {ICE} WHERE id >= 6")
    assert cur.fetchall() == [("f",)]
    (stats,) = cur.scan_statistics
    assert stats["files_pruned"] >= 2 and stats["files_listed"] == 3, stats
    # Delta: a partition value and a column's bounds
    cur.execute(f"SELECT id FROM {DELTA} WHERE p = 'x' AND id > 2")
    assert cur.fetchall() == [(3,)]
    (stats,) = cur.scan_statistics
    assert stats["files_pruned"] >= 2, stats


def test_iceberg_position_deletes_leave_their_rows_out(make_conn: Any, data_dir: Path) -> None:
    root = data_dir / "lake" / "merge_on_read"
    catalog = _fresh_catalog(root)
    table = catalog.create_table(
        "ns.t",
        schema=pa.schema([("id", pa.int64()), ("v", pa.string())]),
        properties={"write.parquet.row-group-limit": "700"},  # several row groups a file
    )
    table.append(pa.table({"id": list(range(5000)), "v": [f"r{i}" for i in range(5000)]}))
    table.append(pa.table({"id": [9000, 9001], "v": ["x", "y"]}))
    data = sorted(t.file.file_path for t in table.scan().plan_files())
    first = next(p for p in data if pq.read_metadata(p.removeprefix("file://")).num_rows > 2)
    assert pq.read_metadata(first.removeprefix("file://")).num_row_groups > 3
    gone = [0, 1, 699, 700, 701, 2500, 4999]
    add_position_deletes(table, first, gone, str(root / "deletes-1.parquet"))
    table = catalog.load_table("ns.t")
    expected = table.scan().to_arrow()  # pyiceberg applies the deletes itself
    assert expected.num_rows == 5002 - len(gone)
    conn = make_conn()
    name = "dfs.data.`lake/merge_on_read/ns/t`"
    assert rows(conn, f"SELECT COUNT(*), SUM(id) FROM {name}") == [
        (expected.num_rows, sum(expected.column("id").to_pylist()))
    ]
    assert rows(conn, f"SELECT id FROM {name} WHERE id IN (1, 2, 700, 702) ORDER BY id") == [
        (2,),
        (702,),
    ]
    # the snapshot before the deletes still has every row
    before = table.history()[-2].snapshot_id
    got = rows(conn, f"SELECT COUNT(*) FROM table({name}(snapshotId => {before}))")
    assert got == [(5002,)]
    # an equality delete beside them: the snapshot is planned from its manifests, and both
    # kinds apply
    keys = pa.table({"id": pa.array([9000, 2500], pa.int64())})
    add_equality_deletes(table, keys, str(root / "deletes-2.parquet"))
    gone_too = set(keys.column("id").to_pylist())
    left = [i for i in expected.column("id").to_pylist() if i not in gone_too]
    assert rows(conn, f"SELECT COUNT(*), SUM(id) FROM {name}") == [(len(left), sum(left))]
    assert rows(conn, f"SELECT id FROM {name} WHERE id IN (1, 2, 9000, 9001) ORDER BY id") == [
        (2,),
        (9001,),
    ]


def _iceberg_table(root: Path, schema: Any, partition_spec: Any = None) -> Any:
    """An empty Iceberg table ``ns.t`` in a SQL catalog under ``root`` (emptied first)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    catalog = SqlCatalog("e", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("ns")
    if partition_spec is None:
        return catalog.create_table("ns.t", schema=schema)
    return catalog.create_table("ns.t", schema=schema, partition_spec=partition_spec)


def _without(data: pa.Table, keys: pa.Table) -> list[tuple[Any, ...]]:
    """The rows of ``data`` whose values in ``keys``'s columns are none of ``keys``'s rows
    (None equal to None, as Iceberg's equality deletes compare), in ``data``'s order."""
    deleted = set(zip(*(keys.column(c).to_pylist() for c in keys.column_names), strict=True))
    key_of = zip(*(data.column(c).to_pylist() for c in keys.column_names), strict=True)
    return [r for r, k in zip(_tuples(data), key_of, strict=True) if k not in deleted]


def _tuples(data: pa.Table) -> list[tuple[Any, ...]]:
    return list(zip(*(c.to_pylist() for c in data.columns), strict=True))


def _in_order(found: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(found, key=lambda r: tuple((v is None, v) for v in r))


def test_iceberg_equality_deletes_leave_their_keys_out(make_conn: Any, data_dir: Path) -> None:
    root = data_dir / "lake" / "equality"
    table = _iceberg_table(root, pa.schema([("id", pa.int64()), ("v", pa.string())]))
    table.append(pa.table({"id": [1, 2, 3, 4, None, 2], "v": ["a", "b", "c", "d", "n", "b2"]}))
    table.append(pa.table({"id": [5, 6], "v": ["e", "f"]}))
    before = table.current_snapshot().snapshot_id
    data = table.scan().to_arrow()  # pyiceberg's rows of the table before the delete
    keys = pa.table({"id": pa.array([2, 5, None, 77], pa.int64())})
    add_equality_deletes(table, keys, str(root / "eq-1.parquet"))
    # appended after the delete (a later sequence number): its key 5 is not deleted
    table.append(pa.table({"id": [5], "v": ["e-again"]}))
    later = [(5, "e-again")]
    expected = _in_order(_without(data, keys) + later)
    assert (2, "b") in _tuples(data) and (2, "b") not in expected
    conn = make_conn()
    name = "dfs.data.`lake/equality/ns/t`"
    cur = conn.cursor()  # through the DB-API: rows and their description
    cur.execute(f"SELECT id, v FROM {name}")
    assert [d[0] for d in cur.description] == ["id", "v"]
    assert _in_order(cur.fetchall()) == expected
    # the key column not projected: read for the filter, not returned
    assert names_of(conn, f"SELECT v FROM {name}") == ["v"]
    assert sorted(r[0] for r in rows(conn, f"SELECT v FROM {name}")) == sorted(
        v for _, v in expected
    )
    assert rows(conn, f"SELECT COUNT(*) FROM {name}") == [(len(expected),)]
    assert rows(conn, f"SELECT v FROM {name} WHERE id = 5") == [("e-again",)]
    # the manifests' statistics still rule files out: ids 1 to 4 are in the first file only
    cur.execute(f"SELECT v FROM {name} WHERE id = 1")
    assert cur.fetchall() == [("a",)]
    (stats,) = cur.scan_statistics
    assert stats["files_listed"] == 3 and stats["files_pruned"] == 2, stats
    # the snapshot before the delete still has every row
    got = rows(conn, f"SELECT id, v FROM table({name}(snapshotId => {before}))")
    assert _in_order(got) == _in_order(_tuples(data))


def test_iceberg_equality_deletes_by_several_columns_with_nulls(
    make_conn: Any, data_dir: Path
) -> None:
    root = data_dir / "lake" / "equality_pairs"
    schema = pa.schema([("a", pa.int64()), ("b", pa.string()), ("v", pa.int64())])
    table = _iceberg_table(root, schema)
    a = [1, 1, 2, 2, None, None, 3]
    b = ["x", "y", None, "z", None, "x", "x"]
    table.append(pa.table({"a": a, "b": b, "v": list(range(len(a)))}, schema=schema))
    data = table.scan().to_arrow()
    keys = pa.table({"a": pa.array([1, 2, None, 3], pa.int64()), "b": ["x", None, None, "q"]})
    add_equality_deletes(table, keys, str(root / "eq-pairs.parquet"))
    expected = _without(data, keys)
    # (1, x), (2, NULL) and (NULL, NULL) are gone; (1, y), (2, z), (NULL, x), (3, x) stay
    assert len(expected) == len(a) - 3
    conn = make_conn()
    name = "dfs.data.`lake/equality_pairs/ns/t`"
    assert _in_order(rows(conn, f"SELECT a, b, v FROM {name}")) == _in_order(expected)
    assert sorted(r[0] for r in rows(conn, f"SELECT v FROM {name}")) == sorted(
        r[2] for r in expected
    )


def test_iceberg_equality_deletes_in_one_partition(make_conn: Any, data_dir: Path) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import NestedField

    root = data_dir / "lake" / "equality_parts"
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "p", StringType(), required=False),
    )
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "p"))
    table = _iceberg_table(root, schema, spec)
    table.append(pa.table({"id": [1, 2, 1, 2], "p": ["a", "a", "b", "b"]}))
    data = table.scan().to_arrow()
    keys = pa.table({"id": pa.array([1], pa.int64())})
    add_equality_deletes(table, keys, str(root / "eq-a.parquet"), partition=Record("a"))
    # only partition a's row with key 1 is gone: the delete is scoped to its partition
    in_a = data.filter(pc.equal(data.column("p"), "a"))
    in_b = data.filter(pc.equal(data.column("p"), "b"))
    expected = _in_order(_without(in_a, keys) + _tuples(in_b))
    assert len(expected) == data.num_rows - 1
    conn = make_conn()
    name = "dfs.data.`lake/equality_parts/ns/t`"
    assert _in_order(rows(conn, f"SELECT id, p FROM {name}")) == expected


def test_delta_deletion_vectors_leave_their_rows_out(make_conn: Any, data_dir: Path) -> None:
    path = data_dir / "lake" / "vectors"
    shutil.rmtree(path, ignore_errors=True)
    write_deltalake(str(path), pa.table({"id": list(range(10)), "p": ["a"] * 5 + ["b"] * 5}),
                    partition_by=["p"],
                    configuration={"delta.enableDeletionVectors": "true"})  # fmt: skip
    first = sorted(DeltaTable(str(path)).file_uris())[0]
    data_file = str(Path(first.removeprefix("file://")).relative_to(path))
    delete_positions(path, 1, data_file, [1, 3])
    # deltalake reads the vector as deleting those rows
    vectors = pa.table(DeltaTable(str(path)).deletion_vectors())
    assert vectors.column("selection_vector")[0].as_py()[:4] == [True, False, True, False]
    conn = make_conn()
    name = "dfs.data.`lake/vectors`"
    assert rows(conn, f"SELECT id FROM {name} WHERE p = 'a' ORDER BY id") == [(0,), (2,), (4,)]
    assert rows(conn, f"SELECT COUNT(*) FROM {name}") == [(8,)]
    got = rows(conn, f"SELECT COUNT(*) FROM table({name}(version => 0))")
    assert got == [(10,)]


def test_iceberg_equality_deletes_keyed_by_a_struct_member_are_refused(
    make_conn: Any, data_dir: Path
) -> None:
    root = data_dir / "lake" / "equality_member"
    s = pa.struct([("a", pa.int64())])
    table = _iceberg_table(root, pa.schema([("id", pa.int64()), ("s", s)]))
    table.append(
        pa.table({"id": [1, 2], "s": [{"a": 1}, {"a": 2}]}, schema=table.schema().as_arrow())
    )
    add_equality_deletes(
        table, pa.table({"s.a": pa.array([1], pa.int64())}), str(root / "m.parquet")
    )
    text = error(make_conn(), "SELECT * FROM dfs.data.`lake/equality_member/ns/t`")
    assert "UNSUPPORTED_OPERATION ERROR" in text and "equality deletes" in text
    assert "equality_member/ns/t" in text and "m.parquet" in text


def test_iceberg_equality_deletes_follow_a_renamed_key_column(
    make_conn: Any, data_dir: Path
) -> None:
    root = data_dir / "lake" / "equality_renamed"
    table = _iceberg_table(root, pa.schema([("id", pa.int64()), ("v", pa.string())]))
    table.append(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
    data = table.scan().to_arrow()
    keys = pa.table({"id": pa.array([2], pa.int64())})
    add_equality_deletes(table, keys, str(root / "eq-1.parquet"))
    expected = _in_order(_without(data, keys))
    # the files (data and deletes) name the key `id`; the table now calls it `key`
    with table.update_schema() as update:
        update.rename_column("id", "key")
    got = rows(make_conn(), "SELECT key, v FROM dfs.data.`lake/equality_renamed/ns/t`")
    assert _in_order(got) == expected
