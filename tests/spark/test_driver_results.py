"""Results Spark already holds on the driver are fetched without a Spark job, unchanged; a query
over a few small files runs as one task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auger.spark import jobs

pytestmark = pytest.mark.spark

# constants of many types: Spark folds each query into rows held by its plan
CONSTANT_QUERIES = [
    "SELECT 1 AS x FROM VALUES (1) AS t(c)",
    "SELECT * FROM VALUES (1, 'a'), (2, NULL), (3, 'c') AS t(n, s)",
    "SELECT * FROM VALUES (1), (2) AS t(n) WHERE n > 5",
    "SELECT n, CAST(n AS DECIMAL(10, 3)) / 7 AS d, TIMESTAMP '2024-02-29 12:34:56.789' AS ts, "
    "DATE '1999-12-31' AS dt, X'CAFE' AS b, ARRAY(n, NULL) AS a, MAP('k', n) AS m, "
    "NAMED_STRUCT('x', n, 'y', ARRAY('p')) AS st FROM VALUES (1), (2) AS t(n)",
    # no FROM: a projection of Spark's one empty row, computed on the driver
    "SELECT 1 AS x",
    "SELECT CAST(NULL AS INT) AS n, CAST(1 AS DECIMAL(10, 3)) / 7 AS d, "
    "TIMESTAMP '2024-02-29 12:34:56.789' AS ts, DATE '1999-12-31' AS dt, X'CAFE' AS b, "
    "ARRAY(1, NULL) AS a, MAP('k', 2) AS m, NAMED_STRUCT('x', 3, 'y', ARRAY('p')) AS st",
    # seeded by the partition's index, as the task would be
    "SELECT rand(7) AS r, randn(7) AS g",
]


def _jobs_of(spark: Any, group: str) -> list[int]:
    return list(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


@pytest.mark.parametrize("sql", CONSTANT_QUERIES)
def test_rows_on_the_driver_equal_to_arrow_and_start_no_job(spark: Any, sql: str) -> None:
    expected = spark.sql(sql).toArrow()
    group = f"driver-result-{abs(hash(sql))}"
    got = jobs.arrow_table(spark.sql(sql), group, sql)
    assert got.schema == expected.schema
    assert got.to_pylist() == expected.to_pylist()
    assert _jobs_of(spark, group) == []


def test_other_plans_still_run_on_spark(spark: Any) -> None:
    sql = "SELECT id % 3 AS k, COUNT(*) AS n FROM range(10) GROUP BY id % 3 ORDER BY k"
    group = "driver-result-range"
    got = jobs.arrow_table(spark.sql(sql), group, sql)
    assert got.to_pylist() == [{"k": 0, "n": 4}, {"k": 1, "n": 3}, {"k": 2, "n": 3}]
    assert _jobs_of(spark, group)


def test_a_query_without_from_needing_a_subquery_job_still_runs_it(spark: Any) -> None:
    sql = "SELECT (SELECT MAX(id) FROM range(5)) AS m, 1 AS one"
    group = "driver-result-subquery"
    got = jobs.arrow_table(spark.sql(sql), group, sql)
    assert got.to_pylist() == [{"m": 4, "one": 1}]
    assert _jobs_of(spark, group)


def test_select_without_from_through_the_dbapi_starts_no_job(conn: Any) -> None:
    spark = conn.session.engine.spark
    cur = conn.cursor()
    cur.execute("SELECT 1 + 1 AS two, 'a' AS s")
    assert cur.fetchall() == [(2, "a")]
    assert _jobs_of(spark, cur.job_group or "") == []


@pytest.fixture
def small_json(tmp_path: Path) -> Path:
    path = tmp_path / "people.json"
    rows = [{"dept": f"d{i % 3}", "pay": i, "name": f"p{i}"} for i in range(300)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_group_by_over_a_small_file_is_one_task(conn: Any, small_json: Path) -> None:
    spark = conn.session.engine.spark
    cur = conn.cursor()
    cur.execute(
        f"SELECT dept, COUNT(*) AS n, SUM(pay) AS s FROM dfs.`{small_json}` "
        "GROUP BY dept ORDER BY dept"
    )
    rows = cur.fetchall()
    assert rows == [
        ("d0", 100, sum(range(0, 300, 3))),
        ("d1", 100, sum(range(1, 300, 3))),
        ("d2", 100, sum(range(2, 300, 3))),
    ]
    tracker = spark.sparkContext.statusTracker()
    stages = [
        tracker.getStageInfo(s)
        for j in tracker.getJobIdsForGroup(cur.job_group)
        for s in tracker.getJobInfo(j).stageIds
    ]
    # no shuffle: the rows read on the driver are one partition
    assert [s.numTasks for s in stages if s is not None] == [1]


def test_filter_over_a_small_file_starts_no_job(conn: Any, small_json: Path) -> None:
    spark = conn.session.engine.spark
    cur = conn.cursor()
    cur.execute(f"SELECT name FROM dfs.`{small_json}` WHERE pay IN (4, 250) ORDER BY name")
    assert cur.fetchall() == [("p250",), ("p4",)]
    cur.execute(f"SELECT name, pay FROM dfs.`{small_json}` WHERE pay < 3")
    assert cur.fetchall() == [("p0", 0), ("p1", 1), ("p2", 2)]
    assert _jobs_of(spark, cur.job_group) == []
