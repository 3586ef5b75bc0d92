"""The ``auger://`` dialect on the embedded engine: the inspector, reflected tables, pandas."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa
from sqlalchemy import types as sqltypes

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sa_data")
    pq.write_table(
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int32()),
                "big": pa.array([10, 20, 30], pa.int64()),
                "price": pa.array([1.5, 2.5, None], pa.float64()),
                "amount": pa.array(
                    [decimal.Decimal("1.25"), decimal.Decimal("2.50"), None], pa.decimal128(9, 2)
                ),
                "name": ["a", "b", None],
                "ok": [True, False, None],
                "day": pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2), None], pa.date32()),
                "at": pa.array([dt.datetime(2024, 1, 1, 10), None, None], pa.timestamp("ms")),
                "tags": [[1, 2], [], None],
            }
        ),
        root / "typed.parquet",
    )
    (root / "people.csvh").write_text("name,city\nann,Oslo\nbob,Rome\n")
    (root / "logs").mkdir()
    (root / "logs" / "a.json").write_text(json.dumps({"level": "info", "n": 1}) + "\n")
    (root / "notes.txt.unknown").write_text("not a table\n")
    return root


@pytest.fixture(scope="module")
def sa_engine(spark: Any, data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    config = tmp_path_factory.mktemp("sa_conf") / "auger.toml"
    config.write_text(
        "[storage.dfs.workspaces.data]\n"
        f"location = {json.dumps(str(data))}\n"
        "writable = true\n"
        '[spark]\nmaster = "local[2]"\n'
    )
    engine = sa.create_engine(f"auger:///dfs.data?config={config}")
    with engine.connect() as conn:
        conn.exec_driver_sql(
            "CREATE OR REPLACE VIEW v_people AS SELECT name, city FROM `people.csvh`"
        )
    yield engine
    engine.dispose()


def test_inspector_lists_schemas_tables_and_views(sa_engine: Any) -> None:
    insp = sa.inspect(sa_engine)
    assert insp.default_schema_name == "dfs.data"
    schemas = insp.get_schema_names()
    assert {"dfs.data", "dfs.tmp", "cp.default", "information_schema", "sys"} <= set(schemas)
    # a writable workspace lists what a format reads; views apart; unknown files not at all
    assert insp.get_table_names() == ["logs", "people.csvh", "typed.parquet"]
    assert insp.get_table_names(schema="dfs.data") == insp.get_table_names()
    assert insp.get_view_names() == ["v_people"]
    assert "FROM `people.csvh`" in insp.get_view_definition("v_people")
    assert {"options", "version", "drillbits"} <= set(insp.get_table_names(schema="sys"))
    assert "COLUMNS" in insp.get_table_names(schema="information_schema")


def test_columns_of_a_file_table_come_from_its_plan_with_types(sa_engine: Any) -> None:
    cols = {c["name"]: c for c in sa.inspect(sa_engine).get_columns("typed.parquet")}
    assert list(cols) == ["id", "big", "price", "amount", "name", "ok", "day", "at", "tags"]
    expected = {
        "id": sqltypes.INTEGER,
        "big": sqltypes.BIGINT,
        "price": sqltypes.DOUBLE,
        "amount": sqltypes.DECIMAL,
        "name": sqltypes.String,
        "ok": sqltypes.BOOLEAN,
        "day": sqltypes.DATE,
        "at": sqltypes.TIMESTAMP,
        "tags": sqltypes.NullType,
    }
    for name, cls in expected.items():
        assert isinstance(cols[name]["type"], cls), (name, cols[name]["type"])
    assert (cols["amount"]["type"].precision, cols["amount"]["type"].scale) == (9, 2)
    assert all(c["nullable"] for c in cols.values())


def test_columns_of_views_system_tables_and_read_only_workspaces(sa_engine: Any) -> None:
    insp = sa.inspect(sa_engine)
    view = insp.get_columns("v_people")
    assert [c["name"] for c in view] == ["name", "city"]
    opts = {c["name"]: c for c in insp.get_columns("options", schema="sys")}
    assert isinstance(opts["name"]["type"], sqltypes.String)
    # cp lists no files, but a file in it is reflected by name
    emp = {c["name"]: c["type"] for c in insp.get_columns("employee.json", schema="cp")}
    assert isinstance(emp["employee_id"], sqltypes.BIGINT)
    assert isinstance(emp["salary"], sqltypes.DOUBLE)


def test_has_table_and_missing_tables(sa_engine: Any) -> None:
    insp = sa.inspect(sa_engine)
    assert insp.has_table("people.csvh")
    assert insp.has_table("v_people")
    assert insp.has_table("employee.json", schema="cp")
    assert not insp.has_table("nope.csv")
    assert not insp.has_table("nope.csv", schema="cp")
    with pytest.raises(sa.exc.NoSuchTableError, match=r"dfs\.data\.nope\.csv"):
        insp.get_columns("nope.csv")


def test_reflected_table_queries(sa_engine: Any) -> None:
    meta = sa.MetaData()
    typed = sa.Table("typed.parquet", meta, autoload_with=sa_engine, schema="dfs.data")
    query = (
        sa.select(typed.c.id, typed.c.name)
        .where(typed.c.big > 10)
        .order_by(typed.c.id.desc())
        .limit(1)
        .offset(1)
    )
    with sa_engine.connect() as conn:
        assert conn.execute(query).fetchall() == [(2, "b")]
        got = conn.execute(
            sa.select(sa.func.count(), sa.func.sum(typed.c.amount)).select_from(typed)
        ).one()
        assert got == (3, decimal.Decimal("3.75"))
        day = conn.execute(sa.select(typed.c.day).where(typed.c.id == 1)).scalar_one()
        assert day == dt.date(2024, 1, 1)


def test_pandas_read_sql_and_read_sql_table(sa_engine: Any) -> None:
    df = pd.read_sql("SELECT name, city FROM `people.csvh` ORDER BY name", sa_engine)
    assert df.to_dict("records") == [
        {"name": "ann", "city": "Oslo"},
        {"name": "bob", "city": "Rome"},
    ]
    df = pd.read_sql_table("people.csvh", sa_engine)
    assert sorted(df["city"]) == ["Oslo", "Rome"]
    df = pd.read_sql(
        sa.text("SELECT n_name FROM cp.`tpch/nation.parquet` WHERE n_nationkey = :k"),
        sa_engine,
        params={"k": 1},
    )
    assert df["n_name"].tolist() == ["ARGENTINA"]


def test_errors_keep_drills_words(sa_engine: Any) -> None:
    with sa_engine.connect() as conn, pytest.raises(sa.exc.ProgrammingError) as err:
        conn.exec_driver_sql("SELECT * FROM `no_such.parquet`")
    assert str(err.value.orig).startswith("VALIDATION ERROR:")
