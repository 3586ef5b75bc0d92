"""Name resolution: workspaces, paths, escapes, USE, directory functions, temporary tables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .helpers import error, rows


def test_paths_outside_the_workspace_are_refused(conn: Any, data_dir: Path) -> None:
    outside = data_dir.parent / "outside_ws.json"
    outside.write_text('{"a": 1}\n')
    msg = error(conn, "SELECT * FROM dfs.data.`../outside_ws.json`")
    assert msg.startswith("PERMISSION ERROR:")
    os.symlink(outside, data_dir / "link.json")
    assert error(conn, "SELECT * FROM dfs.data.`link.json`").startswith("PERMISSION ERROR:")


def test_leading_slash_and_backticked_schema(conn: Any, data_dir: Path) -> None:
    (data_dir / "nm.json").write_text('{"a": 1}\n')
    assert rows(conn, "SELECT a FROM dfs.data.`/nm.json`") == [(1,)]
    assert rows(conn, "SELECT a FROM `dfs.data`.`nm.json`") == [(1,)]
    assert rows(conn, "SELECT a FROM `dfs`.`data`.`nm.json`") == [(1,)]
    rows(conn, "USE dfs")
    assert rows(conn, "SELECT a FROM data.`nm.json`") == [(1,)]


def test_directory_functions(conn: Any, data_dir: Path) -> None:
    for year in ("2014", "2015", "2013"):
        d = data_dir / "qlogs" / year
        d.mkdir(parents=True)
        (d / "f.csv").write_text(f"{year},some data\n")
    got = rows(
        conn,
        "SELECT columns[0] AS c, dir0 FROM dfs.data.`qlogs` "
        "WHERE dir0 = MAXDIR('dfs.data', 'qlogs')",
    )
    assert got == [("2015", "2015")]
    got = rows(conn, "SELECT dir0 FROM dfs.data.`qlogs` WHERE dir0 = IMINDIR('dfs.data', 'qlogs')")
    assert got == [("2013",)]


def test_views_may_not_use_temporary_tables(conn: Any) -> None:
    rows(conn, "CREATE TEMPORARY TABLE tt_for_view AS SELECT 'A' AS c1 FROM (VALUES(1))")
    msg = error(conn, "CREATE VIEW dfs.tmp.v_over_temp AS SELECT * FROM dfs.tmp.tt_for_view")
    assert (
        "VALIDATION ERROR: Temporary tables usage is disallowed. Used temporary table name: "
        "[tt_for_view]." in msg
    )
    # a view whose table is later shadowed by a temporary table refuses to expand
    rows(conn, "USE dfs.tmp")
    rows(conn, "CREATE TABLE tbl_expansion AS SELECT 'TABLE' AS c1 FROM (VALUES(1))")
    rows(conn, "CREATE VIEW view_expansion AS SELECT * FROM tbl_expansion")
    assert rows(conn, "SELECT * FROM view_expansion") == [("TABLE",)]
    rows(conn, "DROP TABLE tbl_expansion")
    rows(conn, "CREATE TEMPORARY TABLE tbl_expansion AS SELECT 'TEMP' AS c1 FROM (VALUES(1))")
    assert "Temporary tables usage is disallowed. Used temporary table name: [tbl_expansion]" in (
        error(conn, "SELECT * FROM view_expansion")
    )
    rows(conn, "DROP VIEW view_expansion")
    assert "A non-view table with given name [tt_for_view] already exists in schema [dfs.tmp]" in (
        error(conn, "CREATE VIEW dfs.tmp.tt_for_view AS SELECT 1 FROM (VALUES(1))")
    )


def test_unquoted_dotted_file_names(conn: Any) -> None:
    assert rows(conn, "SELECT COUNT(*) AS n FROM cp.region.json") == [(110,)]


def test_temporary_table_and_view_priority(conn: Any) -> None:
    """TestCTTAS testTemporaryTableAndViewPriority, with dfs.data as the second workspace."""
    rows(conn, "USE dfs.data")
    rows(
        conn,
        "CREATE TEMPORARY TABLE tt_and_view AS SELECT 'temporary_table' AS c1 FROM (VALUES(1))",
    )
    got = rows(conn, "CREATE VIEW tt_and_view AS SELECT 'view' AS c1 FROM (VALUES(1))")
    assert got == [(True, "View 'tt_and_view' created successfully in 'dfs.data' schema")]
    assert rows(conn, "SELECT * FROM dfs.tmp.tt_and_view") == [("temporary_table",)]
    assert rows(conn, "SELECT * FROM dfs.data.tt_and_view") == [("view",)]
    assert rows(conn, "DROP VIEW IF EXISTS dfs.tmp.tt_and_view") == [
        (False, "View [tt_and_view] not found in schema [dfs.tmp].")
    ]
    assert "VALIDATION ERROR: [tt_and_view] is not a VIEW in schema [dfs.tmp]" in error(
        conn, "DROP VIEW dfs.tmp.tt_and_view"
    )
    rows(conn, "DROP TABLE tt_and_view")
    assert rows(conn, "SELECT * FROM tt_and_view") == [("view",)]
    rows(conn, "DROP VIEW tt_and_view")
