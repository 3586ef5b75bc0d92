"""ScanSchemaTracker lifecycle (Drill's TestSchemaTrackerProjection, TestScanSchemaTracker,
TestSchemaTrackerDefined), paraphrased, plus our own cases."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import pytest

from auger.errors import UserError
from auger.scan import (
    PROJECT_ALL,
    PROJECT_NONE,
    ErrorContext,
    ProjectionType,
    ScanSchemaTracker,
    ScanStateError,
    SchemaMismatchError,
)
from auger.scan.filter import SchemaFilter
from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def col(text: str) -> ColumnMetadata:
    return S(text)[0]


# ---------------------------------------------------------------- TestSchemaTrackerProjection


def test_empty_projection() -> None:
    t = ScanSchemaTracker.build([])
    assert t.is_resolved()
    assert t.schema_version == 1
    assert t.projection_type is ProjectionType.NONE
    assert t.internal_schema().is_empty()
    assert t.projection_filter() is PROJECT_NONE


def test_wildcard_projection() -> None:
    t = ScanSchemaTracker.build(["**"])
    assert not t.is_resolved()
    assert t.schema_version == 1
    assert t.projection_type is ProjectionType.ALL
    assert t.internal_schema().is_empty()
    assert t.projection_filter() is PROJECT_ALL


def test_wildcard_with_explicit_columns() -> None:
    t = ScanSchemaTracker.build(["a", "**", "b"])
    assert not t.is_resolved()
    assert t.projection_type is ProjectionType.ALL
    assert t.projection().get("a") is not None and t.projection().get("B") is not None
    schema = t.internal_schema()
    assert schema.names() == ["a", "b"] and all(c.is_dynamic for c in schema)
    f = t.projection_filter()
    assert isinstance(f, SchemaFilter)
    assert f.is_projected("zz")  # still a wildcard


def test_explicit_projection() -> None:
    t = ScanSchemaTracker.build(["a", "b", "c"])
    assert t.projection_type is ProjectionType.SOME
    assert len(t.internal_schema()) == 3
    assert all(c.is_dynamic for c in t.internal_schema())


def test_array_projection_indexes() -> None:
    t = ScanSchemaTracker.build(["a[1]", "a[3]"])
    assert t.projection_type is ProjectionType.SOME
    a = t.projection().get("a")
    assert a is not None and a.indexes == [False, True, False, True]


def test_version_is_callable_and_int() -> None:
    t = ScanSchemaTracker.build(["a"])
    assert t.schema_version() == t.schema_version == 1
    assert t.projection_type() is ProjectionType.SOME


# ---------------------------------------------------------------------- TestScanSchemaTracker


def test_basics() -> None:
    t = ScanSchemaTracker.build(["a", "b", "c"])
    assert t.projection_type is ProjectionType.SOME
    assert not t.is_resolved()
    v0 = t.schema_version
    assert v0 > 0
    assert t.reader_input_schema() == S("a LATE, b LATE, c LATE")

    f = t.projection_filter()
    for name in ("a", "b", "c"):
        assert f.is_projected(name)
        assert f.projection(col(f"{name} INT")).is_projected
    assert not f.is_projected("d")
    assert not f.projection(col("d INT")).is_projected

    reader = S("a INT NOT NULL, b BIGINT NOT NULL")
    t.apply_reader_schema(reader)
    assert not t.is_resolved()
    v1 = t.schema_version
    assert v1 > v0
    missing = t.missing_columns(reader)
    assert missing == S("c LATE")

    t.resolve_missing_cols(S("c VARCHAR"))
    assert t.is_resolved()
    v2 = t.schema_version
    assert v2 > v1

    # A second reader with all three columns changes nothing.
    t.apply_reader_schema(S("a INT NOT NULL, b BIGINT NOT NULL, c VARCHAR"))
    assert t.schema_version == v2
    assert t.output_schema() == S("a INT NOT NULL, b BIGINT NOT NULL, c VARCHAR")


def test_wildcard_lifecycle() -> None:
    t = ScanSchemaTracker.build(["**"])
    assert t.projection_type is ProjectionType.ALL
    assert not t.is_resolved()
    assert t.reader_input_schema().is_empty()
    assert t.projection_filter() is PROJECT_ALL

    r1 = S("a INT NOT NULL, b BIGINT NOT NULL")
    t.apply_reader_schema(r1)
    assert t.is_resolved()
    assert t.output_schema() == r1
    v1 = t.schema_version

    assert t.reader_input_schema() == r1
    f2 = t.projection_filter()
    assert f2 is not PROJECT_ALL
    assert f2.projection(col("a INT NOT NULL")).is_projected
    assert f2.projection(col("b BIGINT NOT NULL")).is_projected
    assert f2.projection(col("c VARCHAR")).is_projected
    with pytest.raises(UserError) as info:
        f2.projection(col("a VARCHAR NOT NULL"))
    assert "Scan and Reader column type conflict" in str(info.value)

    t.apply_reader_schema(S("c VARCHAR"))
    assert t.output_schema() == S("a INT NOT NULL, b BIGINT NOT NULL, c VARCHAR")
    assert t.schema_version > v1


def test_provided_schema_explicit_projection() -> None:
    t = ScanSchemaTracker.build(["a", "b", "c"], provided_schema=S("a INT, b BIGINT"))
    assert t.projection_type is ProjectionType.SOME
    assert not t.is_resolved()
    assert t.reader_input_schema() == S("a INT, b BIGINT, c LATE")
    t.apply_reader_schema(S("a INT, c VARCHAR"))
    assert t.is_resolved()
    assert t.output_schema() == S("a INT, b BIGINT, c VARCHAR")
    assert t.missing_columns(S("a INT, c VARCHAR")) == S("b BIGINT")


def test_provided_schema_with_wildcard_is_lenient() -> None:
    provided = S("a INT, b BIGINT")
    t = ScanSchemaTracker.build(["**"], provided_schema=provided)
    assert t.projection_type is ProjectionType.ALL
    assert t.is_resolved()
    assert t.reader_input_schema() == provided
    f = t.projection_filter()
    for name in ("a", "c", "d"):
        assert f.is_projected(name)
    t.apply_reader_schema(S("a INT, c VARCHAR"))
    t.apply_reader_schema(S("b BIGINT"))
    assert t.output_schema() == S("a INT, b BIGINT, c VARCHAR")


@pytest.mark.parametrize("with_provided", [True, False])
def test_wildcard_then_explicit_keeps_table_order(with_provided: bool) -> None:
    # SELECT * ... ORDER BY a arrives as (**, a): the output must not be (b, c, a).
    schema = S("a INT, b BIGINT, c VARCHAR")
    t = ScanSchemaTracker.build(["**", "a"], provided_schema=schema if with_provided else None)
    if with_provided:
        assert t.is_resolved()
    t.apply_reader_schema(schema)
    assert t.output_schema() == schema


def test_strict_provided_schema_with_wildcard() -> None:
    provided = S("a INT, b BIGINT")
    t = ScanSchemaTracker.build(["**"], provided_schema=provided, strict=True)
    assert t.projection_type is ProjectionType.SOME
    assert t.is_resolved()
    assert t.reader_input_schema() == provided
    f = t.projection_filter()
    assert f.is_projected("a") and not f.is_projected("c")
    assert t.output_schema() == provided


def test_strict_from_table_property() -> None:
    class Provided(TupleSchema):
        # a schema object that carries table properties, as a .drill.schema file does
        __slots__ = ("properties",)

    provided = Provided(S("a INT, b BIGINT"))
    provided.properties = {"drill.strict": "true"}
    t = ScanSchemaTracker.build(["*"], provided_schema=provided)
    assert t.projection_type is ProjectionType.SOME
    assert not t.projection_filter().is_projected("c")


def test_strict_from_schema_file_object() -> None:
    @dataclass(frozen=True)
    class SchemaFile:  # the shape of auger.storage.schema_file.SchemaFile
        schema: TupleSchema
        properties: dict[str, str]

    strict = SchemaFile(S("a INT, b BIGINT"), {"drill.strict": "true"})
    t = ScanSchemaTracker.build(["*"], provided_schema=strict)  # type: ignore[arg-type]
    assert t.projection_type is ProjectionType.SOME
    assert t.output_schema() == S("a INT, b BIGINT")
    lenient = SchemaFile(S("a INT"), {})
    t2 = ScanSchemaTracker.build(["*"], provided_schema=lenient)  # type: ignore[arg-type]
    assert t2.projection_type is ProjectionType.ALL
    assert t2.projection_filter().is_projected("c")


def test_wildcard_without_schema_change() -> None:
    t = ScanSchemaTracker.build(["**"], allow_schema_change=False)
    assert t.projection_filter().is_projected("z")
    r1 = S("a INT, b BIGINT")
    t.apply_reader_schema(r1)
    assert t.is_resolved()
    assert t.projection_type is ProjectionType.SOME
    assert t.reader_input_schema() == r1
    f = t.projection_filter()
    assert f.is_projected("a") and f.is_projected("b") and not f.is_projected("c")
    v = t.schema_version
    t.apply_reader_schema(S(""))
    with pytest.raises(ScanStateError):
        t.apply_reader_schema(S("c VARCHAR"))
    with pytest.raises(RuntimeError):  # Drill's IllegalStateException
        t.apply_reader_schema(S("c VARCHAR"))
    assert t.output_schema() == r1
    assert t.schema_version == v


@pytest.mark.parametrize("provided", [None, "a INT, b BIGINT"])
def test_empty_projection_ignores_provided_schema(provided: str | None) -> None:
    t = ScanSchemaTracker.build([], provided_schema=S(provided) if provided else None)
    assert t.projection_type is ProjectionType.NONE
    assert t.is_resolved()
    f = t.projection_filter()
    assert f is PROJECT_NONE and f.is_empty() and not f.is_projected("a")
    assert t.reader_input_schema().is_empty()
    assert t.output_schema().is_empty()


def test_wildcard_with_explicit_with_reader_schema_keeps_reader_order() -> None:
    t = ScanSchemaTracker.build(["**", "a"])
    t.apply_reader_schema(S("b BIGINT, a INT, c VARCHAR"))
    assert t.output_schema().names() == ["b", "a", "c"]


def test_explicit_before_wildcard_not_in_table_stays_put() -> None:
    t = ScanSchemaTracker.build(["x", "*", "y"])
    t.apply_reader_schema(S("a INT, b VARCHAR"))
    assert t.output_schema().names() == ["x", "a", "b", "y"]
    assert not t.is_resolved()
    assert t.missing_columns(S("a INT, b VARCHAR")).names() == ["x", "y"]


def test_second_reader_in_other_order_keeps_first_order() -> None:
    t = ScanSchemaTracker.build(["*"])
    t.apply_reader_schema(S("a INT, b VARCHAR"))
    v = t.schema_version
    t.apply_reader_schema(S("b VARCHAR, a INT"))
    assert t.output_schema().names() == ["a", "b"]
    assert t.schema_version == v


def test_reader_type_and_mode_conflicts() -> None:
    t = ScanSchemaTracker.build(["a", "b"], provided_schema=S("a INT NOT NULL, b VARCHAR"))
    with pytest.raises(UserError) as info:
        t.apply_reader_schema(S("a BIGINT NOT NULL"))
    text = str(info.value)
    assert text.startswith("VALIDATION ERROR: Scan and Reader column type conflict")
    assert "Scan column: `a` INT NOT NULL" in text
    assert "Reader column: `a` BIGINT NOT NULL" in text
    with pytest.raises(UserError, match="type conflict"):
        t.apply_reader_schema(S("b VARCHAR NOT NULL"))


def test_errors_carry_reader_context() -> None:
    scan_ctx = ErrorContext("Scan context")
    t = ScanSchemaTracker.build(["a"], provided_schema=S("a INT"), error_context=scan_ctx)
    reader_ctx = ErrorContext("File: /w/x/foo.csv", parent=scan_ctx)
    with pytest.raises(UserError) as info:
        t.apply_reader_schema(S("a VARCHAR"), reader_ctx)
    assert info.value.context[-2:] == ["File: /w/x/foo.csv", "Scan context"]
    with pytest.raises(UserError) as info2:
        t.projection_filter(reader_ctx).projection(col("a VARCHAR"))
    assert "File: /w/x/foo.csv" in info2.value.context
    assert t.error_context() is scan_ctx


def test_reader_column_inconsistent_with_projection() -> None:
    t = ScanSchemaTracker.build(["a[2]"])
    with pytest.raises(UserError) as info:
        t.projection_filter().projection(col("a INT NOT NULL"))
    text = str(info.value)
    assert "Reader column type not compatible with projection specification" in text
    assert "Projected column: a[2]" in text
    assert "Reader column: `a` INT NOT NULL" in text
    with pytest.raises(UserError, match="not compatible"):
        t.apply_reader_schema(S("a INT NOT NULL"))


def test_tracker_pickles() -> None:
    t = ScanSchemaTracker.build(["a", "m.x", "c[2]"], provided_schema=S("a INT"))
    back = pickle.loads(pickle.dumps(t))
    assert back.reader_input_schema() == t.reader_input_schema()
    f = pickle.loads(pickle.dumps(t.projection_filter()))
    assert f.is_projected("a") and not f.is_projected("b")
    assert pickle.loads(pickle.dumps(PROJECT_ALL)) is PROJECT_ALL


# --------------------------------------------------------------------- TestSchemaTrackerDefined


def test_defined_schema() -> None:
    defined = S("a INT, b BIGINT, c VARCHAR")
    t = ScanSchemaTracker.build(["a", "b", "c"], defined_schema=defined)
    assert t.is_resolved()
    assert t.projection_type is ProjectionType.SOME
    assert t.reader_input_schema() == defined
    f = t.projection_filter()
    assert all(f.is_projected(n) for n in "abc") and not f.is_projected("d")
    t.apply_reader_schema(S("a INT, b BIGINT"))
    t.resolve_missing_cols(S("c VARCHAR"))
    assert t.output_schema() == defined


def test_defined_schema_with_dynamic_column() -> None:
    t = ScanSchemaTracker.build(["a", "b", "c"], defined_schema=S("a LATE, b BIGINT, c VARCHAR"))
    assert not t.is_resolved()
    t.apply_reader_schema(S("a INT, b BIGINT"))
    assert t.is_resolved()
    assert t.reader_input_schema() == S("a INT, b BIGINT, c VARCHAR")


@pytest.mark.parametrize(
    ("projection", "defined"),
    [
        (["a", "b"], "a INT, b BIGINT, c VARCHAR"),
        (["a", "b", "c", "d"], "a INT, b BIGINT, c VARCHAR"),
        (["a", "c", "d"], "a INT, b BIGINT, c VARCHAR"),
        (["b", "a"], "a INT, b BIGINT"),
        (["a", "m.x"], "a INT, m STRUCT<x BIGINT, y VARCHAR>"),
        (["a", "m.x"], "a INT, m STRUCT<y VARCHAR>"),
        (["a", "m.x"], "a INT, m INT"),
    ],
)
def test_defined_schema_must_match_projection(projection: list[str], defined: str) -> None:
    with pytest.raises(SchemaMismatchError):
        ScanSchemaTracker.build(projection, defined_schema=S(defined))
    with pytest.raises(ValueError):  # Drill's IllegalArgumentException
        ScanSchemaTracker.build(projection, defined_schema=S(defined))


def test_defined_dynamic_wildcard_acts_as_none() -> None:
    t = ScanSchemaTracker.build(["**"], defined_schema=S("`**` LATE"))
    assert t.projection_type is ProjectionType.ALL
    assert not t.is_resolved()


def test_defined_empty_with_empty_projection() -> None:
    t = ScanSchemaTracker.build([], defined_schema=S(""))
    assert t.is_resolved()
    assert t.projection_type is ProjectionType.NONE


def test_defined_schema_with_wildcard_is_the_column_list() -> None:
    defined = S("a INT NOT NULL, b VARCHAR")
    t = ScanSchemaTracker.build(["*"], defined_schema=defined)
    assert t.projection_type is ProjectionType.SOME
    assert not t.projection_filter().is_projected("c")
    assert t.output_schema() == defined
