"""Arrow Flight SQL on a real ``auger serve --flight-port``, auth off, through the ADBC Flight SQL
driver (and pyarrow's Flight client for the calls ADBC does not expose): statements, prepared
statements, updates, streaming, sessions per connection, catalog calls, cancellation, errors."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight
import pytest
import requests

from auger.server.flightsql_messages import message, pack

from .helpers import Server, free_port, post_query

adbc = pytest.importorskip("adbc_driver_flightsql.dbapi")
from adbc_driver_manager import AdbcStatusCode  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]

COOKIES = {"adbc.flight.sql.rpc.with_cookie_middleware": "true"}
ROWS = 30_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = free_port()
    srv = Server(tmp_path_factory.mktemp("flight_sql"), args=["--flight-port", str(port)])
    srv.flight_url = f"grpc://127.0.0.1:{port}"  # type: ignore[attr-defined]
    (srv.data / "nums.csv").write_text("".join(f"{i},n{i}\n" for i in range(ROWS)))
    (srv.data / "big.csv").write_text("".join(f"{i}\n" for i in range(3000)))
    srv.start()
    yield srv
    srv.stop()


def connect(server: Server, cookies: bool = True) -> Any:
    url = server.flight_url  # type: ignore[attr-defined]
    return adbc.connect(url, db_kwargs=COOKIES if cookies else {}, autocommit=True)


def session_dirs(server: Server) -> list[Path]:
    """The temporary-table folders of live sessions in dfs.tmp."""
    return [p for p in server.tmp.iterdir() if p.is_dir()]


# ------------------------------------------------------------------ statements
def test_query_answers_arrow_with_spark_types(server: Server) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("SELECT CAST(7 AS BIGINT) AS n, 'x' AS s, 1.5 AS d FROM (VALUES(1))")
        table = cur.fetch_arrow_table()
    assert table.column_names == ["n", "s", "d"]
    assert table.schema.field("n").type == pa.int64()
    assert table.to_pylist() == [{"n": 7, "s": "x", "d": 1.5}]


def test_results_stream_batch_by_batch(server: Server) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("SELECT CAST(columns[0] AS INT) AS i FROM dfs.data.`nums.csv`")
        reader = cur.fetch_record_batch()
        batches = list(reader)
    assert len(batches) > 1  # Spark's batches are forwarded as they come, not gathered whole
    assert sum(b.num_rows for b in batches) == ROWS
    values = pa.Table.from_batches(batches).column("i").to_pylist()
    assert sorted(values) == list(range(ROWS))


def test_a_result_past_the_servers_limit_ends_with_a_resource_error(server: Server) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("ALTER SESSION SET `auger.result.max_rows` = 1000")
        cur.fetchall()
        cur.execute("SELECT CAST(columns[0] AS INT) AS i FROM dfs.data.`nums.csv`")
        received = 0
        # ADBC's record batch reader raises the stream's error as pyarrow's OSError
        with pytest.raises((adbc.Error, OSError)) as err:
            for batch in cur.fetch_record_batch():
                received += batch.num_rows
        assert "RESOURCE ERROR" in str(err.value) and "auger.result.max_rows" in str(err.value)
        assert received <= 1000
        cur.execute("SELECT COUNT(*) AS n FROM dfs.data.`nums.csv`")  # the connection goes on
        assert cur.fetchall() == [(ROWS,)]


def test_prepared_statement_binds_parameters(server: Server) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT columns[1] AS name FROM dfs.data.`nums.csv` WHERE CAST(columns[0] AS INT) = ?",
            (123,),
        )
        assert cur.fetchall() == [("n123",)]
        cur.execute("SELECT ? AS s, ? + 1 AS n FROM (VALUES(1))", ("it's", 41))
        assert cur.fetchall() == [("it's", 42)]


def test_updates_run_through_statement_update(server: Server) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        stmt = cur.adbc_statement
        stmt.set_sql_query(
            "CREATE TABLE dfs.tmp.`upd` AS SELECT columns[0] AS c FROM dfs.data.`nums.csv`"
        )
        assert stmt.execute_update() == ROWS  # CTAS answers the rows it wrote
        cur.execute("SELECT COUNT(*) AS n FROM dfs.tmp.`upd`")
        assert cur.fetchall() == [(ROWS,)]
        stmt.set_sql_query("ALTER SESSION SET `store.format` = 'json'")
        stmt.execute_update()
        cur.execute("SELECT string_val FROM sys.options WHERE name = 'store.format'")
        assert cur.fetchall() == [("json",)]
        stmt.set_sql_query("DROP TABLE dfs.tmp.`upd`")
        stmt.execute_update()
    assert not (server.tmp / "upd").exists()


def test_prepared_update_with_parameters(server: Server) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.executemany("CREATE TABLE dfs.tmp.`pupd` AS SELECT ? AS v FROM (VALUES(1))", [(5,)])
        cur.execute("SELECT v FROM dfs.tmp.`pupd`")
        assert cur.fetchall() == [(5,)]
        cur.execute("DROP TABLE dfs.tmp.`pupd`")


# ------------------------------------------------------------------ sessions
def test_connection_keeps_its_session_until_closed(server: Server) -> None:
    before = set(session_dirs(server))
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("USE dfs.tmp")
        cur.execute("CREATE TEMPORARY TABLE tt AS SELECT 1 AS a FROM (VALUES(1))")
        cur.execute("SELECT a FROM tt")  # unqualified: the session's default schema
        assert cur.fetchall() == [(1,)]
        # another connection has its own session: no default schema, no temporary table
        with (
            connect(server) as other,
            other.cursor() as cur2,
            pytest.raises(adbc.Error, match="VALIDATION ERROR"),
        ):
            cur2.execute("SELECT a FROM tt")
            cur2.fetchall()
        assert set(session_dirs(server)) - before  # the temporary table's folder
    # closing the connection ends its session: the temporary table is dropped
    assert set(session_dirs(server)) <= before


def test_client_without_cookies_gets_one_shot_statements(server: Server) -> None:
    before = set(session_dirs(server))
    with connect(server, cookies=False) as conn, conn.cursor() as cur:
        cur.execute("SELECT CURRENT_USER AS u FROM (VALUES(1))")
        assert cur.fetchall() == [("anonymous",)]
        cur.execute("USE dfs.tmp")
        cur.fetchall()
        cur.execute("CREATE TEMPORARY TABLE gone AS SELECT 1 AS a FROM (VALUES(1))")
        cur.fetchall()
        # each statement ran in a session of its own, closed once its answer was read
        assert set(session_dirs(server)) <= before
        with pytest.raises(adbc.Error, match="VALIDATION ERROR"):
            cur.execute("SELECT a FROM gone")
            cur.fetchall()


# ------------------------------------------------------------------ catalog
def test_catalog_calls(server: Server) -> None:
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE dfs.tmp.`cat_t` AS SELECT 1 AS a, 'b' AS b FROM (VALUES(1))")
        cur.fetchall()
        try:
            assert conn.adbc_get_info()["vendor_name"] == "auger"
            assert set(conn.adbc_get_table_types()) == {"TABLE", "VIEW", "SYSTEM_TABLE"}
            objects = conn.adbc_get_objects(depth="tables").read_all().to_pylist()
            assert [c["catalog_name"] for c in objects] == ["DRILL"]
            schemas = {s["db_schema_name"]: s for s in objects[0]["catalog_db_schemas"]}
            assert {"dfs.tmp", "cp.default", "information_schema", "sys"} <= set(schemas)
            tables = {t["table_name"]: t for t in schemas["dfs.tmp"]["db_schema_tables"]}
            assert tables["cat_t"]["table_type"] == "TABLE"
            only = conn.adbc_get_objects(
                depth="tables", db_schema_filter="dfs.t%", table_name_filter="cat%"
            ).read_all()
            names = [
                t["table_name"]
                for c in only.to_pylist()
                for s in c["catalog_db_schemas"]
                for t in s["db_schema_tables"]
            ]
            assert names == ["cat_t"]
            schema = conn.adbc_get_table_schema("cat_t", db_schema_filter="dfs.tmp")
            assert schema.names == ["a", "b"]
            assert schema.field("a").type == pa.int32()
        finally:
            cur.execute("DROP TABLE dfs.tmp.`cat_t`")
            cur.fetchall()


def _command(name: str, **fields: Any) -> flight.FlightDescriptor:
    return flight.FlightDescriptor.for_command(pack(message(name)(**fields)))


def _read(client: flight.FlightClient, descriptor: flight.FlightDescriptor) -> pa.Table:
    info = client.get_flight_info(descriptor)
    table = client.do_get(info.endpoints[0].ticket).read_all()
    assert table.schema.equals(info.schema)
    return table


def test_keys_sql_info_and_type_info(server: Server) -> None:
    client = flight.FlightClient(server.flight_url)  # type: ignore[attr-defined]
    for name in ("CommandGetPrimaryKeys", "CommandGetExportedKeys", "CommandGetImportedKeys"):
        table = _read(client, _command(name, db_schema="dfs.tmp", table="x"))
        assert table.num_rows == 0 and "key_sequence" in table.column_names
    info = _read(client, _command("CommandGetSqlInfo", info=[0, 504, 9]))
    values = dict(zip(info.column("info_name").to_pylist(), info.column("value").to_pylist()))
    assert values == {0: "auger", 504: "`", 9: True}
    types = _read(client, _command("CommandGetXdbcTypeInfo"))
    names = set(types.column("type_name").to_pylist())
    assert {"BIGINT", "CHARACTER VARYING", "TIMESTAMP"} <= names
    varchar = _read(client, _command("CommandGetXdbcTypeInfo", data_type=12))
    assert varchar.column("type_name").to_pylist() == ["CHARACTER VARYING"]
    client.close()


# ------------------------------------------------------------------ errors
def test_errors_keep_drill_text_and_grpc_code(server: Server) -> None:
    client = flight.FlightClient(server.flight_url)  # type: ignore[attr-defined]
    with pytest.raises(flight.FlightServerError) as err:  # UNKNOWN: Flight's "failed"
        client.get_flight_info(_command("CommandStatementQuery", query="SELECT * FROM dfs.nope.x"))
    text = str(err.value)
    assert text.startswith("VALIDATION ERROR") and "Traceback" not in text
    assert "\n\nPath: /nope.x" in text  # Drill's context lines
    with pytest.raises(flight.FlightServerError, match="PARSE ERROR"):
        client.get_flight_info(_command("CommandStatementQuery", query="SELEC 1"))
    client.close()
    with connect(server) as conn, conn.cursor() as cur:
        for sql in ("SELECT * FROM dfs.tmp.`no_such_table`", "SELEC 1"):
            # the REST API's text of the same error, without the error id it adds
            rest = post_query(None, server.url, sql).json()["errorMessage"]
            drill = rest.rpartition("\n\n[Error Id: ")[0]
            with pytest.raises(adbc.Error) as adbc_err:
                cur.execute(sql)
                cur.fetchall()
            assert adbc_err.value.status_code == AdbcStatusCode.UNKNOWN
            sent = str(adbc_err.value).partition("[FlightSQL] ")[2]
            assert sent.startswith(drill + ". Detail: Failed"), (sent, drill)
            assert "Traceback" not in sent
        cur.execute("SELECT 1 AS one FROM (VALUES(1))")  # the connection goes on
        assert cur.fetchall() == [(1,)]


# ------------------------------------------------------------------ cancellation
SLOW = (
    "SELECT COUNT(*) AS n FROM dfs.data.`big.csv` a, dfs.data.`big.csv` b, dfs.data.`big.csv` c "
    "WHERE a.columns[0] <> b.columns[0]"
)


@pytest.mark.parametrize("action", ["CancelFlightInfo", "CancelQuery"])
def test_cancel_stops_the_running_statement(server: Server, action: str) -> None:
    client = flight.FlightClient(server.flight_url)  # type: ignore[attr-defined]
    info = client.get_flight_info(_command("CommandStatementQuery", query=SLOW))
    outcome: list[BaseException | pa.Table] = []

    def read() -> None:
        try:
            outcome.append(client.do_get(info.endpoints[0].ticket).read_all())
        except BaseException as exc:
            outcome.append(exc)

    # pyarrow's Flight client answers a CANCELLED status with a SIGINT of its own process (its
    # Ctrl-C path); ignored here so that only the reading thread sees the cancel
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    reader = threading.Thread(target=read)
    reader.start()
    query_id = _running_query(server)
    serialized = info.serialize()
    if action == "CancelFlightInfo":
        body = message("CancelFlightInfoRequest")(info=serialized).SerializeToString()
    else:
        body = pack(message("ActionCancelQueryRequest")(info=serialized))
    answers = list(client.do_action(flight.Action(action, body)))
    reader.join(timeout=120)
    signal.signal(signal.SIGINT, previous)
    assert not reader.is_alive()
    assert len(answers) == 1
    assert isinstance(outcome[0], flight.FlightCancelledError), outcome
    profile = requests.get(f"{server.url}/profiles/{query_id}.json", timeout=30).json()
    assert profile["stateName"] == "CANCELED", profile
    client.close()


def _running_query(server: Server) -> str:
    """The id of the query the server is running (waits until it shows)."""
    import time

    for _ in range(600):
        running = requests.get(f"{server.url}/profiles.json", timeout=30).json()["runningQueries"]
        if running:
            return str(running[0]["queryId"])
        time.sleep(0.1)
    raise AssertionError("the slow query never showed as running")


#: A Flight client in a process of its own: starts reading SLOW's answer, says so, and then
#: either waits to be killed (its connection drops) or gives the read a deadline (the call is
#: cancelled when it passes).
_LEAVING_CLIENT = """
import sys
import pyarrow.flight as flight
from auger.server.flightsql_messages import message, pack, unpack
client = flight.FlightClient(sys.argv[1])
command = pack(message("CommandStatementQuery")(query=sys.argv[2]))
info = client.get_flight_info(flight.FlightDescriptor.for_command(command))
ticket = info.endpoints[0].ticket
options = flight.FlightCallOptions(timeout=float(sys.argv[3])) if sys.argv[3] else None
reader = client.do_get(ticket, options) if options else client.do_get(ticket)
print(unpack(ticket.ticket)[1].statement_handle.decode(), flush=True)
try:
    reader.read_all()
except flight.FlightError as exc:
    print(type(exc).__name__, flush=True)
"""


@pytest.mark.parametrize("leaves", ["connection dropped", "call cancelled"])
def test_a_client_leaving_mid_stream_cancels_the_statement_at_once(
    server: Server, leaves: str
) -> None:
    import subprocess
    import sys
    import time

    deadline = "" if leaves == "connection dropped" else "5"
    url = server.flight_url  # type: ignore[attr-defined]
    proc = subprocess.Popen(
        [sys.executable, "-c", _LEAVING_CLIENT, url, SLOW, deadline],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        # the schema has arrived: the server is streaming, Spark is on the first batch
        query_id = proc.stdout.readline().strip()
        assert query_id
        if leaves == "connection dropped":
            proc.kill()
        else:
            assert proc.stdout.readline().strip() == "FlightTimedOutError"
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # the statement (hours of work otherwise) is cancelled without waiting for a batch
    for _ in range(1200):
        running = requests.get(f"{server.url}/profiles.json", timeout=30).json()["runningQueries"]
        if query_id not in [q["queryId"] for q in running]:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the statement of the client that left is still running")
    profile = requests.get(f"{server.url}/profiles/{query_id}.json", timeout=30).json()
    assert profile["stateName"] == "CANCELED", profile
    assert "client closed the connection" in profile["error"], profile
    with connect(server) as conn, conn.cursor() as cur:  # the server goes on serving
        cur.execute("SELECT COUNT(*) AS n FROM dfs.data.`nums.csv`")
        assert cur.fetchall() == [(ROWS,)]


def test_pandas_reads_through_the_adbc_connection(server: Server) -> None:
    pd = pytest.importorskip("pandas")
    with connect(server) as conn:
        frame = pd.read_sql("SELECT columns[1] AS name FROM dfs.data.`nums.csv` LIMIT 3", conn)
    assert list(frame.columns) == ["name"]
    assert len(frame) == 3 and frame["name"].str.startswith("n").all()
