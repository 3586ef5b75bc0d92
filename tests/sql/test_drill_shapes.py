"""Drill's answers for names the data does not have, and for column order, through SQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.errors import UserError


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    rows = [{"m": {"a": 1, "b": {"c": "x"}}, "n": 1}, {"m": {"a": 2}, "n": 2}]
    (root / "nested.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    s = pa.array([{"x": 1}, {"x": 2}], pa.struct([("x", pa.int64())]))
    pq.write_table(pa.table({"s": s}), root / "struct.parquet")
    (root / "cars.csvh").write_text('Year,Make\n1999,Chevy\n2000,"Ford"\n')
    (root / "plain.csv").write_text("1,a\n2,b\n")
    for year in ("2023", "2024"):
        (root / "part" / year).mkdir(parents=True)
        pq.write_table(pa.table({"v": [int(year)]}), root / "part" / year / "p.parquet")
        (root / "jpart" / year).mkdir(parents=True)
        (root / "jpart" / year / "a.json").write_text(json.dumps({"v": int(year)}) + "\n")
    return root


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    cur = conn.cursor()
    cur.execute(sql)
    return cur.fetchall()


def names(conn: Any, sql: str) -> list[str]:
    cur = conn.cursor()
    cur.execute(sql)
    cur.fetchall()
    return [d[0] for d in cur.description]


def test_missing_json_map_member_is_null(conn: Any, files: Path) -> None:
    table = f"dfs.`{files}/nested.json`"
    assert rows(conn, f"SELECT t.m.zz FROM {table} t") == [(None,), (None,)]
    assert rows(conn, f"SELECT t.n FROM {table} t WHERE t.m.zz IS NULL ORDER BY t.n") == [
        (1,),
        (2,),
    ]
    assert rows(conn, f"SELECT t.m.b.c, t.m.b.nope, t.m.zz.k FROM {table} t ORDER BY t.n") == [
        ("x", None, None),
        (None, None, None),
    ]


def test_missing_parquet_struct_member_is_null(conn: Any, files: Path) -> None:
    sql = f"SELECT t.s.x, t.s.nothere FROM dfs.`{files}/struct.parquet` t ORDER BY t.s.x"
    assert rows(conn, sql) == [(1, None), (2, None)]


def test_missing_text_column_is_a_blank_string(conn: Any, files: Path) -> None:
    table = f"dfs.`{files}/cars.csvh`"
    cur = conn.cursor()
    cur.execute(f"SELECT `Year`, Category FROM {table} ORDER BY `Year`")
    assert cur.fetchall() == [("1999", ""), ("2000", "")]
    assert cur.description[1][1] == "CHARACTER VARYING"
    assert rows(conn, f"SELECT Make FROM {table} WHERE Category = 'x'") == []
    assert rows(conn, f"SELECT columns[1], foo FROM dfs.`{files}/plain.csv` ORDER BY 1") == [
        ("a", ""),
        ("b", ""),
    ]


def test_columns_index_on_a_header_file_is_drills_error(conn: Any, files: Path) -> None:
    with pytest.raises(UserError) as err:
        conn.session.execute(f"SELECT `Year`, columns[0] FROM dfs.`{files}/cars.csvh`")
    assert err.value.message == "Unexpected `columns`[x]; file has headers or schema"
    assert "Plugin config name: csvh" in err.value.context
    assert "Extract headers: true" in err.value.context


def test_columns_as_a_map_is_drills_error(conn: Any, files: Path) -> None:
    with pytest.raises(UserError) as err:
        conn.session.execute(f"SELECT t.columns.foo FROM dfs.`{files}/plain.csv` t")
    assert err.value.message == "Column `columns` has map elements, but must be an array"


def test_parquet_wildcard_puts_directories_first(conn: Any, files: Path) -> None:
    assert names(conn, f"SELECT * FROM dfs.`{files}/part`") == ["dir0", "v"]
    assert names(conn, f"SELECT * FROM dfs.`{files}/jpart`") == ["v", "dir0"]
