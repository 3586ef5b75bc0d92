"""Maps, repeated maps, lists of lists and DICTs as Drill's result set loader writes them."""

from __future__ import annotations

import pytest

from auger.errors import UserError
from auger.types import ColumnMetadata, DataMode, MinorType

from .helpers import make_loader, rows_of


def test_map_basics() -> None:
    loader = make_loader("a INT, m STRUCT<c INT, d VARCHAR>, e VARCHAR")
    rows = loader.writer()
    assert loader.schema_version == 5
    with pytest.raises(UserError, match="Duplicate column name"):
        rows.tuple("m").add_column(ColumnMetadata("c", MinorType.INT))
    rows.add_row(10, {"c": 110, "d": "fred"}, "pebbles")
    rows.start()
    rows.scalar("a").set_int(20)
    m = rows.tuple("m")
    m.scalar("c").set_int(210)
    m.scalar("d").set_string("barney")
    rows.scalar("e").set_string("bam-bam")
    rows.save()
    assert rows_of(loader.harvest()) == [
        (10, (110, "fred"), "pebbles"),
        (20, (210, "barney"), "bam-bam"),
    ]


def test_map_evolution_between_and_within_batches() -> None:
    loader = make_loader("a INT, m STRUCT<b VARCHAR>")
    rows = loader.writer()
    rows.add_row(10, {"b": "fred"})
    loader.harvest()
    m = rows.tuple("m")
    m.add_column(ColumnMetadata("c", MinorType.INT))
    loader.start_batch()
    m.add_column(ColumnMetadata("d", MinorType.BIGINT))
    rows.add_row(30, ("wilma", 130, 130000))
    m.add_column(ColumnMetadata("e", MinorType.VARCHAR, DataMode.REQUIRED))
    rows.add_row(40, ("betty", 140, 140000, "bam-bam"))
    assert loader.schema_version == 6
    assert rows_of(loader.harvest()) == [
        (30, ("wilma", 130, 130000, "")),
        (40, ("betty", 140, 140000, "bam-bam")),
    ]


def test_map_added_after_first_row_has_own_name_space() -> None:
    loader = make_loader("a INT")
    rows = loader.writer()
    rows.add_row(10)
    rows.add_column(
        ColumnMetadata.map("m", [ColumnMetadata("a", MinorType.VARCHAR, DataMode.REQUIRED)])
    )
    rows.add_row(20, {"a": "fred"})
    rows.add_row(30, {"a": "barney"})
    assert loader.schema_version == 3
    assert rows_of(loader.harvest()) == [(10, ("",)), (20, ("fred",)), (30, ("barney",))]


def test_empty_map_then_member_in_next_batch() -> None:
    loader = make_loader("a INT, m STRUCT<>")
    rows = loader.writer()
    for v in (10, 20, 30):
        rows.add_row(v)
    assert loader.schema_version == 2
    assert rows_of(loader.harvest()) == [(10, ()), (20, ()), (30, ())]
    rows.tuple("m").add_column(ColumnMetadata("x", MinorType.INT))
    loader.start_batch()
    rows.add_row(40, {"x": 4})
    assert loader.schema_version == 3
    assert rows_of(loader.harvest()) == [(40, (4,))]


def test_nullable_map_set_null() -> None:
    loader = make_loader("a INT")
    rows = loader.writer()
    rows.add_column(
        ColumnMetadata("m", MinorType.MAP, DataMode.OPTIONAL, [ColumnMetadata("x", "INT")])
    )
    rows.add_row(1, {"x": 1})
    rows.add_row(2, None)
    batch = loader.harvest()
    assert batch.column("m").to_pylist() == [{"x": 1}, None]


def test_repeated_map_entries_and_empty_rows() -> None:
    loader = make_loader("id INT, e ARRAY<STRUCT<p INT, q VARCHAR>>")
    rows = loader.writer()
    rows.start()
    rows.scalar("id").set_int(1)
    arr = rows.array("e")
    entry = arr.tuple()
    entry.scalar("p").set_int(1)
    arr.save()
    entry.scalar("q").set_string("two")
    arr.save()
    assert arr.size() == 2
    rows.save()
    rows.add_row(2)  # no entries
    rows.add_row(3, [{"p": 3, "q": "c"}])
    assert rows_of(loader.harvest()) == [
        (1, [(1, None), (None, "two")]),
        (2, []),
        (3, [(3, "c")]),
    ]


def test_unsaved_repeated_map_entry_is_dropped() -> None:
    loader = make_loader("e ARRAY<STRUCT<p INT>>")
    rows = loader.writer()
    rows.start()
    arr = rows.array("e")
    arr.tuple().scalar("p").set_int(1)
    arr.save()
    arr.tuple().scalar("p").set_int(99)  # never saved
    rows.save()
    assert rows_of(loader.harvest()) == [([(1,)],)]


def test_list_of_lists_and_deeper() -> None:
    loader = make_loader("d ARRAY<ARRAY<BIGINT>>, t ARRAY<ARRAY<ARRAY<INT>>>")
    rows = loader.writer()
    rows.start()
    outer = rows.array("d")
    inner = outer.array()
    inner.scalar().set_long(1)
    inner.scalar().set_long(2)
    outer.save()
    outer.save()  # an empty inner list
    inner.scalar().set_long(3)
    outer.save()
    rows.array("t").set([[[1], []], [[2, 3]]])
    rows.save()
    rows.add_row([[4]])
    assert rows_of(loader.harvest()) == [
        ([[1, 2], [], [3]], [[[1], []], [[2, 3]]]),
        ([[4]], []),
    ]


def test_dict_column() -> None:
    loader = make_loader("k MAP<VARCHAR, INT>")
    rows = loader.writer()
    rows.start()
    d = rows.dict("k")
    d.key().set_string("a")
    d.value().set_int(1)
    d.save()
    rows.save()
    rows.add_row({"b": 2, "c": None})
    rows.add_row(None)
    assert loader.harvest().column("k").to_pylist() == [[("a", 1)], [("b", 2), ("c", None)], None]


def test_repeated_array_column_cannot_be_null() -> None:
    loader = make_loader("c INT ARRAY")
    rows = loader.writer()
    rows.start()
    with pytest.raises(UserError, match="cannot be set to NULL"):
        rows.array("c").set_null()
    with pytest.raises(UserError, match="cannot hold NULL elements"):
        rows.array("c").scalar().set_null()
