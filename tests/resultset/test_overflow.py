"""Vector overflow: the row that does not fit moves to the look-ahead batch (the overflow
scenarios of Drill's result set loader)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from auger.errors import ErrorKind, UserError
from auger.resultset import LoaderStateError, ResultSetLoader
from auger.types import ColumnMetadata, DataMode, MinorType

from .helpers import make_loader, rows_of

MIB = 1024 * 1024

# ----------------------------------------------------------------------------- scenarios a–h
# Rows n-2, n-1, n = 1, 2, 3 (row 0 precedes them). Column b holds 30-byte strings under a
# 100-byte vector limit, so the value of b in row n = 3 triggers the overflow.
LIMIT = 100
N = 3


def _scenario() -> tuple[pa.RecordBatch, pa.RecordBatch, ResultSetLoader]:
    loader = make_loader(
        "a INT, b VARCHAR, c INT, d INT, f INT", vector_size_limit=LIMIT, row_limit=1000
    )
    rows = loader.writer()
    for r in range(N + 1):
        rows.start()
        rows.scalar("a").set_int(r)  # a: written before the overflowing value, every row
        rows.scalar("b").set_string(f"{r:02d}" + "x" * 28)  # b: overflows in row n
        rows.scalar("c").set_int(10 * r)  # c: written after it, every row
        if r in (N - 2, N - 1):
            rows.scalar("d").set_int(100 + r)  # d: rows n-2, n-1 only
        if r == N - 2:
            rows.scalar("f").set_int(200 + r)  # f: n-2 only
        if r == N:
            assert rows.is_full()  # overflow has happened inside this row
            rows.add_column(ColumnMetadata("g", MinorType.INT))
            rows.scalar("g").set_int(7)  # g: added after overflow, written
            rows.add_column(ColumnMetadata("h", MinorType.VARCHAR))  # h: added, never written
        rows.save()
        if r < N:
            assert not rows.is_full()
    assert rows.is_full()
    assert rows.row_count() == N
    first = loader.harvest()
    loader.start_batch()
    assert rows.row_count() == 1
    second = loader.harvest()
    return first, second, loader


def _col(batch: pa.RecordBatch, name: str) -> list[Any]:
    return batch.column(name).to_pylist()


def test_scenario_a_written_before_overflow_moves_with_row() -> None:
    first, second, _ = _scenario()
    assert _col(first, "a") == [0, 1, 2]
    assert _col(second, "a") == [3]


def test_scenario_b_the_overflowing_value_lands_in_next_batch() -> None:
    first, second, _ = _scenario()
    assert [v[:2] for v in _col(first, "b")] == ["00", "01", "02"]
    assert [v[:2] for v in _col(second, "b")] == ["03"]
    assert len(_col(second, "b")[0]) == 30


def test_scenario_c_written_after_overflow_goes_to_look_ahead() -> None:
    first, second, _ = _scenario()
    assert _col(first, "c") == [0, 10, 20]
    assert _col(second, "c") == [30]


def test_scenario_d_value_missing_only_in_overflow_row() -> None:
    first, second, _ = _scenario()
    assert _col(first, "d") == [None, 101, 102]
    assert _col(second, "d") == [None]


def test_scenario_f_values_missing_in_last_rows() -> None:
    first, second, _ = _scenario()
    assert _col(first, "f") == [None, 201, None]
    assert _col(second, "f") == [None]


def test_scenario_g_column_added_in_overflow_row_appears_next_batch() -> None:
    first, second, _ = _scenario()
    assert "g" not in first.schema.names
    assert _col(second, "g") == [7]


def test_scenario_h_added_in_overflow_row_without_value() -> None:
    first, second, _ = _scenario()
    assert "h" not in first.schema.names
    assert second.schema.names == ["a", "b", "c", "d", "f", "g", "h"]
    assert _col(second, "h") == [None]


def test_schema_version_of_columns_added_during_overflow() -> None:
    loader = make_loader("a INT, b VARCHAR", vector_size_limit=LIMIT)
    rows = loader.writer()
    for r in range(4):
        rows.start()
        rows.scalar("a").set_int(r)
        rows.scalar("b").set_string("y" * 30)
        if rows.is_full():
            rows.add_column(ColumnMetadata("g", MinorType.INT))
        rows.save()
    assert loader.schema_version == 2
    loader.harvest()
    assert loader.schema_version == 2
    loader.start_batch()
    assert loader.schema_version == 3


# --------------------------------------------------------------------- Drill's overflow cases


def _fill_until_full(loader: ResultSetLoader, value: str) -> int:
    rows = loader.writer()
    count = 0
    while not rows.is_full():
        rows.start()
        rows.scalar(0).set_string(value)
        rows.save()
        count += 1
    return count


def test_vector_size_limit_with_512_byte_strings() -> None:
    loader = make_loader("s VARCHAR NOT NULL", row_limit=65536)
    written = _fill_until_full(loader, "x" * 512)
    assert written == 16 * MIB // 512 + 1 == 32769
    assert loader.row_count() == 32768
    assert loader.total_row_count == 32769
    assert loader.harvest().num_rows == 32768
    assert loader.has_look_ahead()
    loader.start_batch()
    assert loader.row_count() == 1
    last = loader.harvest()
    assert last.num_rows == 1 and last.column(0)[0].as_py() == "x" * 512
    assert not loader.has_look_ahead()


def test_default_row_limit_with_200_byte_strings_has_no_look_ahead() -> None:
    loader = make_loader("s VARCHAR NOT NULL")
    assert _fill_until_full(loader, "y" * 200) == 4096
    assert loader.harvest().num_rows == 4096
    assert not loader.has_look_ahead()


def test_vector_limit_as_set_drives_overflow() -> None:
    loader = make_loader("s VARCHAR NOT NULL", vector_size_limit=MIB, row_limit=65536)
    assert _fill_until_full(loader, "z" * 1000) == MIB // 1000 + 1


def test_oversize_single_value_is_resource_error() -> None:
    loader = make_loader("s VARCHAR")
    rows = loader.writer()
    rows.start()
    with pytest.raises(UserError) as info:
        rows.scalar("s").set_string("x" * (16 * MIB + 1))
    err = info.value
    assert err.kind is ErrorKind.RESOURCE
    assert "A single column value is larger than the maximum allowed size of 16 MB" in err.context
    assert str(err).startswith("RESOURCE ERROR: ")


def test_oversize_message_names_the_limit_as_set() -> None:
    loader = make_loader("s VARCHAR", vector_size_limit=4 * MIB)
    rows = loader.writer()
    rows.add_row("small")
    rows.start()
    # Not alone in the batch: overflows to the next batch, where it still does not fit.
    with pytest.raises(UserError, match="maximum allowed size of 4 MB"):
        rows.scalar("s").set_string("x" * (4 * MIB + 1))


def test_oversize_array_in_one_row() -> None:
    loader = make_loader("s VARCHAR ARRAY", vector_size_limit=64 * 1024)
    rows = loader.writer()
    rows.start()
    arr = rows.array("s").scalar()
    with pytest.raises(UserError, match="column value is larger than the maximum"):
        for _ in range(100):
            arr.set_string("q" * 1000)


def test_writing_past_full_batch_is_an_error_naming_the_fix() -> None:
    loader = make_loader("a INT", row_limit=2)
    rows = loader.writer()
    rows.add_row(1)
    rows.add_row(2)
    assert rows.is_full()
    assert rows.start() is False
    with pytest.raises(LoaderStateError, match="harvest"):
        rows.save()
    with pytest.raises(LoaderStateError, match="harvest"):
        rows.add_row(3)


def test_array_overflow_moves_whole_array_of_the_row() -> None:
    # testSizeLimitOnArray: the overflowing row's whole array moves to the next batch.
    loader = make_loader("s VARCHAR ARRAY", vector_size_limit=10_000, row_limit=65536)
    rows = loader.writer()
    written = 0
    while not rows.is_full():
        rows.start()
        arr = rows.array("s")
        for j in range(13):
            arr.scalar().set_string(f"{written:05d}-{j:02d}" + "v" * 40)
        rows.save()
        written += 1
    first = loader.harvest()
    loader.start_batch()
    second = loader.harvest()
    assert first.num_rows == written - 1
    kept_bytes = sum(len(v) for row in first.column(0).to_pylist() for v in row)
    assert kept_bytes <= 10_000 < kept_bytes + 13 * 49
    assert second.column(0).to_pylist() == [
        [f"{written - 1:05d}-{j:02d}" + "v" * 40 for j in range(13)]
    ]


def test_array_overflow_with_other_arrays() -> None:
    # testArrayOverflowWithOtherArrays: a INT×3, b VARCHAR×11 (overflows), c INT×5 early rows
    # only, d INT×7 early rows and the overflow row.
    loader = make_loader(
        "a INT ARRAY, b VARCHAR ARRAY, c INT ARRAY, d INT ARRAY",
        vector_size_limit=4000,
        row_limit=65536,
    )
    rows = loader.writer()
    r = 0
    while not rows.is_full():
        rows.start()
        for j in range(3):
            rows.array("a").scalar().set_int(r * 10 + j)
        overflowed_before = rows.is_full()
        for j in range(11):
            rows.array("b").scalar().set_string(f"{r}-{j}".ljust(30, "."))
        just_overflowed = rows.is_full() and not overflowed_before
        if r < 5:
            rows.array("c").set([r] * 5)
        if r < 5 or just_overflowed:
            rows.array("d").set([r] * 7)
        rows.save()
        r += 1
    overflow_row = r - 1
    first = loader.harvest()
    assert first.num_rows == overflow_row
    loader.start_batch()
    for k in range(5):
        rows.add_row([k], [], [k] * 5)
    second = loader.harvest()
    assert second.num_rows == 1 + 5
    head = rows_of(second)[0]
    assert head[0] == [overflow_row * 10 + j for j in range(3)]
    assert head[1] == [f"{overflow_row}-{j}".ljust(30, ".") for j in range(11)]
    assert head[2] == []
    assert head[3] == [overflow_row] * 7
    assert rows_of(first)[-1][2] == []


def test_overflow_with_nullables() -> None:
    loader = make_loader(
        "n INT NOT NULL, a VARCHAR, b VARCHAR, c VARCHAR", vector_size_limit=8192, row_limit=65536
    )
    rows = loader.writer()
    count = 0
    while not rows.is_full():
        rows.start()
        rows.scalar("n").set_int(count)
        rows.scalar("a").set_null()
        rows.scalar("b").set_string("b" * 512)
        rows.scalar("c").set_null()
        rows.save()
        count += 1
    first = loader.harvest()
    assert first.num_rows == 8192 // 512 == count - 1
    assert first.column("a").null_count == first.num_rows
    assert first.column("c").null_count == first.num_rows
    loader.start_batch()
    assert rows_of(loader.harvest()) == [(count - 1, None, "b" * 512, None)]


def test_skip_overflow_row_gives_empty_next_batch() -> None:
    loader = make_loader("s VARCHAR", vector_size_limit=1000)
    rows = loader.writer()
    while True:
        rows.start()
        rows.scalar(0).set_string("w" * 100)
        if rows.is_full():
            break  # overflow row never saved
        rows.save()
    assert loader.harvest().num_rows == 10
    loader.start_batch()
    assert loader.harvest().num_rows == 0


def test_map_overflow_and_member_added_during_overflow() -> None:
    loader = make_loader(
        "a INT, m1 STRUCT<b INT, m2 STRUCT<c INT, d VARCHAR, e INT>>",
        vector_size_limit=16 * 1024,
        row_limit=65536,
    )
    rows = loader.writer()
    version = loader.schema_version
    count = 0
    while not rows.is_full():
        rows.start()
        rows.scalar("a").set_int(count)
        m1 = rows.tuple("m1")
        m1.scalar("b").set_int(count)
        m2 = m1.tuple("m2")
        m2.scalar("c").set_int(count)
        m2.scalar("d").set_string("d" * 512)
        if rows.is_full():
            m2.add_column(ColumnMetadata("new", MinorType.VARCHAR))
            m2.scalar("new").set_string("late")
        m2.scalar("e").set_int(count)
        rows.save()
        count += 1
    assert count - 1 == 16 * 1024 // 512
    first = loader.harvest()
    assert loader.schema_version == version
    assert first.num_rows == count - 1
    assert first.schema.field("m1").type.field("m2").type.names == ["c", "d", "e"]
    loader.start_batch()
    assert loader.schema_version == version + 1
    second = loader.harvest()
    assert rows_of(second) == [(count - 1, (count - 1, (count - 1, "d" * 512, count - 1, "late")))]


def test_overflow_inside_repeated_map_moves_entries() -> None:
    loader = make_loader(
        "id INT, e ARRAY<STRUCT<k VARCHAR, v INT>>", vector_size_limit=200, row_limit=1000
    )
    rows = loader.writer()
    r = 0
    while not rows.is_full():
        rows.start()
        rows.scalar("id").set_int(r)
        arr = rows.array("e")
        for j in range(2):
            entry = arr.tuple()
            entry.scalar("v").set_int(j)
            entry.scalar("k").set_string(f"{r}:{j}".ljust(20, "_"))
            arr.save()
        rows.save()
        r += 1
    first = loader.harvest()
    loader.start_batch()
    second = loader.harvest()
    assert first.num_rows == r - 1
    assert rows_of(second) == [(r - 1, [(f"{r - 1}:{j}".ljust(20, "_"), j) for j in range(2)])]
    assert rows_of(first)[-1][0] == r - 2


def test_batch_size_limit_overflows_the_row_that_exceeds_the_budget() -> None:
    loader = make_loader("s VARCHAR NOT NULL", batch_size_limit=100_000, row_limit=65536)
    written = _fill_until_full(loader, "x" * 512)
    first = loader.harvest()
    per_row = 512 + 4
    assert first.num_rows == written - 1
    assert first.num_rows * per_row + 4 <= 100_000 < (first.num_rows + 1) * per_row + 4
    loader.start_batch()
    assert loader.harvest().num_rows == 1


def test_row_larger_than_batch_budget_is_resource_error() -> None:
    loader = make_loader("s VARCHAR", batch_size_limit=1000)
    rows = loader.writer()
    rows.start()
    rows.scalar("s").set_string("x" * 2000)
    with pytest.raises(UserError, match="maximum allowed size of 1000 bytes"):
        rows.save()


def test_close_with_unharvested_overflow_row() -> None:
    loader = make_loader("s VARCHAR", vector_size_limit=1000)
    _fill_until_full(loader, "o" * 300)
    assert loader.has_look_ahead()
    loader.close()
    assert not loader.has_look_ahead()
    with pytest.raises(LoaderStateError):
        loader.harvest()


def test_omitted_values_across_overflow_boundary() -> None:
    loader = make_loader(
        "a INT NOT NULL, b VARCHAR NOT NULL, c VARCHAR, d INT NOT NULL",
        vector_size_limit=5000,
        row_limit=65536,
    )
    rows = loader.writer()
    i = 0
    while not rows.is_full():
        rows.start()
        rows.scalar("a").set_int(i)
        rows.scalar("b").set_string("b" * 100)
        if i % 2 == 0:
            rows.scalar("d").set_int(i)
        rows.save()
        i += 1
    first = loader.harvest()
    assert first.column("c").null_count == first.num_rows
    assert first.column("d").to_pylist() == [k if k % 2 == 0 else 0 for k in range(i - 1)]
    loader.start_batch()
    for k in range(10):
        rows.start()
        rows.scalar("a").set_int(1000 + k)
        if k > 5:
            rows.scalar("d").set_int(k)
        rows.save()
    second = loader.harvest()
    assert second.num_rows == 11
    assert second.column("d").to_pylist() == [(i - 1) if (i - 1) % 2 == 0 else 0] + [
        k if k > 5 else 0 for k in range(10)
    ]
    assert second.column("b").to_pylist() == ["b" * 100] + [""] * 10


def test_required_date_added_after_first_row_is_an_error() -> None:
    loader = make_loader("a INT")
    rows = loader.writer()
    rows.add_row(1)
    with pytest.raises(UserError, match="after the first row"):
        rows.add_column(ColumnMetadata("d", MinorType.DATE, DataMode.REQUIRED))
    rows.add_column(ColumnMetadata("d", MinorType.DATE, DataMode.OPTIONAL))
    rows.add_row(2)
    assert rows_of(loader.harvest()) == [(1, None), (2, None)]
