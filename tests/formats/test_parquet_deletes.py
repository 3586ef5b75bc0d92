"""Rows deleted by position leave a file's batches, whatever the batches' and groups' sizes;
rows deleted by key leave them whatever the key's columns, nulls and types."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from auger.formats.parquet_deletes import EqualityDeletes, drop_deleted


def test_positions_follow_the_row_groups_a_split_reads_across_batches() -> None:
    # a split reading row groups 1 and 3 of a file of 700-row groups, in batches of 500
    groups = [(700, 700), (2100, 700)]
    ids = np.concatenate([np.arange(700, 1400), np.arange(2100, 2800)])
    batches = [pa.record_batch([pa.array(ids[i : i + 500])], ["id"]) for i in range(0, 1400, 500)]
    deleted = np.array([0, 699, 700, 1199, 1200, 1399, 1400, 2100, 2799, 5000])
    got = pa.Table.from_batches(list(drop_deleted(iter(batches), deleted, groups)))
    expected = [i for i in ids.tolist() if i not in set(deleted.tolist())]
    assert got.column("id").to_pylist() == expected


def test_equality_deletes_match_keys_of_several_columns_nulls_equal() -> None:
    a = pa.array([1, 1, 2, 2, None, None, 3], pa.int32())  # the data's type, not the deletes'
    b = pa.array(["x", "y", None, "z", None, "x", "x"])
    batches = [pa.record_batch([a[i : i + 3], b[i : i + 3]], ["A", "b"]) for i in range(0, 7, 3)]
    keys = pa.table({"a": pa.array([1, 2, None, 3], pa.int64()), "b": ["x", None, None, "q"]})
    deletes = EqualityDeletes([(("a", "b"), keys)])
    got = pa.Table.from_batches(list(deletes.drop_deleted(iter(batches))))
    deleted = set(zip(keys.column("a").to_pylist(), keys.column("b").to_pylist(), strict=True))
    expected = [k for k in zip(a.to_pylist(), b.to_pylist(), strict=True) if k not in deleted]
    assert list(zip(got.column("A").to_pylist(), got.column("b").to_pylist())) == expected
    assert len(expected) == 4


def test_equality_deletes_of_two_key_sets_and_a_column_the_file_lacks() -> None:
    batch = pa.record_batch([pa.array([1, 2, 3, 4])], ["id"])
    by_id = (("id",), pa.table({"id": pa.array([2], pa.int64())}))
    # a key column the data file predates reads NULL: a NULL key deletes all its rows ...
    by_null = (("added",), pa.table({"added": pa.nulls(1, pa.string())}))
    got = list(EqualityDeletes([by_id, by_null]).drop_deleted(iter([batch])))
    assert sum(b.num_rows for b in got) == 0
    # ... a value does not
    by_value = (("added",), pa.table({"added": pa.array(["v"])}))
    got = list(EqualityDeletes([by_id, by_value]).drop_deleted(iter([batch])))
    assert got[0].column("id").to_pylist() == [1, 3, 4]
