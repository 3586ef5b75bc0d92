"""Drill's excel format, shipped as an entry-point plugin on the reader framework and queried
through SQL: the header row's names, Drill's types from the first data row, the sheet and region
options (camelCase and snake_case, also in a table function), allTextMode, the special columns,
projection, COUNT(*), implicit columns, a corrupt workbook and a missing sheet."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
import xlsxwriter

import auger
from auger.config import FormatConfig
from auger.formats import get_format, known_formats
from auger.plugins.excel import ExcelFormat, ExcelOptions, column_names
from auger.scan import ScanOperator
from tests.plugins.helpers import connect_with_formats, rows

PEOPLE = [
    (1, "Cornelia", 735.29, dt.datetime(1974, 10, 31)),
    (2, "Nydia", 784.14, dt.datetime(1966, 12, 10, 8, 30)),
    (3, "Waiter", None, dt.datetime(1961, 3, 12)),
    (4, "Cicely", 987.39, None),
]


def write_workbook(path: Path) -> None:
    book = xlsxwriter.Workbook(str(path))
    book.set_properties({"title": "People", "author": "Ann Author", "keywords": "test"})
    dates = book.add_format({"num_format": "yyyy-mm-dd hh:mm"})
    data = book.add_worksheet("data")
    data.write_row(0, 0, ["id", "first.name", "balance", "birth date"])
    r = 1
    for i, (pid, name, balance, born) in enumerate(PEOPLE):
        if i == 2:
            r += 1  # a blank row in the middle is skipped
        data.write_number(r, 0, pid)
        data.write_string(r, 1, name)
        if balance is not None:
            data.write_number(r, 2, balance)
        if born is not None:
            data.write_datetime(r, 3, born, dates)
        r += 1
    # the header on the fourth row, the region in columns B to D, an unused column E
    second = book.add_worksheet("Sheet2")
    second.write_string(0, 0, "a title, above the table")
    second.write_row(3, 1, ["Col1", "col1", "Notes"])
    second.write_row(4, 1, [10, 20, "x"])
    second.write_row(5, 1, [11, 21, "y"])
    second.write_row(6, 1, [12, 22, "z"])
    second.write_string(6, 4, "outside")
    mixed = book.add_worksheet("mixed")
    mixed.write_row(0, 0, ["code", "label"])
    mixed.write_row(1, 0, [1, "one"])
    mixed.write_row(2, 0, [2.5, 2])
    mixed.write_row(3, 0, ["three", True])
    raw = book.add_worksheet("raw")
    raw.write_row(0, 0, ["2019-02-17", "166.11.144.176"])
    raw.write_row(1, 0, ["2019-03-03", "203.221.176.215"])
    book.add_worksheet("empty")
    book.close()


def test_registered_by_entry_point_like_a_third_party() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="auger.formats")}
    assert names["excel"] == "auger.plugins.excel:ExcelFormat"
    assert "excel" in known_formats()
    assert isinstance(get_format("excel"), ExcelFormat)


def test_options_under_drill_names_and_snake_case() -> None:
    drill = {"sheetName": "s", "headerRow": 2, "lastRow": 9, "firstColumn": 2, "lastColumn": 5,
             "allTextMode": True}  # fmt: skip
    snake = {"sheet_name": "s", "header_row": "2", "last_row": "9", "first_column": "2",
             "last_column": "5", "all_text_mode": "true"}  # fmt: skip
    for options in (drill, snake):
        opts = ExcelOptions.from_config(FormatConfig("x", "excel", ("xlsx",), options))
        assert opts == ExcelOptions("s", 2, 9, 2, 5, True)
    assert ExcelOptions.from_config(FormatConfig("x", "excel", ("xlsx",))) == ExcelOptions(
        "", 0, 1_048_576, 0, 0, False
    )
    with pytest.raises(auger.UserError, match="first column index \\[5\\] is greater"):
        ExcelOptions.from_config(
            FormatConfig("x", "excel", ("xlsx",), {"firstColumn": 5, "lastColumn": 2})
        )


def test_column_names_as_drill_makes_them() -> None:
    assert column_names(["id", " a.b ", "line\nbreak", "", "ID", "id", 2020.0]) == [
        "id",
        "a_b",
        "line__break",
        "field_4",
        "ID_1",
        "id_2",
        "2020",
    ]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("excel")
    (root / "books" / "2024").mkdir(parents=True)
    write_workbook(root / "books" / "2024" / "people.xlsx")
    write_workbook(root / "people.xlsx")
    (root / "corrupt.xlsx").write_bytes(b"PK\x03\x04 this is not a workbook")
    return root


def scan(path: Path, columns: list[str], **options: Any) -> list[dict[str, Any]]:
    plugin = get_format("excel")
    config = FormatConfig("excel", "excel", ("xlsx",), options)
    op = ScanOperator(lambda split: plugin.reader(split, config), [str(path)], columns)
    return [r for b in op for r in b.to_pylist()]


def test_types_from_the_first_data_row_without_spark(data: Path) -> None:
    got = scan(data / "people.xlsx", ["*"])
    assert list(got[0]) == ["id", "first_name", "balance", "birth date"]
    assert [tuple(r.values()) for r in got] == [
        (1.0, "Cornelia", 735.29, dt.datetime(1974, 10, 31)),
        (2.0, "Nydia", 784.14, dt.datetime(1966, 12, 10, 8, 30)),
        (3.0, "Waiter", None, dt.datetime(1961, 3, 12)),
        (4.0, "Cicely", 987.39, None),
    ]


def test_region_header_row_and_duplicate_names(data: Path) -> None:
    got = scan(data / "people.xlsx", ["*"], sheetName="Sheet2", headerRow=3, lastColumn=5)
    assert [tuple(r.items()) for r in got] == [
        (("Col1", 10.0), ("col1_1", 20.0), ("Notes", "x")),
        (("Col1", 11.0), ("col1_1", 21.0), ("Notes", "y")),
        (("Col1", 12.0), ("col1_1", 22.0), ("Notes", "z")),
    ]
    got = scan(data / "people.xlsx", ["*"], sheet_name="Sheet2", header_row=3, first_column=3,
               last_column=5, last_row=5)  # fmt: skip
    assert got == [{"col1": 20.0, "Notes": "x"}, {"col1": 21.0, "Notes": "y"}]


def test_no_header_gives_field_n_columns(data: Path) -> None:
    got = scan(data / "people.xlsx", ["*"], sheetName="raw", headerRow=-1)
    assert got == [
        {"field_1": "2019-02-17", "field_2": "166.11.144.176"},
        {"field_1": "2019-03-03", "field_2": "203.221.176.215"},
    ]


def test_all_text_mode_reads_mixed_columns(data: Path) -> None:
    got = scan(data / "people.xlsx", ["*"], sheetName="mixed", allTextMode=True)
    assert [tuple(r.values()) for r in got] == [("1", "one"), ("2.5", "2"), ("three", "TRUE")]


@pytest.fixture(scope="module")
def conn(spark: Any, data: Path) -> Iterator[Any]:
    formats = {"excel": {"type": "excel", "extensions": ["xlsx"]}}
    with connect_with_formats("books", data, formats) as c:
        yield c


@pytest.mark.spark
def test_select_star_projection_and_count(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.books.`people.xlsx` ORDER BY id")
    assert [d[0] for d in cur.description] == ["id", "first_name", "balance", "birth date"]
    assert [tuple(r) for r in cur.fetchall()][1] == (
        2.0,
        "Nydia",
        784.14,
        dt.datetime(1966, 12, 10, 8, 30),
    )
    got = rows(conn, "SELECT first_name, `birth date` FROM dfs.books.`people.xlsx` WHERE id > 2")
    assert sorted(got) == [("Cicely", None), ("Waiter", dt.datetime(1961, 3, 12))]
    assert rows(conn, "SELECT COUNT(*) FROM dfs.books.`people.xlsx`") == [(4,)]


@pytest.mark.spark
def test_implicit_and_special_columns(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT filename, dir0, COUNT(*) FROM dfs.books.`books` GROUP BY filename, dir0",
    )
    assert got == [("people.xlsx", "2024", 4)]
    got = rows(
        conn,
        "SELECT _sheets, _title, _creator, _keywords, _subject FROM dfs.books.`people.xlsx` "
        "LIMIT 1",
    )
    assert got == [(["data", "Sheet2", "mixed", "raw", "empty"], "People", "Ann Author", "test",
                     None)]  # fmt: skip
    cur = conn.cursor()
    cur.execute("SELECT * FROM dfs.books.`people.xlsx` LIMIT 1")
    assert not any(d[0].startswith("_") for d in cur.description)


@pytest.mark.spark
def test_table_function_options(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT Notes, Col1 FROM table(dfs.books.`people.xlsx`(type => 'excel', "
        "sheetName => 'Sheet2', headerRow => 3, lastColumn => 5)) ORDER BY Col1",
    )
    assert got == [("x", 10.0), ("y", 11.0), ("z", 12.0)]
    got = rows(
        conn,
        "SELECT code, label FROM table(dfs.books.`people.xlsx`(type => 'excel', "
        "sheetName => 'mixed', allTextMode => true)) ORDER BY code",
    )
    assert got == [("1", "one"), ("2.5", "2"), ("three", "TRUE")]


@pytest.mark.spark
def test_a_value_that_does_not_fit_its_column(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT code FROM table(dfs.books.`people.xlsx`(type => 'excel', "
                   "sheetName => 'mixed'))")  # fmt: skip
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR: Cell of column [code] in row 4 holds str [three]")
    assert "people.xlsx" in text and "Sheet: mixed" in text and "allTextMode" in text


@pytest.mark.spark
def test_missing_sheet_lists_the_sheets(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT * FROM table(dfs.books.`people.xlsx`(type => 'excel', "
                   "sheetName => 'nope'))")  # fmt: skip
    text = str(info.value)
    assert text.startswith(
        "VALIDATION ERROR: Could not open sheet [nope]: the workbook has sheets "
        "[data, Sheet2, mixed, raw, empty]"
    )
    assert "people.xlsx" in text


@pytest.mark.spark
def test_a_corrupt_workbook(conn: Any) -> None:
    with pytest.raises(auger.DatabaseError) as info:
        rows(conn, "SELECT * FROM dfs.books.`corrupt.xlsx`")
    text = str(info.value)
    assert text.startswith("DATA_READ ERROR: Cannot read Excel workbook")
    assert "corrupt.xlsx" in text


@pytest.mark.spark
def test_empty_sheet_gives_no_rows(conn: Any) -> None:
    got = rows(
        conn,
        "SELECT COUNT(*) FROM table(dfs.books.`people.xlsx`(type => 'excel', "
        "sheetName => 'empty'))",
    )
    assert got == [(0,)]


def test_batches_keep_to_the_loaders_limits(tmp_path: Path) -> None:
    # two cells of 30,000 characters (Excel holds at most 32,767) among small ones: with a
    # 48 KiB byte limit per column the second cannot join the first's batch, and goes whole
    # into the next (the overflow row)
    path = tmp_path / "big.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("s")
    sheet.write_row(0, 0, ["n", "text"])
    texts = ["a" * 30_000 if i in (2, 3) else f"row{i}" for i in range(6)]
    for i, text in enumerate(texts):
        sheet.write_row(i + 1, 0, [i, text])
    book.close()
    plugin = get_format("excel")
    config = FormatConfig("excel", "excel", ("xlsx",))
    op = ScanOperator(
        lambda split: plugin.reader(split, config),
        [str(path)],
        ["n", "text"],
        batch_rows=4,
        vector_size_limit=48 * 1024,
    )
    batches = [b.to_pylist() for b in op]
    assert [[r["n"] for r in b] for b in batches] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert [r["text"] for b in batches for r in b] == texts
    op = ScanOperator(lambda split: plugin.reader(split, config), [str(path)], ["n"], limit=2)
    assert [r["n"] for b in op for r in b.to_pylist()] == [0.0, 1.0]


def test_leading_empty_rows_and_columns_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "offset.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("s")
    sheet.write_row(3, 1, ["h1", "h2"])  # the table starts at B4
    sheet.write_row(4, 1, [1, "a"])
    sheet.write_row(5, 1, [2, "b"])
    book.close()
    assert scan(path, ["*"]) == [{"h1": 1.0, "h2": "a"}, {"h1": 2.0, "h2": "b"}]
    # firstColumn counts from column A whatever the sheet holds
    assert scan(path, ["*"], firstColumn=3) == [{"h2": "a"}, {"h2": "b"}]
