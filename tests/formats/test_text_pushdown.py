"""Headerless ``columns[n]`` push-down: only the needed fields are converted, and the arrays
keep Drill's shape (positions up to the highest asked for, the others "")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .helpers import read_file, rows_of


def _read(path: Path, mode: dict[str, Any], wanted: list[str]) -> list[list[str]]:
    options = {**mode, "__projection__": wanted}
    rows = rows_of(read_file(path, "text", {}, options, columns=["columns"]))
    return [r["columns"] for r in rows]


@pytest.mark.parametrize(
    ("text", "wanted", "expected"),
    [
        # wider file: arrays stop at the highest position asked for
        (
            "1,2,3,4,5\n6,7,8,9,10\n",
            ["columns[3]", "columns[1]"],
            [["", "2", "", "4"], ["", "7", "", "9"]],
        ),
        # narrower file than the positions asked for: arrays as long as the file's rows
        ("1,2\n3,4\n", ["columns[3]", "columns[0]"], [["1", ""], ["3", ""]]),
        ("1,2,3\n", ["columns[0]"], [["1"]]),
        ("1,2,3\n", ["columns[2]"], [["", "", "3"]]),
    ],
)
def test_push_down_shapes_on_both_parsers(
    tmp_path: Path, text_mode: dict[str, Any], text: str, wanted: list[str], expected: Any
) -> None:
    path = tmp_path / "f.csv"
    path.write_text(text)
    got = _read(path, text_mode, wanted)
    assert got == expected
    assert got == _read(path, {"auger.scan.text_force_python": True}, wanted)


def test_push_down_over_many_batches(tmp_path: Path, text_mode: dict[str, Any]) -> None:
    path = tmp_path / "f.csv"
    path.write_text("".join(f"{i},x{i},y{i},z{i}\n" for i in range(20_000)))
    got = _read(path, text_mode, ["columns[2]", "columns[0]"])
    assert got == [[str(i), "", f"y{i}"] for i in range(20_000)]
