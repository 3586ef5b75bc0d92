"""Rows deleted by position leave a file's batches, whatever the batches' and groups' sizes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from auger.formats.parquet_deletes import drop_deleted


def test_positions_follow_the_row_groups_a_split_reads_across_batches() -> None:
    # a split reading row groups 1 and 3 of a file of 700-row groups, in batches of 500
    groups = [(700, 700), (2100, 700)]
    ids = np.concatenate([np.arange(700, 1400), np.arange(2100, 2800)])
    batches = [pa.record_batch([pa.array(ids[i : i + 500])], ["id"]) for i in range(0, 1400, 500)]
    deleted = np.array([0, 699, 700, 1199, 1200, 1399, 1400, 2100, 2799, 5000])
    got = pa.Table.from_batches(list(drop_deleted(iter(batches), deleted, groups)))
    expected = [i for i in ids.tolist() if i not in set(deleted.tolist())]
    assert got.column("id").to_pylist() == expected
