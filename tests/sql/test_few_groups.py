"""Which grouped queries get a string MIN or MAX written for Spark's object hash aggregate
(:mod:`auger.sql.planning.few_groups`), and which are left as they are."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from auger.scan.cache_typed import MEMBERS_METADATA, RANGE_METADATA, VALUES_METADATA
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from auger.sql.planning.few_groups import FALLBACK_GROUPS, hash_string_extremes


def _field(
    name: str, kind: T.DataType, bounds: tuple[int, int] | None = None, values: int | None = None
) -> T.StructField:
    metadata: dict[str, object] = {RANGE_METADATA: list(bounds)} if bounds is not None else {}
    if values is not None:
        metadata[VALUES_METADATA] = values
    return T.StructField(name, kind, True, metadata)


#: ``g``: a map whose ``qty`` has 10 values, ``big`` too many, ``u`` unknown ones, and whose
#: map ``n`` has a ``k`` of 3 values
_MAP = T.StructField(
    "g",
    T.StructType(
        [
            T.StructField("qty", T.LongType()),
            T.StructField("big", T.LongType()),
            T.StructField("u", T.LongType()),
            T.StructField("n", T.StructType([T.StructField("k", T.LongType())])),
        ]
    ),
    True,
    {
        MEMBERS_METADATA: {
            "qty": {RANGE_METADATA: [0, 9]},
            "big": {RANGE_METADATA: [1, FALLBACK_GROUPS]},
            "n": {MEMBERS_METADATA: {"k": {RANGE_METADATA: [1, 3]}}},
        }
    },
)

#: the frame: ``q``, ``r`` integers of known ranges, ``wide`` one of too many values, ``k``
#: one of unknown values, ``s`` a string, ``n`` a number, ``m`` a map holding a string ``s``,
#: ``c`` a string of 3 values, ``cat`` one of too many, the map ``g``
SCHEMA = T.StructType(
    [
        _field("q", T.IntegerType(), (1, 10)),
        _field("r", T.LongType(), (0, 5)),
        _field("wide", T.IntegerType(), (1, FALLBACK_GROUPS)),
        _field("k", T.IntegerType()),
        _field("s", T.StringType()),
        _field("n", T.LongType()),
        _field("m", T.StructType([T.StructField("s", T.StringType())])),
        _field("c", T.StringType(), values=3),
        _field("cat", T.StringType(), values=FALLBACK_GROUPS),
        _MAP,
    ]
)

HASHED = [
    # (query, its Spark SQL's aggregate)
    ("SELECT q, MAX(s) FROM t GROUP BY q", "COALESCE(MAX(s), GET(COLLECT_LIST("),
    ("SELECT q, MIN(t.s) AS lo FROM t GROUP BY q", "COALESCE(MIN(t.s), GET(COLLECT_LIST("),
    ("SELECT q, r, MAX(n), MAX(s) FROM t GROUP BY q, r", "COALESCE(MAX(s), GET("),
    ("SELECT q, MAX(s) FROM t GROUP BY q HAVING COUNT(*) > 1 ORDER BY q", "COALESCE(MAX(s)"),
    ("SELECT c, q, MIN(s) FROM t GROUP BY c, q", "COALESCE(MIN(s)"),  # 4 * 11 groups
    ("SELECT c, MAX(c) FROM t GROUP BY c", "COALESCE(MAX(c)"),
    # a map's member of known range, however the query names it
    ("SELECT g.qty, MAX(s) FROM t GROUP BY g.qty", "COALESCE(MAX(s)"),
    ("SELECT t.g.qty AS q, MAX(s) FROM t GROUP BY t.g.qty", "COALESCE(MAX(s)"),
    ("SELECT x.G.Qty AS q, MAX(s) FROM t AS x GROUP BY x.G.Qty", "COALESCE(MAX(s)"),
    ("SELECT g.n.k, q, MAX(s) FROM t GROUP BY g.n.k, q", "COALESCE(MAX(s)"),  # 4 * 11 groups
]

LEFT = [
    "SELECT MAX(s) FROM t",  # no groups: Spark's aggregate sorts nothing
    "SELECT k, MAX(s) FROM t GROUP BY k",  # how many groups is unknown
    "SELECT wide, MAX(s) FROM t GROUP BY wide",  # more than Spark's hash map keeps
    "SELECT q, wide, MAX(s) FROM t GROUP BY q, wide",
    "SELECT cat, MAX(s) FROM t GROUP BY cat",  # its values and NULL: one too many
    "SELECT c, r, q, MAX(s) FROM t GROUP BY c, r, q",  # 4 * 7 * 11 groups
    "SELECT q, MAX(n) FROM t GROUP BY q",  # a number: Spark's hash aggregate holds it
    "SELECT q, MAX(m.s) FROM t GROUP BY q",  # a map's member, not a column of the frame
    "SELECT q, MAX(UPPER(s)) FROM t GROUP BY q",  # of unknown type
    "SELECT q, MAX(s) FILTER (WHERE n > 1) FROM t GROUP BY q",
    "SELECT q, MAX(s) FROM t GROUP BY ROLLUP(q)",
    "SELECT q AS g, MAX(s) FROM t GROUP BY g",  # an alias: not the frame's column
    "SELECT q, MAX(s) FROM t JOIN u ON t.q = u.q GROUP BY q",
    "SELECT q, MAX(s) FROM (SELECT * FROM t) GROUP BY q",
    "SELECT g.big, MAX(s) FROM t GROUP BY g.big",  # a member of too many values
    "SELECT g.u, MAX(s) FROM t GROUP BY g.u",  # a member of unknown values
    "SELECT g.n, MAX(s) FROM t GROUP BY g.n",  # a map
    "SELECT g.qty, MAX(s) FROM t AS g GROUP BY g.qty",  # the table's column qty: none
    "SELECT y.g.qty, MAX(s) FROM t GROUP BY y.g.qty",  # no column y
    "SELECT g.qty, q, r, MAX(s) FROM t GROUP BY g.qty, q, r",  # 11 * 11 * 7 groups
]


def rewritten(sql: str) -> str:
    return to_spark_sql(parse_statement(sql), lambda tree: hash_string_extremes(tree, asked))


def asked() -> T.StructType:
    return SCHEMA


@pytest.mark.parametrize(("sql", "aggregate"), HASHED)
def test_string_extreme_over_few_groups_is_hashed(sql: str, aggregate: str) -> None:
    out = rewritten(sql)
    assert aggregate.upper() in out.upper().replace("`", ""), out
    assert out.upper().count("COLLECT_LIST") == 1, out  # one is enough for the whole aggregate


@pytest.mark.parametrize("sql", LEFT)
def test_other_queries_are_left_as_they_are(sql: str) -> None:
    assert "collect_list" not in rewritten(sql).lower()


def test_the_schema_is_asked_for_only_when_a_query_could_qualify() -> None:
    def refuse() -> T.StructType:
        raise AssertionError("schema asked")

    for sql in ("SELECT MAX(s) FROM t", "SELECT q, COUNT(*) FROM t GROUP BY q"):
        to_spark_sql(parse_statement(sql), lambda tree: hash_string_extremes(tree, refuse))
