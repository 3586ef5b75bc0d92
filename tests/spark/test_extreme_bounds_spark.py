"""Every bounded query of ``tests/sql/test_extreme_bounds`` in Spark, bounded by many samples:
the rows of the query as it was, whichever rows the sample holds; and through the engine, over
a Parquet table and the raw-file cache's entries."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.spark.cache_builds import wait_for_builds
from auger.spark.plan_tree import parquet_lineage
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from tests.spark.shared import cached_connection, explained
from tests.sql.test_extreme_bounds import BOUNDED, ROWS, SCHEMA, rewritten

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def view(spark: Any) -> Any:
    """``t``, in the schema the rewrite was told."""
    spark.createDataFrame(ROWS, SCHEMA).createOrReplaceTempView("t")
    yield
    spark.catalog.dropTempView("t")


def _samples() -> list[list[tuple[Any, ...]]]:
    """Samples of every kind: all rows, one row, the rows of one group, the NULLs, the first
    rows, and random ones."""
    pick = random.Random(7)
    out = [ROWS, ROWS[:1], ROWS[-1:], [r for r in ROWS if r[1] == 2]]
    out += [[r for r in ROWS if r[4] is None or r[4] == "b\\'q"], ROWS[:5]]
    out += [pick.sample(ROWS, pick.randint(1, 12)) for _ in range(6)]
    return out


@pytest.mark.parametrize("sql", BOUNDED)
def test_bounded_query_answers_as_the_query_whatever_the_sample(
    spark: Any, view: Any, sql: str
) -> None:
    want = spark.sql(to_spark_sql(parse_statement(sql))).collect()
    assert want
    bounded = 0
    for sample in _samples():
        out = rewritten(sql, sample)
        bounded += " WHERE " in out
        assert spark.sql(out).collect() == want, (sample, out)
    assert bounded >= 4


def test_the_engine_bounds_parquet_it_reads(
    make_conn: Any, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = data_dir / "extreme_bounds"
    d.mkdir(exist_ok=True)
    n = 4000
    ids = list(range(n))
    # names in the order of their ids, as a file written by id would hold them
    table = pa.table(
        {
            "id": ids,
            "q": [None if i % 97 == 5 else i % 7 for i in ids],
            "name": [None if i % 13 == 0 else f"n{i:05d}" for i in ids],
        }
    )
    pq.write_table(table, d / "t.parquet", row_group_size=500)
    lines = "".join(f"{i},{i % 5},n{i:05d}\n" for i in ids)
    (d / "t.csv").write_text(lines)
    objects = "".join(f'{{"id": {i}, "m": {{"qty": {i % 5}}}, "name": "n{i:05d}"}}\n' for i in ids)
    (d / "t.json").write_text(objects)
    conn = cached_connection(make_conn, tmp_path / "cache")
    cur = conn.cursor()
    import auger.sql.planning.extreme_bounds as bounds
    import auger.sql.planning.rules.run_spark_sql as rules

    parquet = "dfs.data.`extreme_bounds/t.parquet`"
    small = f"SELECT q, MAX(name) AS x FROM {parquet} GROUP BY q"
    assert "n03999" not in explained(conn, small)  # too small to repay the sample
    monkeypatch.setattr(bounds, "MIN_BYTES", 1)
    queries = [
        (small, "'n03993'"),  # the least of the groups' largest in the last row group
        (f"SELECT q, MIN(name) AS a, MAX(name) AS b, MAX(id) AS c FROM {parquet} GROUP BY q", ""),
        (f"SELECT MAX(name) AS x, MIN(name) AS y FROM {parquet}", "'n03999'"),
    ]
    for sql, bound in queries:
        plan = explained(conn, sql)
        assert " >= " in plan and bound in plan, plan
        got = sorted(cur.execute(sql).fetchall(), key=str)
        with monkeypatch.context() as m:
            m.setattr(rules, "bound_extremes", lambda tree, schema, sample: tree)
            assert " >= " not in explained(conn, sql)
            assert got == sorted(cur.execute(sql).fetchall(), key=str), sql
    maxima: dict[Any, str] = {}
    for _, q, name in zip(*table.to_pydict().values(), strict=True):
        if name is not None:
            maxima[q] = max(maxima.get(q, name), name)
    assert sorted(cur.execute(small).fetchall(), key=str) == sorted(maxima.items(), key=str)
    # Spark told to read a backslash in a literal as itself: the filter's text would differ
    spark = conn.session.engine.spark
    spark.conf.set("spark.sql.parser.escapedStringLiterals", "true")
    try:
        assert " >= " not in explained(conn, small)
    finally:
        spark.conf.unset("spark.sql.parser.escapedStringLiterals")
    assert " >= " in explained(conn, small)
    # cached CSV by a cast of a column and cached JSON by a member of its objects: every key's
    # value seen, no key NULL (by the entries' footers), so the filter is of the extremes
    # alone, which Spark's reader also checks against row groups
    csv = (
        "SELECT CAST(columns[1] AS INT) AS q, MAX(CAST(columns[0] AS BIGINT)) AS m, "
        "MAX(columns[2]) AS x FROM dfs.data.`extreme_bounds/t.csv` GROUP BY CAST(columns[1] AS INT)"
    )
    json = (
        "SELECT t.m.qty AS q, MAX(id) AS m, MAX(name) AS x "
        "FROM dfs.data.`extreme_bounds/t.json` t GROUP BY t.m.qty"
    )
    want = [(q, 3995 + q, f"n{3995 + q:05d}") for q in range(5)]
    for sql in (csv, json):
        assert sorted(cur.execute(sql).fetchall()) == want
        wait_for_builds()
        assert sorted(cur.execute(sql).fetchall()) == want
        assert cur.scan_statistics[0]["files_from_cache"] == 1
        plan = explained(conn, sql)
        assert "'n03995'" in plan and " IN (" not in plan and "IS NULL" not in plan, plan


def test_lineage_of_columns_members_and_integer_casts(spark: Any, tmp_path: Path) -> None:
    struct = pa.struct([("qty", pa.int64()), ("tag", pa.string())])
    table = pa.table(
        {"id": [1, 2], "m": pa.array([{"qty": 1, "tag": "a"}, None], struct), "s": ["x", "y"]}
    )
    pq.write_table(table, tmp_path / "a.parquet")
    df = spark.read.parquet(str(tmp_path / "a.parquet"))
    frame = df.selectExpr(
        "id AS ident",
        "CAST(id AS INT) AS small",
        "CASE WHEN m IS NOT NULL THEN named_struct('qty', m.qty) END AS m",
        "s",
        "upper(s) AS loud",
    )
    got = parquet_lineage(frame, [("ident",), ("small",), ("m", "qty"), ("S",)])
    assert got is not None and got.files == (str(tmp_path / "a.parquet"),)
    assert got.sources == {
        ("ident",): ("id", (), None),
        ("small",): ("id", (), "int"),
        ("m", "qty"): ("m", ("qty",), None),
        ("S",): ("s", (), None),
    }
    assert parquet_lineage(frame, [("loud",)]) is None  # computed
    assert parquet_lineage(frame.where("id > 1"), [("s",)]) is None  # filtered
    assert parquet_lineage(frame.union(frame), [("s",)]) is None
    assert parquet_lineage(frame, [("nope",)]) is None
    other = df.selectExpr("CASE WHEN s IS NOT NULL THEN m.qty END AS q")  # NULL by another
    assert parquet_lineage(other, [("q",)]) is None
