"""Which queries aggregate only the rows that can hold an extreme
(:mod:`auger.sql.planning.extreme_bounds`), the filter they get from a sample, and which are
left as they are. ``tests/spark/test_extreme_bounds_spark.py`` runs them in Spark."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import types as T

from auger.scan.cache_typed import MEMBERS_METADATA, RANGE_METADATA
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from auger.sql.planning.extreme_bounds import MAX_KEYS, Sample, Sampler, bound_extremes

#: ``t``: ``k`` an integer key with NULLs, ``g`` a text key, ``e`` an integer key of the
#: values 0-3 (its range in its metadata) never NULL, ``s`` text with NULLs, quotes,
#: backslashes and non-ASCII letters, ``id`` and ``n`` integers, ``m`` a struct (NULL in some
#: rows) whose ``qty`` holds 0-2 (its range in the struct's metadata) and NULL
SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("k", T.IntegerType()),
        T.StructField("g", T.StringType()),
        T.StructField("e", T.LongType(), True, {RANGE_METADATA: [0, 3]}),
        T.StructField("s", T.StringType()),
        T.StructField("n", T.LongType()),
        T.StructField(
            "m",
            T.StructType(
                [T.StructField("qty", T.LongType()), T.StructField("tag", T.StringType())]
            ),
            True,
            {MEMBERS_METADATA: {"qty": {RANGE_METADATA: [0, 2]}}},
        ),
    ]
)

#: the struct's Arrow type
_M = pa.struct([("qty", pa.int64()), ("tag", pa.string())])

_TEXTS = ["a", "o'brien", "back\\slash", "zz", "ünï", "", None, "b\\'q", "Zeta", "m"]


def _row(i: int) -> tuple[Any, ...]:
    k = None if i % 11 == 5 else i % 4
    m = None if i % 17 == 3 else {"qty": None if i % 9 == 4 else i % 3, "tag": "uv"[i % 2]}
    return (i, k, "xyz"[i % 3], i % 4, _TEXTS[(i * 7) % len(_TEXTS)], (i * 37) % 50 - 10, m)


#: the table's rows
ROWS = [_row(i) for i in range(40)]


def table(rows: Sequence[tuple[Any, ...]]) -> pa.Table:
    """``rows`` as an Arrow table of the frame's columns."""
    types = [pa.int64(), pa.int32(), pa.string(), pa.int64(), pa.string(), pa.int64(), _M]
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in types]
    return pa.table(
        {
            f.name: pa.array(list(c), t)
            for f, c, t in zip(SCHEMA.fields, columns, types, strict=True)
        }
    )


def never_null(rows: Sequence[tuple[Any, ...]]) -> frozenset[tuple[str, ...]]:
    """The paths (columns, the struct's members) no row of ``rows`` holds NULL at."""
    out = {(f.name,) for i, f in enumerate(SCHEMA.fields) if all(r[i] is not None for r in rows)}
    for member in ("qty", "tag"):
        if all(r[-1] is not None and r[-1][member] is not None for r in rows):
            out.add(("m", member))
    return frozenset(out)


def rewritten(
    sql: str,
    sample: Sequence[tuple[Any, ...]] | None = None,
    never: frozenset[tuple[str, ...]] | None = None,
) -> str:
    """``sql`` for Spark, bounded by ``sample`` (rows of ``t``; all of them by default), told
    that the paths ``never`` are never NULL (by default, those the rows say)."""
    rows = ROWS if sample is None else sample
    return to_spark_sql(
        parse_statement(sql),
        lambda tree: bound_extremes(tree, lambda: SCHEMA, sampler(rows, never)),
    )


def sampler(
    rows: Sequence[tuple[Any, ...]], never: frozenset[tuple[str, ...]] | None = None
) -> Sampler:
    """A sampler of ``rows`` as the frame's, which finds names as Spark does (in any case)."""

    def read(
        paths: Sequence[tuple[str, ...]], extremes: Sequence[tuple[str, bool]]
    ) -> Sample | None:
        data = table(rows)
        out = {}
        for path in paths:
            values: Any = data[[n.lower() for n in data.column_names].index(path[0].lower())]
            for member in path[1:]:
                names = [values.type.field(i).name.lower() for i in range(values.type.num_fields)]
                if member.lower() not in names:
                    return None  # Spark cannot resolve it either
                values = pc.struct_field(values, [names.index(member.lower())])
            out[path] = values
        return Sample(out, never_null(ROWS) if never is None else never)

    return read


#: queries the rule bounds, each with an ORDER BY that gives its rows one order
BOUNDED = [
    "SELECT k, MAX(s) AS x FROM t GROUP BY k ORDER BY k",
    "SELECT k, MAX(id) AS a, MAX(s) AS b, MIN(s) AS c, MIN(n) AS d FROM t GROUP BY k ORDER BY k",
    "SELECT MAX(s) AS x FROM t",
    "SELECT MIN(s) AS x, MAX(n) AS y FROM t",
    "SELECT g, k, MAX(s) AS x FROM t GROUP BY g, k ORDER BY g, k",
    "SELECT CAST(n AS INT) AS c, MIN(s) AS x FROM t GROUP BY CAST(n AS INT) ORDER BY c",
    "SELECT k, MAX(s) AS x FROM t GROUP BY k HAVING MAX(s) > 'b' ORDER BY x DESC, k LIMIT 2",
    "SELECT k + 1 AS k1, MAX(s) AS x FROM t GROUP BY k ORDER BY k1",
    "SELECT e, MAX(s) AS x, MIN(id) AS y FROM t GROUP BY e ORDER BY e",
    "SELECT t.g, MAX(t.s) AS x FROM t GROUP BY t.g ORDER BY t.g",
    "SELECT t.m.qty AS q, MAX(s) AS x, MAX(id) AS y FROM t GROUP BY t.m.qty ORDER BY q",
    "SELECT m.qty AS q, MIN(s) AS x FROM t GROUP BY m.qty ORDER BY q",
    "SELECT m.tag AS g, k, MAX(s) AS x FROM t GROUP BY m.tag, k ORDER BY g, k",
]


@pytest.mark.parametrize("sql", BOUNDED)
def test_bounded_by_the_samples_extremes(sql: str) -> None:
    out = rewritten(sql)
    assert " WHERE " in out and ("`s` >= " in out or "`s` <= " in out), out


def test_the_filter_is_each_extremes_bound_or_a_group_not_seen() -> None:
    sample = [r for r in ROWS if r[0] in (0, 1, 2, 3, 6)]
    # k: 0, 1, 2, 3, 2; s: a, b\'q, ünï, o'brien, back\slash; n: -10, 27, 14, 1, 12
    out = rewritten("SELECT k, MAX(s) AS x, MIN(n) AS y FROM t GROUP BY k", sample)
    where = out.split(" WHERE ", 1)[1].split(" GROUP BY ", 1)[0]
    # the least of the seen groups' maxima (k=0's a), the greatest of their minima (k=1's 27)
    assert where.startswith("`s` >= 'a' OR `n` <= 27 OR k IS NULL OR NOT (k IN ("), where
    assert sorted(where.split("IN (", 1)[1].rstrip(")").split(", ")) == ["0", "1", "2", "3"]
    out = rewritten("SELECT g, k, MAX(s) FROM t GROUP BY g, k", sample[:2])
    assert "g IS NULL OR k IS NULL OR NOT ((g, k) IN (('x', 0), ('y', 1)))" in out, out


def test_a_text_bound_is_a_spark_literal_of_its_quotes_and_backslashes() -> None:
    sample = [r for r in ROWS if r[4] == "b\\'q"]
    out = rewritten("SELECT MAX(s) FROM t", sample)
    assert out.endswith("WHERE `s` >= 'b\\\\\\'q'"), out


def test_a_group_whose_sampled_extreme_is_null_counts_as_not_seen() -> None:
    nulls = [r for r in ROWS if r[4] is None]
    assert {r[1] for r in nulls} == {0, 2, None} and ROWS[9][1:5:3] == (1, "zz")
    out = rewritten("SELECT k, MAX(s) FROM t GROUP BY k", [*nulls, ROWS[9]])
    assert out.endswith("WHERE `s` >= 'zz' OR k IS NULL OR NOT (k IN (1)) GROUP BY k"), out
    # a sample of NULL extremes alone says nothing
    assert " WHERE " not in rewritten("SELECT k, MAX(s) FROM t GROUP BY k", nulls)
    assert " WHERE " not in rewritten("SELECT MAX(s) FROM t", nulls)
    assert " WHERE " not in rewritten("SELECT MAX(s) FROM t", [])


def test_every_group_seen_needs_no_term_for_the_others() -> None:
    # e holds 0-3 by its metadata and is never NULL: a sample of the four values saw them all
    out = rewritten("SELECT e, MAX(s) FROM t GROUP BY e")
    assert out.endswith("WHERE `s` >= 'zz' GROUP BY e"), out
    three = [r for r in ROWS if r[3] != 2]
    out = rewritten("SELECT e, MAX(s) FROM t GROUP BY e", three)
    assert "e IS NULL OR NOT (e IN (" in out, out
    # k has NULLs; g has no metadata
    assert "NOT (k IN (" in rewritten("SELECT k, MAX(s) FROM t GROUP BY k")
    assert "NOT (g IN (" in rewritten("SELECT g, MAX(s) FROM t GROUP BY g")
    # a struct's member: by the struct's metadata, where neither it nor its struct is NULL
    sql = "SELECT t.m.qty, MAX(s) FROM t GROUP BY t.m.qty"
    assert "NOT (t.m.qty IN (" in rewritten(sql)
    assert rewritten(sql, never=frozenset({("m", "qty")})).endswith(
        "WHERE `s` >= 'zz' GROUP BY t.m.qty"
    )
    assert "NOT (e IN (" in rewritten("SELECT e, MAX(s) FROM t GROUP BY e", never=frozenset())
    cast = "SELECT CAST(e AS INT), MAX(s) FROM t GROUP BY CAST(e AS INT)"
    assert "NOT (CAST(e AS INT) IN (" in rewritten(cast)  # a cast's values are not counted


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT k, MAX(s) FROM t WHERE id > 3 GROUP BY k",  # the sample is not filtered
        "SELECT k, MAX(s), COUNT(*) FROM t GROUP BY k",
        "SELECT k, MAX(s), SUM(n) FROM t GROUP BY k",
        "SELECT DISTINCT MAX(s) FROM t GROUP BY k",
        "SELECT k, MAX(s), ROW_NUMBER() OVER (ORDER BY k) FROM t GROUP BY k",
        "SELECT k, MAX(CONCAT(s, 'x')) FROM t GROUP BY k",
        "SELECT k, MAX(DISTINCT s) FROM t GROUP BY k",
        "SELECT k, MAX(s) FILTER (WHERE n > 0) FROM t GROUP BY k",
        "SELECT k, MAX(s) FROM t GROUP BY ROLLUP(k)",
        "SELECT k, MAX(s) FROM t GROUP BY k + 1, k",
        "SELECT k, MAX(id) FROM t GROUP BY k",  # no text extreme: Spark's hash aggregate
        "SELECT k, MAX(s), collect_list(s) FROM t GROUP BY k",
        "SELECT k, MAX(s), my_udf(k) FROM t GROUP BY k",
        "SELECT k FROM t GROUP BY k",
        "SELECT a.k, MAX(a.s) FROM t AS a JOIN t AS b ON a.id = b.id GROUP BY a.k",
        "SELECT k, MAX(s) FROM (SELECT * FROM t) AS u GROUP BY k",
        "SELECT k, MAX(s) FROM t GROUP BY k HAVING COUNT(*) > 1",
        "SELECT k, MAX(s) FROM t GROUP BY k ORDER BY SUM(n)",
        "SELECT m, MAX(s) FROM t GROUP BY m",  # a struct: no literal of it
        "SELECT m.nope, MAX(s) FROM t GROUP BY m.nope",
        "SELECT CAST(s AS INT), MAX(s) FROM t GROUP BY CAST(s AS INT)",
    ],
)
def test_left_as_it_is(sql: str) -> None:
    assert rewritten(sql) == to_spark_sql(parse_statement(sql))


def test_without_a_sample_or_with_too_many_groups_left_as_it_is() -> None:
    sql = "SELECT id, MAX(s) FROM t GROUP BY id"
    asked = []

    def none(
        paths: Sequence[tuple[str, ...]], extremes: Sequence[tuple[str, bool]]
    ) -> Sample | None:
        asked.append((list(paths), list(extremes)))
        return None

    plain = to_spark_sql(parse_statement(sql))
    tree = parse_statement("SELECT k, MAX(s), MIN(s), MAX(n) FROM t GROUP BY k")
    assert to_spark_sql(tree, lambda t: bound_extremes(t, lambda: SCHEMA, none)) == to_spark_sql(
        parse_statement("SELECT k, MAX(s), MIN(s), MAX(n) FROM t GROUP BY k")
    )
    assert asked == [([("k",), ("s",), ("n",)], [("s", True), ("s", False), ("n", True)])]
    many = [(i, 0, "x", 0, "s", i, None) for i in range(MAX_KEYS + 1)]
    assert rewritten(sql, many) == plain
    assert " WHERE " in rewritten(sql, many[:MAX_KEYS])


def test_a_key_cast_out_of_its_range_in_the_sample_is_left_as_it_is() -> None:
    big = [(2**40, 0, "x", 0, "s", 2**40, None)]
    sql = "SELECT CAST(n AS INT), MAX(s) FROM t GROUP BY CAST(n AS INT)"
    assert rewritten(sql, big) == to_spark_sql(parse_statement(sql))


def test_a_member_is_found_as_spark_finds_it() -> None:
    out = rewritten("SELECT t.m.QTY, MAX(s) FROM t GROUP BY t.m.QTY")
    assert "NOT (t.m.QTY IN (0, 1, 2))" in out, out


def test_text_of_another_collation_left_as_it_is() -> None:
    def collated(*names: str) -> T.StructType:
        return T.StructType(
            [
                T.StructField(f.name, T.StringType("UTF8_LCASE")) if f.name in names else f
                for f in SCHEMA.fields
            ]
        )

    for sql, schema, bounded in [
        ("SELECT MAX(s) FROM t", SCHEMA, True),
        ("SELECT MAX(s) FROM t", collated("s"), False),
        ("SELECT k, MAX(s) FROM t GROUP BY k", collated("s"), False),
        ("SELECT g, MAX(s) FROM t GROUP BY g", collated("g"), False),  # groups otherwise
        ("SELECT g, MAX(s) FROM t GROUP BY g", collated("id"), True),
    ]:
        out = to_spark_sql(
            parse_statement(sql),
            lambda tree, schema=schema: bound_extremes(tree, lambda: schema, sampler(ROWS)),
        )
        assert (" WHERE " in out) == bounded, (sql, out)
