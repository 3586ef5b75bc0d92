"""JSON format options given in a table function reach the JSON reader, as in Drill."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tests.sql.helpers import error, rows


def _table(name: str, options: str) -> str:
    return f"table(dfs.data.`{name}`(type => 'json', {options}))"


def test_all_text_mode(conn: Any, data_dir: Path) -> None:
    (data_dir / "tf_text.json").write_text('{"a": 1, "b": 2.5, "c": true}\n')
    assert rows(conn, "SELECT a, b, c FROM dfs.data.`tf_text.json`") == [(1, 2.5, True)]
    got = rows(conn, f"SELECT a, b, c FROM {_table('tf_text.json', 'allTextMode => true')}")
    assert got == [("1", "2.5", "true")]
    # the table function's value wins over the session's
    rows(conn, "ALTER SESSION SET `store.json.all_text_mode` = true")
    assert rows(conn, "SELECT a FROM dfs.data.`tf_text.json`") == [("1",)]
    got = rows(conn, f"SELECT a, b FROM {_table('tf_text.json', 'allTextMode => false')}")
    assert got == [(1, 2.5)]


def test_read_numbers_as_double(conn: Any, data_dir: Path) -> None:
    (data_dir / "tf_double.json").write_text('{"a": 1}\n{"a": 2}\n')
    assert rows(conn, "SELECT a FROM dfs.data.`tf_double.json`") == [(1,), (2,)]
    got = rows(conn, f"SELECT a FROM {_table('tf_double.json', 'readNumbersAsDouble => true')}")
    assert got == [(1.0,), (2.0,)]
    assert all(isinstance(v, float) for (v,) in got)


def test_skip_malformed_json_records(conn: Any, data_dir: Path) -> None:
    (data_dir / "tf_bad.json").write_text('{"a": 1}\n{"a": \n{"a": 3}\n')
    assert "DATA_READ ERROR" in error(conn, "SELECT a FROM dfs.data.`tf_bad.json`")
    got = rows(conn, f"SELECT a FROM {_table('tf_bad.json', 'skipMalformedJSONRecords => true')}")
    assert (1,) in got and len(got) < 3


def test_nan_inf(conn: Any, data_dir: Path) -> None:
    (data_dir / "tf_nan.json").write_text('{"v": NaN}\n{"v": Infinity}\n')
    got = rows(conn, "SELECT v FROM dfs.data.`tf_nan.json`")
    assert math.isnan(got[0][0]) and got[1][0] == math.inf
    message = error(conn, f"SELECT v FROM {_table('tf_nan.json', 'nanInf => false')}")
    assert "DATA_READ ERROR" in message and "NaN" in message
    # switched off for the session, switched back on for one table
    rows(conn, "ALTER SESSION SET `store.json.reader.allow_nan_inf` = false")
    assert "DATA_READ ERROR" in error(conn, "SELECT v FROM dfs.data.`tf_nan.json`")
    got = rows(conn, f"SELECT v FROM {_table('tf_nan.json', 'nanInf => true')}")
    assert got[1] == (math.inf,)


# Drill's jsoninput/drill4653/file.json: the first record is malformed (an unclosed member name)
DRILL_4653 = "\n".join(
    [
        '{"balance": 1000.0,"num": 100,"is_vip": true,"name": "foo3","curr":{"denom":"pound",'
        '"test":{"value :false}}}'
    ]
    + [
        f'{{"balance": 1000.{i},"num": 100,"is_vip": true,"name": "foo3","curr":{{"denom":"pound"'
        + (',"test":{"value":false}}}' if i == 1 else "}}")
        for i in range(1, 10)
    ]
)


def test_skip_malformed_keeps_every_good_record(conn: Any, data_dir: Path) -> None:
    """Drill's TestJsonModes.testSkipInvalidRecords: Drill sums 6003.9 there, because its parser
    loses the three good records after the bad one; auger skips exactly the bad record
    (docs/drill-differences.md, JSON dialect)."""
    (data_dir / "drill4653.json").write_text(DRILL_4653 + "\n")
    message = error(conn, "SELECT SUM(balance) FROM dfs.data.`drill4653.json`")
    assert "DATA_READ ERROR" in message and "drill4653.json" in message
    table = _table("drill4653.json", "skipMalformedJSONRecords => true")
    ((total, count),) = rows(conn, f"SELECT SUM(balance) AS total, COUNT(*) FROM {table}")
    assert count == 9
    assert math.isclose(total, 9004.5)
    rows(conn, "ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    ((total,),) = rows(conn, "SELECT SUM(balance) FROM dfs.data.`drill4653.json`")
    assert math.isclose(total, 9004.5)
