"""Provided and early reader schemas applied to the tracker (Drill's
TestSchemaTrackerInputSchema and TestSchemaTrackerEarlyReaderSchema), and projection filters
(TestDynamicSchemaFilter)."""

from __future__ import annotations

import pytest

from auger.errors import UserError
from auger.scan import PROJECT_ALL, PROJECT_NONE, ProjectionType, ScanSchemaTracker
from auger.scan.filter import RequestedTupleFilter
from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema


def S(text: str) -> TupleSchema:
    return parse_schema(text)


SCHEMA = "a INT NOT NULL PROPERTIES {'my.prop' = 'my-value'}, b VARCHAR"
MAP_SCHEMA = "a INT NOT NULL, m STRUCT<x BIGINT NOT NULL, y VARCHAR NOT NULL>"
NESTED = (
    "a INT NOT NULL, m STRUCT<x BIGINT NOT NULL, y VARCHAR NOT NULL, "
    "m2 STRUCT<p BIGINT NOT NULL, q VARCHAR NOT NULL>>"
)


M_WXZ = "m STRUCT<w LATE, x BIGINT NOT NULL, z LATE>"
M_M2 = "m STRUCT<m2 STRUCT<p BIGINT NOT NULL, q VARCHAR NOT NULL>>"


def tracker(
    projection: list[str], schema: str, how: str, strict: bool = False
) -> ScanSchemaTracker:
    """Apply ``schema`` either as a provided schema or as an early reader schema."""
    if how == "provided":
        return ScanSchemaTracker.build(projection, provided_schema=S(schema), strict=strict)
    t = ScanSchemaTracker.build(projection)
    t.apply_early_reader_schema(S(schema))
    return t


BOTH = pytest.mark.parametrize("how", ["provided", "reader"])


@BOTH
@pytest.mark.parametrize(
    ("projection", "schema", "ptype", "resolved", "expected"),
    [
        ([], SCHEMA, "NONE", True, ""),
        (["*"], SCHEMA, "ALL", True, SCHEMA),
        (["b", "c"], SCHEMA, "SOME", False, "b VARCHAR, c LATE"),
        (["b", "a"], SCHEMA, "SOME", True, "b VARCHAR, " + SCHEMA.split(", ")[0]),
        ([], MAP_SCHEMA, "NONE", True, ""),
        (["*"], MAP_SCHEMA, "ALL", True, MAP_SCHEMA),
        (["a", "m"], MAP_SCHEMA, "SOME", True, MAP_SCHEMA),
        (["a", "m.x", "m.y"], MAP_SCHEMA, "SOME", True, MAP_SCHEMA),
        (["a", "m.x", "m"], MAP_SCHEMA, "SOME", True, MAP_SCHEMA),
        (["m"], MAP_SCHEMA, "SOME", True, "m STRUCT<x BIGINT NOT NULL, y VARCHAR NOT NULL>"),
        (["m.x"], MAP_SCHEMA, "SOME", True, "m STRUCT<x BIGINT NOT NULL>"),
        (["m.w", "m.x", "m.z"], MAP_SCHEMA, "SOME", False, M_WXZ),
        (
            ["a", "m.y", "m"],
            MAP_SCHEMA,
            "SOME",
            True,
            "a INT NOT NULL, m STRUCT<y VARCHAR NOT NULL, x BIGINT NOT NULL>",
        ),
        (["*"], NESTED, "ALL", True, NESTED),
        (["a", "m"], NESTED, "SOME", True, NESTED),
        (["a", "m.x", "m.y", "m.m2"], NESTED, "SOME", True, NESTED),
        (["a", "m.x", "m.y", "m.m2.p", "m.m2.q"], NESTED, "SOME", True, NESTED),
        (["a", "m.x", "m.y", "m.m2.p", "m.m2"], NESTED, "SOME", True, NESTED),
        (["m.m2"], NESTED, "SOME", True, M_M2),
        (["m.m2.p"], NESTED, "SOME", True, "m STRUCT<m2 STRUCT<p BIGINT NOT NULL>>"),
        (
            ["m.m2.o", "m.m2.p", "m.m2.r"],
            NESTED,
            "SOME",
            False,
            "m STRUCT<m2 STRUCT<o LATE, p BIGINT NOT NULL, r LATE>>",
        ),
    ],
)
def test_input_schema(
    how: str, projection: list[str], schema: str, ptype: str, resolved: bool, expected: str
) -> None:
    t = tracker(projection, schema, how)
    assert t.projection_type is ProjectionType(ptype)
    assert t.is_resolved() is resolved
    assert t.internal_schema() == S(expected)


@BOTH
def test_column_properties_preserved(how: str) -> None:
    t = tracker(["*"], SCHEMA, how)
    assert t.output_schema()["a"].prop("my.prop") == "my-value"
    t2 = tracker(["b", "a"], SCHEMA, how)
    assert t2.output_schema()["a"].prop("my.prop") == "my-value"


@BOTH
def test_map_openness(how: str) -> None:
    def m_open(projection: list[str]) -> bool:
        scol = tracker(projection, MAP_SCHEMA, how).internal_schema().get("m")
        assert scol is not None and scol.members is not None
        return scol.members.is_project_all()

    assert m_open(["*"])
    assert m_open(["a", "m"])
    assert m_open(["a", "m.x", "m"])
    assert m_open(["m"])
    assert not m_open(["a", "m.x", "m.y"])


def test_strict_provided_closes_wildcard_and_maps() -> None:
    t = tracker(["*"], SCHEMA, "provided", strict=True)
    assert t.projection_type is ProjectionType.SOME
    assert t.is_resolved() and t.internal_schema() == S(SCHEMA)
    for projection in (["*"], ["m"]):
        t = tracker(projection, MAP_SCHEMA, "provided", strict=True)
        m = t.internal_schema().get("m")
        assert m is not None and m.members is not None and not m.members.is_project_all()


@BOTH
def test_excluded_from_wildcard(how: str) -> None:
    schema = "a INT NOT NULL, b VARCHAR PROPERTIES {'drill.special' = 'true'}"
    t = tracker(["*"], schema, how)
    assert t.is_resolved()
    assert t.internal_schema() == S("a INT NOT NULL")
    t2 = tracker(["a", "b"], schema, how)
    assert t2.internal_schema().names() == ["a", "b"]


def test_wildcard_between_explicit_provided_only() -> None:
    t = tracker(["x", "**", "y"], SCHEMA, "provided")
    assert not t.is_resolved()
    assert t.projection_type is ProjectionType.ALL
    assert t.internal_schema() == S("x LATE, " + SCHEMA + ", y LATE")


@BOTH
@pytest.mark.parametrize(
    ("projection", "schema", "projected", "column"),
    [
        (["a.x"], SCHEMA, "a {x}", "`a` INT NOT NULL"),
        (["a[2]"], SCHEMA, "a[2]", "`a` INT NOT NULL"),
        (["m.x.u"], MAP_SCHEMA, "x {u}", "`x` BIGINT NOT NULL"),
        (["m.x[2]"], MAP_SCHEMA, "x[]", "`x` BIGINT NOT NULL"),
    ],
)
def test_projection_conflicts(
    how: str, projection: list[str], schema: str, projected: str, column: str
) -> None:
    source = "Provided" if how == "provided" else "Reader"
    with pytest.raises(UserError) as info:
        tracker(projection, schema, how)
    text = str(info.value)
    assert text.startswith(
        f"VALIDATION ERROR: {source} column type not compatible with projection specification"
    )
    assert f"Projected column: {projected}" in text
    assert f"{source} column: {column}" in text


# ---------------------------------------------------------------- early reader schema


@pytest.mark.parametrize(
    ("early", "expected"),
    [
        ("a INT NOT NULL", SCHEMA),
        (SCHEMA, SCHEMA),
        (SCHEMA + ", c VARCHAR", SCHEMA + ", c VARCHAR"),
    ],
)
def test_early_schema_with_lenient_provided(early: str, expected: str) -> None:
    t = ScanSchemaTracker.build(["*"], provided_schema=S(SCHEMA))
    t.apply_early_reader_schema(S(early))
    assert t.is_resolved()
    assert t.internal_schema() == S(expected)


def test_early_schema_with_strict_provided_drops_extra() -> None:
    t = ScanSchemaTracker.build(["*"], provided_schema=S(SCHEMA), strict=True)
    t.apply_early_reader_schema(S(SCHEMA + ", c VARCHAR"))
    assert t.output_schema() == S(SCHEMA)


@pytest.mark.parametrize(
    ("reader", "reader_text"),
    [("a BIGINT NOT NULL", "`a` BIGINT NOT NULL"), ("a INT", "`a` INT")],
)
def test_early_schema_conflicts(reader: str, reader_text: str) -> None:
    t = ScanSchemaTracker.build(["*"], provided_schema=S(SCHEMA))
    with pytest.raises(UserError) as info:
        t.apply_early_reader_schema(S(reader))
    text = str(info.value)
    assert "type conflict" in text
    assert "Scan column: `a` INT NOT NULL" in text
    assert f"Reader column: {reader_text}" in text


def test_early_schema_wildcard_then_explicit() -> None:
    t = ScanSchemaTracker.build(["**", "a"])
    t.apply_early_reader_schema(S("a INT, b BIGINT, c VARCHAR"))
    assert t.output_schema().names() == ["a", "b", "c"]
    assert t.is_resolved()


# ---------------------------------------------------------------- TestDynamicSchemaFilter

_A = S("a INT NOT NULL")[0]
_B = S("b VARCHAR")[0]
_SPECIAL = ColumnMetadata("special", "INT", properties={"drill.special": "true"})
_SPECIAL2 = ColumnMetadata("special2", "INT", properties={"drill.special": "true"})
_M = S("m STRUCT<x BIGINT, y VARCHAR>")[0]
_X, _Y = _M.children or ()


def test_filter_project_all() -> None:
    f = ScanSchemaTracker.build(["*"]).projection_filter()
    assert not f.is_empty()
    r = f.projection(_A)
    assert r.is_projected and r.projection is None
    rm = f.projection(_M)
    assert rm.is_projected and rm.map_filter is PROJECT_ALL
    assert f.is_projected("special")
    assert not f.projection(_SPECIAL).is_projected


def test_filter_project_none() -> None:
    f = ScanSchemaTracker.build([]).projection_filter()
    assert f.is_empty()
    assert not f.projection(_A).is_projected
    assert f.projection(_M).map_filter is PROJECT_NONE


def test_filter_explicit_list() -> None:
    f = ScanSchemaTracker.build(["a", "c", "m", "special"]).projection_filter()
    r = f.projection(_A)
    assert r.is_projected and r.projection is not None and r.projection.name == "a"
    assert not f.projection(_B).is_projected
    rm = f.projection(_M)
    assert rm.is_projected and rm.map_filter is PROJECT_ALL
    assert f.projection(_SPECIAL).is_projected
    assert not f.projection(_SPECIAL2).is_projected


def test_filter_map_member() -> None:
    f = ScanSchemaTracker.build(["m.x"]).projection_filter()
    rm = f.projection(_M)
    assert rm.is_projected
    assert isinstance(rm.map_filter, RequestedTupleFilter)
    assert rm.map_filter.projection(_X).is_projected
    assert not rm.map_filter.projection(_Y).is_projected


def test_filter_map_projection_accepts_dict() -> None:
    # m.x may be a DICT key: the reader's choice decides, and the tracker resolves to a DICT.
    t = ScanSchemaTracker.build(["m.x"])
    d = S("m MAP<VARCHAR, INT>")[0]
    assert t.projection_filter().projection(d).is_projected
    t.apply_reader_schema([d])
    assert t.is_resolved()
    assert t.output_schema()["m"].is_dict
    with pytest.raises(UserError, match="not compatible"):
        ScanSchemaTracker.build(["m.x"]).projection_filter().projection(_A.renamed("m"))
