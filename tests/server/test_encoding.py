"""Drill's REST value encoding of Arrow columns, without a server."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest

from auger.server.encoding import encode_batch_rows, encode_column, type_name
from auger.types import ColumnMetadata, DataMode, MinorType
from auger.types.schema_text import parse_schema


def tokens(arr: pa.Array) -> list[object]:
    return [json.loads(t) for t in encode_column(arr)]


def test_integers_floats_and_specials() -> None:
    assert tokens(pa.array([1, None, 2**63 - 1], pa.int64())) == [1, None, 2**63 - 1]
    got = tokens(pa.array([1.5, float("nan"), float("inf"), float("-inf")], pa.float64()))
    assert got == [1.5, "NaN", "Infinity", "-Infinity"]
    # FLOAT4 is widened to double, as Drill's writer does
    assert tokens(pa.array([1.1], pa.float32())) == [1.100000023841858]


def test_decimal_is_a_plain_number() -> None:
    arr = pa.array([decimal.Decimal("12.34"), None, decimal.Decimal("-0.01")], pa.decimal128(10, 2))
    assert encode_column(arr) == ["12.34", "null", "-0.01"]


def test_dates_times_timestamps_as_epoch_millis() -> None:
    assert tokens(pa.array([dt.date(2019, 7, 1), None])) == [1561939200000, None]
    ts = pa.array([dt.datetime(2019, 7, 1, 10, 0, 0, 123456)], pa.timestamp("us"))
    assert tokens(ts) == [1561975200123]
    assert tokens(pa.array([dt.datetime(2019, 7, 1, 10)], pa.timestamp("s"))) == [1561975200000]
    tz = pa.array([dt.datetime(2019, 7, 1, 10)], pa.timestamp("us", tz="UTC"))
    assert tokens(tz) == [1561975200000]
    assert tokens(pa.array([dt.time(12, 34, 56, 789000)], pa.time64("us"))) == [45296789]
    assert tokens(pa.array([dt.time(0, 0, 1)], pa.time32("ms"))) == [1000]


def test_binary_as_base64_and_strings_escaped() -> None:
    assert tokens(pa.array([b"ab", None], pa.binary())) == ["YWI=", None]
    assert tokens(pa.array(['say "hi"\n', "é"])) == ['say "hi"\n', "é"]


def test_intervals_as_iso_periods() -> None:
    arr = pa.array([dt.timedelta(days=1, seconds=7384, milliseconds=500), dt.timedelta(0)])
    assert tokens(arr) == ["P1DT7384.500S", "PT0S"]
    mdn = pa.array(
        [pa.scalar((14, 0, 0), pa.month_day_nano_interval()).as_py()], pa.month_day_nano_interval()
    )
    assert tokens(mdn) == ["P1Y2M"]


def test_nested_values() -> None:
    st = pa.array([{"k": [1, 2], "o": {"s": "x"}}, None])
    assert tokens(st) == [{"k": [1, 2], "o": {"s": "x"}}, None]
    mp = pa.array([[("a", 1), ("b", None)]], pa.map_(pa.string(), pa.int64()))
    assert tokens(mp) == [{"a": 1, "b": None}]
    lists = pa.array([[[1, 2], [3]], []], pa.list_(pa.list_(pa.int64())))
    assert tokens(lists) == [[[1, 2], [3]], []]
    nested_dates = pa.array([[dt.date(1970, 1, 2)]], pa.list_(pa.date32()))
    assert tokens(nested_dates) == [[86400000]]


def test_rows_have_every_key_in_order() -> None:
    table = pa.table({"b": [1, None], "a": ["x", None]})
    out = [json.loads(r) for r in encode_batch_rows(table, ["b", "a"])]
    assert out == [{"b": 1, "a": "x"}, {"b": None, "a": None}]
    assert [list(r) for r in out] == [["b", "a"], ["b", "a"]]


@pytest.mark.parametrize(
    ("col", "name"),
    [
        (ColumnMetadata("c", MinorType.SMALLINT, DataMode.OPTIONAL), "INT"),
        (ColumnMetadata("c", MinorType.TINYINT, DataMode.OPTIONAL), "INT"),
        (ColumnMetadata("c", MinorType.BIGINT, DataMode.REPEATED), "BIGINT"),
        (
            ColumnMetadata("c", MinorType.VARDECIMAL, DataMode.OPTIONAL, None, 38, 18),
            "VARDECIMAL(38, 18)",
        ),
        (ColumnMetadata("c", MinorType.BIT, DataMode.REQUIRED), "BIT"),
        (ColumnMetadata("c", MinorType.NULL, DataMode.OPTIONAL), "INT"),
    ],
)
def test_type_names(col: ColumnMetadata, name: str) -> None:
    assert type_name(col) == name


def test_type_name_of_map_column() -> None:
    schema = parse_schema("m STRUCT<x BIGINT>")
    assert type_name(schema[0]) == "MAP"
