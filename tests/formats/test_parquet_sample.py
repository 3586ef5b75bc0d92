"""Rows near a column's extremes (:mod:`auger.formats.parquet_sample`): which row groups the
statistics pick, what a file without them gives, and which columns the footers say are never
NULL."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import auger.formats.parquet_sample as sample
from auger.formats.parquet_sample import extreme_rows, never_null_leaves


def _file(path: Path, ids: list[int], names: list[str | None], **options: object) -> str:
    table = pa.table({"id": ids, "name": names, "m": [{"a": i} for i in ids]})
    pq.write_table(table, path, row_group_size=4, **options)
    return str(path)


def test_the_row_groups_of_the_largest_maximum_and_the_smallest_minimum(tmp_path: Path) -> None:
    # four row groups: ids 10-13, 90-93, 50-53, 0-3; names the other way round
    ids = [10, 11, 12, 13, 90, 91, 92, 93, 50, 51, 52, 53, 0, 1, 2, 3]
    names: list[str | None] = [f"s{99 - i:02d}" for i in ids]
    path = _file(tmp_path / "a.parquet", ids, names)
    rows = extreme_rows([path], ["id"], [("id", True)])
    assert rows is not None and rows["id"].to_pylist() == [90, 91, 92, 93]
    rows = extreme_rows([path], ["id", "name"], [("id", False), ("name", False)])
    assert rows is not None
    assert rows["id"].to_pylist() == [90, 91, 92, 93, 0, 1, 2, 3]  # one batch per row group
    assert rows.column_names == ["id", "name"]
    assert extreme_rows([path], ["id"], []) is None
    assert extreme_rows([path], ["nope"], [("id", True)]) is None
    assert extreme_rows([str(tmp_path / "missing.parquet")], ["id"], [("id", True)]) is None
    # a member of a struct has no statistics of its own here: the last row group
    rows = extreme_rows([path], ["id"], [("m", True)])
    assert rows is not None and rows["id"].to_pylist() == [0, 1, 2, 3]


def test_without_statistics_the_last_or_the_first_row_group(tmp_path: Path) -> None:
    ids = [10, 11, 12, 13, 90, 91, 92, 93, 0, 1, 2, 3]
    path = _file(tmp_path / "a.parquet", ids, [None] * len(ids), write_statistics=False)
    rows = extreme_rows([path], ["id"], [("id", True)])
    assert rows is not None and rows["id"].to_pylist() == [0, 1, 2, 3]
    rows = extreme_rows([path], ["id"], [("id", False)])
    assert rows is not None and rows["id"].to_pylist() == [10, 11, 12, 13]


def test_a_few_files_evenly_spaced_and_a_batch_of_each_row_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [
        _file(tmp_path / f"{n}.parquet", [n * 10 + i for i in range(4)], ["x"] * 4)
        for n in range(6)
    ]
    monkeypatch.setattr(sample, "SAMPLE_FILES", 3)
    monkeypatch.setattr(sample, "SAMPLE_ROWS", 2)
    rows = extreme_rows(files, ["id"], [("id", True)])
    assert rows is not None and rows["id"].to_pylist() == [0, 1, 20, 21, 40, 41]


def test_never_null_by_every_row_groups_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = _file(tmp_path / "a.parquet", list(range(8)), [f"n{i}" for i in range(8)])
    holed = _file(tmp_path / "b.parquet", list(range(8)), ["x"] * 7 + [None])
    assert never_null_leaves([full], ["id", "name", "nope"]) == {("id",), ("name",)}
    assert never_null_leaves([full], ["m"]) == {("m", "a")}  # the struct itself: no leaf
    assert never_null_leaves([full, holed], ["id", "name"]) == {("id",)}
    bare = _file(tmp_path / "c.parquet", list(range(8)), ["x"] * 8, write_statistics=False)
    assert never_null_leaves([full, bare], ["id", "name"]) == set()
    monkeypatch.setattr(sample, "FOOTER_FILES", 1)
    assert never_null_leaves([full, full], ["id"]) == set()
    assert never_null_leaves([full], ["id"]) == {("id",)}


def test_a_member_is_null_where_its_struct_is(tmp_path: Path) -> None:
    struct = pa.struct([("a", pa.int64()), ("b.c", pa.int64())])
    table = pa.table(
        {
            "m": pa.array([{"a": 1, "b.c": 1}, {"a": 2, "b.c": 2}], struct),
            "n": pa.array([{"a": 1, "b.c": 1}, None], struct),
        }
    )
    pq.write_table(table, tmp_path / "s.parquet")
    # a member whose name has a dot is never told of: Parquet's dotted paths would confuse it
    assert never_null_leaves([str(tmp_path / "s.parquet")], ["m", "n"]) == {("m", "a")}
