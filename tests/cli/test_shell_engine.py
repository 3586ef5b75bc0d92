"""The shell's completion and commands against the real engine (one shared SparkSession)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from auger.cli.completion import SqlCompleter
from auger.cli.shell import Shell


def complete(shell: Shell, text: str, cursor: int | None = None) -> list[str]:
    completer = SqlCompleter(shell.cache, ["!" + c for c in shell.commands])
    doc = Document(text, len(text) if cursor is None else cursor)
    return [c.text for c in completer.get_completions(doc, CompleteEvent())]


def test_completion_from_the_catalog(conn: Any, data_dir: Path) -> None:
    (data_dir / "compl_people.json").write_text('{"id": 1, "nick": "x"}\n')
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(conn, out, err)
    assert "dfs.data" in complete(shell, "SELECT * FROM dfs.d")
    assert shell.handle("USE dfs.data;"), err.getvalue()
    assert shell.prompt == "auger (dfs.data)> "
    assert complete(shell, "SELECT * FROM compl_p") == ["`compl_people.json`"]
    text = "SELECT ni FROM dfs.data.`compl_people.json`"
    assert complete(shell, text, len("SELECT ni")) == ["nick"]


def test_statements_and_errors_through_the_engine(conn: Any) -> None:
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(conn, out, err)
    assert shell.handle("!set outputformat vertical")
    assert shell.handle("SELECT n_name, n_regionkey FROM cp.`tpch/nation.parquet`\nLIMIT 1;")
    assert "n_name       ALGERIA\nn_regionkey  0\n1 row selected (" in out.getvalue()
    assert not shell.handle("SELECT * FROM cp.`nope.json`;")
    assert err.getvalue().startswith("VALIDATION ERROR: Object 'nope.json' not found within 'cp'")


def test_capped_results_fetch_one_row_past_the_cap(conn: Any) -> None:
    # Each statement runs on a fresh worker thread and streams only what it shows; the second
    # one follows a result left half read, as every capped statement leaves it.
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(conn, out, err)
    assert shell.handle(".maxrows 3")
    for _ in range(2):
        assert shell.handle("SELECT full_name FROM cp.`employee.json`;"), err.getvalue()
        assert shell.cursor.rownumber == 4  # three shown, one to know that more exist
    text = out.getvalue()
    assert text.count("| Sheri Nowmer    |") == 2 and "| Michael Spence  |" in text
    assert "Maya Gutierrez" not in text  # the fourth row: fetched, not shown
    assert text.count("first 3 rows shown, more not fetched (") == 2
    assert shell.handle(".maxrows 0")
    assert shell.handle("SELECT full_name FROM cp.`employee.json`;")
    assert "1155 rows selected (" in out.getvalue()
