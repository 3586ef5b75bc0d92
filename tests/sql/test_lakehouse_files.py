"""Iceberg tables whose data files are Avro and ORC beside Parquet: one scan reads each file
by its format, with the table's columns by field id (renamed, added, dropped columns and
renamed struct members), the implicit columns naming each file, and the rows that position
and equality deletes delete left out."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import DataFileContent
from pyiceberg.types import LongType, StringType

from tests.sql.helpers import error, rows
from tests.sql.helpers import names as names_of
from tests.sql.iceberg_deletes import (
    add_equality_deletes,
    add_position_deletes,
    commit_delete_file,
)
from tests.sql.iceberg_files import append_file, write_delete_rows

NAME = "dfs.data.`lake/files/ns/t`"
_STRUCT = pa.struct([("a", pa.int64())])


def _catalog(root: Path, name: str) -> SqlCatalog:
    """A SQL catalog on SQLite in an emptied ``root``, with the namespace ``ns``."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "ns" / "t" / "data").mkdir(parents=True)
    catalog = SqlCatalog(name, uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    catalog.create_namespace("ns")
    return catalog


class Mixed:
    """A table of three formats: a Parquet file (ids 1, 2), an Avro file (3, 4) and an ORC
    file (5, 6) written under the first schema; then ``name`` renamed ``label``, ``old``
    dropped, ``score`` added, the member ``s.a`` renamed ``s.b``; a Parquet file (7) after
    that; then position deletes of id 3 (Avro) and id 6 (ORC)."""

    def __init__(self, root: Path) -> None:
        catalog = _catalog(root, "f")
        schema = pa.schema(
            [("id", pa.int64()), ("name", pa.string()), ("old", pa.int64()), ("s", _STRUCT)]
        )
        table = catalog.create_table("ns.t", schema=schema)

        def first(ids: list[int]) -> pa.Table:
            return pa.table(
                {
                    "id": ids,
                    "name": [f"n{i}" for i in ids],
                    "old": [i * 100 for i in ids],
                    "s": [{"a": i * 10} for i in ids],
                },
                schema=schema,
            )

        table.append(first([1, 2]))
        self.first = table.current_snapshot().snapshot_id
        data = root / "ns" / "t" / "data"
        self.avro = append_file(table, first([3, 4]), str(data / "part-a.avro"))
        self.orc = append_file(table, first([5, 6]), str(data / "part-o.orc"))
        self.after_orc = table.current_snapshot().snapshot_id
        with table.update_schema() as update:
            update.rename_column("name", "label")
            update.delete_column("old")
            update.add_column("score", LongType())
            update.rename_column("s.a", "b")
        later = table.schema().as_arrow()
        table.append(
            pa.table({"id": [7], "label": ["n7"], "s": [{"b": 70}], "score": [700]}, later)
        )
        self.before_deletes = table.current_snapshot().snapshot_id
        add_position_deletes(table, self.avro, [0], str(root / "deletes-a.parquet"))
        add_position_deletes(table, self.orc, [1], str(root / "deletes-o.parquet"))
        self.table = catalog.load_table("ns.t")
        self.root = root


@pytest.fixture(scope="module")
def mixed(data_dir: Path) -> Mixed:
    return Mixed(data_dir / "lake" / "files")


def test_select_star_reads_every_format_by_field_id(conn: Any, mixed: Mixed) -> None:
    sql = f"SELECT * FROM {NAME} ORDER BY id"
    assert names_of(conn, sql) == ["id", "label", "s", "score"]
    got = rows(conn, sql)
    # ids 3 (Avro) and 6 (ORC) were deleted by position; `old` was dropped; `score` is NULL
    # in the files written before it was added; `s.a` is `s.b` now
    assert [(r[0], r[1], r[3]) for r in got] == [
        (1, "n1", None),
        (2, "n2", None),
        (4, "n4", None),
        (5, "n5", None),
        (7, "n7", 700),
    ]
    assert [r[2] for r in got] == [{"b": i * 10} for i in (1, 2, 4, 5, 7)]


def test_projection_filter_and_renamed_column(conn: Any, mixed: Mixed) -> None:
    got = rows(conn, f"SELECT label, score FROM {NAME} WHERE id IN (4, 5) ORDER BY label")
    assert got == [("n4", None), ("n5", None)]
    assert rows(conn, f"SELECT t.s.b FROM {NAME} t WHERE t.label = 'n5'") == [(50,)]
    assert rows(conn, f"SELECT COUNT(*), SUM(id) FROM {NAME}") == [(5, 19)]
    assert rows(conn, f"SELECT COUNT(*) FROM {NAME} WHERE score IS NULL") == [(4,)]


def test_implicit_columns_name_each_data_file(conn: Any, mixed: Mixed) -> None:
    got = rows(conn, f"SELECT id, filename, fqn FROM {NAME} ORDER BY id")
    by_id = {r[0]: (r[1], r[2]) for r in got}
    assert by_id[4] == ("part-a.avro", mixed.avro.removeprefix("file://"))
    assert by_id[5] == ("part-o.orc", mixed.orc.removeprefix("file://"))
    assert by_id[1][0].endswith(".parquet") and by_id[7][0].endswith(".parquet")


def test_mixed_table_through_the_data_source(spark: Any, mixed: Mixed) -> None:
    df = spark.read.format("auger").load(str(mixed.root / "ns" / "t"))
    got = sorted((r["id"], r["label"]) for r in df.collect())
    assert got == [(1, "n1"), (2, "n2"), (4, "n4"), (5, "n5"), (7, "n7")]


def test_time_travel_before_the_deletes(conn: Any, mixed: Mixed) -> None:
    snapshot = mixed.before_deletes
    got = rows(conn, f"SELECT id FROM table({NAME}(snapshotId => {snapshot})) ORDER BY id")
    assert got == [(i,) for i in range(1, 8)]


def test_rows_appended_between_snapshots_in_avro_and_orc(conn: Any, mixed: Mixed) -> None:
    options = f"fromSnapshotId => {mixed.first}, toSnapshotId => {mixed.after_orc}"
    got = rows(conn, f"SELECT id, filename FROM table({NAME}({options})) ORDER BY id")
    assert got == [(3, "part-a.avro"), (4, "part-a.avro"), (5, "part-o.orc"), (6, "part-o.orc")]


def test_an_avro_or_orc_only_table(make_conn: Any, data_dir: Path) -> None:
    root = data_dir / "lake" / "orc_only"
    catalog = _catalog(root, "o")
    schema = pa.schema(
        [("k", pa.int32()), ("ts", pa.timestamp("us")), ("d", pa.date32()), ("v", pa.float64())]
    )
    table = catalog.create_table("ns.t", schema=schema)
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
    data = pa.table(
        {"k": [1, 2], "ts": [when, None], "d": [dt.date(2024, 1, 31), None], "v": [0.5, 2.5]},
        schema=table.schema().as_arrow(),
    )
    # manifests without column statistics, which Iceberg allows
    append_file(table, data, str(root / "ns" / "t" / "data" / "one.orc"), metrics=False)
    append_file(table, data, str(root / "ns" / "t" / "data" / "two.avro"), metrics=False)
    with table.update_schema() as update:
        update.update_column("k", LongType())  # int to long: the files keep their ints
    conn = make_conn()
    name = "dfs.data.`lake/orc_only/ns/t`"
    got = rows(conn, f"SELECT filename, k, ts, d, v FROM {name} ORDER BY filename, k")
    assert got == [
        ("one.orc", 1, when, dt.date(2024, 1, 31), 0.5),
        ("one.orc", 2, None, None, 2.5),
        ("two.avro", 1, when, dt.date(2024, 1, 31), 0.5),
        ("two.avro", 2, None, None, 2.5),
    ]
    assert rows(conn, f"SELECT COUNT(*) FROM {name}") == [(4,)]
    assert rows(conn, f"SELECT SUM(k * 3000000000) FROM {name}") == [(18000000000,)]
    assert rows(conn, f"DESCRIBE {name}")[0][:2] == ("k", "BIGINT")
    # the rows appended after the first append (pyiceberg's entries table would need the
    # statistics these manifests leave out)
    appended = f"table({name}(fromSnapshotId => {table.history()[0].snapshot_id}))"
    assert rows(conn, f"SELECT filename, k FROM {appended} ORDER BY k") == [
        ("two.avro", 1),
        ("two.avro", 2),
    ]
    text = error(conn, "SELECT * FROM dfs.data.`lake/orc_only/ns/t#entries`")
    assert "UNSUPPORTED_OPERATION ERROR" in text and "lake/orc_only/ns/t" in text, text


def test_equality_deletes_apply_to_avro_and_orc_files(make_conn: Any, data_dir: Path) -> None:
    root = data_dir / "lake" / "files_eq"
    catalog = _catalog(root, "q")
    table = catalog.create_table("ns.t", schema=pa.schema([("id", pa.int64()), ("v", pa.string())]))
    data = root / "ns" / "t" / "data"
    for ids, out in (([1, 2, 3], "a.avro"), ([4, 5, 6], "o.orc")):
        rows_of = pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, table.schema().as_arrow())
        append_file(table, rows_of, str(data / out))
    keys = pa.table({"v": pa.array(["v2", "v5"], pa.string())})
    add_equality_deletes(table, keys, str(root / "deletes-eq.parquet"))
    conn = make_conn()
    name = "dfs.data.`lake/files_eq/ns/t`"
    assert rows(conn, f"SELECT id FROM {name} ORDER BY id") == [(1,), (3,), (4,), (6,)]
    # the key column is read for the filter though the query does not project it
    assert rows(conn, f"SELECT COUNT(*) FROM {name}") == [(4,)]


def test_delete_files_in_avro_and_orc_apply(make_conn: Any, data_dir: Path) -> None:
    root = data_dir / "lake" / "avro_deletes"
    catalog = _catalog(root, "d")
    table = catalog.create_table("ns.t", schema=pa.schema([("id", pa.int64()), ("v", pa.string())]))
    table.append(pa.table({"id": [1, 2, 3, 4], "v": ["v1", "v2", "v3", "v4"]}))
    (parquet,) = [t.file.file_path for t in table.scan().plan_files()]
    more = pa.table({"id": [5, 6], "v": ["v5", "v6"]}, table.schema().as_arrow())
    avro = append_file(table, more, str(root / "ns" / "t" / "data" / "more.avro"))
    # position deletes: id 1 (the Parquet file's row 0) by an Avro file, id 6 (the Avro file's
    # row 1) by an ORC file
    positions = [(parquet, 0, "pos.avro"), (avro, 1, "pos.orc")]
    for data_file, pos, out in positions:
        rows_of = pa.table({"file_path": [data_file], "pos": pa.array([pos], pa.int64())})
        path = str(root / out)
        fmt = write_delete_rows(rows_of, [2147483546, 2147483545], path)
        commit_delete_file(table, DataFileContent.POSITION_DELETES, path, 1, fmt)
    # equality deletes: v = 'v3' by an Avro file, id = 4 by an ORC file
    v_id, id_id = table.schema().find_field("v").field_id, table.schema().find_field("id").field_id
    keys = [(pa.table({"v": ["v3"]}), v_id, "eq.avro"), (pa.table({"id": [4]}), id_id, "eq.orc")]
    for rows_of, key_id, out in keys:
        path = str(root / out)
        fmt = write_delete_rows(rows_of, [key_id], path)
        content = DataFileContent.EQUALITY_DELETES
        commit_delete_file(table, content, path, 1, fmt, equality_ids=[key_id])
    conn = make_conn()
    name = "dfs.data.`lake/avro_deletes/ns/t`"
    assert rows(conn, f"SELECT id, v FROM {name} ORDER BY id") == [(2, "v2"), (5, "v5")]
    assert rows(conn, f"SELECT COUNT(*) FROM {name}") == [(2,)]


@pytest.mark.parametrize("out", ["bad.avro", "bad.orc"])
def test_an_unreadable_data_file_is_named(make_conn: Any, data_dir: Path, out: str) -> None:
    root = data_dir / "lake" / "unreadable"
    catalog = _catalog(root, "u")
    table = catalog.create_table("ns.t", schema=pa.schema([("id", pa.int64())]))
    path = root / "ns" / "t" / "data" / out
    append_file(table, pa.table({"id": [1, 2]}, table.schema().as_arrow()), str(path))
    path.write_bytes(b"not a data file at all")
    message = error(make_conn(), "SELECT id FROM dfs.data.`lake/unreadable/ns/t`")
    assert "DATA_READ ERROR" in message and str(path) in message, message


def test_renamed_members_in_lists_and_maps_of_avro_and_orc_files(
    make_conn: Any, data_dir: Path
) -> None:
    root = data_dir / "lake" / "files_nested"
    catalog = _catalog(root, "n")
    element = pa.struct([("a", pa.int64()), ("c", pa.string())])
    schema = pa.schema(
        [("id", pa.int64()), ("l", pa.list_(element)), ("m", pa.map_(pa.string(), element))]
    )
    table = catalog.create_table("ns.t", schema=schema)
    data = root / "ns" / "t" / "data"
    # an Avro map, an Avro array of key-value records (Iceberg's other form of a map), ORC
    for i, out in ((1, "a.avro"), (2, "b.avro"), (3, "o.orc")):
        one = {"id": [i], "l": [[{"a": i, "c": "x"}]], "m": [[("k", {"a": i * 10, "c": "y"})]]}
        rows_of = pa.table(one, table.schema().as_arrow())
        append_file(table, rows_of, str(data / out), maps_as_arrays=out == "b.avro")
    with table.update_schema() as update:
        update.rename_column("l.element.a", "b")
        update.rename_column("m.value.a", "b")
    conn = make_conn()
    name = "dfs.data.`lake/files_nested/ns/t`"
    got = rows(conn, f"SELECT id, t.l[0].b, t.l[0].c, m FROM {name} t ORDER BY id")
    assert got == [(i, i, "x", [("k", {"b": i * 10, "c": "y"})]) for i in (1, 2, 3)]


def test_metadata_tables_list_avro_and_orc_files(conn: Any, mixed: Mixed) -> None:
    name = "dfs.data.`lake/files/ns/t#files`"
    got = rows(conn, f"SELECT file_path, file_format, record_count FROM {name} ORDER BY file_path")
    formats = {p.rsplit("/", 1)[1]: (f, n) for p, f, n in got}
    assert formats["part-a.avro"] == ("AVRO", 2) and formats["part-o.orc"] == ("ORC", 2), got


def test_files_without_field_ids_read_by_the_name_mapping(make_conn: Any, data_dir: Path) -> None:
    root = data_dir / "lake" / "name_mapping"
    catalog = _catalog(root, "m")
    struct = pa.struct([("x", pa.int64())])
    schema = pa.schema([("id", pa.int64()), ("a", pa.string()), ("s", struct)])
    table = catalog.create_table("ns.t", schema=schema)
    # a Parquet file written without field ids, taken in as it is: the table's name mapping
    # says which column each of its names is
    plain = root / "ns" / "t" / "data" / "plain.parquet"
    pq.write_table(pa.table({"id": [1, 2], "a": ["x", "y"], "s": [{"x": 1}, {"x": 2}]}), plain)
    table.add_files([str(plain)])
    with table.update_schema() as update:
        update.rename_column("a", "label")
        update.rename_column("s.x", "y")
    table.append(pa.table({"id": [3], "label": ["z"], "s": [{"y": 3}]}, table.schema().as_arrow()))
    conn = make_conn()
    name = "dfs.data.`lake/name_mapping/ns/t`"
    got = rows(conn, f"SELECT id, label, t.s.y FROM {name} t ORDER BY id")
    assert got == [(1, "x", 1), (2, "y", 2), (3, "z", 3)]
    # the old name given to a new column: the name mapping gives it to the new column now, so
    # the file's `a` is that column's (as Iceberg's own reader reads it), not `label`'s
    with table.update_schema() as update:
        update.add_column("a", StringType())
    table = catalog.load_table("ns.t")
    reference = table.scan().to_arrow().sort_by("id")
    expected = list(
        zip(*(reference.column(c).to_pylist() for c in ("id", "label", "a")), strict=True)
    )
    assert expected[0] == (1, None, "x")
    assert rows(conn, f"SELECT id, label, a FROM {name} ORDER BY id") == expected
