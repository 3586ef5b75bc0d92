"""Maps (records, structs) whose members differ between the files of one table, through SQL.

Files written with NOT NULL maps and members (a Parquet ``REQUIRED`` group, an Avro record field
that is not a union): the table's map holds the union of the files' members, a member a file
lacks reads NULL in that file's rows, a member whose type one type holds is widened, and a member
whose types no type holds fails only the queries that read it, naming both files and both types.
Parquet and Avro follow the same rule.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .helpers import error, rows

#: (name, type) of a member or column: "int", "long", "string" or "double"
Fields = list[tuple[str, str]]

_ARROW = {"int": pa.int32(), "long": pa.int64(), "string": pa.string(), "double": pa.float64()}


def _write_parquet(path: Path, members: Fields, records: list[dict[str, Any]]) -> None:
    struct = pa.struct([pa.field(n, _ARROW[t], nullable=False) for n, t in members])
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("m", struct, False)])
    pq.write_table(pa.Table.from_pylist(records, schema=schema), path.with_suffix(".parquet"))


def _write_avro(path: Path, members: Fields, records: list[dict[str, Any]]) -> None:
    record = {"type": "record", "name": "M", "fields": [{"name": n, "type": t} for n, t in members]}
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "id", "type": "long"}, {"name": "m", "type": record}],
    }
    with path.with_suffix(".avro").open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), records)


Writer = Callable[[Path, Fields, list[dict[str, Any]]], None]


@pytest.fixture(params=["parquet", "avro"])
def fmt(request: pytest.FixtureRequest) -> tuple[str, Writer]:
    return request.param, _write_parquet if request.param == "parquet" else _write_avro


def _table(data_dir: Path, name: str, fmt: str) -> Path:
    root = data_dir / f"mm_{name}_{fmt}"
    root.mkdir()
    return root


def test_members_one_file_lacks_read_null(
    conn: Any, data_dir: Path, fmt: tuple[str, Writer]
) -> None:
    kind, write = fmt
    root = _table(data_dir, "lacks", kind)
    write(root / "a", [("a", "int"), ("b", "string")], [{"id": 1, "m": {"a": 1, "b": "x"}}])
    write(root / "b", [("a", "int"), ("c", "double")], [{"id": 2, "m": {"a": 2, "c": 2.5}}])
    table = f"dfs.data.`{root.name}`"
    assert rows(conn, f"SELECT * FROM {table} ORDER BY id") == [
        (1, {"a": 1, "b": "x", "c": None}),
        (2, {"a": 2, "b": None, "c": 2.5}),
    ]
    got = rows(conn, f"SELECT t.id, t.m.a, t.m.b, t.m.c FROM {table} t ORDER BY t.id")
    assert got == [(1, 1, "x", None), (2, 2, None, 2.5)]
    # a member read alone: the file without it gives NULL, not the type's default ('')
    assert rows(conn, f"SELECT t.m.b FROM {table} t ORDER BY t.id") == [("x",), (None,)]
    assert rows(conn, f"SELECT t.id FROM {table} t WHERE t.m.c IS NULL") == [(1,)]


def test_a_member_widened_between_files(conn: Any, data_dir: Path, fmt: tuple[str, Writer]) -> None:
    kind, write = fmt
    root = _table(data_dir, "widened", kind)
    write(root / "a", [("a", "int"), ("b", "string")], [{"id": 1, "m": {"a": 7, "b": "x"}}])
    write(root / "b", [("a", "long")], [{"id": 2, "m": {"a": 2**40}}])
    table = f"dfs.data.`{root.name}`"
    assert rows(conn, f"SELECT t.id, t.m.a, t.m.b FROM {table} t ORDER BY t.id") == [
        (1, 7, "x"),
        (2, 2**40, None),
    ]
    assert rows(conn, f"SELECT * FROM {table} ORDER BY id") == [
        (1, {"a": 7, "b": "x"}),
        (2, {"a": 2**40, "b": None}),
    ]


def test_a_member_type_conflict_fails_only_queries_reading_it(
    conn: Any, data_dir: Path, fmt: tuple[str, Writer]
) -> None:
    kind, write = fmt
    root = _table(data_dir, "conflict", kind)
    write(root / "a", [("a", "int"), ("b", "string")], [{"id": 1, "m": {"a": 1, "b": "x"}}])
    write(root / "b", [("a", "int"), ("b", "double")], [{"id": 2, "m": {"a": 2, "b": 2.5}}])
    table = f"dfs.data.`{root.name}`"
    # queries that do not read m.b answer
    assert rows(conn, f"SELECT t.id, t.m.a FROM {table} t ORDER BY t.id") == [(1, 1), (2, 2)]
    assert rows(conn, f"SELECT COUNT(*) FROM {table}") == [(2,)]
    for sql in (
        f"SELECT t.m.b FROM {table} t",
        f"SELECT t.m FROM {table} t",
        f"SELECT * FROM {table}",
    ):
        message = error(conn, sql)
        assert message.startswith(
            "DATA_READ ERROR: Column [m.b] has type VARCHAR NOT NULL in one file and "
            "DOUBLE NOT NULL in another"
        ), message
        assert f"a.{kind}" in message and f"b.{kind}" in message, message
        assert "Type: VARCHAR NOT NULL" in message and "Type: DOUBLE NOT NULL" in message


def test_a_map_one_file_lacks(conn: Any, data_dir: Path, fmt: tuple[str, Writer]) -> None:
    kind, write = fmt
    root = _table(data_dir, "nomap", kind)
    write(root / "a", [("a", "int"), ("b", "string")], [{"id": 1, "m": {"a": 1, "b": "x"}}])
    if kind == "parquet":
        pq.write_table(pa.table({"id": pa.array([2], pa.int64())}), root / "b.parquet")
    else:
        schema = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}
        with (root / "b.avro").open("wb") as out:
            fastavro.writer(out, schema, [{"id": 2}])
    table = f"dfs.data.`{root.name}`"
    # the file without the map reads a map of NULL members (not 0 and '')
    got = rows(conn, f"SELECT t.id, t.m.a, t.m.b FROM {table} t ORDER BY t.id")
    assert got == [(1, 1, "x"), (2, None, None)]
    assert rows(conn, f"SELECT * FROM {table} ORDER BY id") == [
        (1, {"a": 1, "b": "x"}),
        (2, {"a": None, "b": None}),
    ]


def test_nested_maps_merge_at_every_level(conn: Any, data_dir: Path) -> None:
    root = data_dir / "mm_nested"
    root.mkdir()

    def struct(fields: list[tuple[str, pa.DataType]]) -> pa.DataType:
        return pa.struct([pa.field(n, t, nullable=False) for n, t in fields])

    for name, m_type, value in (
        ("a", struct([("n", struct([("x", pa.int32())]))]), {"n": {"x": 1}}),
        (
            "b",
            struct([("n", struct([("x", pa.int64()), ("y", pa.string())])), ("k", pa.int64())]),
            {"n": {"x": 2**40, "y": "q"}, "k": 7},
        ),
    ):
        schema = pa.schema([pa.field("m", m_type, nullable=False)])
        table = pa.Table.from_pylist([{"m": value}], schema=schema)
        pq.write_table(table, root / f"{name}.parquet")
    table = "dfs.data.`mm_nested`"
    got = rows(conn, f"SELECT t.m.n.x AS x, t.m.n.y AS y, t.m.k AS k FROM {table} t ORDER BY x")
    assert got == [(1, None, None), (2**40, "q", 7)]
