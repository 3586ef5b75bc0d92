"""Which ``LENGTH`` calls are counted in bytes, for columns the frame marks as ASCII text
alone (:mod:`auger.sql.planning.ascii_lengths`), and which are left as they are."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from auger.scan.cache_typed import ASCII_METADATA
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from auger.sql.planning.ascii_lengths import count_ascii_bytes

#: ``s`` and ``Name`` ASCII, ``u`` not known to be, ``m`` a map holding a string
SCHEMA = T.StructType(
    [
        T.StructField("s", T.StringType(), True, {ASCII_METADATA: True}),
        T.StructField("Name", T.StringType(), True, {ASCII_METADATA: True}),
        T.StructField("u", T.StringType()),
        T.StructField("m", T.StructType([T.StructField("s", T.StringType())])),
        T.StructField("arr", T.ArrayType(T.StringType())),
    ]
)


def rewritten(sql: str) -> str:
    return to_spark_sql(parse_statement(sql), lambda tree: count_ascii_bytes(tree, lambda: SCHEMA))


@pytest.mark.parametrize(
    ("sql", "bytes_counted"),
    [
        ("SELECT COUNT(*) FROM t WHERE LENGTH(s) > 10", 1),
        ("SELECT CHAR_LENGTH(s), CHARACTER_LENGTH(t.s) FROM t", 2),
        ("SELECT LENGTH(x.name) FROM t AS x", 1),  # any case, by the table's alias
        ("SELECT LENGTH(s) AS n, COUNT(*) FROM t GROUP BY LENGTH(s)", 2),  # still matching
        ("SELECT MAX(LENGTH(s)), MIN(LENGTH(u)) FROM t", 1),
        ("SELECT CASE WHEN u IS NULL THEN LENGTH(s) END FROM t", 1),
    ],
)
def test_length_of_ascii_text_counts_bytes(sql: str, bytes_counted: int) -> None:
    out = rewritten(sql).upper()
    assert out.count("OCTET_LENGTH(") == bytes_counted, out
    assert (
        out.count("LENGTH(") - out.count("OCTET_LENGTH(")
        == sql.upper().count("LENGTH(") - bytes_counted
    ), out


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT LENGTH(u) FROM t",  # not known to be ASCII
        "SELECT LENGTH(m.s) FROM t",  # a map's member, not a column of the frame
        "SELECT LENGTH(UPPER(s)) FROM t",  # not a column
        "SELECT LENGTH(s, 'UTF8') FROM t",  # Drill's length in an encoding
        "SELECT TRANSFORM(arr, s -> LENGTH(s)) FROM t",  # the lambda's s
        "SELECT LENGTH(s) FROM t JOIN v ON t.s = v.s",
        "SELECT LENGTH(s) FROM (SELECT * FROM t)",
        "SELECT LENGTH(y.s) FROM t",  # no table y
    ],
)
def test_other_lengths_are_left_as_they_are(sql: str) -> None:
    assert "OCTET_LENGTH" not in rewritten(sql).upper()


def test_the_schema_is_asked_for_only_when_a_query_has_a_length_of_a_column() -> None:
    def refuse() -> T.StructType:
        raise AssertionError("schema asked")

    for sql in ("SELECT s FROM t", "SELECT LENGTH('abc') FROM t", "SELECT LENGTH(UPPER(s)) FROM t"):
        to_spark_sql(parse_statement(sql), lambda tree: count_ascii_bytes(tree, refuse))
