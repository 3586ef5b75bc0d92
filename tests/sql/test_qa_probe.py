"""Inputs a Drill user meets that earlier tests did not cover (a QA pass over the DB-API)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sql.helpers import names, rows


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("qa_probe")
    (root / "empty").mkdir()
    (root / "only_hidden").mkdir()
    (root / "only_hidden" / "_SUCCESS").write_text("")
    (root / "only_hidden" / ".part-0.crc").write_text("crc")
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
