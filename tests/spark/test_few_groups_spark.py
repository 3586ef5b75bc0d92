"""Every rewrite of ``tests/sql/test_few_groups`` in Spark: the same rows as the query as it
was, and Spark's object hash aggregate where the rewritten query had its sort."""

from __future__ import annotations

from typing import Any

import pytest

from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from tests.sql.test_few_groups import HASHED, SCHEMA, rewritten

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def view(spark: Any) -> Any:
    """``t`` (the name the queries use), in the schema the rewrite was told."""
    rows = [
        (q, r, w, k, s, n, (s,), "xyz"[n % 3], str(k), (n % 4, n, k, (n % 3,)))
        for q, r, w, k, s, n in [
            (1, 0, 1, 5, "b", 3),
            (1, 1, 2, 5, "a", 4),
            (2, 0, 3, 6, None, 1),
            (None, 5, 4, 6, "c", 2),
            (2, 5, 5, 7, "bb", 9),
            (10, 0, 6, 7, "", 0),
        ]
    ]
    spark.createDataFrame(rows, SCHEMA).createOrReplaceTempView("t")
    yield
    spark.catalog.dropTempView("t")


def _rows(spark: Any, sql: str) -> list[str]:
    return sorted(map(str, spark.sql(sql).collect()))


@pytest.mark.parametrize("sql", [q for q, _ in HASHED])
def test_rewritten_query_answers_as_the_query_without_a_sort(
    spark: Any, view: Any, sql: str
) -> None:
    original = to_spark_sql(parse_statement(sql))
    assert _rows(spark, rewritten(sql)) == _rows(spark, original)
    before = spark.sql(original)._jdf.queryExecution().executedPlan().toString()
    after = spark.sql(rewritten(sql))._jdf.queryExecution().executedPlan().toString()
    assert "SortAggregate" in before, before
    assert "SortAggregate" not in after and "ObjectHashAggregate" in after, after
