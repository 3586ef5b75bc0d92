"""Maps in the scan schema tracker (Drill's TestScanSchemaTrackerMaps), paraphrased."""

from __future__ import annotations

import pytest

from auger.scan import PROJECT_ALL, PROJECT_NONE, ProjectionFilter, ScanSchemaTracker
from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema


def S(text: str) -> TupleSchema:
    return parse_schema(text)


def C(text: str) -> ColumnMetadata:
    return S(text)[0]


A = "a INT NOT NULL"
M_XY = "m STRUCT<x BIGINT NOT NULL, y VARCHAR NOT NULL>"
READER = S(f"{A}, {M_XY}")
NEW_MAP_W = C("w STRUCT<s INT>")


def map_filter(f: ProjectionFilter, col: str = M_XY) -> ProjectionFilter:
    r = f.projection(C(col))
    assert r.is_projected and r.map_filter is not None
    return r.map_filter


def assert_open_map(mf: ProjectionFilter) -> None:
    for name in ("x BIGINT NOT NULL", "y VARCHAR NOT NULL", "z INT"):
        assert mf.projection(C(name)).is_projected
    assert mf.projection(NEW_MAP_W).map_filter is PROJECT_ALL


@pytest.mark.parametrize("projection", [["a", "m"], ["a", "m.x", "m"]])
def test_generic_map(projection: list[str]) -> None:
    t = ScanSchemaTracker.build(projection)
    assert len(t.reader_input_schema()) == 2
    f = t.projection_filter()
    mf = map_filter(f)
    if projection == ["a", "m"]:
        assert mf is PROJECT_ALL
    else:
        assert mf is not PROJECT_ALL  # a filter from the project list, still open
    assert_open_map(mf)
    assert not f.projection(C("b INT")).is_projected

    t.apply_reader_schema(READER)
    assert t.is_resolved()
    assert t.output_schema() == READER
    assert t.reader_input_schema() == READER
    mf2 = map_filter(t.projection_filter())
    assert mf2 is not PROJECT_ALL
    assert_open_map(mf2)


def test_two_level_generic_map() -> None:
    t = ScanSchemaTracker.build(["a", "m"])
    nested = f"{A}, m STRUCT<x BIGINT, y VARCHAR, m2 STRUCT<p BIGINT, q VARCHAR>>"
    f = t.projection_filter()
    mf = map_filter(f, "m STRUCT<x BIGINT, y VARCHAR, m2 STRUCT<p BIGINT, q VARCHAR>>")
    assert mf is PROJECT_ALL
    t.apply_reader_schema(S(nested))
    v = t.schema_version
    f2 = t.projection_filter()
    mf2 = map_filter(f2, "m STRUCT<x BIGINT, y VARCHAR, m2 STRUCT<p BIGINT, q VARCHAR>>")
    assert mf2.projection(C("z VARCHAR")).is_projected
    m2f = map_filter(mf2, "m2 STRUCT<p BIGINT, q VARCHAR>")
    assert m2f.projection(C("r INT")).is_projected
    reader2 = S(
        f"{A}, m STRUCT<x BIGINT, y VARCHAR, m2 STRUCT<p BIGINT, q VARCHAR, r INT>, z VARCHAR>"
    )
    t.apply_reader_schema(reader2)
    assert t.output_schema() == reader2
    assert t.schema_version > v


def test_map_with_wildcard() -> None:
    t = ScanSchemaTracker.build(["*"])
    assert t.projection_filter() is PROJECT_ALL
    t.apply_reader_schema(READER)
    f = t.projection_filter()
    assert f is not PROJECT_ALL
    assert f.projection(C("b INT")).is_projected
    assert f.projection(NEW_MAP_W).map_filter is PROJECT_ALL
    assert map_filter(f).projection(C("z INT")).is_projected


def test_map_with_wildcard_no_schema_change() -> None:
    t = ScanSchemaTracker.build(["*"], allow_schema_change=False)
    t.apply_reader_schema(READER)
    f = t.projection_filter()
    assert not f.projection(C("b INT")).is_projected
    assert f.projection(NEW_MAP_W).map_filter is PROJECT_NONE
    mf = map_filter(f)
    assert not mf.projection(C("z INT")).is_projected
    assert mf.projection(NEW_MAP_W).map_filter is PROJECT_NONE


def test_specific_map() -> None:
    t = ScanSchemaTracker.build(["a", "m.x"])
    for _ in range(2):
        mf = map_filter(t.projection_filter())
        assert mf.projection(C("x BIGINT NOT NULL")).is_projected
        assert not mf.projection(C("y VARCHAR")).is_projected
        assert mf.projection(NEW_MAP_W).map_filter is PROJECT_NONE
        t.apply_reader_schema(S(f"{A}, m STRUCT<x BIGINT NOT NULL>"))
    assert t.output_schema() == S(f"{A}, m STRUCT<x BIGINT NOT NULL>")


def test_specific_map_subset() -> None:
    t = ScanSchemaTracker.build(["a", "m.x", "m.y"])
    reader = S(f"{A}, m STRUCT<x BIGINT NOT NULL>")
    t.apply_reader_schema(reader)
    assert not t.is_resolved()
    missing = t.missing_columns(reader)
    assert missing == S("m STRUCT<y LATE>")
    t.resolve_missing_cols(S("m STRUCT<y VARCHAR>"))
    assert t.is_resolved()
    assert t.output_schema() == S(f"{A}, m STRUCT<x BIGINT NOT NULL, y VARCHAR>")


def test_generic_map_with_lenient_provided_schema() -> None:
    t = ScanSchemaTracker.build(["a", "m"], provided_schema=READER)
    assert t.is_resolved()
    mf = map_filter(t.projection_filter())
    assert_open_map(mf)
    t.apply_reader_schema(S(f"{A}, m STRUCT<x BIGINT NOT NULL, z VARCHAR>"))
    expected = S(f"{A}, m STRUCT<x BIGINT NOT NULL, y VARCHAR NOT NULL, z VARCHAR>")
    assert t.output_schema() == expected
    assert t.reader_input_schema() == expected


@pytest.mark.parametrize("how", ["strict", "defined"])
def test_generic_map_with_strict_or_defined_schema(how: str) -> None:
    if how == "strict":
        t = ScanSchemaTracker.build(["a", "m"], provided_schema=READER, strict=True)
    else:
        t = ScanSchemaTracker.build(["a", "m"], defined_schema=READER)
    assert t.reader_input_schema() == READER
    f = t.projection_filter()
    assert f.projection(NEW_MAP_W).map_filter is PROJECT_NONE
    assert not f.projection(NEW_MAP_W).is_projected
    mf = map_filter(f)
    assert mf.projection(C("x BIGINT NOT NULL")).is_projected
    assert mf.projection(C("y VARCHAR NOT NULL")).is_projected
    assert not mf.projection(C("z VARCHAR")).is_projected
    t.apply_reader_schema(S(f"{A}, m STRUCT<x BIGINT NOT NULL>"))
    assert t.output_schema() == READER


def test_specific_map_with_lenient_provided_schema() -> None:
    t = ScanSchemaTracker.build(["a", "m.x"], provided_schema=READER)
    mf = map_filter(t.projection_filter())
    assert not mf.projection(C("y VARCHAR NOT NULL")).is_projected
    v = t.schema_version
    t.apply_reader_schema(S(f"{A}, m STRUCT<x BIGINT NOT NULL>"))
    assert t.schema_version == v
    assert t.output_schema() == S(f"{A}, m STRUCT<x BIGINT NOT NULL>")


@pytest.mark.parametrize("how", ["strict", "defined"])
def test_specific_map_with_strict_or_defined(how: str) -> None:
    if how == "strict":
        t = ScanSchemaTracker.build(["a", "m.x"], provided_schema=READER, strict=True)
    else:
        t = ScanSchemaTracker.build(
            ["a", "m.x"], defined_schema=S(f"{A}, m STRUCT<x BIGINT NOT NULL>")
        )
    assert t.output_schema() == S(f"{A}, m STRUCT<x BIGINT NOT NULL>")


def test_dynamic_map_with_defined_schema() -> None:
    t = ScanSchemaTracker.build(["a", "m"], defined_schema=S(f"{A}, m LATE"))
    assert not t.is_resolved()
    assert map_filter(t.projection_filter()) is PROJECT_ALL
    v = t.schema_version
    t.apply_reader_schema(READER)
    assert t.schema_version > v
    assert t.output_schema() == READER


def test_generic_map_with_strict_schema_smaller() -> None:
    provided = S(f"{A}, m STRUCT<x BIGINT NOT NULL>")
    t = ScanSchemaTracker.build(["a", "m"], provided_schema=provided, strict=True)
    mf = map_filter(t.projection_filter())
    assert mf.projection(C("x BIGINT NOT NULL")).is_projected
    assert not mf.projection(C("y VARCHAR NOT NULL")).is_projected
    t.apply_reader_schema(READER)
    assert t.output_schema() == provided


def test_map_member_type_conflict_on_second_reader() -> None:
    t = ScanSchemaTracker.build(["m.x", "m.y"])
    reader = S("m STRUCT<x BIGINT NOT NULL>")
    t.apply_reader_schema(reader)
    t.resolve_missing_cols(S("m STRUCT<y INT>"))  # guessed nullable INT
    mf = map_filter(t.projection_filter(), "m STRUCT<x BIGINT NOT NULL, y VARCHAR>")
    with pytest.raises(Exception, match="Scan and Reader column type conflict"):
        mf.projection(C("y VARCHAR"))


def test_missing_whole_map_keeps_projection() -> None:
    t = ScanSchemaTracker.build(["a", "m.x", "m.y"])
    t.apply_reader_schema(S(A))
    missing = t.missing_columns(S(A))
    assert missing == S("m LATE")
    t.resolve_missing_cols(S("m STRUCT<x INT, y INT>"))
    assert t.is_resolved()
    assert t.output_schema() == S(f"{A}, m STRUCT<x INT, y INT>")
