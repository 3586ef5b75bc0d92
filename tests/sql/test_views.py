"""CREATE/DROP VIEW with Drill's messages (TestViewSupport, TestCTTAS view cases), and expansion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .helpers import error, names, rows


def test_create_select_replace_drop(conn: Any, tmp_workspace: Path) -> None:
    sql = (
        "CREATE VIEW dfs.tmp.v_emp AS SELECT CAST(employee_id AS INTEGER) employeeid, "
        "full_name FROM cp.`employee.json` WHERE employee_id < 3"
    )
    assert rows(conn, sql) == [(True, "View 'v_emp' created successfully in 'dfs.tmp' schema")]
    stored = json.loads((tmp_workspace / "v_emp.view.drill").read_text())
    assert stored["name"] == "v_emp"
    assert stored["workspaceSchemaPath"] == []
    assert stored["fields"][0] == {"name": "employeeid", "type": "INTEGER", "isNullable": True}
    assert "`cp`.`employee.json`" in stored["sql"]
    assert rows(conn, "SELECT * FROM dfs.tmp.v_emp ORDER BY employeeid") == [
        (1, "Sheri Nowmer"),
        (2, "Derrick Whelply"),
    ]
    assert error(conn, sql).startswith(
        "VALIDATION ERROR: A view with given name [v_emp] already exists in schema [dfs.tmp]"
    )
    got = rows(conn, "CREATE OR REPLACE VIEW dfs.tmp.v_emp AS SELECT 1 AS one FROM (VALUES(1))")
    assert got == [(True, "View 'v_emp' replaced successfully in 'dfs.tmp' schema")]
    assert rows(conn, "SELECT one FROM dfs.tmp.v_emp") == [(1,)]
    assert rows(conn, "DROP VIEW dfs.tmp.v_emp") == [
        (True, "View [v_emp] deleted successfully from schema [dfs.tmp].")
    ]
    assert not (tmp_workspace / "v_emp.view.drill").exists()


def test_view_column_list_and_use(conn: Any) -> None:
    rows(conn, "USE dfs.tmp")
    got = rows(
        conn,
        "CREATE VIEW v_cols (regionid1, regionid2) AS "
        "SELECT region_id, region_id FROM cp.`region.json` WHERE region_id = 1",
    )
    assert got == [(True, "View 'v_cols' created successfully in 'dfs.tmp' schema")]
    assert names(conn, "SELECT * FROM v_cols") == ["regionid1", "regionid2"]
    assert rows(conn, "SELECT regionid2 FROM v_cols") == [(1,)]
    msg = error(
        conn,
        "CREATE VIEW v_bad (regionid, salescity) AS "
        "SELECT region_id, sales_city, sales_region FROM cp.`region.json`",
    )
    assert "view's field list and the view's query field list have different counts." in msg
    assert rows(conn, "DROP VIEW v_cols")[0][0] is True


def test_view_resolves_names_in_its_own_schema(make_conn: Any, data_dir: Path) -> None:
    (data_dir / "vs.csv").write_text("a,b\nc,d\n")
    a = make_conn()
    rows(a, "USE dfs.data")
    rows(a, "CREATE VIEW v_rel AS SELECT columns[1] AS second FROM `vs.csv`")
    stored = json.loads((data_dir / "v_rel.view.drill").read_text())
    assert stored["workspaceSchemaPath"] == ["dfs", "data"]
    b = make_conn()  # another session with no default schema
    assert rows(b, "SELECT second FROM dfs.data.v_rel ORDER BY second") == [("b",), ("d",)]
    # the view file itself is not read as data when the directory is scanned
    rows(a, "DROP VIEW v_rel")


def test_view_file_is_not_data(conn: Any, data_dir: Path) -> None:
    d = data_dir / "withview"
    d.mkdir()
    (d / "x.json").write_text('{"a": 1}\n')
    (d / "v.view.drill").write_text('{"name": "v", "sql": "SELECT 1", "fields": []}')
    assert rows(conn, "SELECT a FROM dfs.data.`withview`") == [(1,)]


def test_messages(conn: Any, data_dir: Path) -> None:
    assert (
        "Create view statement cannot have both <OR REPLACE> and <IF NOT EXISTS> clause"
        in error(
            conn, "CREATE OR REPLACE VIEW IF NOT EXISTS dfs.tmp.x AS SELECT 1 FROM (VALUES(1))"
        )
    )
    assert "Unable to create or drop objects. Schema [cp] is immutable." in error(
        conn, "CREATE VIEW cp.v AS SELECT 1 FROM (VALUES(1))"
    )
    assert "Unable to create or drop objects. Schema [cp] is immutable." in error(
        conn, "DROP VIEW cp.v"
    )
    assert "Root schema is immutable." in error(conn, "CREATE VIEW v AS SELECT 1 FROM (VALUES(1))")
    assert rows(conn, "DROP VIEW IF EXISTS dfs.tmp.nope") == [
        (False, "View [nope] not found in schema [dfs.tmp].")
    ]
    assert "VALIDATION ERROR: Unknown view [nope] in schema [dfs.tmp]." in error(
        conn, "DROP VIEW dfs.tmp.nope"
    )
    (data_dir / "tbl.json").write_text('{"a": 1}\n')
    assert "[tbl.json] is not a VIEW in schema [dfs.data]" in error(
        conn, "DROP VIEW dfs.data.`tbl.json`"
    )
    assert "A non-view table with given name [tbl.json] already exists in schema [dfs.data]" in (
        error(conn, "CREATE VIEW dfs.data.`tbl.json` AS SELECT 1 FROM (VALUES(1))")
    )
    got = rows(conn, "CREATE VIEW IF NOT EXISTS dfs.data.`tbl.json` AS SELECT 1 FROM (VALUES(1))")
    assert got == [
        (False, "A table or view with given name [tbl.json] already exists in schema [dfs.data]")
    ]


def test_view_over_view_and_describe(conn: Any) -> None:
    rows(
        conn,
        "CREATE VIEW dfs.tmp.v_base AS SELECT CAST(customer_id AS BIGINT) AS cust_id, "
        "CAST(first_name AS VARCHAR(25)) AS fname FROM cp.`employee.json` LIMIT 1",
    )
    rows(conn, "CREATE VIEW dfs.tmp.v_top AS SELECT fname FROM dfs.tmp.v_base")
    assert rows(conn, "SELECT * FROM dfs.tmp.v_top") == [("Sheri",)]
    assert rows(conn, "DESCRIBE dfs.tmp.v_base") == [
        ("cust_id", "BIGINT", "YES"),
        ("fname", "CHARACTER VARYING", "YES"),
    ]
    rows(conn, "DROP VIEW dfs.tmp.v_top")
    rows(conn, "DROP VIEW dfs.tmp.v_base")


def test_duplicate_column_names(conn: Any) -> None:
    msg = error(
        conn, "CREATE VIEW dfs.tmp.v_dup AS SELECT region_id, region_id FROM cp.`region.json`"
    )
    assert "VALIDATION ERROR: Duplicate column name [region_id]" in msg
    msg = error(
        conn,
        "CREATE VIEW dfs.tmp.v_dup (a, A) AS SELECT region_id, sales_city FROM cp.`region.json`",
    )
    assert "Duplicate column name [A]" in msg
