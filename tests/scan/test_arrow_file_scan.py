"""Whole scans over Arrow batches: tracker, implicit, missing and output working together
(in the spirit of Drill's TestFileScan and TestScanLifecycleTwoReaders)."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.scan import (
    ErrorContext,
    FileDescrip,
    ImplicitOptions,
    ScanSchemaTracker,
    resolve_implicit_columns,
)
from auger.scan.file_scan import ArrowFileScan
from auger.types import TupleSchema
from auger.types.schema_text import parse_schema


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def rows(batch: pa.RecordBatch) -> list[tuple[object, ...]]:
    cols = [c.to_pylist() for c in batch.columns]
    return list(zip(*cols, strict=True)) if cols else [()] * batch.num_rows


def make_scan(
    projection: list[str],
    depth: int = 0,
    provided: str | None = None,
    allow_schema_change: bool = True,
    null_type: str | None = None,
) -> ArrowFileScan:
    t = ScanSchemaTracker.build(
        projection,
        provided_schema=S(provided) if provided else None,
        allow_schema_change=allow_schema_change,
        error_context=ErrorContext("Table: dfs.`t`"),
    )
    implicit = resolve_implicit_columns(t, ImplicitOptions(max_partition_depth=depth))
    return ArrowFileScan(t, implicit, null_type=null_type)


F1 = FileDescrip("/w/x/y/foo.csv", "/w")
F2 = FileDescrip("/w/x/bar.csv", "/w")
B1 = pa.RecordBatch.from_pydict({"a": [10, 20], "b": ["fred", "wilma"]})
B2 = pa.RecordBatch.from_pydict({"a": [101, 102], "b": ["wilma", "betty"], "c": [1001, 1002]})


def test_wildcard_expanding_schema() -> None:
    scan = make_scan(["*"], depth=2)
    out1 = list(scan.scan_file(F1, [B1]))
    assert out1[0].schema.names == ["a", "b", "dir0", "dir1"]
    assert rows(out1[0]) == [(10, "fred", "x", "y"), (20, "wilma", "x", "y")]
    v = scan.tracker.schema_version
    (out2,) = scan.scan_file(F2, [B2])
    assert out2.schema.names == ["a", "b", "c", "dir0", "dir1"]
    assert rows(out2)[0] == (101, "wilma", 1001, "x", None)
    assert scan.tracker.schema_version > v


def test_wildcard_without_schema_change_drops_new_columns() -> None:
    scan = make_scan(["*"], allow_schema_change=False)
    list(scan.scan_file(F1, [B1]))
    (out2,) = scan.scan_file(F2, [B2])
    assert out2.schema.names == ["a", "b"]
    assert rows(out2) == [(101, "wilma"), (102, "betty")]


def test_shrinking_schema_reuses_first_type() -> None:
    scan = make_scan(["*"])
    list(scan.scan_file(F1, [B1]))
    (out,) = scan.scan_file(F2, [pa.RecordBatch.from_pydict({"a": [101, 102]})])
    assert out.schema.field("b").type == pa.string()
    assert rows(out) == [(101, None), (102, None)]


def test_reordered_columns_follow_first_file() -> None:
    scan = make_scan(["*"])
    list(scan.scan_file(F1, [B1]))
    (out,) = scan.scan_file(F2, [pa.RecordBatch.from_pydict({"b": ["barney"], "a": [30]})])
    assert rows(out) == [(30, "barney")]


def test_explicit_projection_with_implicit_and_missing() -> None:
    scan = make_scan(["dir0", "b", "filename", "c", "suffix"], null_type=None)
    (out,) = scan.scan_file(F1, [B1])
    assert out.schema.names == ["dir0", "b", "filename", "c", "suffix"]
    assert out.schema.field("c").type == pa.int32()
    assert rows(out) == [
        ("x", "fred", "foo.csv", None, "csv"),
        ("x", "wilma", "foo.csv", None, "csv"),
    ]


def test_text_reader_null_type() -> None:
    scan = make_scan(["a", "zz"], null_type="VARCHAR")
    (out,) = scan.scan_file(F1, [B1])
    assert out.schema.field("zz").type == pa.string()


def test_provided_schema_converts_types() -> None:
    scan = make_scan(["*"], provided="a INT, b VARCHAR, d BIGINT NOT NULL DEFAULT '20'")
    batch = pa.RecordBatch.from_pydict({"a": ["10", "11"], "b": ["foo", "bar"], "c": ["x", "y"]})
    (out,) = scan.scan_file(F1, [batch])
    assert out.schema.names == ["a", "b", "d", "c"]
    assert out.schema.field("a").type == pa.int32()
    assert rows(out) == [(10, "foo", 20, "x"), (11, "bar", 20, "y")]


def test_unconvertible_value_names_file_and_column() -> None:
    scan = make_scan(["a"], provided="a INT")
    batch = pa.RecordBatch.from_pydict({"a": ["ten"]})
    with pytest.raises(UserError) as info:
        list(scan.scan_file(F1, [batch]))
    err = info.value
    assert str(err).startswith("DATA_READ ERROR: Scan and file column type conflict for column [a]")
    assert "File: /w/x/y/foo.csv" in err.context
    assert "Table: dfs.`t`" in err.context
    assert "Column: a" in err.context
    assert pickle.loads(pickle.dumps(err)).context == err.context


def test_map_members_pruned_and_missing_member_spliced() -> None:
    scan = make_scan(["m.x", "m.z"])
    batch = pa.RecordBatch.from_pylist([{"m": {"x": 1, "y": "a"}}, {"m": {"x": 2, "y": "b"}}])
    (out,) = scan.scan_file(F1, [batch])
    assert rows(out) == [({"x": 1, "z": None},), ({"x": 2, "z": None},)]
    m = scan.tracker.output_schema()["m"]
    assert m.schema == S("x BIGINT, z INT")  # Arrow structs read as nullable maps


def test_count_star_keeps_rows() -> None:
    scan = make_scan([])
    (out,) = scan.scan_file(F1, [B1])
    assert out.num_columns == 0 and out.num_rows == 2


def test_reader_column_named_like_implicit_is_shadowed() -> None:
    scan = make_scan(["a", "filename"])
    batch = pa.RecordBatch.from_pydict({"a": [1], "filename": ["inside.txt"]})
    (out,) = scan.scan_file(F1, [batch])
    assert rows(out) == [(1, "foo.csv")]


def test_empty_file_yields_nothing() -> None:
    scan = make_scan(["*"])
    assert list(scan.scan_file(F1, [])) == []
    assert not scan.tracker.is_resolved()


def test_conformer_gives_a_consumer_without_time_or_interval_types_their_text() -> None:
    """Spark's Arrow schema holds TIME and INTERVAL as text: the scan's one conversion step
    produces it, nested values included."""
    import datetime as dt

    from auger.scan.file_scan import conformer

    times = pa.array([dt.time(1, 2, 3), None], pa.time32("ms"))
    convert = conformer(times.type, pa.string())
    assert convert is not None and convert(times).to_pylist() == ["01:02:03.000", None]
    spans = pa.array([pa.MonthDayNano([14, 3, 4_500_000_000]), None], pa.month_day_nano_interval())
    listed = pa.array([[spans[0].as_py()], None], pa.list_(pa.month_day_nano_interval()))
    convert = conformer(listed.type, pa.list_(pa.field("element", pa.string())))
    assert convert is not None
    assert convert(listed).to_pylist() == [["P1Y2M3DT4.5S"], None]
