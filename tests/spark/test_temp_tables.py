"""Temporary tables (CTTAS) through SQL, after Drill's TestCTTAS.

``dfs.tmp`` is the default temporary workspace of the shared test engine; ``dfs.data`` plays the
part of TestCTTAS's second writable workspace ``dfs.tmp2``.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Error


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.cursor().execute(sql).fetchall()]


def columns(conn: Any, sql: str) -> list[str]:
    return [d[0] for d in conn.cursor().execute(sql).description]


def error(conn: Any, sql: str) -> str:
    with pytest.raises(Error) as info:
        conn.cursor().execute(sql).fetchall()
    return str(info.value)


def mode(path: Path | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def session_location(conn: Any, tmp_workspace: Path) -> Path:
    return tmp_workspace / conn.session.id


SELECT_A = "select 'A' as c1 from (values(1))"


# ----------------------------------------------------------------------------- creation
def test_syntax_with_and_without_workspace(conn: Any) -> None:
    cur = conn.cursor().execute(
        "create TEMPORARY table temporary_keyword as select 1 from (values(1))"
    )
    assert [d[0] for d in cur.description] == ["Fragment", "Number of records written"]
    assert cur.fetchall() == [("0_0", 1)]
    assert rows(
        conn,
        "create TEMPORARY table dfs.tmp.temporary_keyword_with_wk as select 1 from (values(1))",
    ) == [("0_0", 1)]
    assert rows(conn, "select * from temporary_keyword") == [(1,)]
    assert rows(conn, "select * from dfs.tmp.temporary_keyword_with_wk") == [(1,)]


def test_example_total_amount_by_discount(conn: Any, data_dir: Path, tmp_workspace: Path) -> None:
    (data_dir / "amount.csv").write_text(
        '"1","Bob","200","false"\n"2","Kate","150","true"\n'
        '"3","Tim","20","false"\n"4","Roger","500","true"\n'
    )
    got = rows(
        conn,
        "create temporary table total_amount_by_discount as select cast(columns[3] as boolean) "
        "discount, sum(cast(columns[2] as double)) total_amount from dfs.data.`amount.csv` "
        "group by columns[3]",
    )
    assert got == [("0_0", 2)]
    assert sorted(rows(conn, "select * from total_amount_by_discount")) == [
        (False, 220.0),
        (True, 650.0),
    ]
    # stored under <workspace>/<session id>/<uuid>/0_0_0.parquet, masked name, 700/600
    location = session_location(conn, tmp_workspace)
    tables = [p for p in location.iterdir() if not p.name.startswith(".")]
    assert len(tables) == 1
    assert tables[0].name != "total_amount_by_discount"
    assert len(tables[0].name) == 36  # a UUID
    assert sorted(p.name for p in tables[0].iterdir()) == ["0_0_0.parquet"]
    import pyarrow.parquet as pq

    schema = pq.read_schema(tables[0] / "0_0_0.parquet")
    assert schema.names == ["discount", "total_amount"]
    assert str(schema.field("discount").type) == "bool"
    assert str(schema.field("total_amount").type) == "double"


@pytest.mark.parametrize("fmt", ["parquet", "json", "csvh"])
def test_storage_formats(conn: Any, fmt: str, tmp_workspace: Path) -> None:
    conn.cursor().execute(f"alter session set `store.format`='{fmt}'")
    assert rows(conn, f"create TEMPORARY table temp_{fmt} as {SELECT_A}") == [("0_0", 1)]
    assert columns(conn, f"select * from dfs.tmp.temp_{fmt}") == ["c1"]
    assert rows(conn, f"select * from dfs.tmp.temp_{fmt}") == [("A",)]
    files = [
        f
        for d in session_location(conn, tmp_workspace).iterdir()
        if d.is_dir()
        for f in os.listdir(d)
    ]
    assert files == [f"0_0_0.{fmt}"]


@pytest.mark.parametrize(("fmt", "delimiter"), [("csv", ","), ("tsv", "\t"), ("psv", "|")])
def test_text_formats_without_header(
    conn: Any, fmt: str, delimiter: str, tmp_workspace: Path
) -> None:
    conn.cursor().execute(f"alter session set `store.format`='{fmt}'")
    rows(conn, f"create temporary table temp_{fmt} as select 'A' as c1, 'B' as c2 from (values(1))")
    assert rows(conn, f"select columns[0], columns[1] from temp_{fmt}") == [("A", "B")]
    (table_dir,) = [d for d in session_location(conn, tmp_workspace).iterdir() if d.is_dir()]
    assert (table_dir / f"0_0_0.{fmt}").read_text() == f"A{delimiter}B\n"


def test_empty_result_is_allowed(conn: Any) -> None:
    assert rows(
        conn, "create temporary table empty_temp as select 1 as a from (values(1)) where 1 = 0"
    ) == [("0_0", 0)]
    assert rows(conn, "select * from empty_temp") == []


def test_names_are_case_insensitive(conn: Any) -> None:
    rows(conn, f"create TEMPORARY table tEmP_InSeNSiTiVe as {SELECT_A}")
    for name in ("tEmP_InSeNSiTiVe", "temp_insensitive", "TEMP_INSENSITIVE"):
        assert rows(conn, f"select * from dfs.tmp.{name}") == [("A",)]
        assert rows(conn, f"select * from {name}") == [("A",)]


def test_partial_schema_after_use(conn: Any) -> None:
    conn.cursor().execute("use dfs")
    rows(conn, f"create temporary table tmp.temporary_table_with_partial_schema as {SELECT_A}")
    assert rows(conn, "select * from tmp.temporary_table_with_partial_schema") == [("A",)]
    assert rows(conn, "select * from dfs.tmp.temporary_table_with_partial_schema") == [("A",)]


def test_created_in_default_workspace_regardless_of_use(
    conn: Any, data_dir: Path, tmp_workspace: Path
) -> None:
    conn.cursor().execute("use dfs.data")
    rows(conn, f"create temporary table lands_in_tmp as {SELECT_A}")
    assert not (data_dir / "lands_in_tmp").exists()
    assert not (data_dir / conn.session.id).exists()
    assert session_location(conn, tmp_workspace).is_dir()
    assert rows(conn, "select * from dfs.tmp.lands_in_tmp") == [("A",)]


def test_partition_by_with_permissions(conn: Any, tmp_workspace: Path) -> None:
    got = rows(
        conn,
        "create TEMPORARY table temporary_table_with_partitions partition by (c1) as select * "
        "from (select 'A' as c1 from (values(1)) union all select 'B' as c1 from (values(1))) t",
    )
    assert got == [("0_0", 2)]
    assert sorted(rows(conn, "select * from temporary_table_with_partitions")) == [("A",), ("B",)]
    location = session_location(conn, tmp_workspace)
    assert mode(location) == 0o700
    (table_dir,) = [d for d in location.iterdir() if d.is_dir()]
    assert mode(table_dir) == 0o700
    files = sorted(os.listdir(table_dir))
    assert files == ["0_0_0.parquet", "0_0_1.parquet"]  # one file per partition value
    assert all(mode(table_dir / f) == 0o600 for f in files)
    assert mode(location / ".auger-owner") == 0o600


def test_partition_by_needs_parquet(conn: Any) -> None:
    conn.cursor().execute("alter session set `store.format`='json'")
    msg = error(conn, f"create temporary table part_json partition by (c1) as {SELECT_A}")
    assert "Json format does not support auto-partitioning." in msg


def test_partition_column_must_be_selected(conn: Any) -> None:
    msg = error(conn, f"create temporary table part_missing partition by (c2) as {SELECT_A}")
    assert "VALIDATION ERROR: Partition column c2 is not in the SELECT list of CTAS!" in msg


def test_column_list_count_mismatch(conn: Any) -> None:
    msg = error(conn, "create temporary table counts (a, b) as select 1 from (values(1))")
    assert "Table's field list and the table's query field list have different counts." in msg


def test_column_list_renames(conn: Any) -> None:
    rows(
        conn,
        "create temporary table renamed (x, y) partition by (x) as select 1, 'b' from (values(1))",
    )
    assert columns(conn, "select * from renamed") == ["x", "y"]
    assert rows(conn, "select x, y from renamed") == [(1, "b")]


# ----------------------------------------------------------------------------- refusals
def test_outside_default_temporary_workspace(conn: Any, data_dir: Path) -> None:
    msg = error(
        conn,
        "create TEMPORARY table dfs.data.temporary_table_outside_of_default_workspace "
        f"as {SELECT_A}",
    )
    assert msg.startswith("VALIDATION ERROR: ")
    assert (
        "Temporary tables are not allowed to be created outside of default temporary "
        "workspace [dfs.tmp]." in msg
    )
    assert not (data_dir / "temporary_table_outside_of_default_workspace").exists()


def test_immutable_and_unknown_workspaces(conn: Any) -> None:
    msg = error(conn, f"create temporary table cp.t as {SELECT_A}")
    assert "Unable to create or drop tables/views. Schema [cp] is immutable." in msg
    msg = error(conn, f"create temporary table dfs.nowhere.t as {SELECT_A}")
    assert (
        "Schema [dfs.nowhere] is not valid with respect to either root schema or current "
        "default schema." in msg
    )


@pytest.mark.parametrize(
    ("first", "second", "echo"),
    [
        ("temporary_table_exists_without_schema", "temporary_table_exists_without_schema", None),
        (
            "temporary_table_exists_case_insensitive",
            "TEMPORARY_TABLE_EXISTS_CASE_INSENSITIVE",
            None,
        ),
        (
            "dfs.tmp.temporary_table_exists_with_schema",
            "dfs.tmp.temporary_table_exists_with_schema",
            "temporary_table_exists_with_schema",
        ),
        ("table_with_and_without_slash_create", "`/table_with_and_without_slash_create`", None),
    ],
)
def test_create_when_temporary_table_exists(
    conn: Any, first: str, second: str, echo: str | None
) -> None:
    rows(conn, f"create TEMPORARY table {first} as {SELECT_A}")
    msg = error(conn, f"create TEMPORARY table {second} as {SELECT_A}")
    name = echo or second.strip("`/")
    assert (
        f"VALIDATION ERROR: A table or view with given name [{name}] already exists in schema "
        "[dfs.tmp]." in msg
    )


def test_create_when_persistent_table_exists(conn: Any) -> None:
    rows(conn, f"create table dfs.tmp.persistent_table_exists as {SELECT_A}")
    msg = error(conn, f"create TEMPORARY table persistent_table_exists as {SELECT_A}")
    assert (
        "A table or view with given name [persistent_table_exists] already exists in schema "
        "[dfs.tmp]" in msg
    )


def test_create_when_view_exists(conn: Any, tmp_workspace: Path) -> None:
    view = {"name": "view_exists", "sql": SELECT_A, "fields": [], "workspaceSchemaPath": []}
    (tmp_workspace / "view_exists.view.drill").write_text(json.dumps(view))
    msg = error(conn, f"create TEMPORARY table view_exists as {SELECT_A}")
    assert "A table or view with given name [view_exists] already exists in schema [dfs.tmp]" in msg
    got = rows(conn, f"create TEMPORARY table if not exists view_exists as {SELECT_A}")
    assert got == [
        (False, "A table or view with given name [view_exists] already exists in schema [dfs.tmp]")
    ]


def test_create_persistent_when_temporary_exists(conn: Any, tmp_workspace: Path) -> None:
    rows(conn, f"create TEMPORARY table temporary_table_exists_before_persistent as {SELECT_A}")
    msg = error(
        conn, f"create table dfs.tmp.temporary_table_exists_before_persistent as {SELECT_A}"
    )
    assert (
        "A table or view with given name [temporary_table_exists_before_persistent] already "
        "exists in schema [dfs.tmp]" in msg
    )
    assert not (tmp_workspace / "temporary_table_exists_before_persistent").exists()


def test_if_not_exists(conn: Any) -> None:
    name = "createTemporaryTableIfNotExistsWhenATableWithSameNameAlreadyExists"
    rows(conn, f"CREATE TEMPORARY TABLE dfs.tmp.{name} AS SELECT * from cp.`region.json`")
    cur = conn.cursor().execute(
        f"CREATE TEMPORARY TABLE IF NOT EXISTS {name} AS SELECT * FROM cp.`employee.json`"
    )
    assert [d[0] for d in cur.description] == ["ok", "summary"]
    assert cur.fetchall() == [
        (False, f"A table or view with given name [{name}] already exists in schema [dfs.tmp]")
    ]
    assert rows(conn, f"DROP TABLE IF EXISTS dfs.tmp.{name}") == [
        (True, f"Temporary table [{name}] dropped")
    ]
    absent = "createTemporaryTableIfNotExistsWhenTableWithSameNameDoesNotExist"
    got = rows(conn, f"CREATE TEMPORARY TABLE IF NOT EXISTS dfs.tmp.{absent} AS {SELECT_A}")
    assert got == [("0_0", 1)]


# ----------------------------------------------------------------------------- selection
def test_join_of_temporary_tables(conn: Any) -> None:
    rows(conn, "create TEMPORARY table tl as select 'A' as c1, 'B' as c2 from (values(1))")
    rows(conn, "create TEMPORARY table tr as select 'A' as c1, 'C' as c2 from (values(1))")
    sql = "select t1.c2 col1, t2.c2 col2 from dfs.tmp.tl t1 join dfs.tmp.tr t2 on t1.c1 = t2.c1"
    assert columns(conn, sql) == ["col1", "col2"]
    assert rows(conn, sql) == [("B", "C")]


def test_join_temporary_with_persistent(conn: Any) -> None:
    conn.cursor().execute("use dfs.data")
    rows(conn, "create TEMPORARY table temp_tab as select '12312' as c2 from (values(1))")
    rows(conn, "create table pers_tab as select '12312' as c1 from (values(1))")
    sql = "select * from `pers_tab` a join dfs.tmp.`temp_tab` b on a.c1 = b.c2"
    assert columns(conn, sql) == ["c1", "c2"]
    assert rows(conn, sql) == [("12312", "12312")]


def test_temporary_table_in_subquery(conn: Any) -> None:
    rows(conn, "create temporary table source as (select 1 as id union all select 2 as id)")
    got = rows(
        conn,
        "select t1.id as id, (select count(t2.id) from dfs.tmp.source t2 where t2.id = t1.id) "
        "as c from dfs.tmp.source t1 order by id",
    )
    assert got == [(1, 1), (2, 1)]
    assert rows(conn, "select max(id) from (select id from source where id < 2) s") == [(1,)]


def test_leading_slash_is_ignored(conn: Any) -> None:
    rows(conn, "create temporary table select_from_slash as SELECT * FROM cp.`region.json`")
    for name in ("`select_from_slash`", "`/select_from_slash`"):
        sql = f"SELECT region_id FROM dfs.tmp.{name} ORDER BY region_id LIMIT 1"
        assert rows(conn, sql) == [(0,)]


def test_temporary_table_has_priority_over_persistent(conn: Any, data_dir: Path) -> None:
    conn.cursor().execute("use dfs.data")
    name = "temporary_and_persistent_table"
    rows(conn, f"create TEMPORARY table {name} as select 'temporary_table' as c1 from (values(1))")
    rows(conn, f"create table {name} as select 'persistent_table' as c1 from (values(1))")
    assert (data_dir / name).is_dir()
    assert rows(conn, f"select * from dfs.data.{name}") == [("persistent_table",)]
    assert rows(conn, f"select * from {name}") == [("temporary_table",)]
    assert rows(conn, f"select * from dfs.tmp.{name}") == [("temporary_table",)]
    assert rows(conn, f"drop table {name}") == [(True, f"Temporary table [{name}] dropped")]
    assert rows(conn, f"select * from {name}") == [("persistent_table",)]
    assert rows(conn, f"drop table {name}") == [(True, f"Table [{name}] dropped")]
    assert not (data_dir / name).exists()


def test_other_workspace_name_does_not_reach_temporary_table(conn: Any) -> None:
    rows(conn, f"create temporary table only_in_tmp as {SELECT_A}")
    msg = error(conn, "select * from dfs.data.only_in_tmp")
    assert msg.startswith("VALIDATION ERROR")


# ----------------------------------------------------------------------------- drop
def test_drop_without_and_with_schema(conn: Any) -> None:
    rows(conn, f"create TEMPORARY table temporary_table_to_drop_without_schema as {SELECT_A}")
    cur = conn.cursor().execute("drop table temporary_table_to_drop_without_schema")
    assert [d[0] for d in cur.description] == ["ok", "summary"]
    assert cur.fetchall() == [
        (True, "Temporary table [temporary_table_to_drop_without_schema] dropped")
    ]
    rows(conn, f"create TEMPORARY table dfs.tmp.temporary_table_to_drop_with_schema as {SELECT_A}")
    assert rows(conn, "drop table dfs.tmp.temporary_table_to_drop_with_schema") == [
        (True, "Temporary table [temporary_table_to_drop_with_schema] dropped")
    ]
    msg = error(conn, "select * from temporary_table_to_drop_with_schema")
    assert msg.startswith("VALIDATION ERROR")


def test_drop_name_starting_with_slash(conn: Any) -> None:
    rows(
        conn,
        "CREATE TEMPORARY TABLE `table_starts_with_slash_drop` AS SELECT 1 FROM cp.`employee.json`",
    )
    assert rows(conn, "DROP TABLE `/table_starts_with_slash_drop`") == [
        (True, "Temporary table [table_starts_with_slash_drop] dropped")
    ]


def test_drop_deletes_the_folder_and_recreate_many_times(conn: Any, tmp_workspace: Path) -> None:
    location = session_location(conn, tmp_workspace)
    for n in range(3):
        rows(conn, f"create temporary table again as select {n} as n from (values(1))")
        assert rows(conn, "select n from again") == [(n,)]
        assert len([d for d in location.iterdir() if d.is_dir()]) == 1
        assert rows(conn, "drop table again") == [(True, "Temporary table [again] dropped")]
        assert [d for d in location.iterdir() if d.is_dir()] == []


def test_drop_missing_temporary_table(conn: Any) -> None:
    assert rows(conn, "drop table if exists never_created") == [
        (False, "Table [never_created] not found")
    ]
    assert "VALIDATION ERROR: Table [never_created] is not found." in error(
        conn, "drop table never_created"
    )
    conn.cursor().execute("use dfs.root")  # read-only: still the temporary table's words
    assert rows(conn, "drop table if exists never_created") == [
        (False, "Table [never_created] not found")
    ]
    assert "VALIDATION ERROR: Table [never_created] is not found." in error(
        conn, "drop table never_created"
    )
    assert "immutable" in error(conn, "drop table dfs.root.never_created")
    conn.cursor().execute("use dfs.tmp")
    assert rows(conn, "drop table if exists never_created") == [
        (False, "Table [never_created] not found")
    ]
    assert "VALIDATION ERROR: Table [never_created] is not found." in error(
        conn, "drop table never_created"
    )


def test_drop_temporary_keyword_is_a_syntax_error(conn: Any) -> None:
    rows(conn, f"create temporary table kw as {SELECT_A}")
    assert error(conn, "drop temporary table kw").startswith("PARSE ERROR")
    assert rows(conn, "select * from kw") == [("A",)]


# ----------------------------------------------------------------------------- sessions
def test_not_visible_from_another_session(make_conn: Any, tmp_workspace: Path) -> None:
    a, b = make_conn(), make_conn()
    rows(a, f"create temporary table private_tab as {SELECT_A}")
    assert error(b, "select * from private_tab").startswith("VALIDATION ERROR")
    assert error(b, "select * from dfs.tmp.private_tab").startswith("VALIDATION ERROR")
    assert b.session.catalog().is_temporary_table(["private_tab"]) is False
    assert a.session.catalog().is_temporary_table(["dfs", "tmp", "PRIVATE_TAB"]) is True
    # Beyond Drill: the generated path is refused to every other session.
    generated = a.session.temporary.get("private_tab").generated
    msg = error(b, f"select * from dfs.tmp.`{generated}`")
    assert msg.startswith("PERMISSION ERROR")
    msg = error(b, f"select * from dfs.tmp.`{a.session.id}`")
    assert msg.startswith("PERMISSION ERROR")
    msg = error(b, f"select * from dfs.`{tmp_workspace}/{generated}/0_0_0.parquet`")
    assert msg.startswith("PERMISSION ERROR")
    assert error(b, f"drop table dfs.tmp.`{generated}`").startswith("PERMISSION ERROR")
    # ... while its own session may still read it by path.
    assert rows(a, f"select * from dfs.tmp.`{generated}`") == [("A",)]


def test_same_name_in_two_sessions_is_independent(make_conn: Any) -> None:
    a, b = make_conn("alice"), make_conn("bob")
    rows(a, "create temporary table shared_name as select 'alice' as who from (values(1))")
    rows(b, "create temporary table shared_name as select 'bob' as who from (values(1))")
    assert rows(a, "select who from shared_name") == [("alice",)]
    assert rows(b, "select who from shared_name") == [("bob",)]
    rows(a, "drop table shared_name")
    assert rows(b, "select who from shared_name") == [("bob",)]
    assert a.session.temporary.owner == b.session.temporary.owner


def test_users_cannot_read_each_others_tables(make_conn: Any, tmp_workspace: Path) -> None:
    alice, bob = make_conn("alice"), make_conn("bob")
    rows(alice, "create temporary table secret as select 'alice data' as v from (values(1))")
    marker = json.loads((session_location(alice, tmp_workspace) / ".auger-owner").read_text())
    assert marker["user"] == "alice" and marker["session"] == alice.session.id
    assert marker["pid"] == os.getpid()
    generated = alice.session.temporary.get("secret").generated
    assert error(bob, "select * from secret").startswith("VALIDATION ERROR")
    assert error(bob, f"select * from dfs.tmp.`{generated}`").startswith("PERMISSION ERROR")
    assert error(bob, "select * from dfs.tmp").startswith("PERMISSION ERROR")


def test_log_lines(conn: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        rows(conn, f"create temporary table my_temp as {SELECT_A}")
        rows(conn, "drop table my_temp")
    text = caplog.text
    assert "Temporary table [my_temp] is being created." in text
    assert "Temporary table [my_temp] is being dropped." in text


def test_views_cannot_use_temporary_tables(conn: Any) -> None:
    rows(conn, f"create temporary table temporary_table_for_view_definition as {SELECT_A}")
    msg = error(
        conn,
        "create view dfs.tmp.view_with_temp_table as select * from "
        "dfs.tmp.temporary_table_for_view_definition",
    )
    assert (
        "Temporary tables usage is disallowed. Used temporary table name: "
        "[temporary_table_for_view_definition]." in msg
    )


def _generated_names(session: Any) -> dict[str, str]:
    """Lower-cased temporary table name → generated name ``<session id>/<uuid>``."""
    return {key: t.generated for key, t in session.temporary.tables.items()}


def test_session_map_of_generated_names(conn: Any, tmp_workspace: Path) -> None:
    session = conn.session
    assert _generated_names(session) == {} and session.temporary.locations == []
    rows(conn, f"create temporary table Mapped_Name as {SELECT_A}")
    found = session.temporary.get("MAPPED_NAME")
    assert found is not None
    generated = found.generated
    sid, table_id = generated.split("/")
    assert sid == session.id and len(table_id) == 36
    assert _generated_names(session) == {"mapped_name": generated}
    assert set(session.temporary.locations) == {str(tmp_workspace / session.id)}
    assert (tmp_workspace / generated).is_dir()
    rows(conn, "drop table mapped_name")
    assert _generated_names(session) == {}
    assert session.temporary.get("mapped_name") is None


def test_temporary_table_and_view_priority(conn: Any) -> None:
    conn.cursor().execute("use dfs.data")
    name = "temporary_table_and_view"
    rows(conn, f"create TEMPORARY table {name} as select 'temporary_table' as c1 from (values(1))")
    rows(conn, f"create view {name} as select 'view' as c1 from (values(1))")
    assert rows(conn, f"select * from dfs.tmp.{name}") == [("temporary_table",)]
    assert rows(conn, f"select * from dfs.data.{name}") == [("view",)]
    assert rows(conn, f"select * from {name}") == [("temporary_table",)]
    assert rows(conn, f"drop table {name}") == [(True, f"Temporary table [{name}] dropped")]
    assert rows(conn, f"select * from {name}") == [("view",)]


def test_view_expansion_refuses_a_temporary_table_of_the_same_name(conn: Any) -> None:
    conn.cursor().execute("use dfs.data")
    rows(conn, "create table table_for_expansion as select 'TABLE' as c1 from (values(1))")
    rows(conn, "create view view_for_expansion as select * from table_for_expansion")
    assert rows(conn, "select * from view_for_expansion") == [("TABLE",)]
    rows(conn, "drop table table_for_expansion")
    rows(conn, "create temporary table table_for_expansion as select 'TEMP' as c1 from (values(1))")
    msg = error(conn, "select * from view_for_expansion")
    assert (
        "Temporary tables usage is disallowed. Used temporary table name: [table_for_expansion]."
        in msg
    )
