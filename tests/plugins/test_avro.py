"""Drill's avro format, shipped as an entry-point plugin (Arrow-native) and queried through SQL:
the schema from the file's header in Drill's types, nested records as maps, arrays, nullable
unions, logical types, projection push-down, COUNT(*) from block headers, implicit columns, a
table function, and bad files."""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import uuid
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest

import auger
from auger.config import FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats import get_format, known_formats
from auger.formats.conflicts import check_read
from auger.plugins.avro import AvroFormat, avro_schema_to_drill
from auger.scan import ScanOperator
from auger.storage.splits import FileSplit
from auger.types import DataMode, MinorType
from tests.plugins.helpers import connect_with_formats, rows

UTC = dt.UTC

SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "User",
    "namespace": "test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "score", "type": ["null", "double"]},
        {"name": "active", "type": "boolean"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {
            "name": "address",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [
                    {"name": "street", "type": "string"},
                    {"name": "zip", "type": ["null", "int"]},
                ],
            },
        },
        # a reference by name to the record type defined by `address`
        {"name": "previous", "type": ["null", "Address"]},
        {"name": "born", "type": {"type": "int", "logicalType": "date"}},
        {"name": "seen", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "seen_ms", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "at", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "ratio", "type": "float"},
    ],
}

UID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def record(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"user{i}",
        "score": None if i % 2 else i * 1.5,
        "active": i % 3 == 0,
        "tags": [f"t{j}" for j in range(i % 3)],
        "address": {"street": f"{i} Main St", "zip": None if i == 1 else 10000 + i},
        "previous": {"street": "Old Rd", "zip": 1} if i == 2 else None,
        "born": dt.date(2000, 1, 1) + dt.timedelta(days=i),
        "seen": dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC) + dt.timedelta(hours=i),
        "seen_ms": None if i == 0 else dt.datetime(2020, 1, 1, tzinfo=UTC),
        "amount": decimal.Decimal(f"{i}.25"),
        "uid": UID,
        "color": "RED" if i % 2 == 0 else "BLUE",
        "attrs": {"a": i, "b": -i},
        "at": dt.time(12, 30, 15, 250000),
        "ratio": 0.5,
    }


def write(path: Path, records: list[dict[str, Any]], *, sync_interval: int = 16000) -> None:
    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(SCHEMA), records, sync_interval=sync_interval)


def test_registered_by_entry_point_like_a_third_party() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="auger.formats")}
    assert names["avro"] == "auger.plugins.avro:AvroFormat"
    assert "avro" in known_formats()
    assert isinstance(get_format("avro"), AvroFormat)


def test_header_schema_in_drill_types() -> None:
    schema = avro_schema_to_drill(SCHEMA)
    got = {c.name: (c.type, c.mode) for c in schema}
    assert got == {
        "id": (MinorType.BIGINT, DataMode.REQUIRED),
        "name": (MinorType.VARCHAR, DataMode.REQUIRED),
        "score": (MinorType.FLOAT8, DataMode.OPTIONAL),
        "active": (MinorType.BIT, DataMode.REQUIRED),
        "tags": (MinorType.VARCHAR, DataMode.REPEATED),
        "address": (MinorType.MAP, DataMode.REQUIRED),
        "previous": (MinorType.MAP, DataMode.OPTIONAL),
        "born": (MinorType.DATE, DataMode.REQUIRED),
        "seen": (MinorType.TIMESTAMP, DataMode.REQUIRED),
        "seen_ms": (MinorType.TIMESTAMP, DataMode.OPTIONAL),
        "amount": (MinorType.VARDECIMAL, DataMode.REQUIRED),
        "uid": (MinorType.VARCHAR, DataMode.REQUIRED),
        "color": (MinorType.VARCHAR, DataMode.REQUIRED),
        "attrs": (MinorType.DICT, DataMode.REQUIRED),
        "at": (MinorType.TIME, DataMode.REQUIRED),
        "ratio": (MinorType.FLOAT4, DataMode.REQUIRED),
    }
    assert (schema["amount"].precision, schema["amount"].scale) == (9, 2)
    assert [(c.name, c.type, c.mode) for c in schema["previous"].children or ()] == [
        ("street", MinorType.VARCHAR, DataMode.REQUIRED),
        ("zip", MinorType.INT, DataMode.OPTIONAL),
    ]
    nested = avro_schema_to_drill(
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "m", "type": {"type": "array", "items": {"type": "array", "items": "int"}}}
            ],
        }
    )
    assert (nested["m"].type, nested["m"].children[0].type) == (MinorType.LIST, MinorType.INT)  # type: ignore[index]


@pytest.mark.parametrize(
    ("field", "what"),
    [
        ({"name": "u", "type": ["null", "int", "string"]}, "'complex union' type is not supported"),
        ({"name": "u", "type": ["int", "string"]}, "'complex union' type is not supported"),
        ({"name": "next", "type": ["null", "R"]}, "'recursive record' type is not supported"),
    ],
)
def test_unsupported_types_name_the_column(field: dict[str, Any], what: str) -> None:
    with pytest.raises(auger.UserError) as info:
        avro_schema_to_drill({"type": "record", "name": "R", "fields": [field]})
    assert info.value.kind.value == "UNSUPPORTED_OPERATION"
    assert what in str(info.value) and f"Column: {field['name']}" in str(info.value)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("avro")
    (root / "users" / "2024").mkdir(parents=True)
    write(root / "users" / "2024" / "a.avro", [record(i) for i in range(3)])
    # many small blocks: 200 records, a sync marker every few records
    write(root / "many.avro", [record(i) for i in range(200)], sync_interval=100)
    write(root / "users.bin", [record(7)])
    whole = (root / "many.avro").read_bytes()
    (root / "truncated.avro").write_bytes(whole[: len(whole) * 2 // 3])
    (root / "notavro.avro").write_text("id,name\n1,x\n")
    return root


@pytest.fixture(scope="module")
def conn(spark: Any, data: Path) -> Iterator[Any]:
    formats = {"avro": {"type": "avro", "extensions": ["avro"]}}
    with connect_with_formats("data", data, formats) as c:
        yield c


def scan(path: Path, columns: list[str]) -> list[dict[str, Any]]:
    plugin, config = get_format("avro"), FormatConfig("avro", "avro", ("avro",))
    op = ScanOperator(plugin, [str(path)], columns, config=config)
    return [r for b in op for r in b.to_pylist()]


def test_values_and_logical_types_without_spark(data: Path) -> None:
    got = scan(data / "users" / "2024" / "a.avro", ["*"])
    assert len(got) == 3
    first, second = got[0], got[1]
    assert first["id"] == 0 and first["name"] == "user0" and first["score"] == 0.0
    assert second["score"] is None and second["tags"] == ["t0"]
    assert first["address"] == {"street": "0 Main St", "zip": 10000}
    assert second["address"] == {"street": "1 Main St", "zip": None}
    assert got[2]["previous"] == {"street": "Old Rd", "zip": 1}
    assert first["born"] == dt.date(2000, 1, 1)
    # TIMESTAMP is in UTC and to the millisecond, as Drill holds it
    assert first["seen"] == dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
    assert first["seen_ms"] is None and second["seen_ms"] == dt.datetime(2020, 1, 1)
    assert first["amount"] == decimal.Decimal("0.25")
    assert first["uid"] == str(UID)
    assert (first["color"], second["color"]) == ("RED", "BLUE")
    assert dict(first["attrs"]) == {"a": 0, "b": 0}
    assert first["at"] == dt.time(12, 30, 15, 250000)
    assert first["ratio"] == 0.5


def test_projection_decodes_only_the_projected_fields(data: Path) -> None:
    plugin = AvroFormat()
    config = FormatConfig("avro", "avro", ("avro",))
    split = FileSplit(str(data / "users" / "2024" / "a.avro"))
    # `previous` refers to the Address type that `address` defines: read without `address`
    batches = list(plugin.read_arrow(split, config, {}, ["previous", "name"], 1000))
    table = pa.Table.from_batches(batches)
    assert table.column_names == ["name", "previous"]
    assert table.column("previous").to_pylist() == [None, None, {"street": "Old Rd", "zip": 1}]
    # no column wanted (COUNT(*)): record counts from the block headers, in one null column
    counts = list(plugin.read_arrow(FileSplit(str(data / "many.avro")), config, {}, [], 1000))
    assert len(counts) > 10 and sum(b.num_rows for b in counts) == 200
    assert all(b.column(0).null_count == b.num_rows for b in counts)


@pytest.mark.spark
def test_select_star_through_sql(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.data.`users/2024/a.avro` ORDER BY id")
    assert [d[0] for d in cur.description] == [f["name"] for f in SCHEMA["fields"]]
    got = [tuple(r) for r in cur.fetchall()]
    assert [r[:4] for r in got] == [
        (0, "user0", 0.0, True),
        (1, "user1", None, False),
        (2, "user2", 3.0, False),
    ]
    assert got[1][4] == ["t0"]
    assert got[0][8] == dt.datetime(2024, 5, 6, 7, 8, 9, 123000)


@pytest.mark.spark
def test_projection_nested_members_and_arrays(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT t.address.street, t.address.zip, t.previous.street, t.tags[1], amount "
        "FROM dfs.data.`users/2024/a.avro` t ORDER BY id",
    )
    assert got == [
        ("0 Main St", 10000, None, None, decimal.Decimal("0.25")),
        ("1 Main St", None, None, None, decimal.Decimal("1.25")),
        ("2 Main St", 10002, "Old Rd", "t1", decimal.Decimal("2.25")),
    ]


@pytest.mark.spark
def test_count_and_implicit_columns(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) FROM dfs.data.`many.avro`") == [(200,)]
    assert rows(conn, "SELECT COUNT(*), SUM(id) FROM dfs.data.`many.avro`") == [(200, 19900)]
    got = rows(
        conn,
        "SELECT filename, dir0, COUNT(*) FROM dfs.data.`users` GROUP BY filename, dir0",
    )
    assert got == [("a.avro", "2024", 3)]


@pytest.mark.spark
def test_small_batches_keep_every_row(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `auger.scan.batch_rows` = 7")
    try:
        assert rows(conn, "SELECT COUNT(name), MAX(id) FROM dfs.data.`many.avro`") == [(200, 199)]
    finally:
        cur.execute("ALTER SESSION RESET `auger.scan.batch_rows`")


@pytest.mark.spark
def test_table_function_names_the_format(conn: Any) -> None:
    got = rows(conn, "SELECT id, color FROM table(dfs.data.`users.bin`(type => 'avro'))")
    assert got == [(7, "BLUE")]


@pytest.mark.spark
def test_truncated_file_names_file_and_block(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT name FROM dfs.data.`truncated.avro`")
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR: Avro file ")
    assert "truncated.avro" in text and "Block: " in text and "Record: " in text


@pytest.mark.spark
def test_a_file_that_is_not_avro(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT * FROM dfs.data.`notavro.avro`")
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR: Not an Avro object container file")
    assert "notavro.avro" in text


def test_a_compressed_file_with_projection(tmp_path: Path) -> None:
    plain = tmp_path / "plain.avro"
    write(plain, [record(i) for i in range(5)])
    packed = tmp_path / "users.avro.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert scan(packed, ["name", "previous"]) == [
        {"name": f"user{i}", "previous": {"street": "Old Rd", "zip": 1} if i == 2 else None}
        for i in range(5)
    ]


def test_files_with_different_fields(tmp_path: Path) -> None:
    first = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"},
             {"name": "b", "type": "string"}]}  # fmt: skip
    second = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"},
              {"name": "c", "type": ["null", "double"]}]}  # fmt: skip
    files = [tmp_path / "1.avro", tmp_path / "2.avro"]
    for path, schema, rec in zip(files, (first, second), ({"a": 1, "b": "x"}, {"a": 2, "c": 2.5})):
        with path.open("wb") as out:
            fastavro.writer(out, schema, [rec])
    plugin, config = get_format("avro"), FormatConfig("avro", "avro", ("avro",))
    table = plugin.discover_schema([str(p) for p in files], config, {})
    # a column one file lacks is nullable: that file's rows read NULL there
    assert str(table) == "(`a` BIGINT NOT NULL, `b` VARCHAR, `c` DOUBLE)"
    op = ScanOperator(plugin, [str(p) for p in files], ["*"], config=config, defined_schema=table)
    assert [r for b in op for r in b.to_pylist()] == [
        {"a": 1, "b": "x", "c": None},
        {"a": 2, "b": None, "c": 2.5},
    ]


def test_less_common_types(tmp_path: Path) -> None:
    duration = {"type": "fixed", "name": "Span", "size": 12, "logicalType": "duration"}
    schema = {
        "type": "record",
        "name": "Odd",
        "fields": [
            {"name": "grid", "type": {"type": "array", "items": {"type": "array", "items": "int"}}},
            {"name": "at_us", "type": {"type": "long", "logicalType": "time-micros"}},
            {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
            {"name": "span", "type": duration},
            {"name": "raw", "type": "bytes"},
            {
                "name": "inner",
                "type": {
                    "type": "record",
                    "name": "Inner",
                    "fields": [
                        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
                        {"name": "counts", "type": {"type": "map", "values": ["null", "int"]}},
                        {"name": "ids", "type": {"type": "array", "items": "string"}},
                    ],
                },
            },
        ],
    }
    span = (2).to_bytes(4, "little") + (3).to_bytes(4, "little") + (4500).to_bytes(4, "little")
    rec = {
        "grid": [[1, 2], [], [3]],
        "at_us": dt.time(1, 2, 3, 456789),
        "local": dt.datetime(2021, 6, 7, 8, 9, 10, 11000),
        "span": span,
        "raw": b"\x00\xff",
        "inner": {"id": UID, "counts": {"x": 1, "y": None}, "ids": ["p", "q"]},
    }
    path = tmp_path / "odd.avro"
    with path.open("wb") as out:
        fastavro.writer(out, schema, [rec])
    table = avro_schema_to_drill(schema)
    assert [c.type for c in table] == [
        MinorType.LIST,
        MinorType.TIME,
        MinorType.TIMESTAMP,
        MinorType.INTERVAL,
        MinorType.VARBINARY,
        MinorType.MAP,
    ]
    (got,) = scan(path, ["*"])
    assert got["grid"] == [[1, 2], [], [3]]
    assert got["at_us"] == dt.time(1, 2, 3, 456000)  # TIME to the millisecond
    assert got["local"] == dt.datetime(2021, 6, 7, 8, 9, 10, 11000)
    assert got["span"] == pa.MonthDayNano([2, 3, 4_500_000_000])
    assert got["raw"] == b"\x00\xff"
    inner = got["inner"]
    assert inner["id"] == str(UID) and inner["ids"] == ["p", "q"]
    assert dict(inner["counts"]) == {"x": 1, "y": None}


def _write_records(path: Path, fields: list[dict[str, Any]], records: list[dict[str, Any]]) -> str:
    with path.open("wb") as out:
        fastavro.writer(out, {"type": "record", "name": "R", "fields": fields}, records)
    return str(path)


def test_files_widen_a_column_as_parquet_files_do(tmp_path: Path) -> None:
    one = _write_records(
        tmp_path / "1.avro",
        [{"name": "a", "type": "int"}, {"name": "x", "type": "float"},
         {"name": "n", "type": "int"}],
        [{"a": 1, "x": 0.5, "n": 3}],
    )  # fmt: skip
    two = _write_records(
        tmp_path / "2.avro",
        [{"name": "a", "type": ["null", "long"]}, {"name": "x", "type": "double"},
         {"name": "n", "type": "float"}, {"name": "b", "type": "string"}],
        [{"a": 2**40, "x": 2.25, "n": 1.5, "b": "B"}],
    )  # fmt: skip
    plugin, config = get_format("avro"), FormatConfig("avro", "avro", ("avro",))
    table = plugin.discover_schema([one, two], config, {})
    # the wider type holds both, nullable where either file's is; a column one file lacks is
    # nullable
    assert str(table) == "(`a` BIGINT, `x` DOUBLE NOT NULL, `n` FLOAT NOT NULL, `b` VARCHAR)"
    op = ScanOperator(plugin, [one, two], ["*"], config=config, defined_schema=table)
    assert [r for b in op for r in b.to_pylist()] == [
        {"a": 1, "x": 0.5, "n": 3.0, "b": None},
        {"a": 2**40, "x": 2.25, "n": 1.5, "b": "B"},
    ]


def test_a_type_conflict_between_files_is_deferred_to_its_readers(tmp_path: Path) -> None:
    one = _write_records(
        tmp_path / "1.avro",
        [{"name": "id", "type": "long"}, {"name": "v", "type": "long"}],
        [{"id": 1, "v": 10}],
    )
    two = _write_records(
        tmp_path / "2.avro",
        [{"name": "id", "type": "long"}, {"name": "v", "type": "string"}],
        [{"id": 2, "v": "ten"}],
    )
    plugin, config = get_format("avro"), FormatConfig("avro", "avro", ("avro",))
    table = plugin.discover_schema([one, two], config, {})
    assert str(table).startswith("(`id` BIGINT NOT NULL, `v` BIGINT NOT NULL")  # until read
    check_read(table.column("id"))  # the column both agree on reads
    with pytest.raises(UserError) as info:
        check_read(table.column("v"))
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert err.message == (
        "Column [v] has type BIGINT NOT NULL in one file and VARCHAR NOT NULL in another"
    )
    assert err.context[:4] == [
        f"File: {one}",
        "Type: BIGINT NOT NULL",
        f"File: {two}",
        "Type: VARCHAR NOT NULL",
    ]


@pytest.mark.spark
def test_files_disagreeing_on_a_column_through_sql(conn: Any, data: Path) -> None:
    root = data / "disagree"
    root.mkdir()
    _write_records(
        root / "a.avro",
        [{"name": "id", "type": "long"}, {"name": "v", "type": "long"},
         {"name": "n", "type": "int"}],
        [{"id": 1, "v": 10, "n": 1}, {"id": 2, "v": 20, "n": 2}],
    )  # fmt: skip
    _write_records(
        root / "b.avro",
        [{"name": "id", "type": "long"}, {"name": "v", "type": "string"},
         {"name": "n", "type": "long"}],
        [{"id": 3, "v": "thirty", "n": 2**40}],
    )  # fmt: skip
    table = "dfs.data.`disagree`"
    # a query that does not read `v` answers; `n` is BIGINT, holding both files' values
    assert rows(conn, f"SELECT id, n FROM {table} ORDER BY id") == [(1, 1), (2, 2), (3, 2**40)]
    assert rows(conn, f"SELECT COUNT(*) FROM {table}") == [(3,)]
    for sql in (f"SELECT v FROM {table}", f"SELECT * FROM {table}"):
        with pytest.raises(auger.DatabaseError) as info:
            rows(conn, sql)
        text = str(info.value)
        assert text.startswith("DATA_READ ERROR: Column [v] has type BIGINT NOT NULL in one file")
        assert "and VARCHAR NOT NULL in another" in text
        assert "a.avro" in text and "b.avro" in text
