"""Text reader: Drill's shapes, options, header rules, ragged rows and errors, on both parsers."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path
from typing import Any

import pytest
import zstandard

from auger.config import FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats.text import TextFormat, TextOptions, clean_header, columns_indexes
from auger.formats.text import plugin as text_plugin
from auger.formats.text.text_options import MAX_FIELDS

from .helpers import read_file, rows_of

HEADER = {"extract_header": True}


def read(
    tmp_path: Path,
    text: str | bytes,
    mode: dict[str, Any],
    config: dict[str, Any] | None = None,
    name: str = "f.csv",
    **kw: Any,
) -> list[dict[str, Any]]:
    path = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    if name.endswith(".gz"):
        data = gzip.compress(data)
    elif name.endswith(".bz2"):
        data = bz2.compress(data)
    elif name.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    options = {**mode, **kw.pop("options", {})}
    return rows_of(read_file(path, "text", config, options, **kw))


def cols(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [r["columns"] for r in rows]


# ---------------------------------------------------------------- headerless
def test_headerless_rows_are_columns_arrays(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "10,foo,bar\n20,fred,wilma\n", text_mode)
    assert cols(got) == [["10", "foo", "bar"], ["20", "fred", "wilma"]]


def test_headerless_ragged_rows(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "10,dino\n20,foo,bar\n30\n", text_mode)
    assert cols(got) == [["10", "dino"], ["20", "foo", "bar"], ["30"]]


def test_skip_first_line(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "a,b,c\n10,foo,bar\n20,fred,wilma\n", text_mode, {"skipFirstLine": True})
    assert cols(got) == [["10", "foo", "bar"], ["20", "fred", "wilma"]]
    ragged = read(tmp_path, "a,b,c\n10,dino\n20,foo,bar\n30\n", text_mode, {"skip_first_line": 1})
    assert cols(ragged) == [["10", "dino"], ["20", "foo", "bar"], ["30"]]


def test_empty_headerless_file_has_no_rows(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    assert read(tmp_path, "", text_mode) == []


def test_columns_push_down_keeps_needed_positions(
    tmp_path: Path, text_mode: dict[str, Any]
) -> None:
    got = read(
        tmp_path,
        "a,b,c,d,e\n1,2\n",
        text_mode,
        columns=["columns"],
        options={"__projection__": ["columns[2]", "columns[0]"]},
    )
    assert cols(got) == [["a", "", "c"], ["1", ""]]


def test_columns_indexes_parsing() -> None:
    assert columns_indexes(["columns[3]", "COLUMNS[1]", "`columns`[3]"]) == [1, 3]
    assert columns_indexes(["columns[0]", "columns"]) is None
    assert columns_indexes(["*"]) is None
    assert columns_indexes(None) is None


def test_nothing_projected_still_counts_rows(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "1,2\n3,4\n5\n", text_mode, columns=[])
    assert len(got) == 3


# ------------------------------------------------------------------- quoting
CARS = (
    "Year,Make,Model,Description,Price\n"
    '1997,Ford,E350,"ac, abs, moon",3000.00\n'
    '1999,Chevy,"Venture ""Extended Edition""","",4900.00\n'
    '1999,Chevy,"Venture ""Extended Edition, Very Large""",,5000.00\n'
    '1996,Jeep,Grand Cherokee,"MUST SELL!\nair, moon roof, loaded",4799.00\n'
)


def test_cars_csvh(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, CARS, text_mode, HEADER, name="cars.csvh")
    assert list(got[0]) == ["Year", "Make", "Model", "Description", "Price"]
    assert len(got) == 4
    assert got[1]["Model"] == 'Venture "Extended Edition"'
    assert got[1]["Description"] == ""
    assert got[3]["Description"] == "MUST SELL!\nair, moon roof, loaded"
    assert got[0]["Description"] == "ac, abs, moon"


def test_quote_disabled_with_nul(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, '"a"\tb\n', text_mode, {"delimiter": "\t", "quote": "\u0000"})
    assert cols(got) == [['"a"', "b"]]


def test_other_delimiters_and_escape(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    assert cols(read(tmp_path, '"a"|a|a\n', text_mode, {"fieldDelimiter": "|"})) == [
        ["a", "a", "a"]
    ]
    esc = read(tmp_path, '"x\\"y",z\n', text_mode, {"escape": "\\"})
    assert cols(esc) == [['x"y', "z"]]


def test_comment_lines_are_skipped(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "# a comment\n1,2\n#another\n3,4\n", text_mode)
    assert cols(got) == [["1", "2"], ["3", "4"]]
    kept = read(tmp_path, "#1,2\n3,4\n", text_mode, {"comment": "\u0000"})
    assert cols(kept) == [["#1", "2"], ["3", "4"]]


def test_comment_char_inside_quoted_field_is_data(
    tmp_path: Path, text_mode: dict[str, Any]
) -> None:
    got = read(tmp_path, '1,"x\n#not a comment"\n2,y\n', text_mode)
    assert cols(got) == [["1", "x\n#not a comment"], ["2", "y"]]


def test_custom_line_delimiter(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "a,b;c,d\ne;", text_mode, {"lineDelimiter": ";"})
    assert cols(got) == [["a", "b"], ["c", "d\ne"]]


def test_crlf_lines(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    assert cols(read(tmp_path, "1,2\r\n3,4\r\n", text_mode)) == [["1", "2"], ["3", "4"]]


def test_trim_table_property(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, " a , b \n", text_mode, {"drill.text.trim": "true"})
    assert cols(got) == [["a", "b"]]


def test_huge_field_reads(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    big = "x" * 70_000
    got = read(tmp_path, f"id,big,n\n1,{big},10\n", text_mode, HEADER)
    assert got == [{"id": "1", "big": big, "n": "10"}]


# -------------------------------------------------------------------- headers
def test_header_file_rows(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "a,b,c\n10,foo,bar\n", text_mode, HEADER)
    assert got == [{"a": "10", "b": "foo", "c": "bar"}]


def test_header_ragged_rows_fill_blanks(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "a,b,c\n10,dino\n20,foo,bar\n30\n", text_mode, HEADER)
    assert [tuple(r.values()) for r in got] == [
        ("10", "dino", ""),
        ("20", "foo", "bar"),
        ("30", "", ""),
    ]


def test_header_extra_fields_dropped(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "a,b\n1,2,3\n4,5,6\n", text_mode, HEADER)
    assert got == [{"a": "1", "b": "2"}, {"a": "4", "b": "5"}]


def test_headers_only_and_no_newline(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    assert read(tmp_path, "a,b,c", text_mode, HEADER) == []
    got = read(tmp_path, "a,b,c\nfred,barney,wilma", text_mode, HEADER)
    assert got == [{"a": "fred", "b": "barney", "c": "wilma"}]


def test_blank_header_is_an_error(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    with pytest.raises(UserError, match="must define at least one header") as info:
        read(tmp_path, "\n10,foo,bar\n", text_mode, HEADER)
    assert info.value.kind is ErrorKind.DATA_READ


def test_invalid_headers_cleaned(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "$,,9b,c,c,c_2\n10,foo,bar,fourth,fifth,sixth\n", text_mode, HEADER)
    assert list(got[0]) == ["column_1", "column_2", "col_9b", "c", "c_2", "c_2_2"]
    assert list(got[0].values()) == ["10", "foo", "bar", "fourth", "fifth", "sixth"]


def test_header_projection_and_missing_table_columns(
    tmp_path: Path, text_mode: dict[str, Any]
) -> None:
    got = read(
        tmp_path,
        "Year,Model\n1999,Venture\n",
        text_mode,
        HEADER,
        columns=["year", "category"],
        options={"__table_schema__": "Year VARCHAR NOT NULL, Category VARCHAR NOT NULL"},
    )
    assert got == [{"Year": "1999", "Category": ""}]


def test_many_rows_with_empty_last_column(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "field1,field2\n" + "a,\n" * 10000, text_mode, HEADER, batch_rows=999)
    assert len(got) == 10000
    assert all(r == {"field1": "a", "field2": ""} for r in got)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (["   "], ["column_1"]),
        (["", ""], ["column_1", "column_2"]),
        ([" ", " "], ["column_1", "column_2"]),
        (["a", "   "], ["a", "column_2"]),
        ([" a "], ["a"]),
        ([" a ", " b ", "  c "], ["a", "b", "c"]),
        (["a_123"], ["a_123"]),
        (["a_123_"], ["a_123_"]),
        (["az09_"], ["az09_"]),
        (["+"], ["column_1"]),
        (["+", "-"], ["column_1", "column_2"]),
        (["+9a"], ["col_9a"]),
        (["9a"], ["col_9a"]),
        (["a+b"], ["a_b"]),
        (["EXPR$0"], ["EXPR_0"]),
        (["(_-^-_)"], ["col_______"]),
        (["Αθήνα"], ["Αθήνα"]),
        (["Москва"], ["Москва"]),
        (["a", "a"], ["a", "a_2"]),
        (["a", "A"], ["a", "A_2"]),
        (["a", "A", "A_2"], ["a", "A_2", "A_2_2"]),
        (["Αθήνα", "ΑθήνΑ"], ["Αθήνα", "ΑθήνΑ_2"]),
    ],
)
def test_header_builder(header: list[str], expected: list[str]) -> None:
    assert clean_header(header) == expected


@pytest.mark.parametrize("header", [[], [""]])
def test_header_builder_no_header(header: list[str]) -> None:
    with pytest.raises(UserError, match=r"The file must define at least one header\."):
        clean_header(header)


def test_discover_schema_header_union(tmp_path: Path) -> None:
    (tmp_path / "1.csvh").write_text("Year,Make,Model\n1999,Chevy,V\n")
    (tmp_path / "2.csvh").write_text("Year,Category\n1999,x\n")
    cfg = FormatConfig("csvh", "text", ("csvh",), HEADER)
    schema = TextFormat().discover_schema(
        [str(tmp_path / "1.csvh"), str(tmp_path / "2.csvh")], cfg, {}
    )
    assert schema.to_text() == (
        "`Year` VARCHAR NOT NULL, `Make` VARCHAR NOT NULL, `Model` VARCHAR NOT NULL, "
        "`Category` VARCHAR NOT NULL"
    )
    plain = TextFormat().discover_schema(
        [str(tmp_path / "1.csvh")], FormatConfig("c", "text", ()), {}
    )
    assert plain.to_text() == "`columns` ARRAY<VARCHAR>"


# ---------------------------------------------------------------------------- options
def test_options_accept_both_spellings_and_properties() -> None:
    o = TextOptions.from_config(
        FormatConfig("x", "text", (), {"fieldDelimiter": "|", "extractHeader": "true"})
    )
    assert (o.delimiter, o.extract_header) == ("|", True)
    p = TextOptions.from_config(
        FormatConfig(
            "x",
            "text",
            (),
            {"delimiter": ",", "drill.text.fieldDelimiter": ";", "drill.text.comment": ""},
        )
    )
    assert (p.delimiter, p.comment) == (";", "")
    both = TextOptions.from_config(
        FormatConfig("x", "text", (), {"extract_header": True, "skip_first_line": True})
    )
    assert both.skip_first_line is False  # forced off when the header is extracted


def test_option_character_out_of_range() -> None:
    with pytest.raises(UserError, match="Expected a character between 0 and 127"):
        TextOptions.from_config(FormatConfig("x", "text", (), {"delimiter": "é"}))


# ------------------------------------------------------------------------ compression
@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".zst"])
def test_compressed_inputs(tmp_path: Path, text_mode: dict[str, Any], suffix: str) -> None:
    got = read(tmp_path, "a,b\n1,2\n3,4\n", text_mode, HEADER, name="f.csvh" + suffix)
    assert got == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}]


# ----------------------------------------------------------------------------- errors
def test_unbalanced_quote(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    with pytest.raises(UserError) as info:
        read(tmp_path, '1,a\n2,"b\n3,c\n', text_mode)
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert "Unbalanced quote" in err.message
    assert any(c.endswith("f.csv") and c.startswith("File: ") for c in err.context)
    assert "Line: 2" in err.context
    assert "Column: 2" in err.context


def test_invalid_utf8(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    with pytest.raises(UserError) as info:
        read(tmp_path, b"a,b\n1,2\n3,\xff\xfe\n", text_mode, HEADER)
    assert info.value.kind is ErrorKind.DATA_READ
    assert "UTF-8" in info.value.message
    assert "Line: 3" in info.value.context


def test_field_over_limit(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    with pytest.raises(UserError) as info:
        read(
            tmp_path,
            "1,ok\n2," + "y" * 500 + "\n",
            text_mode,
            options={"auger.scan.text_max_field_bytes": 100},
        )
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert "Line: 2" in err.context and "Column: 2" in err.context


@pytest.mark.parametrize("columns", [None, ["columns"]], ids=["all", "columns"])
def test_too_many_fields(
    tmp_path: Path, text_mode: dict[str, Any], columns: list[str] | None
) -> None:
    # the limit is hit by a 128 KiB line: one field more than MAX_FIELDS
    wide = ",".join(["x"] * (MAX_FIELDS + 1))
    with pytest.raises(UserError, match="Text file contains too many fields") as info:
        read(tmp_path, "a,b\n" + wide + "\nc,d\n", text_mode, columns=columns)
    err = info.value
    assert err.kind is ErrorKind.UNSUPPORTED_OPERATION
    # Before: only "Limit: 65536", no file
    assert f"File: {tmp_path / 'f.csv'}" in err.context
    assert "Line: 2" in err.context
    assert f"Fields: {MAX_FIELDS + 1}" in err.context and f"Limit: {MAX_FIELDS}" in err.context
    assert any(c.startswith("Fix: ") for c in err.context)


# ------------------------------------------------------------- the Arrow path is used
def test_plain_files_do_not_fall_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> Any:
        raise AssertionError("fell back to the Python parser")

    monkeypatch.setattr(text_plugin.TextFormat, "_python_batches", refuse)
    assert len(read(tmp_path, CARS, {}, HEADER, name="c.csvh")) == 4
    assert len(read(tmp_path, "1,2\n3,4\n", {}, name="p.csv.gz")) == 2
    # every row shorter than the header: blanks, still on the Arrow path
    short = read(tmp_path, "a,b,c\n1,2\n3,4\n", {}, {**HEADER, "trim": True}, name="s.csvh")
    assert short == [{"a": "1", "b": "2", "c": ""}, {"a": "3", "b": "4", "c": ""}]
    # columns[n] beyond the file's width
    narrow = read(
        tmp_path,
        "1,2\n3,4\n",
        {},
        columns=["columns"],
        options={"__projection__": ["columns[1]", "columns[5]"]},
    )
    assert cols(narrow) == [["", "2"], ["", "4"]]


def test_fallback_resumes_after_delivered_rows(tmp_path: Path) -> None:
    """A ragged row deep in the file: rows before it come from Arrow, none twice."""
    body = "".join(f"{i},x\n" for i in range(50_000)) + "last\n"
    got = read(tmp_path, body, {}, batch_rows=7000)
    assert len(got) == 50_001
    assert got[0]["columns"] == ["0", "x"] and got[-1]["columns"] == ["last"]
    assert [r["columns"][0] for r in got[:-1]] == [str(i) for i in range(50_000)]


# ------------------------------------------------------------------ byte-range splits
@pytest.mark.parametrize("config", [{}, HEADER, {"skip_first_line": True}])
def test_byte_range_splits_cover_every_row_once(
    tmp_path: Path, text_mode: dict[str, Any], config: dict[str, Any]
) -> None:
    """The Spark source may cut a big file into line-aligned ranges: each row read once."""
    from auger.scan.spec import FileSplit

    path = tmp_path / "big.csv"
    body = "".join(f"{i},{'v' * (i % 13)}\n" for i in range(3000))
    path.write_text("h1,h2\n" + body)
    size = path.stat().st_size
    cfg = FormatConfig("csv", "text", ("csv",), config)
    step = 7001  # not on a line boundary
    got: list[Any] = []
    for start in range(0, size, step):
        length = -1 if start + step >= size else step
        split = FileSplit(str(path), size, 0.0, start, length)
        for b in TextFormat().read_arrow(split, cfg, dict(text_mode), None, 500):
            got.extend(b.to_pylist())
    first = [r["h1"] if config is HEADER else r["columns"][0] for r in got]
    expected = [str(i) for i in range(3000)]
    assert first == (["h1", *expected] if not config else expected)


# ------------------------------------------------------------ schemas and validation
def test_schema_over_headerless_file_maps_by_position(
    tmp_path: Path, text_mode: dict[str, Any]
) -> None:
    got = read(
        tmp_path,
        "10,fred,23.45\n20,wilma,1234.56,vip\n30\n",
        text_mode,
        options={"__table_schema__": "id INT NOT NULL, name VARCHAR NOT NULL"},
    )
    assert got == [
        {"id": "10", "name": "fred"},
        {"id": "20", "name": "wilma"},
        {"id": "30", "name": ""},
    ]


def test_columns_index_on_header_file_is_rejected(
    tmp_path: Path, text_mode: dict[str, Any]
) -> None:
    with pytest.raises(UserError) as info:
        read(
            tmp_path,
            "author,columns\nfred,x\n",
            text_mode,
            HEADER,
            options={"__projection__": ["author", "columns[0]"]},
        )
    err = info.value
    assert err.kind is ErrorKind.VALIDATION
    assert err.message == "Unexpected `columns`[x]; file has headers or schema"
    assert "Extract headers: true" in err.context and "Skip first line: false" in err.context


def test_columns_index_out_of_bounds(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    with pytest.raises(UserError) as info:
        read(
            tmp_path,
            "1,2\n",
            text_mode,
            columns=["columns"],
            options={"__projection__": ["columns[70000]"]},
        )
    assert info.value.message == (
        "`columns`[70000] index out of bounds, max supported size is 65536"
    )
    assert "Actual index: 70000" in info.value.context


def test_byte_order_mark_is_dropped(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, b"\xef\xbb\xbfa,b\n1,2\n", text_mode, HEADER)
    assert got == [{"a": "1", "b": "2"}]
    assert cols(read(tmp_path, b"\xef\xbb\xbf1,2\n", text_mode)) == [["1", "2"]]


def test_skip_first_line_skips_a_physical_line(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, "# heading\n1,a\n2,b\n", text_mode, {"skip_first_line": True})
    assert cols(got) == [["1", "a"], ["2", "b"]]
    blank = read(tmp_path, "\n1,a\n", text_mode, {"skip_first_line": True})
    assert cols(blank) == [["1", "a"]]


def test_comment_lines_stay_on_the_arrow_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: Any) -> Any:
        raise AssertionError("fell back to the Python parser")

    monkeypatch.setattr(text_plugin.TextFormat, "_python_batches", refuse)
    text = '# top\n1,"x\n# inside a quoted field"\n#c2\n2,"y"\n# last'
    assert cols(read(tmp_path, text, {})) == [["1", "x\n# inside a quoted field"], ["2", "y"]]
    header = read(tmp_path, "# about\na,b\n#x\n1,2\n", {}, HEADER, name="h.csvh")
    assert header == [{"a": "1", "b": "2"}]
    skip = read(tmp_path, "#first\n1,2\n#c\n3,4\n", {}, {"skip_first_line": True})
    assert cols(skip) == [["1", "2"], ["3", "4"]]


def test_many_comment_lines_across_blocks(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    lines = [f"# comment {i}\n{i},{'z' * (i % 50)}\n" for i in range(40_000)]
    got = read(tmp_path, "".join(lines), text_mode, batch_rows=10_000)
    assert [r["columns"][0] for r in got] == [str(i) for i in range(40_000)]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 64])
def test_comment_stripping_across_chunk_boundaries(chunk: int) -> None:
    """The Arrow path's stream filter: comment lines go, quoted '#' lines stay, any chunking."""
    import io

    from auger.formats.text.arrow_reader import _Watch

    text = b'#c0 "\n1,"a\n#q"\n#c1\n2,b\n#c2 ""\n3,"#"\n#end'
    expected = b'1,"a\n#q"\n2,b\n3,"#"\n'

    class Raw:
        def __init__(self) -> None:
            self.buf = io.BytesIO(text)

        def read(self, n: int = -1) -> bytes:
            return self.buf.read(chunk)

        def close(self) -> None:
            pass

    watch = _Watch(Raw(), TextOptions())
    out = b""
    while piece := watch.read(1 << 20):
        out += piece
    assert out == expected
    assert watch.odd_quotes() == bool(expected.count(b'"') % 2)
    assert watch.checked() and not watch.suspect


# ------------------------------------------------- quotes inside fields (Drill's rules)
# TestCsvTableProperties.testMessyQuotes: the values Drill reads from messy quoting
MESSY = (
    'first"field"here,another "field\n'
    'end quote",another"\n'
    'many"""",more""\n'
    '"not"end",""wtf" "\n'
    '"newline\nhere","and here""\n"\n'
)
MESSY_ROWS = [
    ['first"field"here', 'another "field'],
    ['end quote"', 'another"'],
    ['many""""', 'more""'],
    ['not"end', '"wtf" '],
    ["newline\nhere", 'and here"\n'],
]


def test_drill_messy_quotes(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    assert cols(read(tmp_path, MESSY, text_mode)) == MESSY_ROWS


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('"not"end"\n', ['not"end']),  # a quote followed by text stays in the value
        ('ab"c,d\n', ['ab"c', "d"]),  # quotes inside an unquoted field are plain text
        ('"a"b c",d\n', ['a"b c', "d"]),  # quote, text, then a delimiter
        ('x,"a"b"\n', ["x", 'a"b']),  # ... at the end of the line
        ('"a"""b",c\n', ['a""b', "c"]),  # a doubled quote, then a lone one
        ('"a" ,b\n', ["a", "b"]),  # white space after the closing quote is dropped
        ('"a" \r\n', ["a"]),
        ('"a" b",c\n', ['a" b', "c"]),  # ... unless more of the field follows it
        ('"a"b\nc",d\n', ['a"b\nc', "d"]),  # the field goes on over the line end
    ],
)
def test_quote_inside_quoted_field(
    tmp_path: Path, text_mode: dict[str, Any], line: str, expected: list[str]
) -> None:
    assert cols(read(tmp_path, "1,2\n" + line + "3,4\n", text_mode)) == [
        ["1", "2"],
        expected,
        ["3", "4"],
    ]


def test_quote_inside_field_at_end_of_file(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    assert cols(read(tmp_path, '1,2\nx,"a"b"', text_mode)) == [["1", "2"], ["x", 'a"b']]


def test_quote_inside_field_with_header(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(tmp_path, 'a,b\n"x"y",z\n1,"2"3"\n', text_mode, HEADER, name="f.csvh")
    assert got == [{"a": 'x"y', "b": "z"}, {"a": "1", "b": '2"3'}]


def test_quote_inside_field_columns_index(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    got = read(
        tmp_path,
        '1,"a"b",x\n2,c"d,y\n',
        text_mode,
        columns=["columns"],
        options={"__projection__": ["columns[1]"]},
    )
    assert [r[1] for r in cols(got)] == ['a"b', 'c"d']


def test_distinct_escape_follows_drill(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    config = {"quote": "@", "escape": "~"}
    text = "1,@foo@\n2,@foo~@bar@\n3,@foo~bar@\n4,@foo~~bar@\n"
    assert cols(read(tmp_path, text, text_mode, config)) == [
        ["1", "foo"],
        ["2", "foo@bar"],
        ["3", "foo~bar"],  # the escape escapes only a following quote
        ["4", "foo~~bar"],
    ]
    with pytest.raises(UserError, match="Unexpected character 'b' after the closing quote") as info:
        read(tmp_path, "1,@a@b@\n", text_mode, config)
    assert info.value.kind is ErrorKind.DATA_READ


def test_clean_quoting_stays_on_the_arrow_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Openers, closers and doubled quotes, in any amount: pyarrow reads them as Drill."""

    def refuse(*_: Any) -> Any:
        raise AssertionError("fell back to the Python parser")

    monkeypatch.setattr(text_plugin.TextFormat, "_python_batches", refuse)
    text = '"",""""," ""a"" ",",","x\n""y"\n' * 2000
    row = ["", '"', ' "a" ', ",", 'x\n"y']
    assert cols(read(tmp_path, text, {})) == [row] * 2000


def _reference_check(data: bytes) -> bool:
    """The quote runs rule of ``_QuoteCheck``, one run at a time."""
    inside, i, n = False, 0, len(data)
    while i < n:
        if data[i] != ord('"'):
            i += 1
            continue
        j = i
        while j < n and data[j] == ord('"'):
            j += 1
        before = data[i - 1] if i else 10
        after = data[j] if j < n else 10
        odd = (j - i) % 2 == 1
        end_before, end_after = before in b",\n\r", after in b",\n\r"
        ok = (not odd or end_after) if inside else (end_before and (odd or end_after))
        if not ok:
            return False
        inside ^= odd
        i = j
    return True


def test_quote_check_any_blocks() -> None:
    """The bit-parallel check equals the run by run rule, however the stream is cut."""
    import random

    from auger.formats.text.arrow_reader import _QuoteCheck

    rnd = random.Random(7)
    pieces = ['"', '"', '""', ",", "\n", "a", " ", "\r\n", "x" * 70]
    for _ in range(400):
        data = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 40))).encode()
        cuts = sorted(rnd.sample(range(len(data) + 1), min(3, len(data) + 1)))
        check = _QuoteCheck(TextOptions())
        ok = True
        for lo, hi in zip([0, *cuts], [*cuts, len(data)], strict=True):
            ok = check.feed(data[lo:hi]) and ok
            if not ok:
                break
        ok = ok and check.feed(b"")
        assert ok == _reference_check(data), data
        if ok:
            assert check.odd == bool(data.count(b'"') % 2)


def test_absent_fields_of_listed_columns_read_as_null(
    tmp_path: Path, text_mode: dict[str, Any]
) -> None:
    # the planner lists a provided schema's nullable or defaulted VARCHARs: a short row or a
    # column the file lacks is NULL for those (the query applies the default), "" otherwise
    got = read(
        tmp_path,
        "id,name,gender\n1,wilma,female\n4,betty\n5,x,\n",
        text_mode,
        HEADER,
        options={
            "__table_schema__": "id VARCHAR NOT NULL, name VARCHAR NOT NULL, "
            "gender VARCHAR NOT NULL, extra VARCHAR, other VARCHAR NOT NULL",
            "__absent_null__": ["gender", "extra"],
        },
    )
    assert got == [
        {"id": "1", "name": "wilma", "gender": "female", "extra": None, "other": ""},
        {"id": "4", "name": "betty", "gender": None, "extra": None, "other": ""},
        {"id": "5", "name": "x", "gender": "", "extra": None, "other": ""},
    ]
