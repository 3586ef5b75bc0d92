"""Every rewrite of ``tests/sql/test_typed_casts`` in Spark: a query Spark analyses as it was
still analyses with its casts read from the frame, and gives the same rows."""

from __future__ import annotations

from typing import Any

import pytest

from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from tests.sql.test_typed_casts import KEPT, READ, rewritten

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def views(spark: Any) -> Any:
    """``t`` and ``u`` (the names the queries use): string columns, the frame's columns of
    their casts and a map ``m``."""
    rows = [("1", "10", 1), ("2", "20", 1), ("3", "30", 2), (None, "7", 2)]
    frame = spark.createDataFrame(rows, "a string, b string, k int").selectExpr(
        "*",
        "CAST(a AS DOUBLE) a_double",
        "CAST(a AS INT) a_int",
        "CAST(b AS BIGINT) b_bigint",
        "named_struct('a', b) AS m",  # a map whose member has a column's name
    )
    for name in ("t", "u"):
        frame.createOrReplaceTempView(name)
    yield
    for name in ("t", "u"):
        spark.catalog.dropTempView(name)


def _rows(spark: Any, sql: str) -> list[str]:
    return sorted(map(str, spark.sql(sql).collect()))


@pytest.mark.parametrize("sql", [q for q, _ in READ] + KEPT)
def test_rewritten_query_answers_as_the_query(spark: Any, views: Any, sql: str) -> None:
    sql = sql.replace("dfs.x", "t")
    assert _rows(spark, rewritten(sql)) == _rows(spark, to_spark_sql(parse_statement(sql)))
