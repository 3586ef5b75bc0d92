"""Missing columns and output assembly (Drill's TestMissingColumnLoader, TestNullColumnLoader,
TestOutputBatchBuilder, and TestFileScan as a whole), paraphrased, plus our own cases."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.scan import ScanSchemaTracker
from auger.scan.implicit import FileDescrip, ImplicitOptions, resolve_implicit_columns
from auger.scan.missing import (
    default_value,
    missing_arrays,
    missing_batch,
    resolve_missing_types,
)
from auger.scan.output import assemble
from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def rows(batch: pa.RecordBatch) -> list[tuple[object, ...]]:
    cols = [c.to_pylist() for c in batch.columns]
    return list(zip(*cols, strict=True)) if cols else [()] * batch.num_rows


# ------------------------------------------------------------------- TestMissingColumnLoader


def test_basics() -> None:
    missing = S(
        "unspecified LATE, specifiedOpt VARCHAR, specifiedReq VARCHAR NOT NULL, "
        "specifiedArray VARCHAR ARRAY"
    )
    typed = resolve_missing_types(missing)
    assert typed == S(
        "unspecified INT, specifiedOpt VARCHAR, specifiedReq VARCHAR NOT NULL, "
        "specifiedArray VARCHAR ARRAY"
    )
    batch = missing_batch(typed, 2)
    assert rows(batch) == [(None, None, "", [])] * 2
    assert batch.schema.field("unspecified").type == pa.int32()
    assert not batch.schema.field("specifiedReq").nullable


def test_custom_null_type() -> None:
    typed = resolve_missing_types(S("unspecified LATE"), null_type="VARCHAR")
    assert typed == S("unspecified VARCHAR")
    assert rows(missing_batch(typed, 2)) == [(None,)] * 2
    assert missing_batch(typed, 2).schema.field(0).type == pa.string()


def test_default_values_on_required_columns() -> None:
    schema = S(
        "int INT NOT NULL DEFAULT '10', str VARCHAR NOT NULL DEFAULT 'foo', "
        "dub DOUBLE NOT NULL DEFAULT '20.0'"
    )
    assert rows(missing_batch(schema, 2)) == [(10, "foo", 20.0)] * 2


def test_all_modes() -> None:
    schema = S(
        "intReq INT NOT NULL DEFAULT '10', strReq VARCHAR NOT NULL DEFAULT 'foo', "
        "dubReq DOUBLE NOT NULL, intOpt INT DEFAULT '20', strOpt VARCHAR DEFAULT 'bar', "
        "dubOpt DOUBLE"
    )
    assert rows(missing_batch(schema, 2)) == [(10, "foo", 0.0, None, None, None)] * 2


def test_earlier_reader_types_reused() -> None:
    missing = S("req DOUBLE, opt DOUBLE, rep DOUBLE ARRAY, unk LATE, seen LATE, seenReq LATE")
    earlier = S("seen BIGINT, seenReq DATE NOT NULL")
    typed = resolve_missing_types(missing, null_type="VARCHAR", earlier=earlier)
    assert typed == S(
        "req DOUBLE, opt DOUBLE, rep DOUBLE ARRAY, unk VARCHAR, seen BIGINT, seenReq DATE"
    )
    assert rows(missing_batch(typed, 1)) == [(None, None, [], None, None, None)]


def test_required_made_nullable_when_not_allowed() -> None:
    typed = resolve_missing_types(S("specifiedReq VARCHAR NOT NULL"), allow_required=False)
    assert typed == S("specifiedReq VARCHAR")
    assert rows(missing_batch(typed, 1)) == [(None,)]


def test_empty_missing_schema() -> None:
    assert resolve_missing_types(S("")).is_empty()
    assert missing_arrays(S(""), 3) == []


def test_projection_shapes_dynamic_columns() -> None:
    t = ScanSchemaTracker.build(["a", "m.x", "m.y", "c[1]"])
    t.apply_reader_schema(S("a INT"))
    missing = t.missing_columns(S("a INT"))
    typed = resolve_missing_types(missing, projection=t.projection())
    assert typed == S("m STRUCT<x INT, y INT>, c INT ARRAY")
    t.resolve_missing_cols(typed)
    assert t.is_resolved()
    batch = missing_batch(typed, 2)
    assert rows(batch) == [({"x": None, "y": None}, [])] * 2


def test_missing_map_members() -> None:
    t = ScanSchemaTracker.build(["a", "m.x", "m.y"])
    reader = S("a INT, m STRUCT<x BIGINT>")
    t.apply_reader_schema(reader)
    typed = resolve_missing_types(t.missing_columns(reader), projection=t.projection())
    assert typed == S("m STRUCT<y INT>")
    t.resolve_missing_cols(typed)
    assert t.output_schema() == S("a INT, m STRUCT<x BIGINT, y INT>")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("b BOOLEAN NOT NULL DEFAULT 'true'", True),
        ("d DATE NOT NULL DEFAULT '2020-01-31'", dt.date(2020, 1, 31)),
        ("d DATE NOT NULL FORMAT 'dd.MM.yyyy' DEFAULT '31.01.2020'", dt.date(2020, 1, 31)),
        (
            "ts TIMESTAMP NOT NULL DEFAULT '2020-01-31 10:11:12'",
            dt.datetime(2020, 1, 31, 10, 11, 12),
        ),
        ("t TIME NOT NULL DEFAULT '10:11:12'", dt.time(10, 11, 12)),
        ("n BIGINT NOT NULL", 0),
        ("s VARCHAR NOT NULL", ""),
    ],
)
def test_default_value_parsing(text: str, value: object) -> None:
    col = S(text)[0]
    assert default_value(col) == value
    assert missing_batch([col], 1).column(0).to_pylist() == [value]


def test_bad_default_value() -> None:
    with pytest.raises(UserError, match="Invalid default value"):
        default_value(S("i INT NOT NULL DEFAULT 'ten'")[0])


# --------------------------------------------------------------------- TestOutputBatchBuilder


def test_single_input_reordered() -> None:
    reader = pa.RecordBatch.from_pydict({"d": ["barney", "wilma"], "a": [10, 20]})
    out = assemble(S("a BIGINT, d VARCHAR"), [reader])
    assert out.schema.names == ["a", "d"]
    assert rows(out) == [(10, "barney"), (20, "wilma")]


def test_two_inputs() -> None:
    reader = pa.RecordBatch.from_pydict({"d": ["barney", "wilma"], "a": [10, 20]})
    other = {"b": pa.array([1, 2], pa.int32()), "c": pa.array(["foo.csv"] * 2)}
    out = assemble(S("a BIGINT, b INT, c VARCHAR, d VARCHAR"), [reader, other])
    assert rows(out) == [(10, 1, "foo.csv", "barney"), (20, 2, "foo.csv", "wilma")]
    assert out.schema.field("b").type == pa.int32()


def test_maps_merged_across_sources() -> None:
    reader = pa.RecordBatch.from_pydict(
        {"a": ["barney", "fred"], "m": [{"y": "betty"}, {"y": "wilma"}]}
    )
    missing = {"m": pa.array([{"x": 1}, {"x": 2}], pa.struct([("x", pa.int32())]))}
    out = assemble(S("a VARCHAR, m STRUCT<x INT, y VARCHAR>"), [reader, missing])
    assert rows(out) == [("barney", {"x": 1, "y": "betty"}), ("fred", {"x": 2, "y": "wilma"})]


def test_nested_maps_merged() -> None:
    first = pa.RecordBatch.from_pylist(
        [{"a": "barney", "m1": {"p": "betty", "m2": {"x": "pebbles"}}}]
    )
    second = pa.RecordBatch.from_pylist([{"m1": {"q": 1, "m2": {"y": 10}}}])
    schema = S("a VARCHAR, m1 STRUCT<p VARCHAR, q BIGINT, m2 STRUCT<x VARCHAR, y BIGINT>>")
    out = assemble(schema, [first, second])
    assert rows(out) == [("barney", {"p": "betty", "q": 1, "m2": {"x": "pebbles", "y": 10}})]


def test_empty_output_keeps_row_count() -> None:
    out = assemble(S(""), [pa.RecordBatch.from_pydict({"a": [1, 2, 3]})])
    assert out.num_rows == 3 and out.num_columns == 0
    assert assemble(S(""), [], row_count=4).num_rows == 4


def test_missing_output_column_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="No source provides output column `z`"):
        assemble(S("z INT"), [pa.RecordBatch.from_pydict({"a": [1]})])


# ------------------------------------------------------------ a whole file scan, by hand


def scan_one_file(
    projection: list[str], reader: pa.RecordBatch, reader_schema: str, depth: int = 0
) -> pa.RecordBatch:
    """Tracker + implicit + missing + output for one file, as the scan operator will do."""
    t = ScanSchemaTracker.build(projection)
    implicit = resolve_implicit_columns(t, ImplicitOptions(max_partition_depth=depth))
    produced = S(reader_schema)
    f = t.projection_filter()
    kept = [c for c in produced if f.projection(c).is_projected]
    t.apply_reader_schema(kept)
    missing = resolve_missing_types(t.missing_columns(kept), projection=t.projection())
    t.resolve_missing_cols(missing)
    assert t.is_resolved()
    file = FileDescrip("file:/w/x/y/foo.csv", "file:/w")
    n = reader.num_rows
    implicit_cols = dict(zip(implicit.schema.names(), implicit.arrays(file, n), strict=True))
    missing_cols = dict(zip(missing.names(), missing_arrays(missing, n), strict=True))
    return assemble(t.output_schema(), [reader, implicit_cols, missing_cols], n)


READER = pa.RecordBatch.from_arrays(
    [pa.array([10, 20], pa.int32()), pa.array(["fred", "wilma"])], names=["a", "b"]
)


def test_file_scan_wildcard_with_all_implicit() -> None:
    projection = ["*", "fqn", "filepath", "filename", "suffix", "dir0", "dir1", "dir2"]
    out = scan_one_file(projection, READER, "a INT NOT NULL, b VARCHAR")
    assert out.schema.names == [
        "a",
        "b",
        "fqn",
        "filepath",
        "filename",
        "suffix",
        "dir0",
        "dir1",
        "dir2",
    ]
    assert rows(out)[0] == (
        10,
        "fred",
        "/w/x/y/foo.csv",
        "/w/x/y",
        "foo.csv",
        "csv",
        "x",
        "y",
        None,
    )


def test_file_scan_full_project() -> None:
    out = scan_one_file(
        ["dir0", "b", "filename", "c", "suffix"], READER, "a INT NOT NULL, b VARCHAR"
    )
    assert out.schema.names == ["dir0", "b", "filename", "c", "suffix"]
    assert out.schema.field("c").type == pa.int32() and out.schema.field("c").nullable
    assert rows(out) == [
        ("x", "fred", "foo.csv", None, "csv"),
        ("x", "wilma", "foo.csv", None, "csv"),
    ]


def test_file_scan_empty_project() -> None:
    out = scan_one_file([], READER.select([]), "")
    assert out.num_columns == 0
    assert out.num_rows == 2


def test_file_scan_wildcard_partitions_last() -> None:
    out = scan_one_file(["*"], READER, "a INT NOT NULL, b VARCHAR", depth=3)
    assert out.schema.names == ["a", "b", "dir0", "dir1", "dir2"]
    assert rows(out)[1] == (20, "wilma", "x", "y", None)


def test_file_scan_map_member() -> None:
    reader = pa.RecordBatch.from_pylist([{"m1": {"a": 10, "b": 11}}, {"m1": {"a": 20, "b": 21}}])
    t = ScanSchemaTracker.build(["m1.a"])
    mf = t.projection_filter().projection(ColumnMetadata.map("m1", [])).map_filter
    assert mf is not None and not mf.is_projected("b")
    t.apply_reader_schema(S("m1 STRUCT<a BIGINT>"))
    out = assemble(t.output_schema(), [reader])
    assert rows(out) == [({"a": 10},), ({"a": 20},)]
