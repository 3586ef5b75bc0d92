"""Typed copies of a cache part's number-like string columns: which values get one, what the
footer says of them, and that a copy's values are the strings' own numbers."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from auger.scan.cache import complete_parts, entry_dir
from auger.scan.cache_build import ROW_GROUP_ROWS, PartWriter
from auger.scan.cache_typed import (
    KEY_KIND,
    TYPED_KEY,
    TypedCopies,
    TypedCopy,
    copy_name,
    typed_copies,
    value_code,
)
from auger.scan.cache_values import FEW_VALUES
from auger.scan.spec import FileSplit


def _table(**columns: list[str | None]) -> pa.Table:
    return pa.table({k: pa.array(v, pa.string()) for k, v in columns.items()})


def _chosen(values: list[str | None]) -> list[str]:
    return TypedCopies(_table(s=values).schema).choose(_table(s=values)).names


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (["1", "-20", "007", "-0", None], "bigint"),
        (["999999999999999999", "-999999999999999999"], "bigint"),  # 18 digits
        (["1.5", "2", "-0.25", None], "double"),
        (["1234567890.123456789012345678"], "double"),
        (["1.5", "abc"], None),
        (["", "1"], None),  # Spark's cast fails on "": no copy may stand for it
        (["+5"], None),
        ([" 7"], None),
        (["1e3"], None),
        (["0x1A"], None),  # pyarrow parses hex, Spark does not
        (["inf"], None),
        ([".5"], None),
        (["5."], None),
        (["1234567890123456789"], None),  # 19 digits: past the shapes kept
        (["2024-01-05", None, "1900-02-28"], "date"),
        (["2024-1-5"], None),
        (["1899-12-31"], None),  # before 1900: left to Spark's cast
        (["2024-01-05T10:00"], None),
        ([None, None], None),
    ],
)
def test_copies_only_for_plain_numbers(values: list[str | None], kind: str | None) -> None:
    """Values of no number's or date's shape get a key copy (few of them), NULLs alone none."""
    if kind is None and any(v is not None for v in values):
        kind = KEY_KIND
    assert _chosen(values) == ([copy_name("s", kind)] if kind else [])


def test_copy_values_range_and_a_later_group_that_breaks_it() -> None:
    first = _table(i=["3", "-7", None], d=["1.25", "2", "x"])
    copies = TypedCopies(first.schema)
    assert copies.choose(first).names == [copy_name("i", "bigint"), copy_name("d", KEY_KIND)]
    values, _ = copies.arrays(first)
    assert values.to_pylist() == [3, -7, None]
    later, _ = copies.arrays(_table(i=["100", None, "1"], d=["1"] * 3))
    assert later.to_pylist() == [100, None, 1]
    meta = copies.metadata()
    assert json.loads(meta[TYPED_KEY]) == {
        "i": {"kind": "bigint", "low": -7, "high": 100},
        "d": {"kind": KEY_KIND},
    }
    broken, _ = copies.arrays(_table(i=["4", "4.5", "6"], d=["1"] * 3))
    assert broken.to_pylist() == [None, None, None]  # the copy is gone for the whole part
    assert json.loads(copies.metadata()[TYPED_KEY]) == {"d": {"kind": KEY_KIND}}


def test_key_copies_code_each_value_until_a_group_has_too_many() -> None:
    """A string column of few values gets a key copy: each value's code, the same for the same
    value in every group, distinct for distinct values, NULL for NULL; a row group with more
    than FEW_VALUES values ends the copy for the part."""
    first = _table(c=["red", "", None, "red", "grün", "it's"])
    copies = TypedCopies(first.schema)
    assert copies.choose(first).names == [copy_name("c", KEY_KIND)]
    (codes,) = copies.arrays(first)
    assert codes.to_pylist() == [
        value_code(v) if v is not None else None for v in first.column("c").to_pylist()
    ]
    assert len({value_code(v) for v in ("red", "", "grün", "it's")}) == 4
    assert all(2**61 <= value_code(v) < 2**62 for v in ("red", "", "grün"))  # BIGINT literals
    (again,) = copies.arrays(_table(c=["blue", "red"]))
    assert again.to_pylist() == [value_code("blue"), value_code("red")]
    assert json.loads(copies.metadata()[TYPED_KEY]) == {"c": {"kind": KEY_KIND}}
    (broken,) = copies.arrays(_table(c=[f"v{i}" for i in range(FEW_VALUES + 1)]))
    assert broken.null_count == FEW_VALUES + 1
    assert copies.metadata() == {}
    (after,) = copies.arrays(_table(c=["red"]))  # gone for the part
    assert after.to_pylist() == [None]
    many = _table(c=[f"v{i}" for i in range(FEW_VALUES + 1)])
    assert TypedCopies(many.schema).choose(many).names == []  # too many in the first group
    # a key copy answers no cast
    assert not any(TypedCopy(KEY_KIND).answers(t) for t in ("DOUBLE", "BIGINT", "INT", "DATE"))


def test_a_date_of_the_shape_that_is_no_day_drops_the_copy() -> None:
    first = _table(d=["2024-02-29", "2024-03-01"])
    copies = TypedCopies(first.schema)
    assert copies.choose(first).names == [copy_name("d", "date")]
    (values,) = copies.arrays(first)
    assert [str(v) for v in values.to_pylist()] == ["2024-02-29", "2024-03-01"]
    (broken,) = copies.arrays(_table(d=["2023-02-29"]))  # no such day: Spark's cast fails
    assert broken.to_pylist() == [None]
    assert copies.metadata() == {}


def test_int_answered_only_within_its_range() -> None:
    assert TypedCopy("bigint", -5, 2**31 - 1).answers("INT")
    assert not TypedCopy("bigint", -5, 2**31).answers("INT")
    assert TypedCopy("bigint", -5, 2**40).answers("BIGINT")
    assert TypedCopy("bigint", 1, 2).answers("DOUBLE")
    assert TypedCopy("double").answers("DOUBLE")
    assert not TypedCopy("double").answers("BIGINT")
    assert not TypedCopy("double").answers("INT")
    assert not TypedCopy("bigint", 1, 2).answers("FLOAT")
    assert TypedCopy("date").answers("DATE")
    assert not TypedCopy("date").answers("BIGINT")
    assert not TypedCopy("bigint", 1, 2).answers("DATE")


def test_footer_metadata_read_back_and_garbage_ignored() -> None:
    listed = {"a": {"kind": "bigint", "low": 1, "high": 9}, "b": {"kind": "double"}}
    copies = typed_copies({TYPED_KEY: json.dumps(listed)})
    assert copies == {"a": TypedCopy("bigint", 1, 9), "b": TypedCopy("double")}
    assert typed_copies({TYPED_KEY: "not json"}) == {}
    assert typed_copies({TYPED_KEY: json.dumps({"a": {"kind": "text"}})}) == {}
    assert typed_copies({}) == {}


def test_decimal_copies_round_as_the_strings_do() -> None:
    """A copy's double is the decimal rounded to the nearest double, as Spark's cast (Java's
    parser) rounds it: checked against Python's parser, which rounds the same way."""
    rng = random.Random(7)
    strings = []
    for _ in range(20_000):
        whole = str(rng.randrange(10 ** rng.randint(1, 18)))
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 18)))
        sign = "-" if rng.random() < 0.3 else ""
        strings.append(f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}")
    strings += ["0.1", "9007199254740993", "2.2250738585072011", "0.30000000000000004"]
    copies = TypedCopies(_table(s=strings).schema)
    assert copies.choose(_table(s=strings)).names == [copy_name("s", "double")]
    (values,) = copies.arrays(_table(s=strings))
    assert values.to_pylist() == [float(s) for s in strings]


def test_part_keeps_copies_and_names_them_in_its_footer(tmp_path: Path) -> None:
    split = FileSplit("/data/f.csv", 100, 1.5)
    schema = pa.schema([pa.field("n", pa.string()), pa.field("s", pa.string())])
    part = PartWriter(str(tmp_path), split, schema)
    rows = ROW_GROUP_ROWS + 10  # two row groups: the second keeps to the first's choice
    for start, end in ((0, ROW_GROUP_ROWS), (ROW_GROUP_ROWS, rows)):
        n = pa.array([str(i) for i in range(start, end)])
        s = pa.array([f"v{i}" for i in range(start, end)])
        part.write(pa.RecordBatch.from_arrays([n, s], schema=schema))
    part.publish()
    parts = complete_parts(entry_dir(str(tmp_path), split), 100)
    assert parts is not None
    meta = pq.read_metadata(parts[0].path)
    assert meta.num_row_groups == 2
    table = pq.read_table(parts[0].path)
    assert table.column_names == ["n", "s", copy_name("n", "bigint")]
    assert table.column(copy_name("n", "bigint")).equals(pc.cast(table.column("n"), pa.int64()))
    listed = typed_copies({k.decode(): v.decode() for k, v in meta.metadata.items()})
    assert listed == {"n": TypedCopy("bigint", 0, rows - 1)}


def test_empty_part_has_its_columns_and_no_copy(tmp_path: Path) -> None:
    split = FileSplit("/data/empty.csv", 0, 1.5)
    schema = pa.schema([pa.field("n", pa.string())])
    part = PartWriter(str(tmp_path), split, schema)
    part.publish()
    parts = complete_parts(entry_dir(str(tmp_path), split), 0)
    assert parts is not None
    assert pq.read_table(parts[0].path).column_names == ["n"]
    assert TYPED_KEY.encode() not in (pq.read_metadata(parts[0].path).metadata or {})
