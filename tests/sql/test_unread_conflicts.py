"""A type conflict or a malformed value in a column (or map member) a query does not read never
fails that query.

Drill's scan looks at the columns a query projects; the cases are Drill's own: a JSON
``inner_list`` that is BIGINT in one record and VARCHAR in the next, a Parquet ``contributions``
that is DECIMAL in one file and DOUBLE in another.
"""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .helpers import error, rows


def _json(path: Path, records: list[dict[str, Any]]) -> str:
    path.mkdir(parents=True, exist_ok=True)
    (path / "a.json").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return f"dfs.data.`{path.name}`"


def test_json_column_conflict_fails_only_queries_reading_it(conn: Any, data_dir: Path) -> None:
    table = _json(
        data_dir / "uc_inner_list",
        [
            {"id": 1, "inner_list": 5, "name": "a"},
            {"id": 2, "inner_list": "x", "name": "b"},
        ],
    )
    assert rows(conn, f"SELECT id, name FROM {table} ORDER BY id") == [(1, "a"), (2, "b")]
    assert rows(conn, f"SELECT COUNT(*) FROM {table}") == [(2,)]
    for sql in (f"SELECT * FROM {table}", f"SELECT inner_list FROM {table}"):
        message = error(conn, sql)
        assert message.startswith("DATA_READ ERROR: JSON column [inner_list] changes type")
        assert "Line: 2" in message and "a.json" in message


def test_json_member_conflict_fails_only_queries_reading_it(conn: Any, data_dir: Path) -> None:
    table = _json(
        data_dir / "uc_member",
        [{"id": 1, "m": {"a": 1, "b": 5}}, {"id": 2, "m": {"a": 2, "b": "x"}}],
    )
    got = rows(conn, f"SELECT t.id, t.m.a FROM {table} t ORDER BY t.id")
    assert got == [(1, 1), (2, 2)]
    for sql in (f"SELECT t.m.b FROM {table} t", f"SELECT m FROM {table}"):
        assert "JSON column [m.b] changes type" in error(conn, sql)


def test_json_type_change_past_the_sample_in_an_unread_column(conn: Any, data_dir: Path) -> None:
    # The schema sample (1,000 records) never sees the strings; only the query reading x does.
    records = [{"id": i, "x": i if i < 1200 else "text"} for i in range(1500)]
    table = _json(data_dir / "uc_late", records)
    assert rows(conn, f"SELECT COUNT(*), SUM(id) FROM {table}") == [(1500, sum(range(1500)))]
    assert "Line: 1201" in error(conn, f"SELECT MAX(x) FROM {table}")


def test_parquet_files_disagreeing_on_an_unread_column(conn: Any, data_dir: Path) -> None:
    root = data_dir / "uc_contributions"
    root.mkdir()
    decimals = pa.array([decimal.Decimal("1.50"), decimal.Decimal("2.25")], pa.decimal128(10, 2))
    pq.write_table(pa.table({"id": [1, 2], "contributions": decimals}), root / "a.parquet")
    pq.write_table(pa.table({"id": [3], "contributions": [3.5]}), root / "b.parquet")
    table = "dfs.data.`uc_contributions`"
    assert rows(conn, f"SELECT id FROM {table} ORDER BY id") == [(1,), (2,), (3,)]
    message = error(conn, f"SELECT contributions FROM {table}")
    assert "Column [contributions] has type DECIMAL(10, 2) in one file and DOUBLE" in message
    assert "a.parquet" in message and "b.parquet" in message


def test_a_malformed_value_in_an_unread_column(conn: Any, data_dir: Path) -> None:
    # Under a provided schema `id` is INT; the second record's `x` cannot be one. Only a query
    # that reads `id` converts it, so only such a query fails, naming the value and the file.
    root = data_dir / "uc_malformed"
    root.mkdir()
    (root / "f.csvh").write_text("id,name\n1,a\nx,b\n")
    table = "dfs.data.`uc_malformed`"
    conn.cursor().execute(f"CREATE OR REPLACE SCHEMA (id INT, name VARCHAR) FOR TABLE {table}")
    assert rows(conn, f"SELECT name FROM {table} ORDER BY name") == [("a",), ("b",)]
    assert rows(conn, f"SELECT COUNT(*) FROM {table}") == [(2,)]
    message = error(conn, f"SELECT id, name FROM {table}")
    assert "Illegal conversion: Column `id` of type INT, Illegal value `x`" in message
    assert "f.csvh" in message
