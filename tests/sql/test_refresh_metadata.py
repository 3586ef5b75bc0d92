"""``REFRESH TABLE METADATA`` through SQL: Drill's statement forms and answers, and queries over
a refreshed directory (same answers, no footer read while the cache is valid, the files again
once the directory changed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from auger.formats.parquet_metadata import FILES_FILE, SUMMARY_FILE
from auger.spark.discovery import clear_cache

from .helpers import rows

NOT_SUPPORTED = (
    "does not support metadata refresh. Support is currently limited to directory-based "
    "Parquet tables."
)


def _orders(root: Path) -> None:
    for region, base in (("eu", 0), ("us", 100)):
        d = root / f"region={region}"
        d.mkdir(parents=True)
        for part in range(3):
            start = base + part * 10
            pq.write_table(
                pa.table({"id": list(range(start, start + 10)), "qty": [part] * 10}),
                d / f"p{part}.parquet",
            )


def test_refresh_forms_write_the_cache(conn: Any, data_dir: Path) -> None:
    _orders(data_dir / "orders")
    for form in ("", "COLUMNS (id, `qty`) ", "columns none "):
        got = rows(conn, f"REFRESH TABLE METADATA {form}dfs.data.`orders`")
        assert got == [(True, "Successfully updated metadata for table orders.")]
    assert (data_dir / "orders" / SUMMARY_FILE).is_file()
    assert (data_dir / "orders" / "region=eu" / FILES_FILE).is_file()
    cur = conn.cursor()
    cur.execute("REFRESH TABLE METADATA dfs.data.orders")
    assert [d[0] for d in cur.description] == ["ok", "summary"]


def test_refresh_answers_drills_words_for_other_tables(conn: Any, data_dir: Path) -> None:
    (data_dir / "jdir").mkdir()
    (data_dir / "jdir" / "a.json").write_text('{"a": 1}\n')
    (data_dir / "empty").mkdir()
    rows(conn, "CREATE OR REPLACE VIEW dfs.tmp.refresh_view AS SELECT 1 AS one FROM (VALUES(1))")
    cases = {
        "dfs.data.`jdir`": (False, f"Table jdir {NOT_SUPPORTED}"),
        "cp.`tpch/nation.parquet`": (False, f"Table tpch/nation.parquet {NOT_SUPPORTED}"),
        "dfs.tmp.refresh_view": (False, f"Table refresh_view {NOT_SUPPORTED}"),
        "dfs.data.`nothere`": (False, "Table nothere does not exist."),
        "dfs.data.`empty`": (False, "Table empty is empty and doesn't contain any parquet files."),
        "dfs.incorrect.table_name": (
            False,
            "Storage plugin or workspace does not exist [dfs.incorrect]",
        ),
        "dfs.data.`orders*`": (False, "Glob path orders* not supported for metadata refresh"),
    }
    for table, answer in cases.items():
        assert rows(conn, f"REFRESH TABLE METADATA {table}") == [answer], table
    assert not (data_dir / "jdir" / SUMMARY_FILE).exists()


def test_refresh_of_a_directory_holding_a_broken_file_says_which(conn: Any, data_dir: Path) -> None:
    _orders(data_dir / "broken")
    (data_dir / "broken" / "region=us" / "bad.parquet").write_text("not parquet")
    ((ok, summary),) = rows(conn, "REFRESH TABLE METADATA dfs.data.`broken`")
    assert ok is False and summary.startswith("Error: ")
    assert not (data_dir / "broken" / SUMMARY_FILE).exists()


QUERIES = (
    "SELECT region, SUM(qty) AS s, COUNT(*) AS n FROM dfs.data.`{t}` GROUP BY region "
    "ORDER BY region",
    "SELECT id, dir0 FROM dfs.data.`{t}` WHERE id BETWEEN 105 AND 112 ORDER BY id",
    "SELECT COUNT(*) FROM dfs.data.`{t}`",
)


def test_a_refreshed_table_plans_from_its_cache(
    conn: Any, data_dir: Path, footer_reads: list[str]
) -> None:
    _orders(data_dir / "cached")
    before = [rows(conn, q.format(t="cached")) for q in QUERIES]
    assert len(set(footer_reads)) == 6
    rows(conn, "REFRESH TABLE METADATA dfs.data.`cached`")
    clear_cache()  # as a fresh engine would start: nothing kept in memory
    footer_reads.clear()
    after = [rows(conn, q.format(t="cached")) for q in QUERIES]
    assert after == before
    assert footer_reads == []
    # a file added after the refresh: the directory is planned from its files again
    extra = data_dir / "cached" / "region=eu" / "p9.parquet"
    pq.write_table(pa.table({"id": [50], "qty": [7]}), extra)
    later = (data_dir / "cached" / SUMMARY_FILE).stat().st_mtime + 5
    os.utime(extra.parent, (later, later))
    clear_cache()
    footer_reads.clear()
    got = rows(conn, QUERIES[0].format(t="cached"))
    assert got == [("eu", 30 + 7, 31), ("us", 30, 30)]
    assert len(footer_reads) == 7
