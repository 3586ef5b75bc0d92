"""Result rendering: sqlline's table and vertical layouts, csv/tsv, a JSON array and JSON lines,
and an EXPLAIN's plan as lines."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from auger.cli.output import (
    OUTPUT_FORMATS,
    fit_table,
    format_value,
    plan_text,
    render,
    rows_selected,
    rows_shown,
)

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


def test_ndjson_lines_use_drill_rest_encodings() -> None:
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
    (line,) = render("ndjson", names, rows).splitlines()
    assert json.loads(line) == {
        "d": 1.5,
        "f": "NaN",
        "b": "YWI=",
        "day": "2024-01-02",
        "ts": "2024-01-02 03:04:05",
        "n": None,
        "t": True,
    }


def test_json_is_one_array_one_object_a_line() -> None:
    text = render("json", ["id", "name"], [(1, "Sheri"), (2, None)])
    assert json.loads(text) == [{"id": 1, "name": "Sheri"}, {"id": 2, "name": None}]
    assert text.splitlines() == ['[{"id": 1, "name": "Sheri"},', '{"id": 2, "name": null}]']
    assert json.loads(render("json", ["id"], [])) == []  # no rows is still one JSON value


def test_vertical_separates_records_with_a_blank_line() -> None:
    text = render("vertical", ["a"], [(1,), (2,), (3,)])
    assert text.split("\n\n") == ["a  1", "a  2", "a  3"]


PLAN = "00-00    Screen\n00-01      Scan(table=[cp.employee.json], columns=[`full_name`])\n"


def test_an_explain_plan_is_its_own_lines() -> None:
    names, rows = ["text", "json"], [(PLAN, '{\n  "head": {}\n}')]
    assert plan_text("EXPLAIN PLAN FOR SELECT 1", names, rows) == PLAN.rstrip("\n")
    assert plan_text("-- why\n explain plan for select 1", names, rows) == PLAN.rstrip("\n")
    # any other statement with such columns is a result like any other
    assert plan_text("SELECT a AS text, b AS json FROM t", names, rows) is None
    # the data formats keep both columns
    (row,) = json.loads(render("json", names, rows))
    assert row == {"text": PLAN, "json": '{\n  "head": {}\n}'}
    assert render("csv", names, rows).startswith("text,json\n")


def test_formats_and_unknown_format() -> None:
    assert set(OUTPUT_FORMATS) == {
        "table", "vertical", "csv", "tsv", "json", "ndjson", "markdown"
    }  # fmt: skip
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


def test_fit_table_leaves_a_table_that_fits_as_it_is() -> None:
    names, rows = ["a", "word"], [(1, "hello"), (None, "x")]
    assert fit_table(names, rows, 80) == render("table", names, rows)
    assert fit_table(names, rows, len(render("table", names, rows).splitlines()[0])) == render(
        "table", names, rows
    )


def test_fit_table_cuts_the_widest_columns_with_an_ellipsis() -> None:
    names = ["id", "comment", "title"]
    rows = [(1, "x" * 60, "Senior Vice President"), (22, "short", "VP")]
    text = fit_table(names, rows, 50)
    assert text is not None
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 50
    assert all(len(line) == len(lines[0]) for line in lines)  # still a box
    assert "| id |" in lines[1]  # narrow columns keep their width
    assert "x" * 10 + "…" in text and "x" * 60 not in text
    assert "| 22 | short" in text
    assert fit_table(names, rows, 50, ellipsis="~") == text.replace("…", "~")


def test_fit_table_gives_up_when_the_columns_cannot_fit() -> None:
    names = [f"column_{i}" for i in range(30)]
    rows = [tuple(range(30))]
    assert fit_table(names, rows, 120) is None  # 30 columns need 30 * 8 characters at least
    assert fit_table(names, rows, 400) is not None
    assert fit_table([], [], 80) is None


def test_markdown_and_the_capped_footer() -> None:
    assert render("markdown", ["a", "b|c"], [(1, None)]) == "| a | b\\|c |\n|---|---|\n| 1 | null |"
    assert (
        rows_shown(40, 1000, 1.5) == "40 of 1000 rows shown (1.500 seconds); .maxrows N to change"
    )
    assert (
        rows_shown(40, None, None) == "first 40 rows shown, more not fetched; .maxrows N to change"
    )
