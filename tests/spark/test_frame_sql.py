"""The planner's tables reach Spark as DataFrames passed to ``spark.sql``: nothing is left in the
session's catalog but the views of the engine's kept frames (until they leave), and braces in
the statement are the statement's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from auger.spark.frame_sql import frame_names, sql_over_frames

pytestmark = pytest.mark.spark


def _temporary_views(spark: Any) -> list[str]:
    return sorted(t.name for t in spark.catalog.listTables() if t.isTemporary)


def test_queries_leave_no_view_in_the_catalog(
    conn: Any, engine: Any, spark: Any, data_dir: Path
) -> None:
    (data_dir / "fs_a.csv").write_text("1,x\n2,y\n")
    (data_dir / "fs_b.json").write_text('{"k": 1, "s": "{one}"}\n{"k": 2, "s": "{two}"}\n')
    before = _temporary_views(spark)
    cur = conn.cursor()
    cur.execute(
        "SELECT a.columns[1] AS c, b.s AS s, '{not a placeholder}' AS lit "
        "FROM dfs.data.`fs_a.csv` a JOIN dfs.data.`fs_b.json` b "
        "ON CAST(a.columns[0] AS INT) = b.k WHERE b.s <> '}{' ORDER BY c"
    )
    assert cur.fetchall() == [
        ("x", "{one}", "{not a placeholder}"),
        ("y", "{two}", "{not a placeholder}"),
    ]
    # a lazy result built before another query still reads its own tables
    lazy = conn.sql("SELECT s FROM dfs.data.`fs_b.json` ORDER BY s")
    assert conn.cursor().execute("SELECT COUNT(*) FROM dfs.data.`fs_a.csv`").fetchall() == [(2,)]
    assert [r[0] for r in lazy.collect()] == ["{one}", "{two}"]
    # the small files' frames are kept, each as a view, until they leave
    kept = engine.kept_frames.view_names()
    left = set(_temporary_views(spark)) - set(before)
    assert left and left <= kept
    engine.kept_frames.clear()
    assert set(_temporary_views(spark)) == set(before) - kept


def test_names_are_unique_per_query_and_bound_as_dataframes(spark: Any) -> None:
    first, second = frame_names(2), frame_names(2)
    assert len(set(first + second)) == 4
    assert all(name.isidentifier() for name in first)
    left, right = spark.range(3), spark.range(2, 5)
    sql = (
        f"SELECT l.id, '{{0}} {{x}}' AS text FROM {first[0]} l JOIN {first[1]} AS r ON l.id = r.id"
    )
    out = sql_over_frames(spark, sql, {first[0]: left, first[1]: right}).collect()
    assert [(r.id, r.text) for r in out] == [(2, "{0} {x}")]
    assert sql_over_frames(spark, "SELECT '{}' AS b", {}).collect()[0].b == "{}"


def test_tables_with_a_view_are_written_as_the_view_and_the_others_bound(spark: Any) -> None:
    first = frame_names(2)
    spark.range(3).createOrReplaceTempView("kept_view_test")
    try:
        sql = f"SELECT l.id, '{{x}}' AS t FROM {first[0]} l JOIN {first[1]} r ON l.id = r.id"
        frames = {first[0]: spark.range(3), first[1]: spark.range(2, 5)}
        both = sql_over_frames(spark, sql, frames, {first[0]: "kept_view_test"}).collect()
        assert [(r.id, r.t) for r in both] == [(2, "{x}")]
        # every table a view: nothing bound, and the braces stay as written
        alone = f"SELECT COUNT(*) AS n, '{{x}}' AS t FROM {first[0]}"
        got = sql_over_frames(spark, alone, {first[0]: None}, {first[0]: "kept_view_test"})
        assert [(r.n, r.t) for r in got.collect()] == [(3, "{x}")]
    finally:
        spark.catalog.dropTempView("kept_view_test")
