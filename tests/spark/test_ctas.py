"""Persistent tables: CREATE TABLE AS (formats, permissions, atomic writes, checks) and DROP TABLE.

Cases follow Drill's TestCTAS, TestDropTable and StorageStrategyTest; ``dfs.data`` is a writable
workspace of its own for each test's tables (names are unique per test).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Error
from auger.storage.table_files import DEFAULT_UMASK, PERSISTENT, TEMPORARY, StorageStrategy


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


def listing(root: Path) -> list[str]:
    """Every entry below ``root`` (hidden ones included), relative, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


@pytest.fixture
def data(conn: Any) -> Any:
    conn.cursor().execute("use dfs.data")
    return conn


# ----------------------------------------------------------------------------- formats
@pytest.mark.parametrize(
    ("fmt", "content"),
    [
        ("csv", "1,Sheri Nowmer\n2,Derrick Whelply\n"),
        ("tsv", "1\tSheri Nowmer\n2\tDerrick Whelply\n"),
        ("psv", "1|Sheri Nowmer\n2|Derrick Whelply\n"),
        ("csvh", "employee_id,full_name\n1,Sheri Nowmer\n2,Derrick Whelply\n"),
    ],
)
def test_text_formats(data: Any, data_dir: Path, fmt: str, content: str) -> None:
    data.cursor().execute(f"alter session set `store.format` = '{fmt}'")
    got = rows(
        data,
        f"create table ctas_{fmt} as select employee_id, full_name from cp.`employee.json` "
        "order by employee_id limit 2",
    )
    assert got == [("0_0", 2)]
    assert listing(data_dir / f"ctas_{fmt}") == [f"0_0_0.{fmt}"]  # no _SUCCESS, no .crc
    assert (data_dir / f"ctas_{fmt}" / f"0_0_0.{fmt}").read_text() == content


def test_json_and_parquet_read_back(data: Any, data_dir: Path) -> None:
    for fmt in ("json", "parquet"):
        data.cursor().execute(f"alter session set `store.format` = '{fmt}'")
        sql = (
            f"create table ctas_rb_{fmt} as select region_id, sales_city from cp.`region.json` "
            "where region_id < 3"
        )
        assert rows(data, sql) == [("0_0", 3)]
        assert listing(data_dir / f"ctas_rb_{fmt}") == [f"0_0_0.{fmt}"]
        got = rows(data, f"select region_id, sales_city from ctas_rb_{fmt} order by region_id")
        source = rows(
            data,
            "select region_id, sales_city from cp.`region.json` where region_id < 3 "
            "order by region_id",
        )
        assert got == source and len(got) == 3


def test_constants_and_casts_keep_their_types(data: Any, data_dir: Path) -> None:
    import pyarrow.parquet as pq

    rows(
        data,
        "create table typed as select cast(1 as bigint) as b, cast(2.5 as double) as d, "
        "'s' as s, true as f from (values(1))",
    )
    schema = pq.read_schema(data_dir / "typed" / "0_0_0.parquet")
    assert [(f.name, str(f.type)) for f in schema] == [
        ("b", "int64"),
        ("d", "double"),
        ("s", "string"),
        ("f", "bool"),
    ]


def test_order_is_preserved(data: Any) -> None:
    rows(
        data,
        "create table ordered_emp as select employee_id from cp.`employee.json` "
        "order by employee_id desc",
    )
    got = [r[0] for r in rows(data, "select employee_id from ordered_emp")]
    assert got == sorted(got, reverse=True) and len(got) > 100


def test_empty_result_creates_a_table(data: Any) -> None:
    sql = "create table empty_ctas as select 1 as a from (values(1)) where 1 = 0"
    assert rows(data, sql) == [("0_0", 0)]
    assert rows(data, "select * from empty_ctas") == []


def test_name_with_leading_slash(conn: Any, tmp_workspace: Path) -> None:
    rows(conn, "create table `dfs.tmp`.`/slash_ctas` as select 1 as a from (values(1))")
    assert (tmp_workspace / "slash_ctas").is_dir()
    assert rows(conn, "select a from `dfs.tmp`.`slash_ctas`") == [(1,)]
    msg = error(conn, "create table dfs.tmp.slash_ctas as select 1 as a from (values(1))")
    assert "A table or view with given name [slash_ctas] already exists in schema [dfs.tmp]" in msg


# ----------------------------------------------------------------------------- permissions
def test_default_permissions(data: Any, data_dir: Path) -> None:
    rows(data, "create table perm_default as select 1 as a from (values(1))")
    assert mode(data_dir / "perm_default") == 0o775
    assert mode(data_dir / "perm_default" / "0_0_0.parquet") == 0o664


@pytest.mark.parametrize(
    ("umask", "folder", "file"),
    [("000", 0o777, 0o666), ("022", 0o755, 0o644), ("ABC", 0o775, 0o664), ("999", 0o775, 0o664)],
)
def test_custom_umask(data: Any, data_dir: Path, umask: str, folder: int, file: int) -> None:
    data.cursor().execute(f"alter session set `exec.persistent_table.umask` = '{umask}'")
    name = f"perm_{umask.lower()}"
    rows(data, f"create table {name} partition by (a) as select 1 as a from (values(1))")
    assert mode(data_dir / name) == folder
    assert mode(data_dir / name / "0_0_0.parquet") == file


def test_nested_name_creates_parents_with_permissions(data: Any, data_dir: Path) -> None:
    rows(data, "create table `nest_a/nest_b/t` as select 1 as a from (values(1))")
    assert mode(data_dir / "nest_a") == 0o775
    assert mode(data_dir / "nest_a" / "nest_b") == 0o775
    assert rows(data, "select a from `nest_a/nest_b/t`") == [(1,)]


def test_storage_strategies() -> None:
    assert (PERSISTENT.folder_mode, PERSISTENT.file_mode) == (0o775, 0o664)
    assert (TEMPORARY.folder_mode, TEMPORARY.file_mode) == (0o700, 0o600)
    for bad in ("ABC", "999", None, ""):
        strategy = StorageStrategy(bad, True)  # type: ignore[arg-type]
        assert strategy.umask == DEFAULT_UMASK
        assert strategy.delete_on_exit is True


def test_create_path_returns_first_created_folder(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    os.chmod(base, 0o777)
    made = TEMPORARY.create_path(str(base / "level1" / "level2"))
    assert made == str(base / "level1")
    assert mode(base) == 0o777
    assert mode(base / "level1") == 0o700 and mode(base / "level1" / "level2") == 0o700
    assert TEMPORARY.create_path(str(base)) is None
    assert mode(base) == 0o777


# ----------------------------------------------------------------------------- atomicity
def test_failed_write_leaves_nothing_behind(data: Any, data_dir: Path) -> None:
    before = set(os.listdir(data_dir))
    msg = error(
        data,
        "create table failing_ctas as select cast(full_name as int) as n from cp.`employee.json`",
    )
    assert "ERROR" in msg
    assert set(os.listdir(data_dir)) == before  # no table, no hidden staging folder


def test_immutable_schema(conn: Any) -> None:
    msg = error(conn, "create table cp.`x` as select 1 from (values(1))")
    assert "VALIDATION ERROR: Unable to create or drop objects. Schema [cp] is immutable." in msg
    msg = error(conn, "create table dfs.root.`x` as select 1 from (values(1))")
    assert "Unable to create or drop objects. Schema [dfs.root] is immutable." in msg


def test_root_schema_is_immutable(conn: Any) -> None:
    msg = error(conn, "create table no_schema as select 1 from (values(1))")
    assert (
        "Root schema is immutable. Drill does not allow creating or deleting tables or views in "
        "the root schema. Select a schema using 'USE schema' command." in msg
    )


# ----------------------------------------------------------------------------- checks
@pytest.mark.parametrize(
    ("sql", "needle"),
    [
        (
            "CREATE TABLE dfs.data.dup1 AS SELECT region_id, region_id FROM cp.`region.json`",
            "Duplicate column name [region_id]",
        ),
        (
            "CREATE TABLE dfs.data.dup2 AS SELECT region_id, sales_city, sales_city "
            "FROM cp.`region.json`",
            "Duplicate column name [sales_city]",
        ),
        (
            "CREATE TABLE dfs.data.dup3 (regionid, regionid) AS SELECT region_id, sales_city "
            "FROM cp.`region.json`",
            "Duplicate column name [regionid]",
        ),
        (
            "CREATE TABLE dfs.data.dup4 (regionid, salescity, SalesCity) AS SELECT region_id, "
            "sales_city, sales_region FROM cp.`region.json`",
            "Duplicate column name [SalesCity]",
        ),
        (
            "CREATE TABLE dfs.data.cnt (regionid, salescity) AS SELECT region_id, sales_city, "
            "sales_region FROM cp.`region.json`",
            "table's field list and the table's query field list have different counts.",
        ),
        (
            "CREATE TABLE dfs.data.star (regionid, salescity) AS SELECT region_id, * "
            "FROM cp.`region.json`",
            "table's query field list has a '*', which is invalid when table's field list is "
            "specified.",
        ),
        (
            "CREATE TABLE dfs.data.pcol PARTITION BY (nope) AS SELECT region_id "
            "FROM cp.`region.json`",
            "Partition column nope is not in the SELECT list of CTAS!",
        ),
    ],
)
def test_validation_errors(conn: Any, data_dir: Path, sql: str, needle: str) -> None:
    msg = error(conn, sql)
    assert msg.startswith("VALIDATION ERROR: ")
    assert needle in msg
    assert not any(n.startswith(("dup", "cnt", "star", "pcol")) for n in os.listdir(data_dir))


def test_partition_by_without_columns_is_a_parse_error(conn: Any) -> None:
    msg = error(conn, "CREATE TABLE dfs.data.x PARTITION BY AS SELECT 1 FROM (values(1))")
    assert msg.startswith('PARSE ERROR: Encountered "AS"')


def test_partition_by_only_for_parquet(data: Any, data_dir: Path) -> None:
    data.cursor().execute("alter session set `store.format` = 'json'")
    msg = error(data, "create table pjson partition by (a) as select 1 as a from (values(1))")
    assert "Json format does not support auto-partitioning." in msg
    assert not (data_dir / "pjson").exists()


def test_partition_by_with_column_list(data: Any, data_dir: Path) -> None:
    got = rows(
        data,
        "CREATE TABLE partitionByCtasColList (cnt, rkey) PARTITION BY (cnt) AS "
        "SELECT count(*), n_regionkey from cp.`tpch/nation.parquet` group by n_regionkey",
    )
    assert got == [("0_0", 5)]
    assert columns(data, "select * from partitionByCtasColList") == ["cnt", "rkey"]
    assert sorted(rows(data, "select cnt, rkey from partitionByCtasColList")) == [
        (5, k) for k in range(5)
    ]
    # all five groups have count 5: a single partition value, so a single file
    assert listing(data_dir / "partitionByCtasColList") == ["0_0_0.parquet"]


def test_partition_files_hold_one_value_each(data: Any, data_dir: Path) -> None:
    import pyarrow.parquet as pq

    rows(
        data,
        "create table by_region partition by (n_regionkey) as select n_nationkey, n_regionkey "
        "from cp.`tpch/nation.parquet`",
    )
    files = listing(data_dir / "by_region")
    assert files == [f"0_0_{i}.parquet" for i in range(5)]
    seen = set()
    for f in files:
        values = set(pq.read_table(data_dir / "by_region" / f).column("n_regionkey").to_pylist())
        assert len(values) == 1
        seen |= values
    assert seen == {0, 1, 2, 3, 4}
    assert len(rows(data, "select n_nationkey from by_region")) == 25


def test_if_not_exists(data: Any) -> None:
    sql = "create table if not exists ine as select 1 as a from (values(1))"
    assert rows(data, sql) == [("0_0", 1)]
    assert rows(data, sql) == [
        (False, "A table or view with given name [ine] already exists in schema [dfs.data]")
    ]
    msg = error(data, "create table ine as select 1 as a from (values(1))")
    assert "A table or view with given name [ine] already exists in schema [dfs.data]" in msg


# ----------------------------------------------------------------------------- drop table
@pytest.mark.parametrize("fmt", ["parquet", "json", "csv", "psv", "tsv"])
def test_drop_tables_of_each_format(data: Any, data_dir: Path, fmt: str) -> None:
    data.cursor().execute(f"alter session set `store.format` = '{fmt}'")
    rows(data, f"create table `drop_{fmt}` as select 1 from cp.`employee.json`")
    assert rows(data, f"drop table drop_{fmt}") == [(True, f"Table [drop_{fmt}] dropped")]
    assert not (data_dir / f"drop_{fmt}").exists()
    assert not [n for n in os.listdir(data_dir) if f"drop_{fmt}" in n]


def test_non_homogeneous_drop(data: Any, data_dir: Path) -> None:
    rows(data, "create table homogenous_table as select 1 as a from cp.`employee.json`")
    data.cursor().execute("alter session set `store.format` = 'json'")
    rows(data, "create table `homogenous_table/json_table` as select 1 as a from (values(1))")
    msg = error(data, "drop table homogenous_table")
    assert msg.startswith("VALIDATION ERROR: Table contains different file formats.")
    assert (data_dir / "homogenous_table" / "json_table").is_dir()
    assert rows(data, "drop table `homogenous_table/json_table`") == [
        (True, "Table [homogenous_table/json_table] dropped")
    ]
    assert rows(data, "drop table homogenous_table") == [(True, "Table [homogenous_table] dropped")]


def test_drop_refuses_unreadable_content(data: Any, data_dir: Path) -> None:
    (data_dir / "not_a_table").mkdir()
    (data_dir / "not_a_table" / "notes.txt").write_text("hello")
    assert rows(data, "drop table if exists not_a_table") == [
        (False, "Table [not_a_table] not found")
    ]
    assert (data_dir / "not_a_table" / "notes.txt").exists()


def test_drop_on_immutable_schema(conn: Any) -> None:
    msg = error(conn, "drop table dfs.`tmp`")
    assert msg.startswith("VALIDATION ERROR")
    assert "Unable to create or drop objects. Schema [dfs] is immutable." in msg
    assert "Schema [cp] is immutable." in error(conn, "drop table cp.`employee.json`")


def test_drop_if_exists(data: Any, data_dir: Path) -> None:
    rows(data, "create table drop_ie as select 1 as a from (values(1))")
    assert rows(data, "drop table if exists drop_ie") == [(True, "Table [drop_ie] dropped")]
    assert rows(data, "drop table if exists test_table_not_exists") == [
        (False, "Table [test_table_not_exists] not found")
    ]
    msg = error(data, "drop table dfs.data.test_table_not_exists")
    assert msg.startswith("VALIDATION ERROR: Table [test_table_not_exists] not found")
    (data_dir / "test_view.view.drill").write_text("{}")
    assert rows(data, "drop table if exists test_view") == [(False, "Table [test_view] not found")]
    assert (data_dir / "test_view.view.drill").exists()


def test_drop_name_with_leading_slash(data: Any) -> None:
    rows(data, "create table slash_drop as select 1 as a from (values(1))")
    assert rows(data, "drop table `/slash_drop`") == [(True, "Table [slash_drop] dropped")]


def test_complex_columns_are_json_text_in_text_formats(data: Any, data_dir: Path) -> None:
    (data_dir / "pairs.csv").write_text("a,b\n")
    data.cursor().execute("alter session set `store.format` = 'csv'")
    assert rows(data, "create table pairs_out as select columns from `pairs.csv`") == [("0_0", 1)]
    assert (data_dir / "pairs_out" / "0_0_0.csv").read_text() == '"[""a"",""b""]"\n'
    assert rows(data, "select columns[0] from pairs_out") == [('["a","b"]',)]


def test_writer_never_replaces_an_existing_target(spark: Any, tmp_path: Path) -> None:
    from auger.config import DEFAULT_FORMATS, FormatConfig
    from auger.spark.writer import write_table
    from auger.storage.table_files import writer_format

    formats = {
        n: FormatConfig(n, f["type"], tuple(f["extensions"])) for n, f in DEFAULT_FORMATS.items()
    }
    fmt = writer_format("parquet", formats)
    target = tmp_path / "taken"
    target.mkdir()
    with pytest.raises(FileExistsError):
        write_table(spark.sql("select 1 as a"), str(target), fmt, PERSISTENT)
    assert os.listdir(tmp_path) == ["taken"] and os.listdir(target) == []


def test_interrupted_write_leaves_nothing(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auger.config import DEFAULT_FORMATS, FormatConfig
    from auger.spark import writer
    from auger.storage.table_files import writer_format

    formats = {
        n: FormatConfig(n, f["type"], tuple(f["extensions"])) for n, f in DEFAULT_FORMATS.items()
    }

    def interrupted(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(writer, "_tidy", interrupted)
    with pytest.raises(KeyboardInterrupt):
        writer.write_table(
            spark.sql("select 1 as a"),
            str(tmp_path / "t"),
            writer_format("json", formats),
            PERSISTENT,
        )
    assert os.listdir(tmp_path) == []
