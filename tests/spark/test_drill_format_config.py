"""A ``dfs`` storage configuration pasted from Drill, format options under Drill's own names,
read through SQL; and the plugin formats Drill has by default, readable with no format listed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import auger
from auger.config import FormatConfig
from auger.formats.json.plugin import with_format_options
from auger.formats.parquet_dates import auto_correct_dates
from tests.plugins.helpers import rows

#: As Drill's web console shows a ``dfs`` plugin (its workspace location replaced in the test).
DRILL_DFS = r"""
{
  "type" : "file",
  "connection" : "file:///",
  "workspaces" : {
    "data" : { "location" : "/tmp", "writable" : false, "defaultInputFormat" : null }
  },
  "formats" : {
    "psv" : { "type" : "text", "extensions" : [ "tbl" ], "fieldDelimiter" : "|",
              "extractHeader" : true },
    "json" : { "type" : "json", "extensions" : [ "json" ], "allTextMode" : true,
               "skipMalformedJSONRecords" : true },
    "parquet" : { "type" : "parquet", "autoCorrectCorruptDates" : false,
                  "enableStringsSignedMinMax" : true }
  },
  "enabled" : true
}
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("drill_blocks")
    (root / "people.tbl").write_text("name|age\nada|36\nalan|41\n")
    (root / "events.json").write_text('{"id": 1, "v": 2.5}\n{"id": oops}\n{"id": 3, "v": 4}\n')
    pq.write_table(pa.table({"n": [1, 2]}), root / "n.parquet")
    (root / "access.ltsv").write_text("host:a\tstatus:200\nhost:b\tstatus:404\n")
    (root / "app.syslog").write_text(
        "<165>1 2003-10-11T22:14:15.003Z mymachine evntslog - ID47 - An application event\n"
    )
    return root


@pytest.fixture(scope="module")
def conn(spark: Any, data: Path) -> Iterator[Any]:
    dfs = json.loads(DRILL_DFS)
    dfs["workspaces"]["data"]["location"] = str(data)
    with auger.connect(config={"storage": {"dfs": dfs}, "spark": {"master": "local[2]"}}) as c:
        yield c


@pytest.mark.spark
def test_text_options_under_drills_names(conn: Any) -> None:
    got = rows(conn, "SELECT name, age FROM dfs.data.`people.tbl` ORDER BY name")
    assert got == [("ada", "36"), ("alan", "41")]


@pytest.mark.spark
def test_json_options_under_drills_names(conn: Any) -> None:
    # allTextMode: numbers are text; skipMalformedJSONRecords: the bad record is skipped
    got = rows(conn, "SELECT id, v, typeof(v) FROM dfs.data.`events.json` ORDER BY id")
    assert got == [("1", "2.5", "VARCHAR"), ("3", "4", "VARCHAR")]


@pytest.mark.spark
def test_parquet_block_with_drills_options_reads(conn: Any) -> None:
    assert rows(conn, "SELECT SUM(n) FROM dfs.data.`n.parquet`") == [(3,)]


@pytest.mark.spark
def test_shipped_plugin_formats_need_no_format_listed(conn: Any) -> None:
    # Drill's dfs has ltsv and syslog by default; the pasted block lists neither
    got = rows(conn, "SELECT host, status FROM dfs.data.`access.ltsv` ORDER BY host")
    assert got == [("a", "200"), ("b", "404")]
    got = rows(conn, "SELECT app_name, severity FROM dfs.data.`app.syslog`")
    assert got == [("evntslog", "NOTICE")]


def test_drill_names_reach_the_readers() -> None:
    formats = json.loads(DRILL_DFS)["formats"]
    parquet = FormatConfig("parquet", "parquet", ("parquet",), formats["parquet"])
    assert auto_correct_dates(parquet.options) is False
    assert auto_correct_dates({}) is True
    js = FormatConfig("json", "json", ("json",), formats["json"])
    session = with_format_options({"store.json.all_text_mode": False}, js)
    assert session["store.json.all_text_mode"] is True
    assert session["store.json.reader.skip_invalid_records"] is True
