"""Projection: dummy writers for unprojected columns."""

from __future__ import annotations

from auger.types import ColumnMetadata, MinorType

from .helpers import make_loader, rows_of


def test_unprojected_columns_get_dummy_writers() -> None:
    loader = make_loader("a INT, b INT, c INT, d INT", projection=["c", "b", "e"])
    rows = loader.writer()
    assert [rows.is_projected(n) for n in "abcd"] == [False, True, True, False]
    assert rows.index("A") == 0 and rows.index("e") == -1
    assert rows.is_projected("e")  # would be projected if a reader added it
    rows.add_row(0, 1, 10, 100)
    rows.add_row(0, 2, 20, 200)
    batch = loader.harvest()
    assert batch.schema.names == ["b", "c"]  # reader order, not projection order
    assert rows_of(batch) == [(1, 10), (2, 20)]


def test_projection_applies_to_columns_added_dynamically() -> None:
    loader = make_loader(projection=["c", "b"])
    rows = loader.writer()
    for name in "abcd":
        rows.add_column(ColumnMetadata(name, MinorType.INT))
    assert loader.schema_version == 2  # only projected columns change the output schema
    rows.add_row(9, 1, 10, 99)
    assert rows_of(loader.harvest()) == [(1, 10)]


def test_array_subscript_projects_whole_array() -> None:
    loader = make_loader("a1 INT ARRAY, a2 INT ARRAY, a3 INT ARRAY", projection=["a1", "a2[0]"])
    rows = loader.writer()
    rows.add_row([10, 100], [20, 200], [30])
    batch = loader.harvest()
    assert batch.schema.names == ["a1", "a2"]
    assert rows_of(batch) == [([10, 100], [20, 200])]


def test_map_member_projection() -> None:
    loader = make_loader(
        "m1 STRUCT<a INT, b INT>, m2 STRUCT<c INT, d INT>, m3 STRUCT<e INT, f INT>",
        projection=["m1", "m2.d"],
    )
    rows = loader.writer()
    assert not rows.is_projected("m3")
    assert not rows.tuple("m2").is_projected("c")
    rows.add_row({"a": 1, "b": 2}, {"c": 3, "d": 4}, {"e": 5, "f": 6})
    rows.add_row({"a": 11, "b": 12}, {"c": 13, "d": 14}, {"e": 15, "f": 16})
    assert rows_of(loader.harvest()) == [((1, 2), (4,)), ((11, 12), (14,))]


def test_map_and_member_means_whole_map() -> None:
    loader = make_loader("m1 STRUCT<a INT, b INT>", projection=["m1", "m1.b"])
    loader.writer().add_row({"a": 1, "b": 2})
    assert rows_of(loader.harvest()) == [((1, 2),)]


def test_repeated_map_member_projection() -> None:
    loader = make_loader(
        "m1 ARRAY<STRUCT<a INT, b INT>>, m2 ARRAY<STRUCT<c INT, d INT>>", projection=["m1", "m2.d"]
    )
    loader.writer().add_row([{"a": 1, "b": 2}], [{"c": 3, "d": 4}, {"c": 5, "d": 6}])
    assert rows_of(loader.harvest()) == [([(1, 2)], [(4,), (6,)])]


def test_only_projected_vectors_overflow() -> None:
    # Projection `small, dummy` over (big VARCHAR, small VARCHAR): `small` drives the overflow.
    loader = make_loader(
        "big VARCHAR, small VARCHAR", projection=["small", "dummy"], row_limit=65536
    )
    rows = loader.writer()
    count = 0
    while not rows.is_full():
        rows.start()
        rows.scalar("big").set_string("B" * 600)
        rows.scalar("small").set_string("s" * 512)
        rows.save()
        count += 1
    assert count == 16 * 1024 * 1024 // 512 + 1
    assert loader.harvest().schema.names == ["small"]


def test_dummy_writers_accept_everything() -> None:
    loader = make_loader(
        "a INT, m STRUCT<x INT>, r ARRAY<STRUCT<y INT>>, l ARRAY<ARRAY<INT>>, k MAP<VARCHAR, INT>",
        projection=["a"],
    )
    rows = loader.writer()
    rows.start()
    rows.scalar("a").set_int(1)
    rows.tuple("m").scalar("x").set_string("anything")
    rows.tuple("m").add_column(ColumnMetadata("new", MinorType.VARCHAR))
    rows.tuple("m").scalar("new").set_int(5)
    arr = rows.array("r")
    arr.tuple().scalar("y").set_int(1)
    arr.save()
    rows.array("l").array().scalar().set_int(3)
    rows.dict("k").set({"a": 1})
    rows.save()
    assert rows_of(loader.harvest()) == [(1,)]


def test_empty_projection_gives_rows_without_columns() -> None:
    loader = make_loader("a INT, b INT", projection=[])
    assert loader.is_projection_empty()
    rows = loader.writer()
    for i in range(5):
        rows.add_row(i, i)
    batch = loader.harvest()
    assert batch.num_rows == 5 and batch.num_columns == 0
