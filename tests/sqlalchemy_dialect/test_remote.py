"""The ``auger+http://`` dialect against a real ``auger serve``: the inspector, reflected tables,
pandas, and one server session per pooled connection."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa
from sqlalchemy import types as sqltypes

from ..server.helpers import Server, free_port

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("sa_remote"))
    pq.write_table(
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int32()),
                "name": ["a", "b", None],
                "day": pa.array([dt.date(2024, 1, 1), None, None], pa.date32()),
                "score": pa.array([0.5, 1.5, 2.5], pa.float64()),
            }
        ),
        srv.data / "typed.parquet",
    )
    (srv.data / "people.csvh").write_text("name,city\nann,Oslo\nbob,Rome\n")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def sa_engine(server: Server) -> Iterator[Any]:
    engine = sa.create_engine(f"auger+http://127.0.0.1:{server.port}/dfs.data")
    with engine.connect() as conn:
        conn.exec_driver_sql("CREATE OR REPLACE VIEW v_people AS SELECT name FROM `people.csvh`")
    yield engine
    engine.dispose()


def test_inspector_over_rest(sa_engine: Any) -> None:
    insp = sa.inspect(sa_engine)
    assert insp.default_schema_name == "dfs.data"
    assert {"dfs.data", "dfs.tmp", "cp.default", "sys"} <= set(insp.get_schema_names())
    assert insp.get_table_names() == ["people.csvh", "typed.parquet"]
    assert insp.get_view_names() == ["v_people"]
    cols = {c["name"]: c["type"] for c in insp.get_columns("typed.parquet")}
    assert list(cols) == ["id", "name", "day", "score"]
    assert isinstance(cols["id"], sqltypes.INTEGER)
    assert isinstance(cols["name"], sqltypes.String)
    assert isinstance(cols["day"], sqltypes.DATE)
    assert isinstance(cols["score"], sqltypes.DOUBLE)
    assert [c["name"] for c in insp.get_columns("v_people")] == ["name"]
    assert insp.has_table("typed.parquet") and not insp.has_table("absent.parquet")
    emp = {c["name"] for c in insp.get_columns("employee.json", schema="cp")}
    assert {"employee_id", "full_name"} <= emp


def test_reflected_table_and_pandas_over_rest(sa_engine: Any) -> None:
    typed = sa.Table("typed.parquet", sa.MetaData(), autoload_with=sa_engine)
    with sa_engine.connect() as conn:
        got = conn.execute(
            sa.select(typed.c.id, typed.c.day).where(typed.c.score > 1).order_by(typed.c.id)
        ).fetchall()
    assert got == [(2, None), (3, None)]
    df = pd.read_sql("SELECT id, name FROM `typed.parquet` ORDER BY id", sa_engine)
    assert df["id"].tolist() == [1, 2, 3]
    assert pd.read_sql_table("people.csvh", sa_engine)["city"].tolist() == ["Oslo", "Rome"]


def test_a_pooled_connection_keeps_its_server_session(sa_engine: Any) -> None:
    with sa_engine.connect() as conn:
        conn.exec_driver_sql("CREATE TEMPORARY TABLE sa_tmp AS SELECT 7 AS x FROM (VALUES(1))")
    with sa_engine.connect() as conn:  # the same pooled connection: the same session
        assert conn.exec_driver_sql("SELECT x FROM sa_tmp").fetchall() == [(7,)]


def test_errors_over_rest_keep_drills_words(sa_engine: Any) -> None:
    with sa_engine.connect() as conn, pytest.raises(sa.exc.ProgrammingError) as err:
        conn.exec_driver_sql("SELECT * FROM `absent.parquet`")
    assert str(err.value.orig).startswith("VALIDATION ERROR:")


def test_an_unreachable_server_is_a_clear_error() -> None:
    engine = sa.create_engine(f"auger+http://127.0.0.1:{free_port()}/dfs.tmp")
    with pytest.raises(sa.exc.OperationalError, match="Cannot reach the auger server"):
        engine.connect()


def test_explain_answers_drills_layout_over_rest(sa_engine: Any) -> None:
    with sa_engine.connect() as conn:
        text, plan = conn.exec_driver_sql(
            "EXPLAIN PLAN FOR SELECT id FROM `typed.parquet` WHERE id > 1"
        ).one()
    assert text.startswith("00-00    Screen\n")
    assert "Scan(table=[dfs.data.typed.parquet]" in text
    assert '"APACHE_DRILL_PHYSICAL"' in plan
