"""Which grouped queries group a string column by its key copy's codes
(:mod:`auger.sql.planning.group_keys`), what they then read, and which are left as they are."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import types as T

from auger.scan.cache_typed import KEY_TARGET, KEYS_METADATA, typed_column, value_code
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from auger.sql.planning.group_keys import group_by_keys

VALUES = ["red", "it's", ""]
KEY = typed_column("c", KEY_TARGET)
REQUIRED_KEY = typed_column("r", KEY_TARGET)


def _keys(values: list[str]) -> dict[str, str]:
    return {KEYS_METADATA: json.dumps(sorted((value_code(v), v) for v in values))}


#: the frame: ``c`` a string of 3 values with its codes, ``r`` one that is never NULL with its
#: codes, ``u`` a string without codes, ``n`` a number
SCHEMA = T.StructType(
    [
        T.StructField("c", T.StringType(), True),
        T.StructField("r", T.StringType(), False),
        T.StructField("u", T.StringType(), True),
        T.StructField("n", T.LongType(), True),
        T.StructField(KEY, T.LongType(), True, _keys(VALUES)),
        T.StructField(REQUIRED_KEY, T.LongType(), True, _keys(["x", "y"])),
    ]
)


def rewritten(sql: str) -> str:
    return to_spark_sql(parse_statement(sql), lambda tree: group_by_keys(tree, lambda: SCHEMA))


def test_grouped_by_the_codes_and_the_string_looked_up_once_a_group() -> None:
    out = rewritten(
        "SELECT c, t.c AS x, UPPER(c) AS up, COUNT(*) AS n, MAX(c) AS m FROM t "
        "WHERE c <> 'red' GROUP BY t.c HAVING c <> '' ORDER BY c"
    )
    group = out[out.index("GROUP BY") :]
    assert f"GROUP BY `{KEY}`" in group and "GROUP BY t.c" not in group, out
    # the select list, HAVING and ORDER BY read the group's string from its code
    assert out.count("TRY_ELEMENT_AT(MAP(") == 5, out
    for value in VALUES:
        assert f"{value_code(value)}, '{value.replace(chr(39), chr(92) + chr(39))}'" in out, out
    assert " AS `c`" in out  # the bare column keeps its output name
    # WHERE and the aggregate's argument still read the column
    assert "WHERE c <> 'red'" in out and "MAX(c)" in out, out


def test_a_column_never_null_stays_never_null() -> None:
    out = rewritten("SELECT r, COUNT(*) FROM t GROUP BY r")
    assert f"GROUP BY `{REQUIRED_KEY}`" in out and "COALESCE(TRY_ELEMENT_AT(" in out, out
    assert "COALESCE" not in rewritten("SELECT c, COUNT(*) FROM t GROUP BY c")


def test_select_distinct_of_columns_is_grouped_by_the_codes() -> None:
    out = rewritten("SELECT DISTINCT t.c AS x, n FROM t WHERE n > 1 ORDER BY x")
    assert "DISTINCT" not in out and f"GROUP BY `{KEY}`, n" in out, out
    assert out.count("TRY_ELEMENT_AT(MAP(") == 1 and "WHERE n > 1" in out, out


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT u, COUNT(*) FROM t GROUP BY u",  # no codes
        "SELECT n, COUNT(*) FROM t GROUP BY n",
        "SELECT UPPER(c), COUNT(*) FROM t GROUP BY UPPER(c)",  # not the column itself
        "SELECT COUNT(*) AS c FROM t GROUP BY c ORDER BY c",  # ORDER BY c: the alias
        "SELECT n AS c, COUNT(*) FROM t GROUP BY c, n HAVING c > 1",
        "SELECT c, COUNT(*) FROM t GROUP BY ROLLUP (c)",
        "SELECT c, COUNT(*), RANK() OVER (ORDER BY COUNT(*)) FROM t GROUP BY c",
        "SELECT c, COUNT(*) FROM t JOIN v ON t.n = v.n GROUP BY c",
        "SELECT c, COUNT(*) FROM (SELECT * FROM t) GROUP BY c",
        "SELECT DISTINCT u FROM t",
        "SELECT DISTINCT UPPER(c) FROM t",
        "SELECT DISTINCT COUNT(*) FROM t",
        "SELECT c FROM t",
    ],
)
def test_left_as_it_is(sql: str) -> None:
    assert "TRY_ELEMENT_AT" not in rewritten(sql)


def test_distinct_values_are_counted_by_their_codes() -> None:
    out = rewritten("SELECT COUNT(DISTINCT c) AS k, COUNT(c) AS m FROM t WHERE c <> 'red'")
    assert f"COUNT(DISTINCT `{KEY}`) AS k" in out, out
    assert "COUNT(c) AS m" in out and "WHERE c <> 'red'" in out, out
    out = rewritten("SELECT n, COUNT(DISTINCT t.c), COUNT(DISTINCT u) FROM t GROUP BY n")
    assert f"COUNT(DISTINCT `{KEY}`)" in out and "COUNT(DISTINCT u)" in out, out
    assert "GROUP BY n" in out and "TRY_ELEMENT_AT" not in out, out
    out = rewritten("SELECT c, COUNT(DISTINCT r, n) FROM t GROUP BY c")
    assert f"GROUP BY `{KEY}`" in out and f"COUNT(DISTINCT `{REQUIRED_KEY}`, n)" in out, out
    assert out.count("TRY_ELEMENT_AT(MAP(") == 1, out


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(DISTINCT u) FROM t",  # no codes
        "SELECT COUNT(DISTINCT UPPER(c)) FROM t",  # not the column itself
        "SELECT APPROX_COUNT_DISTINCT(c) FROM t",  # an estimate of the values themselves
        "SELECT COUNT(c), MAX(c) FROM t",
        "SELECT n AS c, COUNT(DISTINCT c) FROM t GROUP BY n ORDER BY c",  # c: the alias
        "SELECT COUNT(DISTINCT c) FROM (SELECT * FROM t)",
        "SELECT COUNT(DISTINCT c) OVER (PARTITION BY n) FROM t",
    ],
)
def test_counts_left_as_they_are(sql: str) -> None:
    assert KEY not in rewritten(sql)
