"""Iceberg and Delta tables in an S3 workspace (a local S3-compatible server): the metadata is
read with the workspace's own settings, the data files through auger's object-store scan."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyiceberg.catalog.sql import SqlCatalog

from auger.dbapi import Connection
from auger.engine import Engine
from tests.sql.helpers import error, rows
from tests.sql.iceberg_files import append_file
from tests.storage.s3_helpers import ACCESS_KEY, SECRET_KEY, LocalS3

BUCKET = "auger-lake"


@pytest.fixture(scope="module")
def lake_engine(spark: Any, local_s3: LocalS3, tmp_path_factory: Any) -> Iterator[Engine]:
    bucket = local_s3.bucket(BUCKET)
    catalog_dir = tmp_path_factory.mktemp("iceberg_catalog")
    catalog = SqlCatalog(
        "s3test",
        uri=f"sqlite:///{catalog_dir}/catalog.db",
        warehouse=f"s3://{bucket}/wh",
        **{
            "s3.endpoint": local_s3.endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": "us-east-1",
        },
    )
    catalog.create_namespace("ns")
    table = catalog.create_table("ns.t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    table.append(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}))
    table.delete("id = 3")
    # a table of Avro and ORC data files besides a Parquet one, the files put in the bucket
    mixed = catalog.create_table("ns.mixed", table.schema())
    mixed.append(pa.table({"id": [1], "v": ["p"]}))
    local = tmp_path_factory.mktemp("iceberg_files")
    for i, name in ((2, "two.avro"), (3, "three.orc")):
        key = f"wh/ns/mixed/data/{name}"
        rows_of = pa.table({"id": [i], "v": [name]}, mixed.schema().as_arrow())
        out = local / name
        append_file(mixed, rows_of, str(out), store_path=f"s3://{bucket}/{key}")
        local_s3.put(bucket, key, out.read_bytes())
    store = {
        "AWS_ENDPOINT_URL": local_s3.endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
    }
    delta = f"s3://{bucket}/delta"
    write_deltalake(delta, pa.table({"id": [1, 2]}), storage_options=store)
    write_deltalake(delta, pa.table({"id": [3]}), mode="append", storage_options=store)
    DeltaTable(delta, storage_options=store).delete("id = 1")
    eng = Engine({"storage": {"s3": local_s3.plugin(bucket)}, "spark": {"master": "local[2]"}})
    yield eng
    eng.shutdown()


@pytest.fixture
def s3(lake_engine: Engine) -> Iterator[Connection]:
    c = Connection(lake_engine.open_session("tester"))
    yield c
    c.close()


def test_iceberg_table_on_s3(s3: Connection) -> None:
    assert rows(s3, "SELECT id, v FROM s3.root.`wh/ns/t` ORDER BY id") == [(1, "a"), (2, "b")]
    snapshots = rows(s3, "SELECT COUNT(*) FROM s3.root.`wh/ns/t#snapshots`")
    assert snapshots[0][0] >= 2


def test_iceberg_avro_and_orc_data_files_on_s3(s3: Connection) -> None:
    got = rows(s3, "SELECT id, v, filename FROM s3.root.`wh/ns/mixed` ORDER BY id")
    assert [r[:2] for r in got] == [(1, "p"), (2, "two.avro"), (3, "three.orc")]
    assert [r[2] for r in got][1:] == ["two.avro", "three.orc"]


def test_delta_table_on_s3(s3: Connection) -> None:
    assert rows(s3, "SELECT id FROM s3.root.delta ORDER BY id") == [(2,), (3,)]
    assert rows(s3, "SELECT id FROM table(s3.root.delta(version => 0)) ORDER BY id") == [
        (1,),
        (2,),
    ]
    text = error(s3, "SELECT * FROM table(s3.root.delta(version => 5))")
    assert "Version [5] not found in Delta table [s3a://auger-lake/delta]" in text
