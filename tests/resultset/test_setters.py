"""Typed setters: every scalar type, lossless conversions only."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from auger.errors import ErrorKind, UserError
from auger.resultset import ConversionError

from .helpers import make_loader


def _one(schema: str, setter: str, value: object) -> object:
    loader = make_loader(schema)
    rows = loader.writer()
    rows.start()
    getattr(rows.scalar(0), setter)(value)
    rows.save()
    return loader.harvest().column(0)[0].as_py()


@pytest.mark.parametrize(
    ("schema", "setter", "value", "expected"),
    [
        ("x TINYINT", "set_int", -128, -128),
        ("x SMALLINT", "set_int", 32767, 32767),
        ("x INT", "set_int", -(2**31), -(2**31)),
        ("x BIGINT", "set_long", 2**63 - 1, 2**63 - 1),
        ("x INT", "set_double", 3.0, 3),
        ("x INT", "set_decimal", Decimal("7"), 7),
        ("x FLOAT", "set_double", 0.5, 0.5),
        ("x DOUBLE", "set_double", 1.25, 1.25),
        ("x DOUBLE", "set_int", 2**52, float(2**52)),
        ("x BOOLEAN", "set_bool", True, True),
        ("x BOOLEAN", "set_int", 0, False),
        ("x VARCHAR", "set_string", "héllo", "héllo"),
        ("x VARCHAR", "set_bytes", b"abc", "abc"),
        ("x VARBINARY", "set_bytes", b"\x00\xff", b"\x00\xff"),
        ("x VARBINARY", "set_string", "é", "é".encode()),
        ("x DATE", "set_date", dt.date(2024, 2, 29), dt.date(2024, 2, 29)),
        ("x TIME", "set_time", dt.time(12, 30, 1, 5000), dt.time(12, 30, 1, 5000)),
        (
            "x TIMESTAMP",
            "set_timestamp",
            dt.datetime(2020, 1, 2, 3, 4, 5, 6),
            dt.datetime(2020, 1, 2, 3, 4, 5, 6),
        ),
        ("x DECIMAL(10, 2)", "set_decimal", Decimal("-12.5"), Decimal("-12.50")),
        ("x DECIMAL(10, 2)", "set_int", 42, Decimal("42.00")),
        ("x DECIMAL(10, 2)", "set_string", "1.05", Decimal("1.05")),
    ],
)
def test_lossless_setters(schema: str, setter: str, value: object, expected: object) -> None:
    assert _one(schema, setter, value) == expected


@pytest.mark.parametrize(
    ("schema", "setter", "value"),
    [
        ("x INT", "set_int", 2**31),
        ("x TINYINT", "set_int", 200),
        ("x INT", "set_double", 2.5),
        ("x INT", "set_string", "12"),
        ("x FLOAT", "set_double", 0.1),
        ("x DOUBLE", "set_int", 2**53 + 1),
        ("x BOOLEAN", "set_int", 2),
        ("x VARCHAR", "set_bytes", b"\xff\xfe"),
        ("x VARCHAR", "set_int", 5),
        ("x DATE", "set_date", dt.datetime(2020, 1, 1, 10, 0)),
        ("x TIME", "set_time", dt.time(1, 2, 3, 4)),
        ("x DECIMAL(4, 1)", "set_decimal", Decimal("1.25")),
        ("x DECIMAL(4, 1)", "set_decimal", Decimal("12345")),
    ],
)
def test_lossy_conversions_fail_clearly(schema: str, setter: str, value: object) -> None:
    loader = make_loader(schema)
    rows = loader.writer()
    rows.start()
    with pytest.raises(ConversionError) as info:
        getattr(rows.scalar(0), setter)(value)
    assert info.value.kind is ErrorKind.DATA_READ
    assert "`x`" in info.value.message and "without loss" in info.value.message


def test_set_null_on_required_column_fails() -> None:
    loader = make_loader("a INT NOT NULL")
    rows = loader.writer()
    rows.start()
    with pytest.raises(UserError, match="cannot be set to NULL"):
        rows.scalar("a").set_null()


def test_generic_set_dispatches_on_value() -> None:
    loader = make_loader(
        "i BIGINT, f DOUBLE, s VARCHAR, b BOOLEAN, d DATE, t TIMESTAMP, n DECIMAL(5, 2), "
        "v INTERVAL DAY"
    )
    rows = loader.writer()
    values = (
        5,
        2.5,
        "x",
        False,
        dt.date(2000, 1, 1),
        dt.datetime(2000, 1, 1, 1),
        Decimal("1.5"),
        dt.timedelta(days=2, seconds=3),
    )
    rows.add_row(*values)
    rows.add_row(*([None] * len(values)))
    batch = loader.harvest()
    first = [batch.column(i)[0].as_py() for i in range(batch.num_columns)]
    assert first[:7] == [
        5,
        2.5,
        "x",
        False,
        dt.date(2000, 1, 1),
        dt.datetime(2000, 1, 1, 1),
        Decimal("1.50"),
    ]
    assert first[7] == pa.MonthDayNano([0, 2, 3_000_000_000])
    assert all(batch.column(i)[1].as_py() is None for i in range(batch.num_columns))


def test_time_zone_aware_timestamp_is_stored_in_utc() -> None:
    tz = dt.timezone(dt.timedelta(hours=2))
    got = _one("x TIMESTAMP", "set_timestamp", dt.datetime(2020, 1, 1, 12, tzinfo=tz))
    assert got == dt.datetime(2020, 1, 1, 10)
