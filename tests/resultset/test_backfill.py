"""Omitted values and columns added mid-batch.

Paraphrases Drill's rules for omitted values and its TestResultSetSchemaChange cases.
"""

from __future__ import annotations

from auger.types import ColumnMetadata, DataMode, MinorType

from .helpers import make_loader, rows_of


def test_omitted_values_are_filled_on_save() -> None:
    loader = make_loader(
        "a INT NOT NULL, b VARCHAR NOT NULL, c VARCHAR, d INT NOT NULL, e INT, f VARCHAR ARRAY"
    )
    rows = loader.writer()
    for i in range(1, 11):
        rows.start()
        rows.scalar("a").set_int(i)
        if i not in (5, 6, 9, 10):
            rows.scalar("b").set_string(f"b_{i}")
            rows.scalar("d").set_int(i * 10)
            arr = rows.array("f").scalar()
            arr.set_string(f"f_{i}-1")
            arr.set_string(f"f_{i}-2")
        if i not in (3, 4, 9, 10):
            rows.scalar("c").set_string(f"c_{i}")
            rows.scalar("e").set_int(i * 100)
        rows.save()
    got = rows_of(loader.harvest())
    assert got[0] == (1, "b_1", "c_1", 10, 100, ["f_1-1", "f_1-2"])
    assert got[2] == (3, "b_3", None, 30, None, ["f_3-1", "f_3-2"])
    assert got[4] == (5, "", "c_5", 0, 500, [])
    assert got[8] == (9, "", None, 0, None, [])
    assert got[9] == (10, "", None, 0, None, [])


def test_schema_change_in_first_batch_back_fills() -> None:
    loader = make_loader("a VARCHAR NOT NULL")
    rows = loader.writer()
    adds = {
        2: [ColumnMetadata("b", MinorType.INT, DataMode.OPTIONAL)],
        4: [ColumnMetadata("c", MinorType.VARCHAR, DataMode.OPTIONAL)],
        6: [
            ColumnMetadata("d", MinorType.VARCHAR, DataMode.REQUIRED),
            ColumnMetadata("e", MinorType.INT, DataMode.REQUIRED),
        ],
        8: [ColumnMetadata("f", MinorType.VARCHAR, DataMode.REPEATED)],
    }
    for i in range(1, 11):
        for col in adds.get(i - 1, []):
            rows.add_column(col)
        rows.start()
        rows.scalar("a").set_string(f"a_{i}")
        if i > 2:
            rows.scalar("b").set_int(i)
        if i > 4:
            rows.scalar("c").set_string(f"c_{i}")
        if i > 6:
            rows.scalar("d").set_string(f"d_{i}")
            rows.scalar("e").set_int(i * 10)
        if i > 8:
            rows.array("f").set([f"f_{i}-1", f"f_{i}-2"])
        rows.save()
    got = rows_of(loader.harvest())
    assert got[0] == ("a_1", None, None, "", 0, [])
    assert got[2] == ("a_3", 3, None, "", 0, [])
    assert got[4] == ("a_5", 5, "c_5", "", 0, [])
    assert got[6] == ("a_7", 7, "c_7", "d_7", 70, [])
    assert got[8] == ("a_9", 9, "c_9", "d_9", 90, ["f_9-1", "f_9-2"])
    assert loader.schema_version == 6


def test_default_value_fills_required_column() -> None:
    col = ColumnMetadata("b", MinorType.VARCHAR, DataMode.REQUIRED).with_properties(
        **{"drill.default": "Foo"}
    )
    loader = make_loader("a INT NOT NULL")
    rows = loader.writer()
    rows.add_column(col)
    for i in range(1, 8):
        rows.start()
        rows.scalar("a").set_int(i)
        if i % 3 != 1:
            rows.scalar("b").set_string(f"b-{i}")
        rows.save()
    assert rows_of(loader.harvest()) == [
        (1, "Foo"),
        (2, "b-2"),
        (3, "b-3"),
        (4, "Foo"),
        (5, "b-5"),
        (6, "b-6"),
        (7, "Foo"),
    ]


def test_columns_added_before_rows_and_between_batches() -> None:
    loader = make_loader("a INT")
    rows = loader.writer()
    rows.add_row(1)
    loader.harvest()
    rows.add_column(ColumnMetadata("b", MinorType.BIGINT, DataMode.REQUIRED))
    loader.start_batch()
    rows.add_row(2)
    rows.add_row(3, 30)
    assert rows_of(loader.harvest()) == [(2, 0), (3, 30)]


def test_repeated_members_added_late_are_empty_arrays() -> None:
    loader = make_loader("m STRUCT<a INT>")
    rows = loader.writer()
    rows.add_row({"a": 1})
    rows.tuple("m").add_column(ColumnMetadata("arr", MinorType.INT, DataMode.REPEATED))
    rows.add_row({"a": 2, "arr": [5, 6]})
    assert rows_of(loader.harvest()) == [((1, []),), ((2, [5, 6]),)]
