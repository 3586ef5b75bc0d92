"""CTAS writers as Drill's: NaN and Infinity in JSON output, and tables from empty sources."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from tests.sql.helpers import rows


def _written(tmp_workspace: Path, table: str) -> str:
    files = sorted((tmp_workspace / table).glob("*.json"))
    assert files, f"no JSON file in {table}"
    return "".join(f.read_text() for f in files)


def test_json_ctas_writes_nan_and_infinity_as_bare_tokens(
    conn: Any, data_dir: Path, tmp_workspace: Path
) -> None:
    (data_dir / "nan_inf.json").write_text(
        '{"id": 1, "nan_col": NaN, "inf_col": Infinity, "s": "NaN", "m": {"x": -Infinity},'
        ' "a": [1.5, NaN]}\n'
        '{"id": 2, "nan_col": 2.5, "inf_col": -Infinity, "s": "Infinity", "m": {"x": 0.5},'
        ' "a": [Infinity]}\n'
    )
    rows(conn, "ALTER SESSION SET `store.format` = 'json'")
    assert rows(
        conn, "CREATE TABLE dfs.tmp.nan_inf_out AS SELECT * FROM dfs.data.`nan_inf.json`"
    ) == [("0_0", 2)]
    text = _written(tmp_workspace, "nan_inf_out")
    # the doubles are bare tokens; the strings stay strings
    assert '"nan_col":NaN' in text and '"inf_col":Infinity' in text
    assert '"inf_col":-Infinity' in text and '"x":-Infinity' in text
    assert '"a":[1.5,NaN]' in text and '"a":[Infinity]' in text
    assert '"s":"NaN"' in text and '"s":"Infinity"' in text
    assert '"NaN"' not in text.replace('"s":"NaN"', "")
    got = rows(
        conn, "SELECT id, nan_col, inf_col, s, t.m.x, a FROM dfs.tmp.nan_inf_out t ORDER BY id"
    )
    assert math.isnan(got[0][1]) and got[0][2] == math.inf and got[0][3] == "NaN"
    assert got[0][4] == -math.inf and got[0][5][0] == 1.5 and math.isnan(got[0][5][1])
    assert got[1][1:5] == (2.5, -math.inf, "Infinity", 0.5) and got[1][5] == [math.inf]


def test_json_ctas_quotes_them_when_the_writer_option_is_off(
    conn: Any, data_dir: Path, tmp_workspace: Path
) -> None:
    (data_dir / "nan_quoted.json").write_text('{"v": NaN}\n{"v": 1.0}\n')
    rows(conn, "ALTER SESSION SET `store.format` = 'json'")
    rows(conn, "ALTER SESSION SET `store.json.writer.allow_nan_inf` = false")
    rows(conn, "CREATE TABLE dfs.tmp.nan_quoted_out AS SELECT * FROM dfs.data.`nan_quoted.json`")
    first = json.loads(_written(tmp_workspace, "nan_quoted_out").splitlines()[0])
    assert first == {"v": "NaN"}


def test_ctas_from_an_empty_source_succeeds(conn: Any, data_dir: Path, tmp_workspace: Path) -> None:
    (data_dir / "empty_src.json").write_text("")
    for store in ("json", "parquet", "csv"):
        rows(conn, f"ALTER SESSION SET `store.format` = '{store}'")
        table = f"from_empty_{store}"
        got = rows(conn, f"CREATE TABLE dfs.tmp.{table} AS SELECT * FROM dfs.data.`empty_src.json`")
        assert got == [("0_0", 0)]
        assert (tmp_workspace / table).is_dir()
        assert rows(conn, f"SELECT * FROM dfs.tmp.{table}") == []
        assert rows(conn, f"DROP TABLE dfs.tmp.{table}") == [(True, f"Table [{table}] dropped")]
    got = rows(conn, "CREATE TEMPORARY TABLE empty_temp AS SELECT * FROM dfs.data.`empty_src.json`")
    assert got == [("0_0", 0)]
    assert rows(conn, "SELECT * FROM empty_temp") == []
