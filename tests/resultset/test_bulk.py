"""The bulk path: ``append_arrow`` splits Arrow batches across output batches under the limits."""

from __future__ import annotations

import pyarrow as pa
import pytest

from auger.errors import UserError
from auger.resultset import ConversionError

from .helpers import make_loader, rows_of


def _drain(loader, first_batches):  # type: ignore[no-untyped-def]
    out = list(first_batches)
    while loader.has_look_ahead():
        loader.start_batch()
        out.append(loader.harvest())
    return out


def test_bulk_rows_split_by_row_limit() -> None:
    loader = make_loader(row_limit=1000)
    rows = loader.writer()
    batch = pa.record_batch(
        {"a": pa.array(range(2500), pa.int32()), "s": [str(i) for i in range(2500)]}
    )
    assert rows.append_arrow(batch) == 1000
    assert rows.is_full()
    batches = _drain(loader, [loader.harvest()])
    assert [b.num_rows for b in batches] == [1000, 1000, 500]
    assert pa.Table.from_batches(batches).column("a").to_pylist() == list(range(2500))
    assert pa.Table.from_batches(batches).column("s").to_pylist() == [str(i) for i in range(2500)]


def test_bulk_rows_split_by_vector_limit() -> None:
    loader = make_loader("s VARCHAR", vector_size_limit=10_000, row_limit=65536)
    values = [f"{i:09d}" for i in range(3000)]  # 9 bytes each → 1111 per batch
    loader.writer().append_arrow(pa.record_batch({"s": values}))
    batches = _drain(loader, [loader.harvest()])
    assert [b.num_rows for b in batches] == [1111, 1111, 778]
    assert [v for b in batches for v in b.column(0).to_pylist()] == values


def test_bulk_mixed_with_row_writes_keeps_order() -> None:
    loader = make_loader("a BIGINT NOT NULL, b VARCHAR")
    rows = loader.writer()
    rows.add_row(1, "one")
    rows.append_arrow(pa.record_batch({"b": ["x", None], "a": pa.array([2, 3], pa.int64())}))
    rows.add_row(4)
    assert rows_of(loader.harvest()) == [(1, "one"), (2, "x"), (3, None), (4, None)]


def test_bulk_nested_types_and_new_columns() -> None:
    loader = make_loader("id INT")
    rows = loader.writer()
    batch = pa.record_batch(
        {
            "id": pa.array([1, 2, 3], pa.int32()),
            "l": pa.array([[1, 2], [], [3]], pa.list_(pa.int64())),
            "m": pa.array([{"x": 1, "y": "a"}, {"x": 2, "y": None}, None]),
            "flag": [True, False, None],
        }
    )
    rows.append_arrow(batch.slice(1))
    rows.append_arrow(batch.slice(0, 1))
    got = loader.harvest()
    assert got.column("id").to_pylist() == [2, 3, 1]
    assert got.column("l").to_pylist() == [[], [3], [1, 2]]
    assert got.column("m").to_pylist() == [{"x": 2, "y": None}, None, {"x": 1, "y": "a"}]
    assert got.column("flag").to_pylist() == [False, None, True]


def test_bulk_array_overflow_by_element_count() -> None:
    loader = make_loader("l BIGINT ARRAY", vector_size_limit=800, row_limit=65536)
    data = [[i] * 10 for i in range(25)]  # 80 bytes per row → 10 rows per batch
    loader.writer().append_arrow(pa.record_batch({"l": pa.array(data, pa.list_(pa.int64()))}))
    batches = _drain(loader, [loader.harvest()])
    assert [b.num_rows for b in batches] == [10, 10, 5]
    assert [v for b in batches for v in b.column(0).to_pylist()] == data


def test_bulk_lossy_cast_is_rejected() -> None:
    loader = make_loader("a INT")
    with pytest.raises(ConversionError, match="without loss"):
        loader.writer().append_arrow(pa.record_batch({"a": pa.array([2**40], pa.int64())}))


def test_bulk_nulls_into_required_column_rejected() -> None:
    loader = make_loader("a INT NOT NULL")
    with pytest.raises(UserError, match="cannot be set to NULL"):
        loader.writer().append_arrow(pa.record_batch({"a": pa.array([1, None], pa.int32())}))


def test_bulk_single_oversize_value() -> None:
    loader = make_loader("s VARCHAR", vector_size_limit=100)
    with pytest.raises(UserError, match="maximum allowed size of 100 bytes"):
        loader.writer().append_arrow(pa.record_batch({"s": ["x" * 101]}))


def test_bulk_respects_batch_budget() -> None:
    loader = make_loader("a BIGINT NOT NULL", batch_size_limit=8000, row_limit=65536)
    loader.writer().append_arrow(pa.record_batch({"a": pa.array(range(3000), pa.int64())}))
    batches = _drain(loader, [loader.harvest()])
    assert all(b.num_rows <= 1000 for b in batches)
    assert sum(b.num_rows for b in batches) == 3000
