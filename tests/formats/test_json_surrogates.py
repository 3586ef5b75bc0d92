"""A lone UTF-16 surrogate escape (``"\\ud800"``) is a malformed record: a DATA_READ error
naming file, line and column on every path (discovery, pyarrow, the projector, Python), never
Python's ``'utf-8' codec can't encode`` as a SYSTEM error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auger.errors import ErrorKind, UserError
from auger.formats.json.stream import lone_surrogate

from .helpers import read_file, rows_of
from .test_json import discover

GOOD = '{"b": 1, "a": "ok"}\n'
# line 4; the escape starts at column 17
BAD_LINE = '{"b": 2, "a": "x\\udc00y"}\n'
BAD = GOOD * 3 + BAD_LINE + GOOD


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('"\\ud800"', 1),
        ('"\\udc00"', 1),
        ('"\\uD800"', 1),
        ('"x\\ud800\\u0041"', 2),  # a high half followed by no low half
        ('"\\ud83d\\ude00 \\ud83d"', 14),  # a pair, then a high half at the end
        ('"\\\\\\ud800"', 3),  # an escaped backslash, then the escape
        ('"\\ud83d\\ude00"', None),  # a pair is one character
        ('"\\\\ud800"', None),  # an escaped backslash and the text ud800
        ('"plain", "\\n\\t\\u00e9"', None),
    ],
)
def test_lone_surrogate_is_found_where_its_escape_starts(text: str, where: int | None) -> None:
    assert lone_surrogate(text) == where
    assert lone_surrogate(text.encode()) == where
    # bounds: only the given part of the text counts
    padded = "[1]" + text
    assert lone_surrogate(padded, 3) == (None if where is None else where + 3)
    assert lone_surrogate(padded, 0, 3) is None


def located(err: UserError, path: Path, line: int, column: int) -> None:
    assert err.kind is ErrorKind.DATA_READ
    assert "surrogate" in err.message and "\\udc00" in err.message
    assert f"File: {path}" in err.context
    assert f"Line: {line}" in err.context and f"Column: {column}" in err.context


def test_discovery_locates_a_lone_surrogate(tmp_path: Path, json_mode: dict[str, Any]) -> None:
    # Before: UnicodeEncodeError out of pyarrow's inference (SYSTEM ERROR, no file)
    path = tmp_path / "s.json"
    path.write_text(BAD)
    with pytest.raises(UserError) as info:
        discover(path, json_mode)
    located(info.value, path, 4, 17)


@pytest.mark.parametrize("columns", [None, ["b"], ["a"]], ids=["all", "other", "the-member"])
def test_read_locates_a_lone_surrogate_past_the_sample(
    tmp_path: Path, json_mode: dict[str, Any], columns: list[str] | None
) -> None:
    # the table schema came from rows before it (a sample), so the executor meets it; with
    # only "b" read, the projector cuts "a" away, and the record is refused all the same
    path = tmp_path / "s.json"
    path.write_text(BAD)
    opts = {**json_mode, "__table_schema__": "`b` BIGINT, `a` VARCHAR"}
    with pytest.raises(UserError) as info:
        read_file(path, "json", {}, opts, columns=columns)
    located(info.value, path, 4, 17)


def test_skip_invalid_records_skips_a_lone_surrogate(
    tmp_path: Path, json_mode: dict[str, Any]
) -> None:
    path = tmp_path / "s.json"
    path.write_text(BAD)
    opts = {
        **json_mode,
        "store.json.reader.skip_invalid_records": True,
        "__table_schema__": "`b` BIGINT, `a` VARCHAR",
    }
    assert rows_of(read_file(path, "json", {}, opts)) == [{"b": 1, "a": "ok"}] * 4
