"""``flightsql-dbapi`` (the Flight SQL DB-API and SQLAlchemy dialect Superset uses) against a real
``auger serve --flight-port``: ``pandas.read_sql`` through its SQLAlchemy engine, the inspector
(schemas, tables, columns), its DB-API with ``?`` parameters, and errors.

It connects with a user name and password (any, with auth off): the handshake then gives it a
bearer token, and so a session of its own for the life of its client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import flightsql
import flightsql.sqlalchemy
import pandas as pd
import pyarrow.flight as flight
import pytest
import sqlalchemy as sa

from .helpers import Server, free_port

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    # the dialect still spells SQLAlchemy 1.4's hook, which SQLAlchemy 2 calls with a warning
    pytest.mark.filterwarnings("ignore:The dbapi\\(\\) classmethod:DeprecationWarning"),
]

ROWS = 500


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = free_port()
    srv = Server(tmp_path_factory.mktemp("flight_sql_dbapi"), args=["--flight-port", str(port)])
    srv.flight_port = port  # type: ignore[attr-defined]
    (srv.data / "nums.csv").write_text("".join(f"{i},n{i}\n" for i in range(ROWS)))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def engine(server: Server) -> Iterator[sa.Engine]:
    port = server.flight_port  # type: ignore[attr-defined]
    url = (
        f"datafusion+flightsql://anonymous:any@127.0.0.1:{port}"
        "?insecure=true&feature-sqlalchemy-prepared-statements=on"
    )
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE dfs.tmp.`people` AS "
            "SELECT CAST(columns[0] AS INT) AS id, columns[1] AS name "
            "FROM dfs.data.`nums.csv` WHERE CAST(columns[0] AS INT) < 10"
        )
    yield engine
    engine.dispose()


def dbapi_connect(server: Server) -> Any:
    client = flightsql.FlightSQLClient(
        host="127.0.0.1",
        port=server.flight_port,  # type: ignore[attr-defined]
        user="anonymous",
        password="any",
        insecure=True,
    )
    return flightsql.connect(client)


def test_pandas_read_sql_through_the_sqlalchemy_engine(engine: sa.Engine) -> None:
    frame = pd.read_sql(
        "SELECT CAST(columns[0] AS INT) AS i, columns[1] AS name "
        "FROM dfs.data.`nums.csv` ORDER BY i",
        engine,
    )
    assert list(frame.columns) == ["i", "name"]
    assert len(frame) == ROWS
    assert frame["i"].tolist() == list(range(ROWS))
    assert frame["name"].iloc[7] == "n7"


def test_pandas_read_sql_with_bound_parameters(engine: sa.Engine) -> None:
    frame = pd.read_sql(
        sa.text("SELECT name FROM dfs.tmp.`people` WHERE id = :id OR name = :name ORDER BY name"),
        engine,
        params={"id": 3, "name": "n5"},
    )
    assert frame["name"].tolist() == ["n3", "n5"]


def test_inspector_lists_schemas_tables_and_columns(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)
    schemas = inspector.get_schema_names()
    assert {"dfs.tmp", "dfs.data", "cp.default", "information_schema", "sys"} <= set(schemas)
    assert "people" in inspector.get_table_names(schema="dfs.tmp")
    assert "nums.csv" in inspector.get_table_names(schema="dfs.data")
    assert inspector.has_table("people", schema="dfs.tmp")
    assert not inspector.has_table("nobody", schema="dfs.tmp")
    columns = {c["name"]: c["type"] for c in inspector.get_columns("people", schema="dfs.tmp")}
    assert list(columns) == ["id", "name"]
    assert isinstance(columns["id"], sa.INTEGER) and isinstance(columns["name"], sa.TEXT)


def test_dbapi_cursor_with_qmark_parameters(server: Server) -> None:
    conn = dbapi_connect(server)
    cur = conn.cursor()
    cur.execute("SELECT id, name FROM dfs.tmp.`people` WHERE id > ? AND name <> ?", (6, "n8"))
    assert [d[0] for d in cur.description] == ["id", "name"]
    assert sorted(cur.fetchall()) == [[7, "n7"], [9, "n9"]]
    cur.execute("SELECT CURRENT_USER AS u FROM (VALUES(1))")
    assert cur.fetchall() == [["anonymous"]]
    conn.close()


def test_dbapi_session_lasts_as_long_as_its_client(server: Server) -> None:
    conn = dbapi_connect(server)
    cur = conn.cursor()
    cur.execute("USE dfs.tmp")
    cur.execute("SELECT COUNT(*) AS n FROM `people`")  # unqualified: the session's schema
    assert cur.fetchall() == [[10]]
    conn.close()


def test_errors_keep_drill_text(server: Server) -> None:
    conn = dbapi_connect(server)
    cur = conn.cursor()
    # its DB-API passes pyarrow's Flight errors through
    with pytest.raises(flight.FlightServerError) as err:
        cur.execute("SELECT * FROM dfs.tmp.`nobody`")
    text = str(err.value)
    assert text.startswith("VALIDATION ERROR: Object 'nobody' not found within 'dfs.tmp'")
    assert "Traceback" not in text
    cur.execute("SELECT 1 AS one FROM (VALUES(1))")  # the client goes on
    assert cur.fetchall() == [[1]]
    conn.close()
