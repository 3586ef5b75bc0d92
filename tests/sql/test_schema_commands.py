"""CREATE/DROP/DESCRIBE SCHEMA FOR TABLE and the planner's use of the provided schema."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from .helpers import error, rows


def _table(data_dir: Path, name: str) -> Path:
    d = data_dir / name
    d.mkdir()
    (d / "1.csvh").write_text("id,name,start_date\n1,Fred,2019-02-01\n2,Wilma,2018-11-30\n")
    return d


def test_create_describe_use_drop(conn: Any, data_dir: Path) -> None:
    d = _table(data_dir, "sch1")
    got = rows(
        conn,
        "CREATE SCHEMA (id INT, start_date DATE FORMAT 'yyyy-MM-dd') "
        "FOR TABLE dfs.data.`sch1` PROPERTIES ('drill.strict' = 'true')",
    )
    assert got == [(True, "Created schema for [dfs.data.sch1]")]
    raw = json.loads((d / ".drill.schema").read_text())
    assert raw["table"] == "dfs.data.`sch1`"
    assert raw["schema"]["columns"][1]["properties"] == {"drill.format": "yyyy-MM-dd"}
    assert "Schema already exists for [dfs.data.sch1]" in error(
        conn, "CREATE SCHEMA (id INT) FOR TABLE dfs.data.`sch1`"
    )
    cur = conn.cursor().execute("SELECT * FROM dfs.data.`sch1` ORDER BY id")
    assert [c[0] for c in cur.description] == ["id", "start_date"]

    assert cur.fetchall() == [(1, dt.date(2019, 2, 1)), (2, dt.date(2018, 11, 30))]
    (described,) = rows(conn, "DESCRIBE SCHEMA FOR TABLE dfs.data.`sch1`")[0]
    assert json.loads(described) == raw
    (stmt,) = rows(conn, "DESC SCHEMA FOR TABLE dfs.data.`sch1` AS STATEMENT")[0]
    assert stmt.startswith("CREATE OR REPLACE SCHEMA \n(\n`id` INT, \n")

    rows(conn, "CREATE OR REPLACE SCHEMA (id INT) FOR TABLE dfs.data.`sch1`")
    got = rows(conn, "SELECT * FROM dfs.data.`sch1` ORDER BY id")
    assert got == [(1, "Fred", "2019-02-01"), (2, "Wilma", "2018-11-30")]
    rows(conn, "ALTER SESSION SET `store.table.use_schema_file` = false")
    assert rows(conn, "SELECT id FROM dfs.data.`sch1` ORDER BY id") == [("1",), ("2",)]
    rows(conn, "ALTER SESSION RESET `store.table.use_schema_file`")

    assert rows(conn, "DROP SCHEMA FOR TABLE dfs.data.`sch1`") == [
        (True, "Dropped schema for table [dfs.data.sch1]")
    ]
    msg = "Schema [.drill.schema] does not exist in table [dfs.data.sch1] root directory"
    assert rows(conn, "DROP SCHEMA IF EXISTS FOR TABLE dfs.data.`sch1`") == [(False, msg)]
    assert f"VALIDATION ERROR: {msg}" in error(conn, "DROP SCHEMA FOR TABLE dfs.data.`sch1`")
    assert rows(conn, "DESCRIBE SCHEMA FOR TABLE dfs.data.`sch1`") == [
        (False, "Schema for table [dfs.data.sch1] is absent")
    ]


def test_schema_errors(conn: Any, data_dir: Path, tmp_path: Path) -> None:
    assert "VALIDATION ERROR: Table [tbl] was not found" in error(
        conn, "CREATE SCHEMA (i INT) FOR TABLE dfs.data.tbl"
    )
    (data_dir / "afile.json").write_text("{}\n")
    assert "RESOURCE ERROR: Indicated table [dfs.data.afile.json] must be a directory" in error(
        conn, "CREATE SCHEMA (i INT) FOR TABLE dfs.data.`afile.json`"
    )
    assert "Unable to create or drop objects. Schema [sys] is immutable" in error(
        conn, "CREATE SCHEMA (i INT) FOR TABLE sys.version"
    )
    assert "RESOURCE ERROR: Parent path for schema file [" in error(
        conn, f"CREATE SCHEMA (i INT) PATH '{tmp_path}/no/such/s.schema'"
    )
    assert "RESOURCE ERROR: File with raw schema [" in error(
        conn, f"CREATE SCHEMA LOAD '{tmp_path}/none.txt' PATH '{tmp_path}/s.schema'"
    )
    raw = tmp_path / "raw.txt"
    raw.write_text("i int,\nv varchar")
    got = rows(conn, f"CREATE SCHEMA LOAD 'file://{raw}' PATH 'file://{tmp_path}/p.schema'")
    assert got == [(True, f"Created schema for [file://{tmp_path}/p.schema]")]
    written = json.loads((tmp_path / "p.schema").read_text())
    assert "table" not in written
    assert [c["name"] for c in written["schema"]["columns"]] == ["i", "v"]


def test_not_null_default_for_absent_column(conn: Any, data_dir: Path) -> None:
    _table(data_dir, "sch2")
    rows(
        conn,
        "CREATE SCHEMA (id INT, extra INT NOT NULL DEFAULT '7') FOR TABLE dfs.data.`sch2` "
        "PROPERTIES ('drill.strict' = 'true')",
    )
    assert rows(conn, "SELECT * FROM dfs.data.`sch2` ORDER BY id") == [(1, 7), (2, 7)]


def test_alter_schema(conn: Any, data_dir: Path) -> None:
    d = _table(data_dir, "sch3")
    assert "RESOURCE ERROR: Schema does not exist" in error(
        conn, "ALTER SCHEMA FOR TABLE dfs.data.`sch3` ADD COLUMNS (a INT)"
    )
    rows(conn, "CREATE SCHEMA (id INT) FOR TABLE dfs.data.`sch3`")
    got = rows(
        conn,
        "ALTER SCHEMA FOR TABLE dfs.data.`sch3` ADD COLUMNS (name VARCHAR) "
        "PROPERTIES ('drill.strict' = 'true')",
    )
    assert got == [(True, "Schema for [dfs.data.sch3] was updated")]
    assert error(conn, "ALTER SCHEMA FOR TABLE dfs.data.`sch3` ADD COLUMNS (id BIGINT)").startswith(
        "VALIDATION ERROR"
    )
    rows(conn, "ALTER SCHEMA FOR TABLE dfs.data.`sch3` ADD OR REPLACE COLUMNS (id BIGINT)")
    rows(conn, "ALTER SCHEMA FOR TABLE dfs.data.`sch3` REMOVE PROPERTIES ('drill.strict')")
    raw = json.loads((d / ".drill.schema").read_text())
    assert [(c["name"], c["type"]) for c in raw["schema"]["columns"]] == [
        ("id", "BIGINT"),
        ("name", "VARCHAR"),
    ]
    assert "properties" not in raw["schema"]
    rows(conn, "ALTER SCHEMA FOR TABLE dfs.data.`sch3` REMOVE COLUMNS (`name`)")
    raw = json.loads((d / ".drill.schema").read_text())
    assert [c["name"] for c in raw["schema"]["columns"]] == ["id"]


def test_text_conversion_rules_of_the_drill_docs(conn: Any, data_dir: Path) -> None:
    """create-schema.md: 1.csvh + 2.csvh, nullable, strict, NOT NULL and default variants."""
    d = data_dir / "docs_t"
    d.mkdir()
    (d / "1.csvh").write_text(
        "id,name,start_date\n1,Fred,2019-02-01\n2,Wilma,2018-11-30\n3,Pebbles,2016-01-01\n"
        "4,Barney\n"
    )
    (d / "2.csvh").write_text("name\nDino\n")
    t = "dfs.data.`docs_t`"
    rows(conn, f"CREATE SCHEMA (id int) FOR TABLE {t}")
    got = rows(conn, f"SELECT id, name FROM {t} ORDER BY name")
    assert got == [(4, "Barney"), (None, "Dino"), (1, "Fred"), (3, "Pebbles"), (2, "Wilma")]
    strict = "PROPERTIES ('drill.strict' = 'true')"
    rows(
        conn,
        "CREATE OR REPLACE SCHEMA (id int not null, start_date date not null format "
        f"'yyyy-MM-dd') FOR TABLE {t} {strict}",
    )
    cur = conn.cursor().execute(f"SELECT * FROM {t} ORDER BY id")
    assert [c[0] for c in cur.description] == ["id", "start_date"]
    epoch = dt.date(1970, 1, 1)
    assert cur.fetchall() == [
        (0, epoch),
        (1, dt.date(2019, 2, 1)),
        (2, dt.date(2018, 11, 30)),
        (3, dt.date(2016, 1, 1)),
        (4, epoch),
    ]
    rows(
        conn,
        "CREATE OR REPLACE SCHEMA (id int not null default '-1', start_date date not null "
        f"format 'yyyy-MM-dd' default '2017-01-01') FOR TABLE {t} {strict}",
    )
    got = rows(conn, f"SELECT * FROM {t} WHERE id IN (-1, 4) ORDER BY id")
    assert got == [(-1, dt.date(2017, 1, 1)), (4, dt.date(2017, 1, 1))]
    rows(conn, f"CREATE OR REPLACE SCHEMA (name int) FOR TABLE {t}")
    msg = error(conn, f"SELECT * FROM {t}")
    assert msg.startswith("DATA_READ ERROR: Illegal conversion: Column `name` of type INT")
    assert "Illegal value `" in msg


def test_provided_columns_in_information_schema(conn: Any, data_dir: Path) -> None:
    _table(data_dir, "sch4")
    rows(conn, "CREATE SCHEMA (id INT NOT NULL, name VARCHAR) FOR TABLE dfs.data.`sch4`")
    got = rows(
        conn,
        "SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE FROM INFORMATION_SCHEMA.`COLUMNS` "
        "WHERE TABLE_SCHEMA = 'dfs.data' AND TABLE_NAME = 'sch4' ORDER BY ORDINAL_POSITION",
    )
    assert got == [("id", "INTEGER", "NO"), ("name", "CHARACTER VARYING", "YES")]


# ------------------------------------------- headerless files and drill.text.* properties
def _headerless(data_dir: Path, name: str, text: str) -> str:
    d = data_dir / name
    d.mkdir()
    (d / "f.csv").write_text(text)
    return f"dfs.data.`{name}`"


def test_schema_over_headerless_file_names_fields_by_position(conn: Any, data_dir: Path) -> None:
    # Before: the table was (id, name, columns) with id 0 and name NULL in every row
    t = _headerless(data_dir, "pos1", "10,fred,23.45\n20,wilma,1234.56,vip\n")
    rows(conn, f"CREATE SCHEMA (id INT NOT NULL, name VARCHAR NOT NULL) FOR TABLE {t}")
    cur = conn.cursor().execute(f"SELECT * FROM {t} ORDER BY id")
    assert [d[0] for d in cur.description] == ["id", "name"]
    assert cur.fetchall() == [(10, "fred"), (20, "wilma")]
    assert rows(conn, f"SELECT name, filename FROM {t} WHERE id = 20") == [("wilma", "f.csv")]
    # a query of the second field alone still finds it at its position
    assert rows(conn, f"SELECT name FROM {t} ORDER BY name") == [("fred",), ("wilma",)]


def test_an_empty_schema_over_a_headerless_file_keeps_the_columns_array(
    conn: Any, data_dir: Path
) -> None:
    t = _headerless(data_dir, "pos2", "10,fred\n20,wilma\n")
    rows(conn, f"CREATE SCHEMA () FOR TABLE {t}")
    assert rows(conn, f"SELECT * FROM {t}") == [(["10", "fred"],), (["20", "wilma"],)]


@pytest.mark.parametrize(
    ("text", "props", "expected"),
    [
        ("ignore,me\n10,fred\n20,wilma\n", "'drill.text.skipFirstLine'='true'", None),
        ("10|fred\n20|wilma\n", "'drill.text.fieldDelimiter'='|'", None),
        ("id, name\n10,fred\n20,wilma\n", "'drill.text.extractHeader'='true'", None),
        (" 10 , fred \n20,wilma\n", "'drill.text.trim'='true'", None),
        (" 10 , fred \n20,wilma\n", "'drill.text.trim'='false'", [(10, " fred "), (20, "wilma")]),
    ],
)
def test_table_properties_of_the_schema_reach_the_reader(
    conn: Any, data_dir: Path, text: str, props: str, expected: Any
) -> None:
    # Before: drill.text.* properties were stored but never applied
    t = _headerless(data_dir, f"prop{sum(map(ord, props + text))}", text)
    rows(
        conn,
        f"CREATE SCHEMA (id INT NOT NULL, name VARCHAR NOT NULL) FOR TABLE {t} "
        f"PROPERTIES ({props})",
    )
    want = expected or [(10, "fred"), (20, "wilma")]
    assert rows(conn, f"SELECT * FROM {t} ORDER BY id") == want


@pytest.mark.parametrize(
    ("text", "props", "expected"),
    [
        ("@Comment\n#10,fred\n", "'drill.text.comment'='@'", [(["#10", "fred"],)]),
        ("#10,fred\n", "'drill.text.comment'=''", [(["#10", "fred"],)]),
        (
            "1,@foo@\n2,@foo~@bar@\n3,@foo~bar@\n",
            "'drill.text.quote'='@', 'drill.text.escape'='~'",
            [(["1", "foo"],), (["2", "foo@bar"],), (["3", "foo~bar"],)],
        ),
    ],
)
def test_properties_only_schema_sets_the_text_options(
    conn: Any, data_dir: Path, text: str, props: str, expected: Any
) -> None:
    t = _headerless(data_dir, f"popt{sum(map(ord, props + text))}", text)
    rows(conn, f"CREATE SCHEMA () FOR TABLE {t} PROPERTIES ({props})")
    assert rows(conn, f"SELECT * FROM {t}") == expected


def test_inline_schema_over_headerless_file_by_position(conn: Any, data_dir: Path) -> None:
    _headerless(data_dir, "pos3", "skip,me\n10,fred\n")
    got = rows(
        conn,
        "SELECT * FROM table(dfs.data.`pos3/f.csv`(schema => 'inline=(id int not null, "
        "name varchar) properties {''drill.text.skipFirstLine''=''true''}'))",
    )
    assert got == [(10, "fred")]


def _multi(data_dir: Path, name: str) -> str:
    d = data_dir / name
    d.mkdir()
    (d / "file1.csvh").write_text(
        "id,name,date,gender\n1,wilma,2019-01-18,female\n2,fred,2019-01-19,male\n"
        "4,betty,2019-05-04\n5,pebbles,2019-06-01,\n"
    )
    (d / "file2.csvh").write_text("name,id,date\nbarney,3,2001-01-16\n")
    (d / "file3.csvh").write_text("name,date\ndino,2018-09-01\n")
    return f"dfs.data.`{name}`"


def test_absent_varchar_takes_its_default_and_a_blank_one_stays_blank(
    conn: Any, data_dir: Path
) -> None:
    # Drill (TestCsvWithSchema): a field no row wrote (a short row, a file without the
    # column) takes the NOT NULL column's default; a blank field is read as written.
    # Before: both were "".
    t = _multi(data_dir, "absent1")
    rows(
        conn,
        "CREATE SCHEMA (id INT NOT NULL, `date` DATE FORMAT 'yyyy-MM-dd', "
        "gender VARCHAR NOT NULL DEFAULT 'NA', comment VARCHAR NOT NULL DEFAULT 'ABC', "
        f"nick VARCHAR) FOR TABLE {t}",
    )
    got = rows(conn, f"SELECT id, name, `date`, gender, comment, nick FROM {t} ORDER BY id")
    assert got == [
        (0, "dino", dt.date(2018, 9, 1), "NA", "ABC", None),
        (1, "wilma", dt.date(2019, 1, 18), "female", "ABC", None),
        (2, "fred", dt.date(2019, 1, 19), "male", "ABC", None),
        (3, "barney", dt.date(2001, 1, 16), "NA", "ABC", None),
        (4, "betty", dt.date(2019, 5, 4), "NA", "ABC", None),
        (5, "pebbles", dt.date(2019, 6, 1), "", "ABC", None),
    ]
    cur = conn.cursor().execute(f"SELECT * FROM {t} ORDER BY id")
    assert [d[0] for d in cur.description] == ["id", "date", "gender", "comment", "nick", "name"]
    assert cur.fetchall()[3] == (3, dt.date(2001, 1, 16), "NA", "ABC", None, "barney")


def test_without_a_schema_absent_header_fields_are_blank(conn: Any, data_dir: Path) -> None:
    t = _multi(data_dir, "absent2")
    got = rows(conn, f"SELECT id, name, gender FROM {t} ORDER BY name")
    assert got == [
        ("3", "barney", ""),
        ("4", "betty", ""),
        ("", "dino", ""),
        ("2", "fred", "male"),
        ("5", "pebbles", ""),
        ("1", "wilma", "female"),
    ]


def test_boolean_text_as_drill_reads_it(conn: Any, data_dir: Path) -> None:
    # Before: 'on' and 'foo' were Illegal conversion errors (Spark's cast rules)
    d = data_dir / "bools"
    d.mkdir()
    words = ["true", "TRUE", "t", "T", "1", "y", "Y", "yes", "yEs", "on", "ON"]
    words += ["false", "FALSE", "0", "foo"]
    body = "".join(f"{i},{w}\n" for i, w in enumerate(words)) + f"{len(words)},\n"
    (d / "f.csvh").write_text("id,b\n" + body)
    rows(
        conn,
        "CREATE SCHEMA (id INT NOT NULL, b BOOLEAN NOT NULL DEFAULT 'true') "
        "FOR TABLE dfs.data.`bools`",
    )
    got = [r[0] for r in rows(conn, "SELECT b FROM dfs.data.`bools` ORDER BY id")]
    assert got == [True] * 11 + [False] * 4 + [True]  # the blank one takes the default


def test_not_null_columns_no_file_has_take_the_types_default(conn: Any, data_dir: Path) -> None:
    d = data_dir / "nn"
    d.mkdir()
    (d / "f.csvh").write_text("id\n1\n")
    rows(
        conn,
        "CREATE SCHEMA (a INT NOT NULL, c DOUBLE NOT NULL, e VARCHAR NOT NULL, "
        "f BOOLEAN NOT NULL, i DATE NOT NULL, n VARCHAR) FOR TABLE dfs.data.`nn`",
    )
    got = rows(conn, "SELECT * FROM dfs.data.`nn`")
    assert got == [(0, 0.0, "", False, dt.date(1970, 1, 1), None, "1")]
