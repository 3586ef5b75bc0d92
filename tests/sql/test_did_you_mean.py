"""Names nearly right get a "did you mean": tables and files, workspaces, functions, options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .helpers import error, rows


def test_a_misspelt_file_of_cp_suggests_the_file(conn: Any) -> None:
    message = error(conn, "SELECT * FROM cp.`employe.json`")
    assert "Object 'employe.json' not found within 'cp'" in message
    assert "did you mean `employee.json`?" in message
    assert rows(conn, "SELECT COUNT(*) FROM cp.`employee.json`")


def test_a_misspelt_file_in_a_subdirectory_keeps_its_directory(conn: Any, data_dir: Path) -> None:
    (data_dir / "dym").mkdir(exist_ok=True)
    (data_dir / "dym" / "orders.json").write_text('{"id": 1}\n')
    message = error(conn, "SELECT * FROM dfs.data.`dym/ordrs.json`")
    assert "did you mean `dym/orders.json`?" in message
    assert rows(conn, "SELECT id FROM dfs.data.`dym/orders.json`") == [(1,)]


def test_a_name_nothing_like_any_file_gets_no_suggestion(conn: Any) -> None:
    assert "did you mean" not in error(conn, "SELECT * FROM cp.`zzzzqqq.json`")


def test_a_misspelt_workspace_suggests_the_workspace(conn: Any) -> None:
    message = error(conn, "SELECT * FROM dfs.dta.`x.json`")
    assert "did you mean [dfs.data]?" in message
    assert "Did you mean [dfs.data]?" in error(conn, "USE dfs.dat")
    assert "Did you mean [dfs.tmp]?" in error(conn, "SHOW FILES IN dfs.tpm")


def test_a_misspelt_function_suggests_the_function(conn: Any) -> None:
    message = error(conn, "SELECT UPPR(full_name) FROM cp.`employee.json`")
    assert "No match found for function signature UPPR(<ANY>)" in message
    assert "did you mean UPPER?" in message


def test_a_misspelt_option_suggests_the_option(conn: Any) -> None:
    message = error(conn, "ALTER SESSION SET `store.json.all_txt_mode` = true")
    assert "The option 'store.json.all_txt_mode' does not exist." in message
    assert "Did you mean 'store.json.all_text_mode'?" in message
    assert "Did you mean" not in error(conn, "ALTER SESSION SET `no.such.thing.at.all` = 1")
