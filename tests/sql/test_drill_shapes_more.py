"""More of Drill's answers for data shapes: unsigned Parquet integers and names the data lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return list(conn.cursor().execute(sql).fetchall())


def described(conn: Any, sql: str) -> list[tuple[str, str]]:
    cur = conn.cursor().execute(sql)
    cur.fetchall()
    return [(d[0], d[1]) for d in cur.description]


@pytest.mark.parametrize("native", ["true", "false"])
def test_parquet_unsigned_integers_keep_their_bits_as_drill_reads_them(
    conn: Any, tmp_path: Path, native: str
) -> None:
    # Drill: UINT_8/16/32 are INT, UINT_64 is BIGINT; values above the signed maximum wrap
    table = pa.table(
        {
            "id": [1, 2, 3],
            "u8": pa.array([255, 0, None], pa.uint8()),
            "u16": pa.array([65535, 0, None], pa.uint16()),
            "u32": pa.array([2**32 - 1, 2**31, None], pa.uint32()),
            "u64": pa.array([2**64 - 1, 2**63, None], pa.uint64()),
        }
    )
    pq.write_table(table, tmp_path / "u.parquet")
    conn.cursor().execute(f"ALTER SESSION SET `auger.scan.native_parquet` = {native}")
    sql = f"SELECT * FROM dfs.`{tmp_path}` ORDER BY id"
    assert rows(conn, sql) == [
        (1, 255, 65535, -1, -1),
        (2, 0, 0, -(2**31), -(2**63)),
        (3, None, None, None, None),
    ]
    assert [t for _, t in described(conn, sql)] == [
        "BIGINT",
        "INTEGER",
        "INTEGER",
        "INTEGER",
        "BIGINT",
    ]
    # the footer's unsigned min/max must not rule the wrapped values out
    where = f"SELECT id FROM dfs.`{tmp_path}` WHERE u32 = -1 AND u64 < 0"
    assert rows(conn, where) == [(1,)]


def test_parquet_unsigned_integers_inside_a_struct_wrap_too(conn: Any, tmp_path: Path) -> None:
    s = pa.array(
        [{"x": 2**64 - 1, "l": [2**32 - 1, 7]}],
        pa.struct([("x", pa.uint64()), ("l", pa.list_(pa.uint32()))]),
    )
    pq.write_table(pa.table({"s": s}), tmp_path / "s.parquet")
    assert rows(conn, f"SELECT t.s.x, t.s.l FROM dfs.`{tmp_path}` t") == [(-1, [-1, 7])]
    assert rows(conn, f"SELECT s FROM dfs.`{tmp_path}`") == [({"x": -1, "l": [-1, 7]},)]


@pytest.fixture
def nested_json(tmp_path: Path) -> Path:
    rows = [{"m": {"a": 1, "b": {"c": "x"}}, "n": 1}, {"m": {"a": 2}, "n": 2}]
    (tmp_path / "nested.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return tmp_path


def test_members_of_a_column_no_file_has_are_null(conn: Any, nested_json: Path) -> None:
    table = f"dfs.`{nested_json}` t"
    sql = f"SELECT t.n, t.nope.x, t.nope.y.z FROM {table} ORDER BY t.n"
    assert rows(conn, sql) == [(1, None, None), (2, None, None)]
    # Drill's type for a missing column: nullable INT; names as Drill gives them
    assert described(conn, sql) == [("n", "BIGINT"), ("EXPR$1", "INTEGER"), ("EXPR$2", "INTEGER")]
    assert rows(conn, f"SELECT t.n FROM {table} WHERE t.nope.x IS NULL ORDER BY t.n") == [
        (1,),
        (2,),
    ]
    assert rows(conn, f"SELECT COUNT(*) FROM {table} WHERE t.nope.x = 1") == [(0,)]


def test_members_of_a_missing_column_in_parquet_and_text(conn: Any, tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": [1, 2]}), tmp_path / "p.parquet")
    sql = f"SELECT t.id, t.nope.x FROM dfs.`{tmp_path}/p.parquet` t WHERE t.nope.x IS NULL"
    assert sorted(rows(conn, sql)) == [(1, None), (2, None)]
    assert described(conn, sql)[1] == ("EXPR$1", "INTEGER")
    # a text file's missing column is a blank VARCHAR; a member of it resolves to nothing:
    # Drill's NULL (nullable INT), as for a member of any non-map value
    (tmp_path / "cars.csvh").write_text("Year,Make\n1999,Chevy\n")
    sql = f"SELECT t.Year, t.nope.x FROM dfs.`{tmp_path}/cars.csvh` t WHERE t.nope.x IS NULL"
    assert rows(conn, sql) == [("1999", None)]
    assert described(conn, sql)[1] == ("EXPR$1", "INTEGER")


def test_wildcard_shows_the_files_own_map_beside_a_missing_member(
    conn: Any, nested_json: Path
) -> None:
    table = f"dfs.`{nested_json}` t"
    sql = f"SELECT *, t.m.zz FROM {table} WHERE t.m.b.nope IS NULL ORDER BY t.n"
    assert rows(conn, sql) == [
        ({"a": 1, "b": {"c": "x"}}, 1, None),
        ({"a": 2, "b": {"c": None}}, 2, None),  # Drill's maps are never null, at any depth
    ]
    assert described(conn, sql) == [("m", "STRUCT"), ("n", "BIGINT"), ("EXPR$1", "INTEGER")]
    # a missing root used through its members adds no column to the wildcard either
    sql = f"SELECT t.*, t.nope.x FROM {table} ORDER BY t.n"
    assert [name for name, _ in described(conn, sql)] == ["m", "n", "EXPR$1"]
    assert [r[1:] for r in rows(conn, sql)] == [(1, None), (2, None)]
