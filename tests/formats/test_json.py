"""JSON reader: Drill's type rules, options, nesting, skips and located errors, on both paths."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from auger.config import FormatConfig
from auger.errors import ErrorKind, UserError
from auger.formats import skips
from auger.formats.conflicts import check_read
from auger.formats.json import JsonFormat
from auger.formats.json import plugin as json_plugin
from auger.types import ColumnMetadata, MinorType

from .helpers import read_file, rows_of

CFG = FormatConfig("json", "json", ("json",), {})


def write(tmp_path: Path, text: str | bytes, name: str = "f.json") -> Path:
    path = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def discover(path: Path, options: dict[str, Any] | None = None) -> str:
    return JsonFormat().discover_schema([str(path)], CFG, options or {}).to_text()


def scan(
    tmp_path: Path,
    text: str | bytes,
    mode: dict[str, Any],
    options: dict[str, Any] | None = None,
    name: str = "f.json",
    columns: list[str] | None = None,
    batch_rows: int = 4096,
) -> tuple[str, list[dict[str, Any]]]:
    """Discover the schema (as the driver would), then read with it (as an executor)."""
    path = write(tmp_path, text, name)
    opts = {**mode, **(options or {})}
    schema = discover(path, opts)
    opts["__table_schema__"] = schema
    batches = read_file(path, "json", {}, opts, columns=columns, batch_rows=batch_rows)
    return schema, rows_of(batches)


def test_types_by_drill_rules(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    schema, rows = scan(tmp_path, '{"i": 1, "d": 1.5, "s": "x", "b": true, "n": null}\n', json_mode)
    assert schema == "`i` BIGINT, `d` DOUBLE, `s` VARCHAR, `b` BOOLEAN, `n` INT"
    assert rows == [{"i": 1, "d": 1.5, "s": "x", "b": True, "n": None}]


def test_empty_objects_are_rows(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    """Drill's JSON loader (TestBasics.testEmptyTuple): ``{} {} {}`` is three rows, no columns;
    among real objects a ``{}`` is a row of NULLs."""
    schema, rows = scan(tmp_path, "{}\n{}\n{}\n", json_mode)
    assert schema == ""  # no columns
    assert len(rows) == 3 and all(set(r) <= {"__rows__"} for r in rows)  # the count only
    _, mixed = scan(tmp_path, '{}\n{"a": 1}\n{}\n', json_mode, name="m.json")
    assert mixed == [{"a": None}, {"a": 1}, {"a": None}]


def test_top_level_array(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    _, rows = scan(tmp_path, '[\n {"a": 1},\n {"a": 2}\n]\n', json_mode)
    assert rows == [{"a": 1}, {"a": 2}]


def test_concatenated_and_pretty_printed_objects(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    _, rows = scan(tmp_path, '{"a": 1}{"a": 2}\n{\n  "a": 3\n}\n', json_mode)
    assert rows == [{"a": 1}, {"a": 2}, {"a": 3}]


def test_nested_maps_and_arrays(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    doc = {"m": {"a": {"b": [1, 2]}, "c": "x"}, "l": [[1, 2], [3]], "r": [{"q": 1}, {"q": 2}]}
    schema, rows = scan(tmp_path, json.dumps(doc) + "\n", json_mode)
    assert schema == (
        "`m` STRUCT<`a` STRUCT<`b` ARRAY<BIGINT>>, `c` VARCHAR>, "
        "`l` ARRAY<ARRAY<BIGINT>>, `r` ARRAY<STRUCT<`q` BIGINT>>"
    )
    assert rows == [doc]


def test_missing_map_is_a_map_of_nulls(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    text = '{"m": {"f": "1"}}\n{"x": 1}\n{"m": null}\n'
    _, rows = scan(tmp_path, text, json_mode)
    assert [r["m"] for r in rows] == [{"f": "1"}, {"f": None}, {"f": None}]


def test_leading_nulls_then_a_type(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    schema, rows = scan(tmp_path, '{"a": null}\n{"a": null}\n{"a": "x"}\n', json_mode)
    assert schema == "`a` VARCHAR"
    assert [r["a"] for r in rows] == [None, None, "x"]


def test_int_then_double_widens(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    schema, rows = scan(tmp_path, '{"a": 1}\n{"a": 2.5}\n', json_mode)
    assert schema == "`a` DOUBLE"
    assert [r["a"] for r in rows] == [1.0, 2.5]


def test_empty_array_then_typed(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    schema, rows = scan(tmp_path, '{"l": []}\n{"l": ["a"]}\n', json_mode)
    assert schema == "`l` ARRAY<VARCHAR>"
    assert [r["l"] for r in rows] == [[], ["a"]]


def test_all_text_mode(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    text = '{"a": 1, "l": [1, 2], "m": {"f": 1.50, "b": true}}\n{"a": "x", "l": []}\n'
    schema, rows = scan(tmp_path, text, json_mode, {"store.json.all_text_mode": True})
    assert schema == "`a` VARCHAR, `l` ARRAY<VARCHAR>, `m` STRUCT<`f` VARCHAR, `b` VARCHAR>"
    assert rows[0] == {"a": "1", "l": ["1", "2"], "m": {"f": "1.50", "b": "true"}}
    assert rows[1] == {"a": "x", "l": [], "m": {"f": None, "b": None}}


def test_read_numbers_as_double(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    schema, rows = scan(
        tmp_path, '{"a": 1}\n{"a": 2}\n', json_mode, {"store.json.read_numbers_as_double": "true"}
    )
    assert schema == "`a` DOUBLE"
    assert rows == [{"a": 1.0}, {"a": 2.0}]


def test_empty_and_blank_files(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    assert scan(tmp_path, "", json_mode) == ("", [])
    assert scan(tmp_path, "\n  \n", json_mode) == ("", [])


def test_file_of_empty_objects_counts_rows(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    schema, rows = scan(tmp_path, "{}\n{}\n{}\n", json_mode)
    assert schema == ""
    assert len(rows) == 3


def test_projection_reads_only_wanted(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    _, rows = scan(tmp_path, '{"a": 1, "b": "x", "c": true}\n', json_mode, columns=["c", "a"])
    assert rows == [{"a": 1, "c": True}]


def test_key_case_differences_are_one_column(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    schema, rows = scan(tmp_path, '{"Name": "a"}\n{"name": "b"}\n', json_mode)
    assert schema == "`Name` VARCHAR"
    assert [r["Name"] for r in rows] == ["a", "b"]


def test_batches_respect_batch_rows(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    """The reader may hand over a whole parsed block; the scan cuts it to the row limit."""
    from auger.scan.operator import ScanOperator

    path = write(tmp_path, "".join(f'{{"a": {i}}}\n' for i in range(1000)))
    opts = {**json_mode, "__table_schema__": "a BIGINT"}
    scan = ScanOperator(JsonFormat(), [str(path)], batch_rows=300, reader_options=opts)
    batches = list(scan)
    assert [b.num_rows for b in batches][:3] == [300, 300, 300]
    assert [v for b in batches for v in b.column("a").to_pylist()] == list(range(1000))
    assert sum(b.num_rows for b in batches) == 1000
    assert max(b.num_rows for b in batches) <= 300


def test_gzip_json(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    _, rows = scan(tmp_path, '{"a": 1}\n{"a": 2}\n', json_mode, name="f.json.gz")
    assert rows == [{"a": 1}, {"a": 2}]


# ------------------------------------------------------------------------ bad input
def test_truncated_document(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    path = write(tmp_path, '{"a": 1}\n{"a": 2}\n{"a": ')
    with pytest.raises(UserError) as info:
        read_file(path, "json", {}, {**json_mode, "__table_schema__": "a BIGINT"})
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert "Error parsing JSON" in err.message
    assert f"File: {path}" in err.context and "Line: 3" in err.context


def test_number_where_a_map_was_beyond_the_sample(
    tmp_path: Path, json_mode: dict[str, Any]
) -> None:
    path = write(tmp_path, '{"m": {"a": 1}}\n{"m": 5}\n')
    opts = {**json_mode, "__table_schema__": "m STRUCT<a BIGINT>"}
    with pytest.raises(UserError) as info:
        read_file(path, "json", {}, opts)
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert "Line: 2" in err.context and "Column: m" in err.context
    assert "BIGINT" in err.message and "STRUCT" in err.message


def test_double_in_bigint_column_is_not_truncated(
    tmp_path: Path, json_mode: dict[str, Any]
) -> None:
    path = write(tmp_path, '{"a": 1}\n{"a": 1.5}\n')
    with pytest.raises(UserError, match="DOUBLE in column \\[a\\] where BIGINT") as info:
        read_file(path, "json", {}, {**json_mode, "__table_schema__": "a BIGINT"})
    assert "Line: 2" in info.value.context


def test_type_conflict_found_by_discovery(tmp_path: Path) -> None:
    path = write(tmp_path, '{"a": 1}\n{"a": "x"}\n{"b": 2}\n')
    schema = JsonFormat().discover_schema([str(path)], CFG, {})
    check_read(schema.column("b"))  # another column reads as if a had no conflict
    with pytest.raises(UserError) as info:
        check_read(schema.column("a"))
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert "BIGINT" in err.message and "VARCHAR" in err.message
    assert "Line: 2" in err.context and "Column: a" in err.context


def test_mixed_array_is_an_error_for_a_query_reading_it(tmp_path: Path) -> None:
    # scalars of two types convert to the first's (test_json_mixed_arrays); a map among
    # scalars cannot
    path = write(tmp_path, '{"l": [1, {"x": 1}], "n": 1}\n')
    schema = JsonFormat().discover_schema([str(path)], CFG, {})
    assert schema.column("n") == ColumnMetadata("n", MinorType.BIGINT)
    with pytest.raises(UserError, match="changes type"):
        check_read(schema.column("l"))


def test_invalid_utf8(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    path = write(tmp_path, b'{"a": "x"}\n{"a": "\xff"}\n')
    with pytest.raises(UserError, match="not valid UTF-8") as info:
        read_file(path, "json", {}, {**json_mode, "__table_schema__": "a VARCHAR"})
    assert "Line: 2" in info.value.context


def test_scalar_record_is_an_error(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    path = write(tmp_path, '{"a": 1}\n5\n')
    with pytest.raises(UserError, match="Expected a JSON object"):
        read_file(path, "json", {}, {**json_mode, "__table_schema__": "a BIGINT"})


def test_skip_invalid_records_counts(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    text = '{"a": 1}\n{"a": oops}\n{"a": 2}\n{"a": "str"}\n{"a": 3}\n'
    path = write(tmp_path, text)
    opts = {
        **json_mode,
        "store.json.reader.skip_invalid_records": True,
        "__table_schema__": "a BIGINT",
    }
    with skips.recording() as seen:
        batches = read_file(path, "json", {}, opts)
    assert rows_of(batches) == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert {p: n for p, (n, _) in seen.items()} == {str(path): 2}
    assert batches[-1].schema.metadata[skips.SKIPPED_KEY] == b"2"


def test_plain_ndjson_uses_the_arrow_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: Any) -> Any:
        raise AssertionError("fell back to Python")

    monkeypatch.setattr(json_plugin.JsonFormat, "_python_batches", refuse)
    _, rows = scan(tmp_path, '{"a": 1, "m": {"x": [1]}}\n{"a": 2}\n', {})
    # Drill's arrays are never null: a record without one reads an empty array
    assert rows == [{"a": 1, "m": {"x": [1]}}, {"a": 2, "m": {"x": []}}]


def test_fallback_resumes_after_delivered_rows(tmp_path: Path) -> None:
    body = "".join(f'{{"a": {i}}}\n' for i in range(60_000)) + '{"a": 0.5}\n'
    path = write(tmp_path, body)
    batches = read_file(path, "json", {}, {"__table_schema__": "a DOUBLE"}, batch_rows=5000)
    got = [r["a"] for r in rows_of(batches)]
    assert got == [float(i) for i in range(60_000)] + [0.5]
    assert all(b.schema.field("a").type == pa.float64() for b in batches)


def test_nan_and_infinity(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    path = write(tmp_path, '{"a": 1.5}\n{"a": NaN}\n{"a": -Infinity}\n')
    opts = {**json_mode, "__table_schema__": "a DOUBLE"}
    got = [r["a"] for r in rows_of(read_file(path, "json", {}, opts))]
    assert got[0] == 1.5 and got[1] != got[1] and got[2] == float("-inf")
    with pytest.raises(UserError, match="NaN is not allowed") as info:
        read_file(path, "json", {}, {**opts, "store.json.reader.allow_nan_inf": False})
    assert "Line: 2" in info.value.context


def test_nested_projection_reads_named_members(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    path = write(tmp_path, '{"m": {"a": 1, "b": {"c": "x", "d": 2}}, "z": 1}\n')
    opts = {
        **json_mode,
        "__table_schema__": discover(path),
        "__projection__": ["M.b.c", "z"],
    }
    batches = read_file(path, "json", {}, opts, columns=["m", "z"])
    assert batches[0].schema.field("m").type == pa.struct(
        [pa.field("b", pa.struct([pa.field("c", pa.string())]))]
    )
    assert rows_of(batches) == [{"m": {"b": {"c": "x"}}, "z": 1}]


SAMPLES = [
    [{"a": 1, "b": "x"}, {"a": 2.5, "c": True}],
    [{"m": {"x": 1, "y": [1, 2]}}, {"m": None}, {"m": {"z": "q"}}],
    [{"l": []}, {"l": [[1], [2, 3]]}, {"n": None}],
    [{"r": [{"q": 1}, {"q": None, "w": "s"}]}],
    [{"Name": "a"}, {"name": "b"}],
    [{"a": 1, "m": {"k": 2}}, {"a": None, "m": {"k": 1.5}}],
    # strings pyarrow's JSON reader takes for times are strings
    [{"t": "2024-01-02"}, {"t": "2024-01-02 03:04:05", "u": "2024-01-02T03:04:05Z"}],
    # an integer beyond BIGINT's range is a BIGINT (whose read then fails), not a DOUBLE
    [{"n": 1}, {"n": 9223372036854775808}, {"m": {"k": -99999999999999999999}}],
    [{"b": True}, {"b": 1}],  # a boolean and a number do not mix
    [{"s": "x"}, {"s": 1}, {"l": [1, "a"]}],
]


@pytest.mark.parametrize("records", SAMPLES)
@pytest.mark.parametrize("all_text", [False, True])
@pytest.mark.parametrize("with_text", [False, True])
def test_bulk_inference_matches_record_by_record(
    records: list[dict[str, Any]], all_text: bool, with_text: bool
) -> None:
    from auger.formats.json import SchemaBuilder

    def typed(build: Any) -> Any:
        try:
            return build().schema().to_text()
        except UserError as exc:
            return exc.message, exc.context

    def one_by_one() -> Any:
        one = SchemaBuilder(all_text, False)
        for i, r in enumerate(records):
            one.add(r, "f.json", i + 1)
        return one

    def bulk() -> Any:
        many = SchemaBuilder(all_text, False)
        text = "\n".join(json.dumps(r) for r in records).encode() if with_text else None
        many.add_many(records, list(range(1, len(records) + 1)), "f.json", text)
        return many

    assert typed(bulk) == typed(one_by_one)


def test_a_key_twice_in_one_object_is_typed_by_its_last_value(tmp_path: Path) -> None:
    # as Python's decoder keeps it; pyarrow's JSON reader refuses the line, so the sample is
    # typed record by record
    path = write(tmp_path, '{"a": 1, "a": "x", "b": 2}\n{"b": 3}\n')
    assert discover(path) == discover(write(tmp_path, '{"a": "x", "b": 2}\n', "g.json"))
    assert discover(path) == "`a` VARCHAR, `b` BIGINT"


def test_conflict_across_files_is_located(tmp_path: Path) -> None:
    one = write(tmp_path, '{"a": 1}\n', "1.json")
    two = write(tmp_path, '{"b": 1}\n{"a": {"x": 1}}\n', "2.json")
    schema = JsonFormat().discover_schema([str(one), str(two)], CFG, {})
    with pytest.raises(UserError) as info:
        check_read(schema.column("a"))
    assert f"File: {two}" in info.value.context and "Line: 2" in info.value.context


def test_print_skipped_record_lines(
    tmp_path: Path, json_mode: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path, '{"a": 1}\n{oops\n{"a": 2}\n[1]\n')
    opts = {
        **json_mode,
        "store.json.reader.skip_invalid_records": True,
        "store.json.reader.print_skipped_invalid_record_number": True,
        "__table_schema__": "a BIGINT",
    }
    with caplog.at_level("WARNING", logger="auger.formats"):
        assert rows_of(read_file(path, "json", {}, opts)) == [{"a": 1}, {"a": 2}]
    messages = [r.getMessage() for r in caplog.records]
    assert f"Skipped invalid record at line 2 of {path}" in messages
    assert f"Skipped invalid record at line 4 of {path}" in messages


def test_byte_order_mark(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    _, rows = scan(tmp_path, b'\xef\xbb\xbf{"a": 1}\n{"a": 2}\n', json_mode)
    assert rows == [{"a": 1}, {"a": 2}]
    _, arr = scan(tmp_path, b'\xef\xbb\xbf[{"a": 1}]', json_mode)
    assert arr == [{"a": 1}]


def test_integer_beyond_bigint_says_so(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    with pytest.raises(UserError) as err:
        scan(tmp_path, '{"a": 1}\n{"a": 12345678901234567890}\n', json_mode)
    assert err.value.kind is ErrorKind.DATA_READ
    assert "integer beyond BIGINT" in err.value.message
    assert "Line: 2" in err.value.context
