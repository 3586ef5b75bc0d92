"""Scan diagnostics: a column no file has answers as Drill answers, and says so.

The messages reach the DB-API as PEP 249's ``Cursor.messages``, the shell as lines after the
results, and REST clients in the query profile (``tests/server``).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import auger
from auger.cli.main import run_statements

from .helpers import rows


def _sales(data_dir: Path) -> str:
    root = data_dir / "sales"
    if not root.exists():
        root.mkdir()
        for n, region in enumerate(["east", "west", "north"]):
            (root / f"part{n}.csvh").write_text(f"region,amount\n{region},{n + 10}\n")
    return "dfs.data.sales"


def test_misspelt_column_answers_blanks_and_suggests_the_name(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    cur = conn.cursor().execute(f"SELECT regoin FROM {table}")
    assert cur.fetchall() == [("",), ("",), ("",)]  # text: blanks, as Drill answers
    assert cur.messages == [
        (
            auger.Warning,
            "Column [regoin] was not found in any of the 3 files of dfs.data.sales; "
            "did you mean [region]?",
        )
    ]
    assert cur.warnings == [cur.messages[0][1]]


def test_clean_query_has_no_messages_and_execute_clears_them(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    cur = conn.cursor().execute(f"SELECT regoin FROM {table}")
    assert len(cur.messages) == 1
    cur.execute(f"SELECT region FROM {table} ORDER BY region")
    assert cur.fetchall() == [("east",), ("north",), ("west",)]
    assert cur.messages == [] and cur.warnings == []


def test_missing_json_column_without_a_close_name(conn: Any, data_dir: Path) -> None:
    (data_dir / "sm_one.json").write_text(json.dumps({"id": 1, "name": "x"}) + "\n")
    cur = conn.cursor().execute("SELECT id, zzz FROM dfs.data.`sm_one.json`")
    assert cur.fetchall() == [(1, None)]  # other formats: NULL
    assert [text for _, text in cur.messages] == [
        "Column [zzz] was not found in the file of dfs.data.sm_one.json"
    ]


def test_implicit_and_partition_columns_are_not_missing(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    cur = conn.cursor().execute(f"SELECT filename, dir0, region FROM {table} ORDER BY filename")
    assert rows(conn, f"SELECT COUNT(*) FROM {table}") == [(3,)]
    assert len(cur.fetchall()) == 3
    assert cur.messages == []


def test_shell_prints_messages_after_the_results(conn: Any, data_dir: Path) -> None:
    table = _sales(data_dir)
    out, err = io.StringIO(), io.StringIO()
    status = run_statements([f"SELECT regoin FROM {table}"], conn, "csv", out, err)
    assert status == 0
    assert out.getvalue().splitlines()[0] == "regoin"  # the csv on stdout stays clean
    assert err.getvalue().strip() == (
        "Warning: Column [regoin] was not found in any of the 3 files of dfs.data.sales; "
        "did you mean [region]?"
    )
    err = io.StringIO()
    run_statements([f"SELECT region FROM {table}"], conn, "csv", io.StringIO(), err)
    assert err.getvalue() == ""
