"""The loader's state machine, schema versions, column lookup and row protocol."""

from __future__ import annotations

import pickle

import pytest

from auger.errors import ErrorKind, UserError
from auger.resultset import (
    LoaderOptions,
    LoaderStateError,
    ResultSetLoader,
    UndefinedColumnError,
)
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.arrow import schema_to_arrow
from auger.types.schema_text import parse_schema

from .helpers import make_loader, rows_of


def test_fresh_loader_defaults() -> None:
    loader = ResultSetLoader(LoaderOptions())
    assert loader.schema_version == 0
    assert loader.target_row_count == 4096
    assert loader.target_vector_size == 16 * 1024 * 1024
    assert loader.row_count() == 0
    assert loader.batch_count == 0
    assert loader.total_row_count == 0


def test_protocol_errors_before_first_batch() -> None:
    loader = ResultSetLoader(LoaderOptions(schema="a INT"))
    rows = loader.writer()
    with pytest.raises(LoaderStateError, match="start_batch"):
        loader.harvest()
    with pytest.raises(LoaderStateError):
        rows.start()
    with pytest.raises(LoaderStateError):
        rows.save()


def test_start_batch_twice_and_between_batches() -> None:
    loader = make_loader("a INT")
    with pytest.raises(LoaderStateError):
        loader.start_batch()
    loader.writer().add_row(1)
    loader.harvest()
    rows = loader.writer()
    for call in (rows.start, loader.harvest, rows.save):
        with pytest.raises(LoaderStateError):
            call()


def test_after_close_everything_fails_and_close_twice_is_benign() -> None:
    loader = make_loader("a INT")
    rows = loader.writer()
    loader.close()
    loader.close()
    for call in (rows.start, loader.writer, loader.start_batch, loader.harvest, rows.save):
        with pytest.raises(LoaderStateError):
            call()


def test_state_errors_are_runtime_and_user_errors_and_pickle() -> None:
    err = LoaderStateError("boom")
    assert isinstance(err, RuntimeError) and isinstance(err, UserError)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is LoaderStateError and again.message == "boom"


def test_counts_and_harvest() -> None:
    loader = make_loader("a INT NOT NULL, b VARCHAR")
    rows = loader.writer()
    rows.add_row(1, "x")
    rows.add_row(2, None)
    assert rows.row_count() == 2
    assert loader.batch_count == 1
    batch = loader.harvest()
    assert rows_of(batch) == [(1, "x"), (2, None)]
    assert loader.total_row_count == 2
    loader.start_batch()
    rows.add_row(3, "z")
    assert loader.total_row_count == 3
    assert loader.batch_count == 2
    assert rows_of(loader.harvest()) == [(3, "z")]


def test_schema_version_counts_maps_and_members() -> None:
    loader = ResultSetLoader(LoaderOptions(schema="a INT, m STRUCT<c INT, d VARCHAR>, e VARCHAR"))
    assert loader.schema_version == 5
    loader.start_batch()
    loader.writer().add_row(1, {"c": 2, "d": "x"}, "y")
    loader.harvest()
    assert loader.schema_version == 5


def test_column_lookup_is_case_insensitive() -> None:
    loader = make_loader("a INT, Bb VARCHAR")
    rows = loader.writer()
    assert rows.scalar("A") is rows.scalar("a") is rows.scalar(0)
    assert rows.index("bB") == 1
    assert rows.index("zz") == -1
    with pytest.raises(UndefinedColumnError, match="Undefined column: zz"):
        rows.scalar("zz")
    with pytest.raises(KeyError):
        rows.column("zz")
    with pytest.raises(IndexError):
        rows.scalar(5)


def test_duplicate_column_is_a_validation_error() -> None:
    loader = make_loader("a INT")
    with pytest.raises(UserError, match="Duplicate column name: A") as info:
        loader.writer().add_column(ColumnMetadata("A", MinorType.INT))
    assert info.value.kind is ErrorKind.VALIDATION


def test_wrong_accessor_names_the_right_one() -> None:
    loader = make_loader("a INT, c INT ARRAY, m STRUCT<x INT>")
    rows = loader.writer()
    with pytest.raises(TypeError, match="use scalar"):
        rows.array("a")
    with pytest.raises(TypeError, match="use array"):
        rows.scalar("c")
    with pytest.raises(TypeError, match="use tuple"):
        rows.scalar("m")


def test_back_fill_of_column_added_after_rows() -> None:
    loader = make_loader("a INT NOT NULL")
    rows = loader.writer()
    rows.add_row(100)
    rows.add_column(ColumnMetadata("b", MinorType.INT, DataMode.OPTIONAL))
    rows.add_row(200, 210)
    assert rows_of(loader.harvest()) == [(100, None), (200, 210)]


def test_overwrite_row_by_starting_again() -> None:
    loader = make_loader("a INT NOT NULL, b VARCHAR, c INT ARRAY")
    rows = loader.writer()
    rows.start()
    rows.scalar("a").set_int(1)
    rows.scalar("b").set_string("discard me")
    rows.array("c").set([1, 2, 3])
    rows.start()  # the row above is dropped
    rows.scalar("a").set_int(2)
    rows.save()
    rows.start()
    rows.scalar("a").set_int(3)  # never saved: dropped at harvest
    rows.scalar("b").set_string("nope")
    batch = loader.harvest()
    assert rows_of(batch) == [(2, None, [])]


def test_skip_rows_keeps_only_saved_ones() -> None:
    # Paraphrase of testSkipRows: 14 rows started, only even i saved; b null when i % 3 == 0.
    loader = make_loader("a INT NOT NULL, b VARCHAR")
    rows = loader.writer()
    for i in range(14):
        rows.start()
        rows.scalar("a").set_int(i + 1)
        if i % 3 == 0:
            rows.scalar("b").set_null()
        else:
            rows.scalar("b").set_string(f"b-{i + 1}")
        if i % 2 == 0:
            rows.save()
    expected = [(1, None), (3, "b-3"), (5, "b-5"), (7, None), (9, "b-9"), (11, "b-11"), (13, None)]
    assert rows_of(loader.harvest()) == expected


def test_add_row_with_too_many_values() -> None:
    loader = make_loader("a INT")
    with pytest.raises(LoaderStateError, match="2 values for 1 columns"):
        loader.writer().add_row(1, 2)


def test_writer_is_the_same_object_and_columns_keep_writers() -> None:
    loader = make_loader("a INT")
    rows = loader.writer()
    assert loader.writer() is rows
    a = rows.scalar("a")
    rows.add_column(ColumnMetadata("b", MinorType.INT))
    assert rows.scalar("a") is a
    assert rows.schema().names() == ["a", "b"]


def test_record_batch_schema_matches_types_mapping() -> None:

    text = (
        "a INT NOT NULL, b VARCHAR, c INT ARRAY, m STRUCT<x BIGINT>, "
        "d ARRAY<ARRAY<BIGINT>>, e ARRAY<STRUCT<p INT>>, k MAP<VARCHAR, INT>"
    )
    loader = make_loader(text)
    loader.writer().add_row(1, "v", [1, 2], {"x": 3}, [[1], []], [{"p": 1}], {"k": 1})
    batch = loader.harvest()
    assert batch.schema == schema_to_arrow(parse_schema(text))
    assert rows_of(batch) == [(1, "v", [1, 2], (3,), [[1], []], [(1,)], [("k", 1)])]
