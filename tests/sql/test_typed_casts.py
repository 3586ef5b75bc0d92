"""Which casts of a query are read from the scan frame's typed columns, and which stay."""

from __future__ import annotations

import pytest

from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from auger.sql.planning.typed_casts import read_typed_casts

CASTS = {
    ("a", "DOUBLE"): "a_double",
    ("a", "INT"): "a_int",
    ("b", "BIGINT"): "b_bigint",
}

#: (query, what its Spark SQL reads instead of a cast); ``tests/spark/test_typed_casts_spark``
#: runs them in Spark, beside the query as it was
READ = [
    ("SELECT SUM(CAST(a AS DOUBLE)) FROM t", "SUM(`a_double`)"),
    ("SELECT CAST(A AS DOUBLE) + 1 FROM t", "`a_double` + 1"),
    ("SELECT MAX(CAST(b AS BIGINT)) FROM t WHERE CAST(a AS INT) > 3", "`a_int` > 3"),
    ("SELECT CAST(a AS INTEGER) k, COUNT(*) FROM t GROUP BY CAST(a AS INTEGER)", "BY `a_int`"),
    ("SELECT t.b FROM dfs.x t ORDER BY CAST(t.b AS BIGINT)", "BY `t`.`b_bigint`"),
    ("SELECT CAST(CAST(a AS INT) AS VARCHAR) FROM t", "CAST(`a_int` AS STRING)"),
    # an alias of the column's name: the table's column everywhere but ORDER BY, HAVING
    ("SELECT CAST(a AS DOUBLE) AS a FROM t", "`a_double` AS a FROM"),
    ("SELECT b AS a FROM t WHERE CAST(a AS INT) > 3", "WHERE `a_int` > 3"),
    # grouped: inside aggregates, or grouped by the cast itself (replaced everywhere)
    ("SELECT k, SUM(CAST(a AS DOUBLE)) FROM t GROUP BY k", "SUM(`a_double`)"),
    ("SELECT DISTINCT CAST(a AS INT) AS q FROM t", "DISTINCT `a_int` AS q"),
    (
        "SELECT CAST(a AS INT) q, MAX(CAST(b AS BIGINT)) FROM t GROUP BY CAST(a AS INT) "
        "ORDER BY CAST(a AS INT)",
        "SELECT `a_int` AS q, MAX(`b_bigint`) AS `EXPR$1` FROM t GROUP BY `a_int` ORDER BY `a_int`",
    ),
    # WHERE filters the rows before they are grouped: its casts are decided on their own
    ("SELECT k, COUNT(*) FROM t WHERE CAST(a AS INT) > 1 GROUP BY k", "WHERE `a_int` > 1"),
    ("SELECT DISTINCT k FROM t WHERE CAST(a AS INT) > 1", "WHERE `a_int` > 1"),
    (
        "SELECT a, CAST(a AS INT) FROM t WHERE CAST(a AS INT) > 1 GROUP BY a",
        "`a`, CAST(a AS INT) AS `EXPR$1` FROM t WHERE `a_int` > 1",
    ),
]

#: queries whose casts stay
KEPT = [
    # evaluated only for some rows (a file parsed beside the entries could fail the cast
    # where the query would not have cast the value)
    "SELECT CASE WHEN a = 'x' THEN 0 ELSE CAST(a AS DOUBLE) END FROM t",
    "SELECT COALESCE(CAST(a AS DOUBLE), 0) FROM t",
    "SELECT * FROM t WHERE a <> 'x' AND CAST(a AS INT) > 3",
    "SELECT SUM(CAST(a AS DOUBLE)) FILTER (WHERE a <> 'x') FROM t",
    "SELECT k, SUM(CAST(a AS DOUBLE)) FILTER (WHERE CAST(a AS INT) > 1) FROM t GROUP BY k",
    # an aggregate's FILTER (WHERE ...) is not the query's WHERE: its cast refuses the others
    "SELECT MAX(CAST(a AS INT)), COUNT(*) FILTER (WHERE CAST(a AS INT) > 1) FROM t",
    "SELECT TRY_CAST(a AS DOUBLE) FROM t",
    "SELECT NULLIF(CAST(a AS INT), 0) FROM t",
    # not a target a copy answers, or not the column
    "SELECT CAST(a AS FLOAT) FROM t",
    "SELECT CAST(b AS INT) FROM t",
    "SELECT CAST(a || '1' AS DOUBLE) FROM t",
    # a map's member of the column's name (Spark would look for the frame's column in the map)
    "SELECT CAST(m.a AS DOUBLE) FROM t",
    "SELECT SUM(CAST(t.m.a AS DOUBLE)) FROM t",
    # the name could mean an alias, or another table's column
    "SELECT b AS a FROM t ORDER BY CAST(a AS DOUBLE)",
    "SELECT b AS a, COUNT(*) FROM t GROUP BY b HAVING MAX(CAST(a AS INT)) > 1",
    "SELECT CAST(t.a AS DOUBLE) FROM t JOIN u ON t.k = u.k",
    "SELECT CAST(a AS DOUBLE) FROM (SELECT a FROM t)",
    "SELECT CAST(a AS DOUBLE) FROM t UNION ALL SELECT 1",
    # grouped by something else than the cast: outside an aggregate it must stay the
    # expression Spark matches with the grouping (and so everywhere else too)
    "SELECT a, CAST(a AS INT) FROM t GROUP BY a",
    "SELECT a, SUM(CAST(a AS INT)) OVER () FROM t GROUP BY a",
    "SELECT CAST(a AS INT) AS q, COUNT(*) FROM t GROUP BY q",
    "SELECT DISTINCT a FROM t ORDER BY CAST(a AS INT)",
    "SELECT CAST(a AS INT), COUNT(*) FROM t GROUP BY ROLLUP(CAST(a AS INT))",
    # one place it may not be replaced: replaced nowhere
    "SELECT CASE WHEN CAST(a AS INT) > 1 THEN 'big' END, COUNT(*) FROM t GROUP BY CAST(a AS INT)",
]


def rewritten(sql: str) -> str:
    """The query's Spark SQL with the casts of :data:`CASTS` read from the frame."""
    return to_spark_sql(parse_statement(sql), lambda tree: read_typed_casts(tree, CASTS))


@pytest.mark.parametrize(("sql", "read"), READ)
def test_casts_read_from_the_frame(sql: str, read: str) -> None:
    assert read in rewritten(sql)


@pytest.mark.parametrize("sql", KEPT)
def test_casts_kept(sql: str) -> None:
    out = rewritten(sql)
    assert "a_double" not in out and "a_int" not in out and "b_bigint" not in out, out
