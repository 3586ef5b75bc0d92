"""JSON inputs off the beaten path, read through SQL as Drill reads them.

Each test writes one small file and asserts Drill's answer: the rows, or the error kind and
the context that locates the fault (file and line), never a traceback.
"""

from __future__ import annotations

import gzip
import math
from pathlib import Path
from typing import Any

import pytest

PROJECTION_ERROR = (
    "VALIDATION ERROR: Reader column type not compatible with projection specification"
)


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.cursor().execute(sql).fetchall()]


def error(conn: Any, sql: str) -> str:
    with pytest.raises(Exception) as info:
        conn.cursor().execute(sql).fetchall()
    return str(info.value)


def table(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return f"dfs.`{path}`"


# ------------------------------------------------------------ columns of no known type yet


@pytest.mark.parametrize(
    "expr", ["t.a.b", "t.a[0]", "t.a.b.c", "t.a[0].b", "t.a.b[1]", "t.a[0][1]", "t.m.k.z"]
)
def test_column_null_in_every_row_used_as_map_or_array_is_null(
    conn: Any, tmp_path: Path, expr: str
) -> None:
    # Before: 'Reader column type not compatible' (a is INT because it was only ever null);
    # Drill's type for the column is not known yet, so the projection's use gives NULL.
    t = table(tmp_path, "n.json", '{"a": null, "x": 1, "m": {"k": null}}\n{"a": null, "x": 2}\n')
    assert rows(conn, f"SELECT {expr}, t.x FROM {t} t ORDER BY t.x") == [(None, 1), (None, 2)]


def test_null_column_used_as_map_beside_a_wildcard_is_a_map(conn: Any, tmp_path: Path) -> None:
    # Before: SELECT *, t.a.b gave 'Reader column type not compatible' though t.a.b alone
    # was NULL. The projection types the column under the wildcard too: a map holding b.
    t = table(tmp_path, "n.json", '{"a": null, "x": 1}\n{"a": null, "x": 2}\n')
    sql = f"SELECT *, t.a.b FROM {t} t ORDER BY t.x"
    assert rows(conn, sql) == [({"b": None}, 1, None), ({"b": None}, 2, None)]
    assert rows(conn, f"SELECT *, t.a[0] FROM {t} t ORDER BY t.x") == [([], 1, None), ([], 2, None)]
    assert rows(conn, f"SELECT * FROM {t} t ORDER BY t.x") == [(None, 1), (None, 2)]


def test_null_column_used_as_map_in_where(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "n.json", '{"a": null, "x": 1}\n')
    assert rows(conn, f"SELECT t.x FROM {t} t WHERE t.a.b IS NULL") == [(1,)]


@pytest.mark.parametrize(
    ("expr", "projected", "column"),
    [
        ("t.b.c[0]", "c[]", "`c` BIGINT"),
        ("t.b.d[0]", "d[]", "`d` VARCHAR"),
        ("t.b.c.x", "c {x}", "`c` BIGINT"),
        ("t.l[0].x", "l[0] {x}", "`l` ARRAY<BIGINT>"),
    ],
)
def test_nested_member_used_against_its_type_is_drills_projection_error(
    conn: Any, tmp_path: Path, expr: str, projected: str, column: str
) -> None:
    # Before: t.b.c[0] leaked Spark's DATATYPE_MISMATCH about get(b.c, 0)
    t = table(tmp_path, "s.json", '{"b": {"c": 5, "d": "s"}, "l": [1, 2]}\n')
    msg = error(conn, f"SELECT {expr} FROM {t} t")
    assert PROJECTION_ERROR in msg
    assert f"Projected column: {projected}" in msg
    assert f"column: {column}" in msg
    assert "s.json" in msg


def test_nested_members_used_as_they_are_still_read(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "s.json", '{"b": {"c": 5, "l": [1, 2], "r": [{"q": 7}]}}\n')
    assert rows(conn, f"SELECT t.b.l[1], t.b.c, t.b.r[0].q FROM {t} t") == [(2, 5, 7)]


# ------------------------------------------------------------------ how records are laid out


@pytest.mark.parametrize(
    "data",
    [
        '\ufeff{"a": 1}\n{"a": 2}\n',  # a UTF-8 byte-order mark is not data
        '\ufeff[{"a": 1}, {"a": 2}]',
        '{"a": 1}{"a": 2}',  # concatenated, no newline
        '{\n  "a": 1\n}\n\n{\n  "a":\n    2\n}',  # spread over lines
        '[\n  {\n    "a": 1\n  },\n  {\n    "a": 2\n  }\n]\n',  # one array over many lines
    ],
)
def test_record_layouts_read_the_same_rows(conn: Any, tmp_path: Path, data: str) -> None:
    t = table(tmp_path, "l.json", data)
    assert rows(conn, f"SELECT * FROM {t}") == [(1,), (2,)]
    assert rows(conn, f"SELECT COUNT(*), SUM(a) FROM {t}") == [(2, 3)]


def test_long_top_level_array_over_many_lines(conn: Any, tmp_path: Path) -> None:
    items = ",\n".join(f'  {{\n    "a": {i},\n    "s": "v{i}"\n  }}' for i in range(300))
    t = table(tmp_path, "arr.json", f"[\n{items}\n]\n")
    assert rows(conn, f"SELECT COUNT(*), SUM(a), MIN(s) FROM {t}") == [(300, 44850, "v0")]
    assert rows(conn, f"SELECT s FROM {t} WHERE a = 299") == [("v299",)]


@pytest.mark.parametrize("data", ["", "  \n\n \t \r\n  "])
def test_empty_or_blank_file_is_an_empty_table(conn: Any, tmp_path: Path, data: str) -> None:
    t = table(tmp_path, "blank.json", data)
    assert rows(conn, f"SELECT * FROM {t}") == []
    assert rows(conn, f"SELECT COUNT(*) FROM {t}") == [(0,)]


def test_gzipped_json(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "g.json.gz", gzip.compress(b'{"a": 1, "s": "x"}\n{"a": 2, "s": "y"}\n'))
    assert rows(conn, f"SELECT s, a FROM {t} ORDER BY a") == [("x", 1), ("y", 2)]


@pytest.mark.parametrize(
    ("data", "found", "line"),
    [
        ("1\n2\n", "a number", 1),
        ('"text"\n', "a string", 1),
        ('{"a": 1}\n{"a": 2}\n3\n', "a number", 3),
        ("[1, 2]", "a number", 1),
    ],
)
def test_scalar_at_top_level_is_a_located_data_read_error(
    conn: Any, tmp_path: Path, data: str, found: str, line: int
) -> None:
    t = table(tmp_path, "scalar.json", data)
    for sql in (f"SELECT * FROM {t}", f"SELECT COUNT(*) FROM {t}"):
        msg = error(conn, sql)
        assert msg.startswith("DATA_READ ERROR:")
        assert f"JSON object at the top level but found {found}" in msg
        assert "scalar.json" in msg and f"Line: {line}" in msg
        assert "Traceback" not in msg


# ------------------------------------------------------------------------- unusual values


def test_nan_and_infinity_are_doubles_by_default(conn: Any, tmp_path: Path) -> None:
    # Drill: store.json.reader.allow_nan_inf (default true) reads them as DOUBLE
    t = table(tmp_path, "nan.json", '{"n": NaN, "i": Infinity, "m": -Infinity}\n{"n": 1.5}\n')
    got = rows(conn, f"SELECT n, i, m FROM {t}")
    assert math.isnan(got[0][0]) and got[0][1:] == (math.inf, -math.inf)
    assert got[1] == (1.5, None, None)
    assert rows(conn, f"SELECT COUNT(*) FROM {t} WHERE i = CAST('Infinity' AS DOUBLE)") == [(1,)]


def test_nan_refused_when_the_option_is_off(conn: Any, tmp_path: Path) -> None:
    # TestJsonNanInf.testDisableNanInf: the error says "Error parsing JSON"
    t = table(tmp_path, "nan.json", '{"i": 1.0}\n{"i": Infinity}\n')
    conn.cursor().execute("ALTER SESSION SET `store.json.reader.allow_nan_inf` = false")
    msg = error(conn, f"SELECT * FROM {t}")
    assert msg.startswith("DATA_READ ERROR: Error parsing JSON")
    assert "Infinity" in msg and "nan.json" in msg and "Line: 2" in msg
    conn.cursor().execute("ALTER SESSION SET `store.json.reader.skip_invalid_records` = true")
    assert rows(conn, f"SELECT * FROM {t}") == [(1.0,)]


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ('{"a": 1}\n{"a": 12345678901234567890}\n', 2),
        ('{"a": -99999999999999999999}\n', 1),
        ('{"m": {"x": 1}}\n{"m": {"x": 99999999999999999999}}\n', 2),
        ('{"l": [1, 2]}\n{"l": [3, 18446744073709551616]}\n', 2),
    ],
)
def test_integer_beyond_bigint_is_a_located_data_read_error(
    conn: Any, tmp_path: Path, data: str, line: int
) -> None:
    t = table(tmp_path, "big.json", data)
    msg = error(conn, f"SELECT * FROM {t}")
    assert msg.startswith("DATA_READ ERROR: Error parsing JSON - Numeric value (")
    assert "out of range of long" in msg
    assert "big.json" in msg and f"Line: {line}" in msg


def test_bigint_limits_themselves_read(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "lim.json", '{"a": -9223372036854775808}\n{"a": 9223372036854775807}\n')
    assert rows(conn, f"SELECT a FROM {t}") == [(-(2**63),), (2**63 - 1,)]


def test_empty_arrays(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "e.json", '{"a": [], "x": 1}\n{"a": [], "x": 2}\n')
    assert rows(conn, f"SELECT a, t.a[0] FROM {t} t ORDER BY x") == [([], None), ([], None)]
    t2 = table(tmp_path, "e2.json", '{"a": []}\n{"a": [4, 5]}\n')
    assert rows(conn, f"SELECT a, t.a[1] FROM {t2} t") == [([], None), ([4, 5], 5)]


def test_nulls_in_arrays_read_as_drill_stores_them(conn: Any, tmp_path: Path) -> None:
    # Drill's JSON reader (TestScalarArrays): a null element is the type's zero value, a null
    # or absent array an empty one; arrays are never NULL
    data = (
        '{"i": [1, null, 2], "s": ["x", null], "d": [null, 1.5], "b": [true, null]}\n'
        '{"i": null, "s": null}\n'
    )
    t = table(tmp_path, "n.json", data)
    assert rows(conn, f"SELECT i, s, d, b FROM {t}") == [
        ([1, 0, 2], ["x", ""], [0.0, 1.5], [True, False]),
        ([], [], [], []),
    ]
    assert rows(conn, f"SELECT t.i[1], t.s[1] FROM {t} t") == [(0, ""), (None, None)]


def test_array_of_nulls_only(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "n.json", '{"a": [null, null], "x": 1}\n')
    assert rows(conn, f"SELECT x, cardinality(a) FROM {t}") == [(1, 2)]


def test_map_in_an_array_with_a_null_member_keeps_the_null(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "r.json", '{"r": [{"q": 1}, {"q": null}]}\n')
    assert rows(conn, f"SELECT t.r[0].q, t.r[1].q FROM {t} t") == [(1, None)]


# ------------------------------------------------------------------------------ key names


def test_key_in_another_case_is_the_same_column(conn: Any, tmp_path: Path) -> None:
    # Drill's names are case-insensitive: the first spelling names the column
    t = table(tmp_path, "c.json", '{"Name": "x", "m": {"K": 1}}\n{"name": "y", "m": {"k": 2}}\n')
    cur = conn.cursor().execute(f"SELECT * FROM {t}")
    assert [d[0] for d in cur.description] == ["Name", "m"]
    assert [r[0] for r in cur.fetchall()] == ["x", "y"]
    assert rows(conn, f"SELECT NAME, t.m.k FROM {t} t") == [("x", 1), ("y", 2)]


def test_duplicate_key_in_one_object_keeps_the_last_value(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "d.json", '{"a": 1, "b": "s", "a": 2}\n')
    assert rows(conn, f"SELECT a, b FROM {t}") == [(2, "s")]


def test_duplicate_key_of_two_types_is_a_located_error(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "d.json", '{"a": 0}\n{"a": 1, "A": "x"}\n')
    msg = error(conn, f"SELECT * FROM {t}")
    assert msg.startswith("DATA_READ ERROR:")
    assert "Column: A" in msg and "d.json" in msg and "Line: 2" in msg


# -------------------------------------------------------------------------------- nesting


def _nested(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


def test_deep_nesting_reads(conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "deep.json", _nested(63) + "\n")
    assert rows(conn, f"SELECT t.a.a.a.a FROM {t} t")[0][0]["a"]["a"]["a"]["a"]["a"] is not None
    arrays = '{"a": ' + "[" * 62 + "7" + "]" * 62 + "}\n"
    t = table(tmp_path, "deep_arrays.json", arrays)
    assert rows(conn, f"SELECT COUNT(*) FROM {t}") == [(1,)]


@pytest.mark.parametrize("levels", [64, 5000])
def test_nesting_too_deep_is_a_located_data_read_error(
    conn: Any, tmp_path: Path, levels: int
) -> None:
    # Before: a SYSTEM error from Spark's Python worker, or Python's RecursionError
    t = table(tmp_path, "deep.json", '{"a": 1}\n' + _nested(levels) + "\n")
    msg = error(conn, f"SELECT * FROM {t}")
    assert msg.startswith("DATA_READ ERROR: Error parsing JSON - objects and arrays nested")
    assert "deep.json" in msg and "Line: 2" in msg


# ------------------------------------------------- members first met past the schema sample

LATE = "".join(f'{{"id": {i}, "n": {i}}}\n' for i in range(6)) + '{"id": 6, "n": 6, "late": "x"}\n'


@pytest.fixture(params=["arrow", "python"])
def sampled_conn(conn: Any, request: pytest.FixtureRequest) -> Any:
    """A session sampling 3 rows per file, reading JSON on the pyarrow or the Python path."""
    conn.cursor().execute("ALTER SESSION SET `auger.scan.json_sample_rows` = 3")
    if request.param == "python":
        conn.cursor().execute("ALTER SESSION SET `auger.scan.json_force_python` = true")
    return conn


@pytest.mark.parametrize(
    "query", ["SELECT * FROM {t}", "SELECT id, late FROM {t}", "SELECT late FROM {t}"]
)
def test_member_met_past_the_sample_is_a_located_error(
    sampled_conn: Any, tmp_path: Path, query: str
) -> None:
    # Before: read as NULL (and missing from SELECT *): the value was silently lost.
    t = table(tmp_path, "late.json", LATE)
    message = error(sampled_conn, query.format(t=t))
    assert "DATA_READ ERROR: Column [late] first holds a value past the rows sampled" in message
    assert "Line: 7" in message and "late.json" in message
    assert "auger.scan.json_sample_rows" in message


def test_member_met_past_the_sample_is_read_when_every_row_is_sampled(
    sampled_conn: Any, tmp_path: Path
) -> None:
    t = table(tmp_path, "late.json", LATE)
    sampled_conn.cursor().execute("ALTER SESSION SET `auger.scan.json_sample_rows` = -1")
    assert rows(sampled_conn, f"SELECT id, late FROM {t} WHERE id >= 5 ORDER BY id") == [
        (5, None),
        (6, "x"),
    ]


def test_late_member_the_query_does_not_use_changes_nothing(
    sampled_conn: Any, tmp_path: Path
) -> None:
    t = table(tmp_path, "late.json", LATE + '{"id": 7, "n": 7, "late": null}\n')
    assert rows(sampled_conn, f"SELECT id FROM {t} WHERE n >= 5 ORDER BY id") == [(5,), (6,), (7,)]


def test_late_member_holding_only_nulls_is_null(sampled_conn: Any, tmp_path: Path) -> None:
    data = "".join(f'{{"id": {i}}}\n' for i in range(5)) + '{"id": 5, "late": null}\n'
    t = table(tmp_path, "late.json", data)
    assert rows(sampled_conn, f"SELECT id, late FROM {t} WHERE id >= 4 ORDER BY id") == [
        (4, None),
        (5, None),
    ]


LATE_MEMBER = (
    "".join(f'{{"id": {i}, "m": {{"a": {i}}}, "l": [{{"a": {i}}}]}}\n' for i in range(5))
    + '{"id": 5, "m": {"a": 5, "b": "new"}, "l": [{"a": 5}]}\n'
    + '{"id": 6, "m": {"a": 6}, "l": [{"a": 6, "c": true}]}\n'
)


@pytest.mark.parametrize(
    ("query", "member", "line"),
    [
        ("SELECT * FROM {t}", "m.b", 6),
        ("SELECT t.m FROM {t} t", "m.b", 6),
        ("SELECT t.l FROM {t} t WHERE t.id = 6", "l.c", 7),
    ],
)
def test_map_member_met_past_the_sample_is_a_located_error(
    sampled_conn: Any, tmp_path: Path, query: str, member: str, line: int
) -> None:
    t = table(tmp_path, "late.json", LATE_MEMBER)
    message = error(sampled_conn, query.format(t=t))
    assert f"Column [{member}] first holds a value past the rows sampled" in message
    assert f"Line: {line}" in message


def test_members_the_sample_showed_still_read_past_it(sampled_conn: Any, tmp_path: Path) -> None:
    t = table(tmp_path, "late.json", LATE_MEMBER)
    assert rows(sampled_conn, f"SELECT t.id, t.m.a, t.l[0].a FROM {t} t WHERE t.id >= 5") == [
        (5, 5, 5),
        (6, 6, 6),
    ]


def test_type_change_past_the_sample_says_how_to_widen_it(
    sampled_conn: Any, tmp_path: Path
) -> None:
    data = "".join(f'{{"v": {i}}}\n' for i in range(5)) + '{"v": 1.5}\n'
    t = table(tmp_path, "late.json", data)
    message = error(sampled_conn, f"SELECT SUM(v) FROM {t}")
    assert "where BIGINT was expected" in message and "Line: 6" in message
    assert "`auger.scan.json_sample_rows` = 6" in message
    sampled_conn.cursor().execute("ALTER SESSION SET `auger.scan.json_sample_rows` = -1")
    assert rows(sampled_conn, f"SELECT SUM(v) FROM {t}") == [(11.5,)]
