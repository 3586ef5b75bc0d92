"""Result rendering: sqlline's table and vertical layouts, csv/tsv and JSON lines."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from auger.cli.output import OUTPUT_FORMATS, format_value, render, rows_selected

NAMES = ["id", "name", "tags"]
ROWS = [(1, "Sheri", ["a", "b"]), (2, None, {"k": 1.5})]


def test_table_is_boxed_and_padded() -> None:
    assert render("table", NAMES, ROWS).splitlines() == [
        "+----+-------+-----------+",
        "| id | name  | tags      |",
        "+----+-------+-----------+",
        '| 1  | Sheri | ["a","b"] |',
        '| 2  | null  | {"k":1.5} |',
        "+----+-------+-----------+",
    ]


def test_table_cells_stay_on_one_line() -> None:
    text = render("table", ["s"], [("a\nb\tc",)])
    assert "| a\\nb\\tc |" in text.splitlines()


def test_vertical_shows_one_block_per_row() -> None:
    assert render("vertical", NAMES, ROWS) == (
        'id    1\nname  Sheri\ntags  ["a","b"]\n\nid    2\nname  null\ntags  {"k":1.5}'
    )


def test_csv_and_tsv_quote_and_leave_nulls_empty() -> None:
    rows = [(1, 'say "hi", then', None)]
    assert render("csv", ["a", "b", "c"], rows) == 'a,b,c\n1,"say ""hi"", then",'
    assert render("tsv", ["a", "b", "c"], [(1, "x, y", None)]) == "a\tb\tc\n1\tx, y\t"


def test_json_lines_use_drill_rest_encodings() -> None:
    rows = [
        (
            decimal.Decimal("1.50"),
            float("nan"),
            b"ab",
            dt.date(2024, 1, 2),
            dt.datetime(2024, 1, 2, 3, 4, 5),
            None,
            True,
        )
    ]
    names = ["d", "f", "b", "day", "ts", "n", "t"]
    (line,) = render("json", names, rows).splitlines()
    assert json.loads(line) == {
        "d": 1.5,
        "f": "NaN",
        "b": "YWI=",
        "day": "2024-01-02",
        "ts": "2024-01-02 03:04:05",
        "n": None,
        "t": True,
    }


def test_formats_and_unknown_format() -> None:
    assert set(OUTPUT_FORMATS) == {"table", "vertical", "csv", "tsv", "json"}
    with pytest.raises(ValueError, match="Unknown output format 'xml'; use one of table"):
        render("xml", ["a"], [(1,)])


def test_values_print_like_drill() -> None:
    assert format_value(None) == "null"
    assert format_value(False) == "false"
    assert format_value({"a": [1, None]}) == '{"a":[1,null]}'
    assert format_value(dt.datetime(2024, 1, 1, tzinfo=dt.UTC)) == "2024-01-01 00:00:00"


def test_rows_selected_footer() -> None:
    assert rows_selected(1, 0.5) == "1 row selected (0.500 seconds)"
    assert rows_selected(0, 1.2345) == "0 rows selected (1.234 seconds)"
    assert rows_selected(12, 3) == "12 rows selected (3.000 seconds)"
