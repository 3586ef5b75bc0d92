"""Scalars of several types in one JSON array follow Drill's rule: the array takes the type of
its first scalar and the others are converted to it (an error only where one cannot be)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auger.errors import ErrorKind, UserError
from auger.formats.json.convert import java_double_text

from .test_json import scan


@pytest.mark.parametrize(
    ("text", "schema", "values"),
    [
        (
            '{"a": ["x", 1, 2.5, true, null]}\n',
            "`a` ARRAY<VARCHAR>",
            ["x", "1", "2.5", "true", ""],
        ),
        ('{"a": [1, "2", true, false]}\n', "`a` ARRAY<BIGINT>", [1, 2, 1, 0]),
        # numbers widen to DOUBLE first (Drill keeps BIGINT and rounds 2.5 to 3)
        ('{"a": [1, 2.5, "3"]}\n', "`a` ARRAY<DOUBLE>", [1.0, 2.5, 3.0]),
        ('{"a": [1.5, "2.25", true, 3]}\n', "`a` ARRAY<DOUBLE>", [1.5, 2.25, 1.0, 3.0]),
        (
            '{"a": [true, 0, 2, "TRUE", "yes"]}\n',
            "`a` ARRAY<BOOLEAN>",
            [True, False, True, True, False],
        ),
        ('{"a": [null, "n", 7]}\n', "`a` ARRAY<VARCHAR>", ["", "n", "7"]),
        ('{"a": ["big", 1e20, 0.0001]}\n', "`a` ARRAY<VARCHAR>", ["big", "1.0E20", "1.0E-4"]),
    ],
)
def test_first_scalar_types_the_array(
    tmp_path: Path, json_mode: dict[str, Any], text: str, schema: str, values: list[Any]
) -> None:
    # a null element of an array of text is "" (Drill's arrays hold no nulls)
    found, rows = scan(tmp_path, '{"a": []}\n' + text, json_mode)
    assert found == schema
    assert rows[1]["a"] == values


def test_mixed_arrays_inside_maps_and_arrays(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    text = '{"m": {"l": ["a", 1]}, "n": [[1, "2"], ["3"]]}\n{"m": {"l": ["b", false]}, "n": []}\n'
    found, rows = scan(tmp_path, text, json_mode)
    assert found == "`m` STRUCT<`l` ARRAY<VARCHAR>>, `n` ARRAY<ARRAY<BIGINT>>"
    assert rows[0] == {"m": {"l": ["a", "1"]}, "n": [[1, 2], [3]]}
    assert rows[1]["m"] == {"l": ["b", "false"]}


def test_a_scalar_that_does_not_convert_is_located(
    tmp_path: Path, json_mode: dict[str, Any]
) -> None:
    with pytest.raises(UserError) as info:
        scan(tmp_path, '{"a": [1]}\n{"a": [2, "two"]}\n', json_mode)
    err = info.value
    assert err.kind is ErrorKind.DATA_READ
    assert err.message.startswith("Type of JSON token is not compatible with its column")
    assert "'two'" in err.message and "Line: 2" in err.context and "Column: a" in err.context


def test_maps_and_scalars_still_do_not_mix(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    with pytest.raises(UserError) as info:
        scan(tmp_path, '{"a": [1, {"b": 2}]}\n', json_mode)
    assert info.value.kind is ErrorKind.DATA_READ


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (1.5, "1.5"),
        (100.0, "100.0"),
        (1e7, "1.0E7"),
        (12345678.9, "1.23456789E7"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (-2.5e-10, "-2.5E-10"),
        (0.0, "0.0"),
    ],
)
def test_numbers_become_text_as_java_writes_them(x: float, text: str) -> None:
    assert java_double_text(x) == text


def test_mixed_array_through_sql(conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    path.write_text('{"id": 1, "a": ["x", 1, true]}\n{"id": 2, "a": ["y", 4]}\n')
    sql = f"SELECT id, a[1] AS second FROM dfs.`{path}` ORDER BY id"
    assert [tuple(r) for r in conn.cursor().execute(sql).fetchall()] == [(1, "1"), (2, "4")]
