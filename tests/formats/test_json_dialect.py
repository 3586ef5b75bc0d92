"""Drill's JSON dialect: comments, unquoted member names, any escaped character when allowed,
and Drill's words (with file, line and column) for what it refuses. Each case runs through the
default reader (pyarrow, the compiled projector when few members are read, falling back) and
the Python reader alone, and the main ones through SQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auger import _jsonscan
from auger.errors import ErrorKind, UserError
from auger.formats.json.dialect import DialectError, parse_value

from .test_json import scan, write

ROWS = [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]


@pytest.mark.parametrize(
    "text",
    [
        '{ a : 1, b : "x" }\n{ a : 2, b : "y" }\n',
        '// first\n{"a": 1, "b": "x"} // after\n/* between\n records */{"a": 2, "b": "y"}\n',
        '{"a": /* inside */ 1, "b": "x"}\n{"a": 2, // to the end\n "b": "y"}\n',
        '[{ a: 1, $b_: 0, b: "x" },\n // c\n { a: 2, b: "y" }]\n',
    ],
)
def test_unquoted_names_and_comments(tmp_path: Path, json_mode: dict[str, Any], text: str) -> None:
    _, rows = scan(tmp_path, text, json_mode, columns=["a", "b"])
    assert [{k: r[k] for k in ("a", "b")} for r in rows] == ROWS


def test_dialect_records_after_plain_ones(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    # the fast path reads the plain rows, the rest of the file falls back
    plain = "".join(f'{{"a": {i}, "b": "p", "c": {i}}}\n' for i in range(3000))
    text = plain + '{a: 3000, b: "q", c: 0} // done\n'
    _, rows = scan(tmp_path, text, json_mode, columns=["a"])
    assert [r["a"] for r in rows] == list(range(3001))


def test_escape_any_char_off_is_drills_error(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    path = write(tmp_path, '{"name": "ABC"}\n{"name": "AB\\S", "x": 1}\n')
    with pytest.raises(UserError) as info:
        scan(tmp_path, path.read_text(), json_mode)
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert err.message == "Error parsing JSON - Unrecognized character escape 'S' (code 83)"
    assert "Line: 2" in err.context and "Column: 14" in err.context  # at the S
    assert any(c.startswith("File: ") and c.endswith("f.json") for c in err.context)


@pytest.mark.parametrize("columns", [None, ["x"]])  # in a member read, and in one cut away
def test_escape_any_char_on(
    tmp_path: Path, json_mode: dict[str, Any], columns: list[str] | None
) -> None:
    opts = {"store.json.reader.allow_escape_any_char": True}
    text = '{"name": "ABC\\S", "x": 1}\n{"name": "\\\\\\q\\u0041", "x": 2}\n'
    _, rows = scan(tmp_path, text, json_mode, opts, columns=columns)
    if columns is None:
        assert rows == [{"name": "ABCS", "x": 1}, {"name": "\\qA", "x": 2}]
    else:
        assert [r["x"] for r in rows] == [1, 2]
    with pytest.raises(UserError, match="Unrecognized character escape 'S'"):
        scan(tmp_path, text, json_mode, columns=columns)


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        (
            '{"a": 1, "b": "x\ty"}\n',
            "Illegal unquoted character ((CTRL-CHAR, code 9)): has to be escaped using "
            "backslash to be included in string value",
            ("Line: 1", "Column: 17"),
        ),
        (
            '{"a": 1}\n{"a": 2, \'b\': 1}\n',
            "Unexpected character (''' (code 39)): was expecting either valid name character "
            "(for unquoted name) or double-quote (for quoted) to start field name",
            ("Line: 2", "Column: 10"),
        ),
        (
            '{"a": 1, "b": tru}\n',
            "Unrecognized token 'tru': was expecting (JSON String, Number, Array, Object or "
            "token 'null', 'true' or 'false')",
            ("Line: 1", "Column: 15"),
        ),
        (
            '{"a": 1 "b": 2}\n',
            "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries",
            ("Line: 1", "Column: 9"),
        ),
        (
            '{"a": 1, "b": 2} /x\n',
            "Unexpected character ('x' (code 120)): was expecting either '*' or '/' for a comment",
            ("Line: 1", "Column: 19"),
        ),
    ],
)
def test_refusals_in_drills_words(
    tmp_path: Path,
    json_mode: dict[str, Any],
    text: str,
    message: str,
    where: tuple[str, str],
) -> None:
    for columns in (None, ["a"]):
        with pytest.raises(UserError) as info:
            scan(tmp_path, text, json_mode, columns=columns)
        err = info.value
        assert err.kind is ErrorKind.DATA_READ
        assert err.message == "Error parsing JSON - " + message
        assert set(where) <= set(err.context)


def test_refused_records_are_skipped_when_asked(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    text = '{"a": 1}\n{"a": "\\S"}\n{a: 3}\n{"a": "x\ty"}\n{"a": 5}\n'
    opts = {"store.json.reader.skip_invalid_records": True, "store.json.all_text_mode": True}
    _, rows = scan(tmp_path, text, json_mode, opts)
    assert [r["a"] for r in rows] == ["1", "3", "5"]


def test_all_text_mode_keeps_the_number_text_in_dialect_records(
    tmp_path: Path, json_mode: dict[str, Any]
) -> None:
    opts = {"store.json.all_text_mode": True}
    _, rows = scan(tmp_path, "{a: 1.50, b: -2} // x\n", json_mode, opts)
    assert rows == [{"a": "1.50", "b": "-2"}]


def test_nan_in_a_dialect_record(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    _, rows = scan(tmp_path, "{a: NaN, b: 1} // c\n{a: -Infinity, b: 2}\n", json_mode)
    assert str(rows[0]["a"]) == "nan" and rows[1]["a"] == float("-inf")
    off = {"store.json.reader.allow_nan_inf": False}
    with pytest.raises(UserError, match="Non-standard token 'NaN'"):
        scan(tmp_path, "{a: NaN, b: 1} // c\n", json_mode, off)


def test_parse_value_says_where() -> None:
    assert parse_value("  /* x */ {a: [1, 2.5, {b: null}]}", 0, final=True) == (
        {"a": [1, 2.5, {"b": None}]},
        34,
    )
    with pytest.raises(DialectError) as info:
        parse_value('{"a": "\\x"}', 0, final=True)
    assert info.value.pos == 8


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": 1, "b": "x\\Sy"}\n',
        b'{"a": 1, "b": "x\ty"}\n',
        b'{"a": 1, "b": ["\\uZZ12"]}\n',
        b'{"a": 1, "b": "x\x01y"}\n',
    ],
)
def test_the_projector_hands_non_strict_strings_to_python(data: bytes) -> None:
    # a member cut away must still be strict JSON, else the Python reader judges the record
    lines = b'{"a": 0, "b": "\\\\\\"\\n"}\n' * 40 + data
    for variant in _jsonscan.stage1_variants():
        _jsonscan.use_stage1(variant)
        reason, consumed, records, _ = _jsonscan.project(lines, True, (b"a",))
        assert reason and records == 40 and consumed == len(lines) - len(data), variant
    _jsonscan.use_stage1(_jsonscan.stage1_variants()[-1])
    assert _jsonscan.project_reference(lines, True, (b"a",))[2] == 40


# ------------------------------------------------------------------------------ SQL


def _table(tmp_path: Path, name: str, data: str) -> str:
    path = tmp_path / name
    path.write_text(data)
    return f"dfs.`{path}`"


def test_dialect_through_sql(conn: Any, tmp_path: Path) -> None:
    t = _table(tmp_path, "d.json", '// users\n{ id : 1, name : "a" }\n/* two */ { id : 2 }\n')
    rows = conn.cursor().execute(f"SELECT id, name FROM {t} ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [(1, "a"), (2, None)]


def test_escape_any_char_through_sql(conn: Any, tmp_path: Path) -> None:
    # Drill's TestJsonEscapeAnyChar: {"name": "ABC\S"}
    t = _table(tmp_path, "escape.json", '{"name": "ABC\\S"}')
    cur = conn.cursor()
    with pytest.raises(Exception) as info:
        cur.execute(f"SELECT * FROM {t}").fetchall()
    assert "DATA_READ ERROR: Error parsing JSON - Unrecognized character escape" in str(info.value)
    cur.execute("ALTER SESSION SET `store.json.reader.allow_escape_any_char` = true")
    assert [tuple(r) for r in cur.execute(f"SELECT * FROM {t}").fetchall()] == [("ABCS",)]
    cur.execute("ALTER SESSION RESET `store.json.reader.allow_escape_any_char`")
    fn = f"table({t}(type => 'json', escapeAnyChar => true))"
    assert [tuple(r) for r in cur.execute(f"SELECT * FROM {fn}").fetchall()] == [("ABCS",)]
