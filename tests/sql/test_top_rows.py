"""Which sorted queries with a LIMIT find their first rows by their key first
(:mod:`auger.sql.planning.top_rows`), how, and which are left as they are."""

from __future__ import annotations

import pytest

from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from auger.sql.planning.top_rows import MAX_ROWS, bound_first_rows


def rewritten(sql: str, cheap: bool = True) -> str:
    asked = []

    def rereads_cheaply() -> bool:
        asked.append(True)
        return cheap

    return to_spark_sql(parse_statement(sql), lambda tree: bound_first_rows(tree, rereads_cheaply))


#: queries the rule bounds, each with a key the same rows have; ``id`` breaks ties, so each
#: order is one (tests/spark/test_top_rows_spark.py runs them)
BOUNDED = [
    "SELECT * FROM t ORDER BY k DESC, id LIMIT 3",
    "SELECT * FROM t ORDER BY k, id LIMIT 3",
    "SELECT * FROM t ORDER BY k NULLS FIRST, id LIMIT 2",
    "SELECT * FROM t ORDER BY k DESC NULLS FIRST, id LIMIT 4",
    "SELECT id, s FROM t WHERE s <> 'x' OR s IS NULL ORDER BY k DESC, id LIMIT 2",
    "SELECT id, k * 2 AS twice FROM t ORDER BY twice DESC, id LIMIT 2",
    "SELECT id, s FROM t ORDER BY -(k + 1), id LIMIT 3",
    "SELECT id, k FROM t ORDER BY s DESC, id LIMIT 3",
    "SELECT * FROM t ORDER BY k, id LIMIT 100",  # more than the rows
    "SELECT * FROM t WHERE k IS NULL ORDER BY k, id LIMIT 2",  # every key NULL
    "SELECT * FROM t WHERE id > 100 ORDER BY k, id LIMIT 2",  # no rows
]


@pytest.mark.parametrize("sql", BOUNDED)
def test_bounded_by_the_first_key(sql: str) -> None:
    out = rewritten(sql)
    assert "__auger_first_key" in out and " IS NULL" in out, out
    assert out.count("LIMIT") == 2, out


def test_the_bound_is_the_last_kept_key_of_the_query_itself() -> None:
    out = rewritten("SELECT a, b AS x FROM t WHERE a > 1 OR b < 2 ORDER BY x DESC, a LIMIT 5")
    assert out == (
        "SELECT a AS `a`, b AS x FROM t WHERE (a > 1 OR b < 2) AND (b >= (SELECT "
        "MIN(`__auger_first_key`) FROM (SELECT b AS `__auger_first_key` FROM t WHERE a > 1 OR "
        "b < 2 ORDER BY b DESC LIMIT 5) AS __auger_first_rows) OR b IS NULL) "
        "ORDER BY x DESC, a NULLS LAST LIMIT 5"
    ), out
    out = rewritten("SELECT * FROM t ORDER BY a LIMIT 5")
    assert "a <= (SELECT MAX(`__auger_first_key`)" in out, out


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM t ORDER BY a LIMIT 5",  # nothing read besides the key
        "SELECT * FROM t ORDER BY a",
        f"SELECT * FROM t ORDER BY a LIMIT {MAX_ROWS + 1}",
        "SELECT * FROM t ORDER BY a LIMIT 5 OFFSET 5",
        "SELECT * FROM t ORDER BY 1 LIMIT 5",
        "SELECT * FROM t ORDER BY CAST(a AS DOUBLE) LIMIT 5",  # a cast of strings costs more
        "SELECT * FROM t ORDER BY UPPER(a) LIMIT 5",
        "SELECT * FROM t ORDER BY RAND() LIMIT 5",
        "SELECT * FROM t ORDER BY 'a' LIMIT 5",
        "SELECT DISTINCT a, b FROM t ORDER BY a LIMIT 5",
        "SELECT a, COUNT(*) FROM t GROUP BY a ORDER BY a LIMIT 5",
        "SELECT MAX(a) AS m, MIN(b) FROM t ORDER BY m LIMIT 5",
        "SELECT a, RANK() OVER (ORDER BY b) FROM t ORDER BY a LIMIT 5",
        "SELECT t.a, v.b FROM t JOIN v ON t.id = v.id ORDER BY t.a LIMIT 5",
        "SELECT a, b FROM (SELECT * FROM t) ORDER BY a LIMIT 5",
        "SELECT a, b FROM t WHERE a IN (SELECT a FROM v) ORDER BY a LIMIT 5",
        "SELECT a, b FROM t ORDER BY v.a LIMIT 5",  # not the table's column
        "SELECT a, b FROM t ORDER BY a FETCH FIRST 5 ROWS ONLY",
    ],
)
def test_left_as_it_is(sql: str) -> None:
    assert "__auger_first_key" not in rewritten(sql)


def test_a_table_costly_to_read_twice_is_read_once() -> None:
    assert "__auger_first_key" not in rewritten("SELECT * FROM t ORDER BY a LIMIT 5", False)
