"""SQL over an S3 workspace (a local S3-compatible server), through the DB-API: every format and
compression, directories as tables, dirN and hive columns, implicit columns, provided schemas,
views stored as objects, SHOW FILES, INFORMATION_SCHEMA and the errors of point 5 of issue 25.

Executors read the objects through pyarrow's S3 file system with the settings shipped in the
scan spec: the Spark session has no S3A classes.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.dbapi import Connection
from auger.engine import Engine
from auger.spark.cache_builds import wait_for_builds
from auger.storage.schema_file import SchemaFile
from auger.types.schema_text import parse_schema
from tests.sql.helpers import error, rows
from tests.storage.s3_helpers import LocalS3

BUCKET = "auger-sql"
CSV = "id,name\n1,ann\n2,bob\n3,cy\n"


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def s3_engine(spark: Any, local_s3: LocalS3) -> Iterator[Engine]:
    bucket = local_s3.bucket(BUCKET)
    put = local_s3.put
    put(bucket, "data/plain.csv", "1,ann\n2,bob\n3,cy\n")
    put(bucket, "data/people.csvh", CSV)
    put(bucket, "data/people.tsv", CSV.replace(",", "\t"))
    put(bucket, "data/people.psv", CSV.replace(",", "|"))
    lines = "".join(json.dumps({"id": i, "name": n}) + "\n" for i, n in [(1, "ann"), (2, "bob")])
    put(bucket, "data/people.json", lines)
    put(bucket, "data/people.json.gz", gzip.compress(lines.encode()))
    put(bucket, "data/people.csvh.bz2", bz2.compress(CSV.encode()))
    put(bucket, "data/people.parquet", _parquet(pa.table({"id": [1, 2, 3], "v": [1.5, 2.5, 3.5]})))
    for year, quarter, n in [("1994", "q1", 1), ("1994", "q2", 2), ("1995", "q1", 3)]:
        put(bucket, f"logs/{year}/{quarter}/part.csv", f"{n},x\n{n},y\n")
    put(bucket, "logs/_SUCCESS", "")
    for region in ("eu", "us"):
        put(bucket, f"hive/region={region}/p.json", json.dumps({"n": 1}) + "\n")
    typed = SchemaFile(parse_schema("id INT, name VARCHAR"))
    put(bucket, "typed/a.csvh", CSV)
    put(bucket, "typed/.drill.schema", typed.to_json())
    eng = Engine(
        {
            "storage": {"s3": local_s3.plugin(bucket)},
            "spark": {"master": "local[2]"},
        }
    )
    yield eng
    eng.shutdown()


@pytest.fixture
def s3(s3_engine: Engine) -> Iterator[Connection]:
    c = Connection(s3_engine.open_session("tester"))
    yield c
    c.close()


@pytest.mark.parametrize(
    "table",
    [
        "data/people.csvh",
        "data/people.tsv",
        "data/people.psv",
        "data/people.csvh.bz2",
    ],
)
def test_text_formats_and_compression(s3: Connection, table: str) -> None:
    if table.endswith(".csvh") or table.endswith(".bz2"):
        sql = f"SELECT name FROM s3.root.`{table}` WHERE CAST(id AS INT) > 1 ORDER BY name"
    else:  # tsv/psv: no header extraction by default
        sql = f"SELECT columns[1] FROM s3.root.`{table}` WHERE columns[0] <> 'id' ORDER BY 1"
    got = [r[0] for r in rows(s3, sql)]
    assert got == (["bob", "cy"] if "csvh" in table else ["ann", "bob", "cy"])


def test_csv_columns_array(s3: Connection) -> None:
    got = rows(s3, "SELECT columns[0], columns[1] FROM s3.root.`data/plain.csv` ORDER BY 1")
    assert got == [("1", "ann"), ("2", "bob"), ("3", "cy")]


@pytest.mark.parametrize("table", ["data/people.json", "data/people.json.gz"])
def test_json_plain_and_gzip(s3: Connection, table: str) -> None:
    assert rows(s3, f"SELECT id, name FROM s3.root.`{table}` ORDER BY id") == [
        (1, "ann"),
        (2, "bob"),
    ]


def test_parquet_through_ranged_reads(s3: Connection) -> None:
    got = rows(s3, "SELECT id, v FROM s3.root.`data/people.parquet` WHERE v > 2 ORDER BY id")
    assert got == [(2, 2.5), (3, 3.5)]
    assert rows(s3, "SELECT COUNT(*) FROM s3.root.`data/people.parquet`") == [(3,)]


def test_directory_as_table_with_dirn(s3: Connection) -> None:
    got = rows(
        s3,
        "SELECT dir0, dir1, COUNT(*) FROM s3.root.`logs` GROUP BY dir0, dir1 ORDER BY dir0, dir1",
    )
    assert got == [("1994", "q1", 2), ("1994", "q2", 2), ("1995", "q1", 2)]
    pruned = rows(s3, "SELECT columns[0] FROM s3.root.`logs` WHERE dir0 = '1995' ORDER BY 1")
    assert pruned == [("3",), ("3",)]


def test_directory_functions_list_prefixes(s3: Connection) -> None:
    got = rows(s3, "SELECT COUNT(*) FROM s3.root.`logs` WHERE dir0 = MAXDIR('s3.root', 'logs')")
    assert got == [(2,)]


def test_hive_style_directories(s3: Connection) -> None:
    got = rows(s3, "SELECT region, n FROM s3.root.`hive` ORDER BY region")
    assert got == [("eu", 1), ("us", 1)]


def test_implicit_columns_show_the_object_uri(s3: Connection) -> None:
    got = rows(
        s3,
        "SELECT fqn, filepath, filename, suffix FROM s3.root.`data/plain.csv` LIMIT 1",
    )
    assert got == [(f"s3a://{BUCKET}/data/plain.csv", f"s3a://{BUCKET}/data", "plain.csv", "csv")]


def test_drill_schema_file_types_the_columns(s3: Connection) -> None:
    cur = s3.cursor().execute("SELECT id, name FROM s3.root.`typed` ORDER BY id")
    assert cur.fetchall() == [(1, "ann"), (2, "bob"), (3, "cy")]


def test_workspace_below_the_connection(s3: Connection) -> None:
    assert rows(s3, "SELECT COUNT(*) FROM s3.root.`data/people.parquet`") == [(3,)]
    s3.cursor().execute("USE s3.root")
    assert rows(s3, "SELECT COUNT(*) FROM `data/people.parquet`") == [(3,)]


def test_views_are_stored_as_objects(s3: Connection, local_s3: LocalS3) -> None:
    cur = s3.cursor()
    cur.execute(
        "CREATE OR REPLACE VIEW s3.tmp.people AS SELECT id, name FROM s3.root.`data/people.json`"
    )
    assert "tmp/people.view.drill" in local_s3.keys(BUCKET, "tmp/")
    assert rows(s3, "SELECT name FROM s3.tmp.people WHERE id = 2") == [("bob",)]
    listed = rows(
        s3,
        "SELECT TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.`TABLES` "
        "WHERE TABLE_SCHEMA = 's3.tmp'",
    )
    assert ("people", "VIEW") in listed
    cur.execute("DROP VIEW s3.tmp.people")
    assert "tmp/people.view.drill" not in local_s3.keys(BUCKET, "tmp/")


def test_show_files_lists_a_prefix(s3: Connection) -> None:
    cur = s3.cursor().execute("SHOW FILES IN s3.root.`logs`")
    names = [d[0] for d in cur.description]
    got = {r[names.index("name")]: r for r in cur.fetchall()}
    assert set(got) == {"1994", "1995"}  # _SUCCESS is hidden
    assert got["1994"][names.index("isDirectory")] is True


def test_information_schema_files(s3: Connection) -> None:
    got = rows(
        s3,
        "SELECT FILE_NAME, IS_FILE, `LENGTH` FROM INFORMATION_SCHEMA.`FILES` "
        "WHERE SCHEMA_NAME = 's3.root' AND FILE_NAME = 'data'",
    )
    assert got == [("data", False, 0)]


def test_missing_object_is_drills_not_found(s3: Connection) -> None:
    msg = error(s3, "SELECT * FROM s3.root.`data/nope.csv`")
    assert msg.startswith("VALIDATION ERROR: Object 'data/nope.csv' not found within 's3.root'")
    assert f"s3a://{BUCKET}/data/nope.csv" in msg


def test_missing_bucket_is_a_resource_error(spark: Any, local_s3: LocalS3) -> None:
    eng = Engine({"storage": {"gone": local_s3.plugin("no-bucket-here")}})
    try:
        c = Connection(eng.open_session("tester"))
        msg = error(c, "SELECT * FROM gone.root.`a.csv`")
        assert msg.startswith("RESOURCE ERROR: Bucket [s3a://no-bucket-here] does not exist")
        assert "Traceback" not in msg and "botocore" not in msg
        c.close()
    finally:
        eng.shutdown()


def test_native_parquet_path_needs_s3a_on_the_classpath(spark: Any) -> None:
    """Without hadoop-aws (as here) Spark's own Parquet reader is not offered objects; the
    data source answers (test_parquet_through_ranged_reads)."""
    from auger.spark.native_parquet import _plain_path
    from auger.spark.object_store import hadoop_reads, s3a_on_classpath

    assert not s3a_on_classpath(spark)
    assert hadoop_reads(spark, ["/tmp/a.parquet"])
    assert not hadoop_reads(spark, [f"s3a://{BUCKET}/data/people.parquet"])
    assert _plain_path(f"s3a://{BUCKET}/data/people.parquet")
    assert not _plain_path(f"s3a://{BUCKET}/data/_hidden.parquet")


def test_plain_pyspark_reads_objects_with_settings_as_options(
    spark: Any, local_s3: LocalS3, s3_engine: Engine
) -> None:
    df = (
        spark.read.format("auger")
        .option("format", "csvh")
        .option("fs.s3a.endpoint", local_s3.endpoint)
        .option("fs.s3a.access.key", "k")
        .option("fs.s3a.secret.key", "s")
        .load(f"s3a://{BUCKET}/data/people.csvh")
    )
    assert sorted(r["name"] for r in df.collect()) == ["ann", "bob", "cy"]


def test_wrong_credentials_are_a_permission_error_in_sql(spark: Any) -> None:
    """A second server whose signature checks are on: keys it never issued are refused."""
    import requests

    from tests.storage.s3_helpers import start_local_s3

    servers = start_local_s3()
    server = next(servers)
    server.bucket("locked-sql")
    server.put("locked-sql", "a.csv", "x\n")
    auth = f"{server.endpoint}/moto-api/reset-auth"
    headers = {"Content-Type": "text/plain"}
    requests.post(auth, data=b"0", headers=headers, timeout=10).raise_for_status()
    eng = Engine({"storage": {"locked": server.plugin("locked-sql")}})
    try:
        c = Connection(eng.open_session("tester"))
        msg = error(c, "SELECT * FROM locked.root.`a.csv`")
        assert msg.startswith("PERMISSION ERROR: Access to [s3a://locked-sql/a.csv] was denied")
        assert "Traceback" not in msg and "botocore" not in msg
        c.close()
    finally:
        eng.shutdown()
        requests.post(auth, data=b"inf", headers=headers, timeout=10)
        servers.close()


def test_endpoint_down_is_a_data_read_error_in_sql(spark: Any) -> None:
    from tests.storage.s3_helpers import free_port

    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    plugin = {
        "type": "file",
        "connection": "s3a://down-sql",
        "config": {
            "fs.s3a.endpoint": endpoint,
            "fs.s3a.access.key": "k",
            "fs.s3a.secret.key": "s",
            "fs.s3a.connection.establish.timeout": "1000",
            "fs.s3a.attempts.maximum": "1",
        },
        "workspaces": {"root": {"location": "/"}},
    }
    eng = Engine({"storage": {"down": plugin}})
    try:
        c = Connection(eng.open_session("tester"))
        started = time.monotonic()
        msg = error(c, "SELECT * FROM down.root.`a.csv`")
        assert time.monotonic() - started < 30
        assert msg.startswith("DATA_READ ERROR: Cannot reach the storage of [s3a://down-sql/a.csv]")
        assert endpoint in msg and "Traceback" not in msg
        c.close()
    finally:
        eng.shutdown()


def test_with_s3a_on_the_classpath_the_settings_become_per_bucket_keys(
    spark: Any, s3_engine: Engine, local_s3: LocalS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side of the choice: were hadoop-aws there, Spark's reader would be offered
    the objects, with the plugin's settings as S3A's per-bucket keys (other schemes never)."""
    from auger.spark import object_store

    monkeypatch.setattr(object_store, "s3a_on_classpath", lambda _spark: True)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    key = f"fs.s3a.bucket.{BUCKET}.endpoint"
    try:
        assert object_store.hadoop_reads(spark, [f"s3a://{BUCKET}/data/people.parquet"])
        assert conf.get(key) == local_s3.endpoint
        assert not object_store.hadoop_reads(spark, [f"gs://{BUCKET}/data/people.parquet"])
    finally:
        for name in ("endpoint", "access.key", "secret.key", "path.style.access"):
            conf.unset(f"fs.s3a.bucket.{BUCKET}.{name}")


def _object_requests(log: list[tuple[str, str, str]], prefix: str) -> dict[str, list[str]]:
    """Requests on each Parquet object below ``prefix`` (method each), listings left out."""
    out: dict[str, list[str]] = {}
    for method, path, query in log:
        listing = "list-type" in query or "prefix=" in query
        if path.startswith(prefix) and path.endswith(".parquet") and not listing:
            out.setdefault(path, []).append(method)
    return out


def _listings(log: list[tuple[str, str, str]]) -> list[str]:
    """The listing requests, as their query strings (prefix, delimiter, page token)."""
    return [query for _, _, query in log if "list-type" in query or "prefix=" in query]


def test_planning_reads_each_footer_with_one_request_and_lists_once(
    s3: Connection, local_s3: LocalS3
) -> None:
    keys = [f"many/{d}/p{i}.parquet" for d in ("a", "b") for i in range(4)]
    for n, key in enumerate(keys):
        local_s3.put(BUCKET, key, _parquet(pa.table({"id": [n], "name": [f"n{n}"]})))
    sql = "EXPLAIN PLAN FOR SELECT id, name FROM s3.root.`many`"
    with local_s3.recording() as log:
        s3.cursor().execute(sql).fetchall()
    # the footer only, by one ranged GET: no HEAD asks an object's size first (the listing
    # gave it), and no second read of the same footer
    per_object = _object_requests(log, f"/{BUCKET}/many/")
    assert per_object == {f"/{BUCKET}/{k}": ["GET"] for k in keys}
    # every listing request is a different one: no prefix is listed twice for one query
    listed = _listings(log)
    assert listed and len(listed) == len(set(listed)), listed

    with local_s3.recording() as log:
        s3.cursor().execute(sql).fetchall()
    assert _object_requests(log, f"/{BUCKET}/many/") == {}  # footers come from the cache

    def of_table(queries: list[str]) -> list[str]:
        """The listings of the table's prefix (not the probes for views and cache files)."""
        return sorted(q for q in queries if "prefix=many%2F" in q and "drill" not in q)

    assert of_table(listed)
    # listed less than auger.storage.listing_ttl_ms ago: the prefix is not listed again
    s3.cursor().execute("ALTER SESSION SET `auger.storage.listing_ttl_ms` = 600000")
    try:
        s3.cursor().execute(sql).fetchall()
        with local_s3.recording() as log:
            s3.cursor().execute(sql).fetchall()
        assert of_table(_listings(log)) == []
        # a change auger makes itself is seen at once
        s3.cursor().execute("CREATE TABLE s3.tmp.`ttl_probe` AS SELECT 1 AS x FROM (VALUES(1))")
        s3.cursor().execute("DROP TABLE s3.tmp.`ttl_probe`")
        with local_s3.recording() as log:
            s3.cursor().execute(sql).fetchall()
        assert of_table(_listings(log)) == of_table(listed)
    finally:
        s3.cursor().execute("ALTER SESSION RESET `auger.storage.listing_ttl_ms`")


def test_executors_read_parquet_objects_without_asking_their_size(
    s3: Connection, local_s3: LocalS3
) -> None:
    keys = [f"nohead/p{n}.parquet" for n in range(4)]
    for n, key in enumerate(keys):
        ids = list(range(n * 10, n * 10 + 10))
        buf = io.BytesIO()
        pq.write_table(pa.table({"id": ids, "name": [f"n{i}" for i in ids]}), buf, row_group_size=3)
        local_s3.put(BUCKET, key, buf.getvalue())
    sql = "SELECT id, name FROM s3.root.`nohead`"
    with local_s3.recording() as log:
        got = s3.cursor().execute(sql).fetchall()
    assert sorted(got) == [(i, f"n{i}") for i in range(40)]
    for n in range(4):  # each object's rows in file order (row groups of 3 rows)
        assert [i for i, _ in got if i // 10 == n] == list(range(n * 10, n * 10 + 10))
    # planning reads each footer by one ranged GET, the executors the footer and the columns:
    # the sizes the listing gave go along, so no request asks an object's size (a HEAD)
    per_object = _object_requests(log, f"/{BUCKET}/nohead/")
    assert set(per_object) == {f"/{BUCKET}/{k}" for k in keys}
    assert all(set(methods) == {"GET"} for methods in per_object.values()), per_object


def test_refresh_table_metadata_on_a_prefix(s3: Connection, local_s3: LocalS3) -> None:
    from auger.spark.discovery import clear_cache

    keys = [f"refreshed/{d}/p.parquet" for d in ("x=1", "x=2")]
    for n, key in enumerate(keys):
        local_s3.put(BUCKET, key, _parquet(pa.table({"id": [n, n + 10]})))
    assert rows(s3, "REFRESH TABLE METADATA s3.root.`refreshed`") == [
        (True, "Successfully updated metadata for table refreshed.")
    ]
    assert "refreshed/.drill.parquet_summary_metadata.v4" in local_s3.keys(BUCKET, "refreshed/")
    clear_cache()  # nothing kept in memory: the footers come from the cache objects
    with local_s3.recording() as log:
        s3.cursor().execute("EXPLAIN PLAN FOR SELECT id, x FROM s3.root.`refreshed`").fetchall()
    assert _object_requests(log, f"/{BUCKET}/refreshed/") == {}
    got = rows(s3, "SELECT x, SUM(id) FROM s3.root.`refreshed` GROUP BY x ORDER BY x")
    assert got == [("1", 10), ("2", 12)]


def test_a_cache_on_a_prefix_spark_cannot_read_is_not_used_and_says_so(
    s3: Connection, local_s3: LocalS3
) -> None:
    """Spark reads cache entries with its own Parquet reader, which opens ``s3a://`` objects
    only with Hadoop's S3A classes (not here): the query answers from the files, writes no
    entry that nothing would read, and its messages say why the cache was passed over."""
    body = "id,name\n" + "".join(f"{i},n{i}\n" for i in range(3000))
    local_s3.put(BUCKET, "cached/a.csvh", body)
    cur = s3.cursor()
    cur.execute(f"ALTER SESSION SET `auger.cache.location` = 's3a://{BUCKET}/raw-cache'")
    cur.execute("ALTER SESSION SET `auger.scan.local_bytes` = 0")
    sql = "SELECT COUNT(*), SUM(CAST(id AS BIGINT)), MAX(name) FROM s3.`cached`"
    want = [(3000, sum(range(3000)), "n999")]
    try:
        for cache in ("false", "true", "true"):
            cur.execute(f"ALTER SESSION SET `auger.cache.enabled` = {cache}")
            cur.execute(sql)
            assert cur.fetchall() == want
            wait_for_builds()
            notes = [w for w in cur.warnings if "raw-file cache" in w]
            if cache == "true":
                assert len(notes) == 1, cur.warnings
                assert f"s3a://{BUCKET}/raw-cache" in notes[0] and "hadoop-aws" in notes[0]
            else:
                assert notes == []
            assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 0
        assert local_s3.keys(BUCKET, "raw-cache") == []
    finally:
        cur.execute("ALTER SESSION SET `auger.cache.enabled` = false")
        cur.execute("RESET `auger.cache.location`")
