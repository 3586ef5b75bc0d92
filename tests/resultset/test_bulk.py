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


# ------------------------------------------------------------------ zero-copy: arrow_batches
def _same_memory(piece: pa.RecordBatch, whole: pa.RecordBatch) -> bool:
    """Every buffer of ``piece`` is a buffer of ``whole`` (a slice, not a copy)."""
    return all(
        p.address == w.address
        for pc_, wc in zip(piece.columns, whole.columns, strict=True)
        for p, w in zip(pc_.buffers(), wc.buffers(), strict=True)
        if p is not None and w is not None
    )


def test_arrow_batches_are_zero_copy_slices_within_the_row_limit() -> None:
    from auger.resultset import LoaderOptions, ResultSetLoader

    loader = ResultSetLoader(LoaderOptions(row_limit=1000))
    batch = pa.record_batch(
        {"a": pa.array(range(2500), pa.int32()), "s": [str(i) for i in range(2500)]}
    )
    pieces = list(loader.arrow_batches(batch))
    assert [p.num_rows for p in pieces] == [1000, 1000, 500]
    assert all(_same_memory(p, batch) for p in pieces)
    assert pa.Table.from_batches(pieces).to_pydict() == batch.to_pydict()
    assert loader.batch_count == 3 and loader.total_row_count == 2500


def test_arrow_batches_keep_each_vector_within_its_byte_limit() -> None:
    from auger.resultset import LoaderOptions, ResultSetLoader

    loader = ResultSetLoader(LoaderOptions(vector_size_limit=1000))
    values = ["x" * 100] * 35  # 10 values of 100 bytes fit in 1000, 11 do not
    lists = pa.array([[i] * 30 for i in range(35)], pa.list_(pa.int64()))  # 240 bytes a row
    pieces = list(loader.arrow_batches(pa.record_batch({"s": values})))
    assert [p.num_rows for p in pieces] == [10, 10, 10, 5]
    pieces = list(loader.arrow_batches(pa.record_batch({"l": lists})))
    assert [p.num_rows for p in pieces] == [4] * 8 + [3]  # 4 x 30 x 8 = 960 element bytes
    assert [v for p in pieces for v in p.column(0).to_pylist()] == lists.to_pylist()


def test_arrow_batches_keep_the_whole_batch_within_its_budget() -> None:
    from auger.resultset import LoaderOptions, ResultSetLoader

    loader = ResultSetLoader(LoaderOptions(batch_size_limit=800))
    batch = pa.record_batch({c: pa.array(range(100), pa.int64()) for c in "abcd"})
    pieces = list(loader.arrow_batches(batch))
    assert [p.num_rows for p in pieces] == [25, 25, 25, 25]  # 4 columns x 8 bytes x 25 = 800


def test_arrow_batches_stop_at_the_total_limit() -> None:
    from auger.resultset import LoaderOptions, ResultSetLoader

    loader = ResultSetLoader(LoaderOptions(row_limit=40, limit=100))
    first = list(loader.arrow_batches(pa.record_batch({"a": list(range(70))})))
    second = list(loader.arrow_batches(pa.record_batch({"a": list(range(70, 140))})))
    assert [p.num_rows for p in first + second] == [40, 30, 30]
    assert loader.at_limit()
    assert list(loader.arrow_batches(pa.record_batch({"a": [1]}))) == []


def test_arrow_batches_send_a_row_larger_than_the_limit_alone() -> None:
    from auger.resultset import LoaderOptions, ResultSetLoader

    loader = ResultSetLoader(LoaderOptions(vector_size_limit=100))
    batch = pa.record_batch({"s": ["a", "b" * 500, "c", "d"]})
    assert [p.num_rows for p in loader.arrow_batches(batch)] == [1, 1, 2]


def test_arrow_batches_refused_while_rows_are_being_written() -> None:
    loader = make_loader("a INT")
    loader.writer().add_row(1)
    with pytest.raises(Exception, match="while a batch is being written"):
        list(loader.arrow_batches(pa.record_batch({"a": [2]})))
