"""More of Drill's answers for data shapes: unsigned Parquet integers and names the data lacks."""

from __future__ import annotations

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
