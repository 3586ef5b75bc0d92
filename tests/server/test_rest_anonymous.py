"""``auger serve`` without authentication: Drill's wire format field by field, cookie sessions,
errors, limits, cancellation and the informational endpoints, against a real server process."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests

from .helpers import Server, ordered, post_query, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("rest_anon"), {"max_body_bytes": 65536, "keepalive": 0.5})
    pq.write_table(pa.table({"x": pa.array(range(20000), pa.int64())}), srv.data / "big.parquet")
    pq.write_table(
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int32()),
                "name": ["a", None, "c"],
                "tags": [[1, 2], [], None],
                "m": [{"k": 1, "s": "x"}, None, {"k": 3, "s": None}],
            }
        ),
        srv.data / "typed.parquet",
    )
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def http(server: Server) -> Iterator[requests.Session]:
    with requests.Session() as s:
        yield s


# ------------------------------------------------------------------ wire format
def test_member_order_and_layout(server: Server) -> None:
    resp = post_query(None, server.url, "SELECT n_name, n_regionkey FROM cp.`tpch/nation.parquet`")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    data = ordered(resp)
    assert list(data) == [
        "queryId",
        "columns",
        "metadata",
        "attemptedAutoLimit",
        "rows",
        "queryState",
    ]
    assert data["columns"] == ["n_name", "n_regionkey"]
    assert data["metadata"] == ["VARCHAR", "INT"]
    assert data["attemptedAutoLimit"] == 0
    assert len(data["rows"]) == 25
    assert list(data["rows"][0]) == ["n_name", "n_regionkey"]
    assert data["queryState"] == "COMPLETED"
    # Drill's streaming layout: one member per line, comma first.
    lines = resp.text.splitlines()
    assert lines[0].startswith('{"queryId":"')
    assert lines[1].startswith(',"columns":[')
    assert ',"rows":[' in lines
    assert lines[-2:] == [',"queryState":"COMPLETED"', "}"]


def test_value_encodings(server: Server) -> None:
    sql = (
        "SELECT CAST(DATE '2019-07-01' AS DATE) d, TIMESTAMP '2019-07-01 10:00:00.123' ts, "
        "CAST(12.34 AS DECIMAL(10,2)) dec, CAST('ab' AS VARBINARY) b, "
        "CAST('NaN' AS DOUBLE) nan, CAST('-Infinity' AS DOUBLE) ninf, 9007199254740993 big, "
        "TRUE t, CAST(NULL AS VARCHAR) n, 80000.0 f"
    )
    data = ordered(post_query(None, server.url, sql))
    assert data["queryState"] == "COMPLETED", data
    row = data["rows"][0]
    assert row["d"] == 1561939200000
    assert row["ts"] == 1561975200123
    assert row["b"] == "YWI="
    assert row["nan"] == "NaN" and row["ninf"] == "-Infinity"
    assert row["big"] == 9007199254740993
    assert row["t"] is True and row["n"] is None
    types = dict(zip(data["columns"], data["metadata"]))
    assert types["d"] == "DATE" and types["ts"] == "TIMESTAMP"
    assert types["dec"] == "VARDECIMAL(10, 2)"
    assert types["b"] == "VARBINARY" and types["t"] == "BIT" and types["big"] == "BIGINT"
    # decimals are written as plain JSON numbers
    assert '"dec":12.34' in post_query(None, server.url, sql).text


def test_nested_values(server: Server) -> None:
    data = ordered(post_query(None, server.url, "SELECT * FROM dfs.data.`typed.parquet`"))
    assert data["queryState"] == "COMPLETED", data
    by_id = {r["id"]: r for r in data["rows"]}
    assert by_id[1]["tags"] == [1, 2]
    assert by_id[1]["m"] == {"k": 1, "s": "x"}
    assert by_id[2]["name"] is None
    types = dict(zip(data["columns"], data["metadata"]))
    assert types["tags"] == "BIGINT"  # a repeated column names its element type
    assert types["m"] == "MAP"


def test_large_result_is_streamed_in_chunks(server: Server) -> None:
    body = {"queryType": "SQL", "query": "SELECT x FROM dfs.data.`big.parquet` ORDER BY x"}
    with requests.post(server.url + "/query.json", json=body, stream=True, timeout=300) as resp:
        assert resp.status_code == 200
        assert resp.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in resp.headers
        lines = [ln.decode() for ln in resp.iter_lines()]
    first = lines.index(',"rows":[') + 1
    assert lines[first] == '{"x":0}'
    assert lines[first + 1] == ',{"x":1}'
    row_lines = [ln for ln in lines if ln.lstrip(",").startswith('{"x":')]
    assert len(row_lines) == 20000
    assert lines[-2:] == [',"queryState":"COMPLETED"', "}"]


def test_expression_names_are_unique(server: Server) -> None:
    data = ordered(
        post_query(
            None, server.url, "SELECT 1, 2, n_name, n_name FROM cp.`tpch/nation.parquet` LIMIT 1"
        )
    )
    assert data["columns"] == ["EXPR$0", "EXPR$1", "n_name", "n_name0"]
    assert list(data["rows"][0]) == data["columns"]


def test_empty_result_keeps_schema(server: Server) -> None:
    data = ordered(post_query(None, server.url, "SELECT CURRENT_TIMESTAMP LIMIT 0"))
    assert data["queryState"] == "COMPLETED"
    assert data["rows"] == [] and data["metadata"] == ["TIMESTAMP"]


@pytest.mark.parametrize("limit", ["3", 3])
def test_auto_limit(server: Server, limit: Any) -> None:
    data = ordered(
        post_query(None, server.url, "SELECT n_name FROM cp.`tpch/nation.parquet`", autoLimit=limit)
    )
    assert data["attemptedAutoLimit"] == 3
    assert len(data["rows"]) == 3


def test_max_rows_option_caps_rows_but_not_attempted_limit(server: Server) -> None:
    data = ordered(
        post_query(
            None,
            server.url,
            "SELECT n_name FROM cp.`tpch/nation.parquet`",
            options={"exec.query.max_rows": "2"},
        )
    )
    assert data["attemptedAutoLimit"] == 0
    assert len(data["rows"]) == 2


def test_trailing_semicolon_tolerated(server: Server) -> None:
    assert rows(None, server.url, "select 1 ;") == [{"EXPR$0": 1}]


def test_version_probe_of_sqlalchemy_drill(server: Server) -> None:
    got = rows(None, server.url, "select min(version) version from sys.drillbits", userName=None)
    assert got[0]["version"] >= "1.19"


# ------------------------------------------------------------------ errors
def test_sql_error_is_200_failed_with_message(server: Server) -> None:
    resp = post_query(None, server.url, "SELECT * FROM dfs.data.`no_such_file.json`")
    assert resp.status_code == 200
    data = ordered(resp)
    assert list(data) == ["queryId", "errorMessage", "queryState"]
    assert data["queryState"] == "FAILED"
    assert data["errorMessage"].startswith("VALIDATION ERROR")
    assert "[Error Id: " in data["errorMessage"]


def test_verbose_errors_option(server: Server) -> None:
    resp = post_query(
        None,
        server.url,
        "SELECT FROM WHERE",
        options={"drill.exec.http.rest.errors.verbose": "true"},
    )
    data = ordered(resp)
    assert list(data) == ["queryId", "exception", "errorMessage", "stackTrace", "queryState"]
    assert data["errorMessage"].startswith("PARSE ERROR")
    assert isinstance(data["stackTrace"], list) and data["stackTrace"]


def test_bogus_use_is_200_failed(server: Server) -> None:
    resp = post_query(None, server.url, "USE drill")
    assert resp.status_code == 200
    assert resp.json()["queryState"] == "FAILED"


@pytest.mark.parametrize(
    "fields",
    [
        {"defaultSchema": "no_such_schema"},
        {"options": {"no.such.option": "1"}},
        {"options": {"exec.query.max_rows": "many"}},
        {"userName": "bogusUser"},
        {"queryType": "PHYSICAL"},
    ],
)
def test_submission_failures_are_500_json(server: Server, fields: dict[str, Any]) -> None:
    resp = post_query(None, server.url, "select 1", **fields)
    assert resp.status_code == 500
    assert resp.headers["content-type"].startswith("application/json")
    assert resp.json()["errorMessage"].startswith("Query submission failed")


def test_query_type_is_case_insensitive(server: Server) -> None:
    assert rows(None, server.url, "select 1", queryType="sql") == [{"EXPR$0": 1}]


@pytest.mark.parametrize(
    "body", [b"{not json", b"[1, 2]", b'{"queryType": "SQL"}', b"\xff\xfe", b""]
)
def test_malformed_bodies_are_400(server: Server, body: bytes) -> None:
    resp = requests.post(
        server.url + "/query.json",
        data=body,
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert resp.status_code == 400
    assert "errorMessage" in resp.json()


def test_huge_body_is_413(server: Server) -> None:
    big = json.dumps({"queryType": "SQL", "query": "select '" + "x" * 100_000 + "'"})
    resp = requests.post(
        server.url + "/query.json",
        data=big,
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert resp.status_code == 413
    assert "errorMessage" in resp.json()


def test_huge_chunked_body_is_413(server: Server) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"queryType":"SQL","query":"select \''
        for _ in range(100):
            yield b"y" * 1024
        yield b"'\"}"

    resp = requests.post(
        server.url + "/query.json",
        data=chunks(),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert resp.status_code == 413


def test_client_that_stops_mid_request_does_not_hurt(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"POST /query.json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 500\r\n\r\n{"query": "sel'
        )
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"GARBAGE\r\n\r\n")
        sock.recv(100)
    assert rows(None, server.url, "select 2 two") == [{"two": 2}]
    assert server.alive()


def test_unknown_path_is_json_404(server: Server) -> None:
    resp = requests.get(server.url + "/no/such/page.json", timeout=10)
    assert resp.status_code == 404
    assert "errorMessage" in resp.json()


# ------------------------------------------------------------------ sessions
def test_cookie_session_keeps_use_and_options(server: Server, http: requests.Session) -> None:
    assert rows(http, server.url, "USE cp")[0]["ok"] is True
    assert http.cookies.get("Drill-Session-Id")
    got = rows(http, server.url, "SELECT n_name FROM `tpch/nation.parquet` LIMIT 1")
    assert got == [{"n_name": "ALGERIA"}]
    rows(http, server.url, "ALTER SESSION SET `exec.query.max_rows` = 4")
    assert len(rows(http, server.url, "SELECT n_name FROM `tpch/nation.parquet`")) == 4
    # a different client (no cookie) has neither the schema nor the option
    with requests.Session() as other:
        resp = post_query(other, server.url, "SELECT n_name FROM `tpch/nation.parquet`")
        assert resp.json()["queryState"] == "FAILED"
        assert len(rows(other, server.url, "SELECT n_name FROM cp.`tpch/nation.parquet`")) == 25
    # and the first one still has both
    assert len(rows(http, server.url, "SELECT n_name FROM `tpch/nation.parquet`")) == 4


def test_request_options_and_default_schema_persist(server: Server, http: requests.Session) -> None:
    got = rows(
        http,
        server.url,
        "SELECT n_name FROM `tpch/nation.parquet`",
        defaultSchema="cp",
        options={"exec.query.max_rows": 5},
    )
    assert len(got) == 5
    assert len(rows(http, server.url, "SELECT n_name FROM `tpch/nation.parquet`")) == 5


def test_logout_ends_the_session(server: Server, http: requests.Session) -> None:
    rows(http, server.url, "USE cp")
    old = http.cookies.get("Drill-Session-Id")
    assert http.get(server.url + "/logout", timeout=10).status_code == 200
    resp = post_query(http, server.url, "SELECT n_name FROM `tpch/nation.parquet`")
    assert resp.json()["queryState"] == "FAILED"
    assert http.cookies.get("Drill-Session-Id") not in (None, old)


# ------------------------------------------------------------------ cancellation
SLOW = "SELECT SUM(a.x * b.x) s FROM dfs.data.`big.parquet` a, dfs.data.`big.parquet` b"


def _start_slow(server: Server, http: requests.Session) -> tuple[threading.Thread, dict]:
    box: dict[str, Any] = {}

    def run() -> None:
        box["resp"] = post_query(http, server.url, SLOW)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def _running_id(server: Server, sql: str) -> str:
    for _ in range(600):
        data = requests.get(server.url + "/profiles.json", timeout=10).json()
        for q in data["runningQueries"]:
            if q["query"] == sql[:150]:
                return str(q["queryId"])
        time.sleep(0.1)
    raise AssertionError("the slow query never showed up as running")


def test_cancel_running_query(server: Server, http: requests.Session) -> None:
    thread, box = _start_slow(server, http)
    query_id = _running_id(server, SLOW)
    resp = requests.get(f"{server.url}/profiles/cancel/{query_id}", timeout=10)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    assert resp.text == f"Cancelled query {query_id} on locally running node."
    thread.join(120)
    data = ordered(box["resp"])
    assert data["queryId"] == query_id
    assert data["queryState"] == "CANCELED"
    profile = requests.get(f"{server.url}/profiles/{query_id}.json", timeout=10).json()
    assert profile["stateName"] == "CANCELED"


def test_logout_cancels_running_queries(server: Server) -> None:
    with requests.Session() as http:
        rows(http, server.url, "select 1")  # get a cookie first
        thread, box = _start_slow(server, http)
        _running_id(server, SLOW)
        http.get(server.url + "/logout", timeout=10)
        thread.join(120)
        assert box["resp"].json()["queryState"] == "CANCELED"


def test_slow_query_keeps_the_client_alive(server: Server) -> None:
    """The id comes at once, then spaces while Spark works; the body stays valid JSON."""
    body = {"queryType": "SQL", "query": SLOW}
    with requests.post(server.url + "/query.json", json=body, stream=True, timeout=30) as resp:
        received = b""
        chunks = resp.raw.stream(64, decode_content=False)
        while not received.endswith(b"  "):
            received += next(chunks)
        head = received.decode().rstrip()
        assert head.startswith('{"queryId":"') and "\n" not in head
        query_id = json.loads(head + "}")["queryId"]
        requests.get(f"{server.url}/profiles/cancel/{query_id}", timeout=10)
        for chunk in chunks:
            received += chunk
    text = received.decode()
    assert json.loads(text)["queryState"] == "CANCELED"
    assert text.splitlines()[1] == ',"queryState":"CANCELED"'


def test_cancel_unknown_query(server: Server) -> None:
    resp = requests.get(server.url + "/profiles/cancel/0000-0000", timeout=10)
    assert resp.status_code == 200
    assert resp.text.startswith("Failure attempting to cancel query 0000-0000.")


# ------------------------------------------------------------------ other endpoints
def test_root_and_status(server: Server) -> None:
    assert requests.head(server.url + "/", timeout=10).status_code == 200
    home = requests.get(server.url + "/", timeout=10)
    assert home.status_code == 200 and 'action="/j_security_check"' not in home.text
    assert requests.get(server.url + "/status.json", timeout=10).json() == {"status": "Running!"}
    assert "<strong>Running!</strong>" in requests.get(server.url + "/status", timeout=10).text


def test_cluster_json(server: Server) -> None:
    data = requests.get(server.url + "/cluster.json", timeout=10).json()
    bit = data["drillbits"][0]
    assert bit["httpPort"] == str(server.port) and bit["current"] is True
    assert data["currentVersion"] >= "1.19" and data["authEnabled"] is False


def test_options_json(server: Server) -> None:
    data = requests.get(server.url + "/options.json", timeout=10).json()
    names = [o["name"] for o in data]
    assert names == sorted(names)
    max_rows = next(o for o in data if o["name"] == "exec.query.max_rows")
    assert max_rows["value"] == 0 and max_rows["defaultValue"] == "0"
    assert max_rows["kind"] == "LONG" and max_rows["optionScope"] in ("BOOT", "SYSTEM")
    assert set(max_rows) == {
        "name",
        "value",
        "defaultValue",
        "accessibleScopes",
        "kind",
        "optionScope",
    }


def test_storage_json(server: Server) -> None:
    data = requests.get(server.url + "/storage.json", timeout=10).json()
    names = [p["name"] for p in data]
    assert names == sorted(names) and {"cp", "dfs"} <= set(names)
    dfs = requests.get(server.url + "/storage/dfs.json", timeout=10).json()
    assert dfs["config"]["type"] == "file"
    assert dfs["config"]["workspaces"]["data"]["location"] == str(server.data)
    unknown = requests.get(server.url + "/storage/nope.json", timeout=10).json()
    assert unknown == {"name": "nope", "config": None}
    missing = requests.get(server.url + "/storage/nope/enable/true", timeout=10)
    assert missing.status_code == 404
    assert missing.json()["result"] == "No plugin exists with the given name: nope"


def test_profiles_list_and_show(server: Server) -> None:
    resp = post_query(None, server.url, "SELECT r_name FROM cp.`tpch/region.parquet`")
    query_id = resp.json()["queryId"]
    data = requests.get(server.url + "/profiles.json", timeout=10).json()
    assert set(data) >= {"runningQueries", "finishedQueries"}
    entry = next(q for q in data["finishedQueries"] if q["queryId"] == query_id)
    assert entry["state"] == "Succeeded" and entry["user"] == "anonymous"
    assert entry["endTime"] >= entry["startTime"]
    profile = requests.get(f"{server.url}/profiles/{query_id}.json", timeout=10).json()
    assert profile["query"] == "SELECT r_name FROM cp.`tpch/region.parquet`"
    assert profile["state"] == 2 and profile["rows"] == 5
    assert profile["stages"] and all("stageId" in s for s in profile["stages"])
    assert any(s.get("submissionTime") for s in profile["stages"])
    # on disk, so they outlive the process
    assert (server.profiles_dir / f"{query_id}.json").exists()


def test_profile_lists_the_scan_messages(server: Server) -> None:
    (server.data / "msg.csvh").write_text("region,amount\neast,1\n")
    resp = post_query(None, server.url, "SELECT regoin FROM dfs.data.`msg.csvh`")
    assert resp.json()["queryState"] == "COMPLETED"
    profile = requests.get(f"{server.url}/profiles/{resp.json()['queryId']}.json", timeout=10)
    assert profile.json()["warnings"] == [
        "Column [regoin] was not found in the file of dfs.data.msg.csvh; did you mean [region]?"
    ]
    clean = post_query(None, server.url, "SELECT region FROM dfs.data.`msg.csvh`").json()
    profile = requests.get(f"{server.url}/profiles/{clean['queryId']}.json", timeout=10)
    assert profile.json()["warnings"] == []


def test_failed_query_profile_keeps_error(server: Server) -> None:
    resp = post_query(None, server.url, "SELECT * FROM dfs.data.`nothing_here.csv`")
    query_id = resp.json()["queryId"]
    profile = requests.get(f"{server.url}/profiles/{query_id}.json", timeout=10).json()
    assert profile["state"] == 4 and profile["error"].startswith("VALIDATION ERROR")


def test_unknown_profile_is_500(server: Server) -> None:
    resp = requests.get(server.url + "/profiles/nope.json", timeout=10)
    assert resp.status_code == 500
    assert "unable to serialize profile" in resp.text


# ------------------------------------------------------------------ real clients
def test_pydrill(server: Server) -> None:
    from pydrill.client import PyDrill

    drill = PyDrill(host="127.0.0.1", port=server.port)
    assert drill.is_active()
    result = drill.query("SELECT n_name FROM cp.`tpch/nation.parquet` ORDER BY n_name LIMIT 2")
    assert result.rows == [{"n_name": "ALGERIA"}, {"n_name": "ARGENTINA"}]
    assert result.columns == ["n_name"]
    options = drill.options().data
    assert any(o["name"] == "exec.query.max_rows" for o in options)
    assert "dfs" in [p["name"] for p in drill.storage().data]
    assert drill.storage_detail("cp").data["config"]["type"] == "file"
    profiles = drill.profiles().data
    query_id = profiles["finishedQueries"][0]["queryId"]
    assert drill.profile(query_id).data["queryId"] == query_id
    assert "gauges" in drill.metrics().data
    failed = drill.query("SELECT * FROM nowhere_at_all")
    assert failed.data["queryState"] == "FAILED" and failed.rows == []


def test_sqlalchemy_drill(server: Server) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(f"drill+sadrill://127.0.0.1:{server.port}/cp?use_ssl=False")
    with engine.connect() as conn:
        got = conn.execute(
            sa.text("SELECT n_name, n_regionkey FROM `tpch/nation.parquet` ORDER BY n_name LIMIT 2")
        ).fetchall()
        assert got == [("ALGERIA", 0), ("ARGENTINA", 1)]
        conn.execute(sa.text("USE dfs.data"))
        got = conn.execute(sa.text("SELECT id FROM `typed.parquet` ORDER BY id")).fetchall()
        assert got == [(1,), (2,), (3,)]
        import datetime as dt

        got = conn.execute(
            sa.text("SELECT CAST(DATE '2019-07-01' AS DATE) d, TIMESTAMP '2019-07-01 10:00:00' t")
        ).fetchall()
        assert got == [(dt.date(2019, 7, 1), dt.datetime(2019, 7, 1, 10, 0))]
        with pytest.raises(sa.exc.DatabaseError, match="VALIDATION ERROR"):
            conn.execute(sa.text("SELECT * FROM `no_such.parquet`")).fetchall()
    engine.dispose()


def test_sqlalchemy_drill_without_database(server: Server) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(f"drill+sadrill://127.0.0.1:{server.port}?use_ssl=False")
    with engine.connect() as conn:
        assert conn.execute(sa.text("select 1")).fetchall() == [(1,)]
    engine.dispose()


def test_server_survived_every_request(server: Server) -> None:
    assert server.alive()
    assert requests.get(server.url + "/status.json", timeout=10).status_code == 200


def test_profile_lists_scan_figures_and_skipped_records(server: Server) -> None:
    root = server.data / "skips"
    root.mkdir()
    (root / "good.json").write_text('{"id": 1}\n')
    (root / "bad.json").write_text('{"id": 2}\n{"id": nope}\n')
    sql = "SELECT id FROM dfs.data.skips ORDER BY id"
    resp = post_query(
        None, server.url, sql, options={"store.json.reader.skip_invalid_records": "true"}
    )
    answer = resp.json()
    assert answer["queryState"] == "COMPLETED" and answer["rows"] == [{"id": 1}, {"id": 2}]
    assert set(answer) >= {"queryId", "columns", "metadata", "rows"}  # Drill's shape kept
    assert "warnings" not in answer and "scans" not in answer
    profile = requests.get(f"{server.url}/profiles/{answer['queryId']}.json", timeout=10).json()
    assert profile["warnings"] == [
        "Skipped 1 invalid record of bad.json in dfs.data.skips (line 2)"
    ]
    assert profile["scans"] == [
        {
            "table": "dfs.data.skips",
            "files_listed": 2,
            "files_pruned": 0,
            "files_read": 2,
            "rows_read": 2,
            "records_skipped": 1,
            "files_from_cache": 0,
        }
    ]
