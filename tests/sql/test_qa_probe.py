"""Inputs a Drill user meets that earlier tests did not cover (a QA pass over the DB-API)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sql.helpers import error, names, rows


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("qa_probe")
    (root / "empty").mkdir()
    (root / "only_hidden").mkdir()
    (root / "only_hidden" / "_SUCCESS").write_text("")
    (root / "only_hidden" / ".part-0.crc").write_text("crc")
    (root / "maps.json").write_text('{"m": {"a": "x", "b": 1}}\n{"m": {"a": "y", "b": 2}}\n')
    (root / "nums.json").write_text('{"m": {"a": 1, "b": 2.5}}\n')
    return root


@pytest.mark.parametrize("table", ["empty", "only_hidden"])
def test_directory_without_visible_files_is_an_empty_table(
    conn: Any, files: Path, table: str
) -> None:
    # Drill: a directory with nothing to read is an empty, schemaless table, not an error
    # about a file of unknown format.
    path = f"dfs.`{files}/{table}`"
    assert rows(conn, f"SELECT * FROM {path}") == []
    assert rows(conn, f"SELECT COUNT(*) FROM {path}") == [(0,)]
    assert names(conn, f"SELECT a FROM {path}") == ["a"]
    assert rows(conn, f"SELECT a FROM {path}") == []


def test_kvgen_of_mixed_value_types_is_a_clear_error(conn: Any, files: Path) -> None:
    # Without the check Spark cast 'x' to BIGINT and failed with a CAST_INVALID_INPUT hint
    # about try_cast, nothing to do with the query the user wrote.
    msg = error(conn, f"SELECT KVGEN(m) FROM dfs.`{files}/maps.json`")
    assert "UNSUPPORTED_OPERATION ERROR: kvgen function only supports maps" in msg
    assert "a VARCHAR, b BIGINT" in msg
    assert "CAST_INVALID_INPUT" not in msg


def test_kvgen_of_numbers_of_two_widths_still_works(conn: Any, files: Path) -> None:
    got = rows(conn, f"SELECT FLATTEN(KVGEN(m)) AS kv FROM dfs.`{files}/nums.json`")
    assert [(r[0]["key"], r[0]["value"]) for r in got] == [("a", 1.0), ("b", 2.5)]
