"""Project-list parsing (Drill's TestProjectionParser, TestProjectedPath, plus our own cases)."""

from __future__ import annotations

import pickle

import pytest

from auger.errors import UserError
from auger.projection import (
    RequestedTuple,
    TupleProjection,
    is_consistent,
    parse_path,
    parse_projection,
)
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.schema_text import parse_schema


def test_null_projection_is_wildcard() -> None:
    r = parse_projection(None)
    assert r.wildcard_posn == 0
    assert r.is_project_all and not r.is_project_none
    assert len(r.columns) == 0


@pytest.mark.parametrize("star", ["*", "**"])
def test_wildcard(star: str) -> None:
    r = parse_projection([star])
    assert r.wildcard_posn == 0
    assert r.columns.kind is TupleProjection.ALL
    assert len(r.columns) == 0
    assert r.columns.is_projected("anything")


def test_projection_none() -> None:
    r = parse_projection([])
    assert r.wildcard_posn == -1
    assert r.is_project_none and not r.is_project_all
    assert len(r.columns) == 0
    assert not r.columns.is_projected("a")


def test_simple_columns() -> None:
    r = parse_projection(["a", "b", "c"])
    assert r.wildcard_posn == -1
    tup = r.columns
    assert tup.kind is TupleProjection.SOME
    assert [c.name for c in tup] == ["a", "b", "c"]
    assert "A" in tup and "d" not in tup
    a = tup.get("a")
    assert a is not None and a.is_simple and not a.is_array and not a.is_map
    assert a.members is None


def test_case_insensitive_first_spelling_kept_and_dups_merged() -> None:
    tup = parse_projection(["Abc", "b", "ABC", "abc"]).columns
    assert tup.names() == ["Abc", "b"]
    col = tup.get("aBc")
    assert col is not None and col.ref_count == 3


def test_wildcard_position() -> None:
    r = parse_projection(["x", "*", "y"])
    assert r.wildcard_posn == 1
    assert r.columns.kind is TupleProjection.ALL
    assert r.columns.names() == ["x", "y"]


def test_map_subset() -> None:
    tup = parse_projection(["map.a", "map.b", "map.map2.x"]).columns
    m = tup.get("map")
    assert m is not None and m.is_map and not m.is_simple
    assert m.members is not None
    assert m.members.kind is TupleProjection.SOME
    assert m.members.names() == ["a", "b", "map2"]
    assert "bogus" not in m.members
    b = m.members.get("b")
    assert b is not None and b.is_simple
    m2 = m.members.get("map2")
    assert m2 is not None and m2.members is not None and m2.members.names() == ["x"]


@pytest.mark.parametrize(
    "projection",
    [["map.a", "map"], ["map", "map.a"], ["map.a", "map.**"], ["map.**", "map.a"]],
)
def test_map_and_whole_map(projection: list[str]) -> None:
    r = parse_projection(projection)
    assert r.wildcard_posn == -1
    m = r.columns.get("map")
    assert m is not None and m.is_map and m.members is not None
    assert m.members.is_project_all()
    assert "a" in m.members and "b" not in m.members
    assert m.members.is_projected("b")  # whole map: any member


def test_map_details() -> None:
    tup = parse_projection(["a.b.c", "a.c", "d"]).columns
    assert len(tup) == 2
    a = tup.get("a")
    assert a is not None and a.is_map and not a.is_simple and not a.is_array
    assert a.members is not None
    b = a.members.get("b")
    assert b is not None and b.is_map and b.members is not None
    c_in_b = b.members.get("c")
    assert c_in_b is not None and c_in_b.is_simple
    c = a.members.get("c")
    assert c is not None and c.is_simple
    d = tup.get("d")
    assert d is not None and d.is_simple


def test_map_dups() -> None:
    a = parse_projection(["a.b", "a.c", "a.b"]).columns.get("a")
    assert a is not None and a.members is not None and len(a.members) == 2
    b = a.members.get("b")
    assert b is not None and b.ref_count == 2


@pytest.mark.parametrize(
    ("projection", "dims", "flags"),
    [
        (["a[1]", "a[3]"], 1, [False, True, False, True]),
        (["a[0][1][2]", "a[2][3]"], 3, [True, False, True]),
        (["a[1]", "a[3]", "a[1]", "a[3].z"], 1, [False, True, False, True]),
        (["c[2]", "c[0]"], 1, [True, False, True]),
    ],
)
def test_array_indexes(projection: list[str], dims: int, flags: list[bool]) -> None:
    tup = parse_projection(projection).columns
    assert len(tup) == 1
    col = next(iter(tup))
    assert col.is_array and not col.is_simple
    assert col.array_dims == dims
    assert col.has_indexes
    assert col.indexes == flags
    assert col.index_set == {i for i, f in enumerate(flags) if f}


@pytest.mark.parametrize("projection", [["a[1]", "a"], ["a", "a[1]"]])
def test_array_and_simple_is_whole_array(projection: list[str]) -> None:
    a = parse_projection(projection).columns.get("a")
    assert a is not None and a.is_array
    assert a.indexes is None and not a.has_indexes
    assert a.has_index(7)


@pytest.mark.parametrize("projection", [["a[1].x"], ["a[1][2].x"]])
def test_map_array(projection: list[str]) -> None:
    a = parse_projection(projection).columns.get("a")
    assert a is not None
    assert a.is_array and a.has_indexes and a.is_map
    assert a.members is not None
    assert "x" in a.members and "y" not in a.members
    assert not a.members.is_project_all() and not a.members.is_project_none()


@pytest.mark.parametrize("projection", [["m.a", "m[0]"], ["m[0]", "m.a"]])
def test_array_and_map(projection: list[str]) -> None:
    m = parse_projection(projection).columns.get("m")
    assert m is not None and m.is_array and m.array_dims == 1 and m.is_map
    assert m.members is not None and "a" in m.members


def test_project_strings() -> None:
    tup = parse_projection(["a.x", "b[2]", "m.x[2]", "c", "d[1]", "d[0]"]).columns
    strings = {c.name: c.project_string() for c in tup}
    assert strings["a"] == "a {x}"
    assert strings["b"] == "b[2]"
    assert strings["c"] == "c"
    assert strings["d"] == "d[0, 1]"
    m = tup.get("m")
    assert m is not None and m.members is not None
    x = m.members.get("x")
    assert x is not None and x.project_string() == "x[]"


def test_quoted_names() -> None:
    segs = parse_path("`a.b`.`c[0]`[3]")
    assert [(s.name, s.indexes) for s in segs] == [("a.b", ()), ("c[0]", (3,))]
    tup = parse_projection(["`a.b`"]).columns
    assert tup.names() == ["a.b"]


@pytest.mark.parametrize("bad", ["", "a[", "a[x]", "a..b", "a.", "*.a", "`a", "a]b", "*[1]"])
def test_malformed_paths(bad: str) -> None:
    with pytest.raises(UserError) as info:
        parse_projection([bad])
    assert str(info.value).startswith("PARSE ERROR:")


def test_requested_tuple_parse_and_pickle() -> None:
    tup = RequestedTuple.parse(["a", "m.x", "c[2]"])
    back = pickle.loads(pickle.dumps(tup))
    assert [c.project_string() for c in back] == ["a", "m {x}", "c[2]"]


# ---- TestProjectedPath: which column kinds satisfy which projection

_KINDS = {
    "int": ColumnMetadata("a", MinorType.INT, DataMode.REQUIRED),
    "int_array": ColumnMetadata("a", MinorType.INT, DataMode.REPEATED),
    "map": parse_schema("a STRUCT<i INT, m STRUCT<mi INT>>")[0],
    "map_array": ColumnMetadata.map("a", [ColumnMetadata.required("i", "INT")], "REPEATED"),
    "union": ColumnMetadata("a", MinorType.UNION, DataMode.OPTIONAL),
    "list": parse_schema("a ARRAY<ARRAY<INT>>")[0],
    "dict": parse_schema("a MAP<INT, INT>")[0],
    "dict_array": parse_schema("a ARRAY<MAP<INT, INT>>")[0],
}

_ALL = set(_KINDS)


@pytest.mark.parametrize(
    ("path", "consistent"),
    [
        ("a", _ALL),
        ("a[0]", {"int_array", "map_array", "union", "list", "dict", "dict_array"}),
        # A DICT (repeated or not) can always be keyed, so it passes every form.
        ("a[0][1]", {"union", "list", "dict", "dict_array"}),
        ("a[0][1][2]", {"union", "list", "dict", "dict_array"}),
        ("a.b", {"map", "map_array", "union", "list", "dict", "dict_array"}),
        ("a[0].b", {"map_array", "union", "list", "dict", "dict_array"}),
    ],
)
def test_projected_path_consistency(path: str, consistent: set[str]) -> None:
    proj = parse_projection([path]).columns.get("a")
    got = {kind for kind, col in _KINDS.items() if is_consistent(proj, col)}
    assert got == consistent


@pytest.mark.parametrize("projection", [["*"], [], ["b"]])
def test_no_constraint_when_not_named(projection: list[str]) -> None:
    proj = parse_projection(projection).columns.get("a")
    assert all(is_consistent(proj, col) for col in _KINDS.values())


def test_dynamic_column_always_consistent() -> None:
    proj = parse_projection(["a[0][1].x"]).columns.get("a")
    assert is_consistent(proj, ColumnMetadata("a", MinorType.LATE))
    assert not is_consistent(proj, _KINDS["int"])
