"""Arrow scalars made from their bytes: the values and types asked for."""

from __future__ import annotations

import pyarrow as pa
import pytest

from auger.types.arrow_values import (
    integer_array,
    integer_scalar,
    null_scalar,
    text_array,
    text_scalar,
)


@pytest.mark.parametrize("dst", [pa.int8(), pa.int16(), pa.int32(), pa.int64()])
@pytest.mark.parametrize("value", [0, 1, -1, 100])
def test_integer_scalar(dst: pa.DataType, value: int) -> None:
    got = integer_scalar(value, dst)
    assert got.type == dst and got.as_py() == value and got.is_valid


def test_integer_scalar_bounds_and_types() -> None:
    assert integer_scalar(2**63 - 1, pa.int64()).as_py() == 2**63 - 1
    assert integer_scalar(-(2**31), pa.int32()).as_py() == -(2**31)
    with pytest.raises(Exception, match="format requires"):
        integer_scalar(2**31, pa.int32())
    with pytest.raises(TypeError, match="signed integer"):
        integer_scalar(1, pa.uint32())


def test_text_and_null_scalars() -> None:
    assert text_scalar("", pa.string()).as_py() == ""
    assert text_scalar("héllo", pa.large_string()).as_py() == "héllo"
    assert text_scalar("héllo", pa.large_string()).type == pa.large_string()
    assert text_scalar("12", pa.int32()).as_py() == 12
    null = null_scalar(pa.int32())
    assert null.type == pa.int32() and not null.is_valid


@pytest.mark.parametrize("texts", [[], [""], ["a", "", "héllo", "日本"], ["x" * 1000] * 3])
def test_text_array(texts: list[str]) -> None:
    got = text_array(texts)
    assert got.type == pa.string() and got.to_pylist() == texts and got.null_count == 0


@pytest.mark.parametrize("values", [[], [0], [1, -1, 2**63 - 1, -(2**63), 2**61 + 5]])
def test_integer_array(values: list[int]) -> None:
    got = integer_array(values)
    assert got.type == pa.int64() and got.to_pylist() == values and got.null_count == 0
