"""Every bounded query of ``tests/sql/test_top_rows`` in Spark: the same rows, in the same
order, as the query as it was; and through the engine, over a Parquet table and the raw-file
cache's entries (bounded) and over files it parses (left as written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auger.spark.cache_builds import wait_for_builds
from auger.sql.frontend.parser import parse_statement
from auger.sql.frontend.translate import to_spark_sql
from tests.spark.shared import cached_connection, explained
from tests.sql.test_top_rows import BOUNDED, rewritten

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def view(spark: Any) -> Any:
    """``t``: keys that repeat and are NULL, strings with NULLs."""
    rows = [
        (1, 5, "a"),
        (2, None, "x"),
        (3, 7, None),
        (4, 5, "b"),
        (5, -2, "x"),
        (6, None, "c"),
        (7, 9, "d"),
        (8, 7, "x"),
        (9, None, None),
    ]
    spark.createDataFrame(rows, "id INT, k INT, s STRING").createOrReplaceTempView("t")
    yield
    spark.catalog.dropTempView("t")


@pytest.mark.parametrize("sql", BOUNDED)
def test_bounded_query_answers_as_the_query(spark: Any, view: Any, sql: str) -> None:
    want = spark.sql(to_spark_sql(parse_statement(sql))).collect()
    assert spark.sql(rewritten(sql)).collect() == want


def test_the_engine_bounds_what_it_reads_again_cheaply(
    make_conn: Any, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = data_dir / "top_rows"
    d.mkdir(exist_ok=True)
    n = 3000
    ids = list(range(n))
    amounts = [None if i % 10 == 3 else (i * 7919) % 1000 for i in ids]
    table = pa.table({"id": ids, "amount": amounts, "name": [f"n{i}" for i in ids]})
    pq.write_table(table, d / "t.parquet")
    lines = "".join(
        f'{{"id": {i}, "amount": {"null" if a is None else a}, "name": "n{i}"}}\n'
        for i, a in zip(ids, amounts, strict=True)
    )
    (d / "t.json").write_text(lines)
    conn = cached_connection(make_conn, tmp_path / "cache")
    cur = conn.cursor()
    import auger.sql.planning.rules.run_spark_sql as rules

    small = "SELECT * FROM dfs.data.`top_rows/t.parquet` ORDER BY amount DESC, id LIMIT 7"
    assert "scalarsubquery()" not in explained(conn, small)  # too small to repay a second job
    monkeypatch.setattr(rules, "MIN_BYTES", 1)
    queries = [
        "SELECT * FROM {t} ORDER BY amount DESC, id LIMIT 7",
        "SELECT id, name FROM {t} WHERE id % 2 = 1 ORDER BY amount NULLS FIRST, id LIMIT 400",
    ]
    for name in ("t.parquet", "t.json"):
        for query in queries:
            sql = query.format(t=f"dfs.data.`top_rows/{name}`")
            bounded = cur.execute(sql).fetchall()
            wait_for_builds()  # the JSON file's entry, read from the next query on
            bounded = cur.execute(sql).fetchall()
            assert "scalarsubquery()" in explained(conn, sql), sql
            with monkeypatch.context() as m:
                m.setattr(rules, "bound_first_rows", lambda tree, cheap: tree)
                assert bounded == cur.execute(sql).fetchall(), sql
        nulls = [(i, f"n{i}") for i in ids[3::10]]  # odd ids, all 300 of them, come first
        assert len(bounded) == 400 and bounded[:300] == nulls
    # a view read again runs again: bounded over a plain projection, not over groups
    table = "dfs.data.`top_rows/t.parquet`"
    for name, select in [
        ("top_rows_plain", f"SELECT id, amount, name FROM {table} WHERE id > 5"),
        (
            "top_rows_grouped",
            f"SELECT amount, MAX(name) AS name, COUNT(*) AS n FROM {table} GROUP BY amount",
        ),
    ]:
        cur.execute(f"CREATE OR REPLACE VIEW dfs.tmp.`{name}` AS {select}")
        sql = f"SELECT * FROM dfs.tmp.`{name}` ORDER BY amount DESC LIMIT 3"
        bounded_view = "scalarsubquery()" in explained(conn, sql)
        assert bounded_view == (name == "top_rows_plain"), name
        got = [r[1 if name == "top_rows_plain" else 0] for r in cur.execute(sql).fetchall()]
        with monkeypatch.context() as m:
            m.setattr(rules, "bound_first_rows", lambda tree, cheap: tree)
            want = [r[1 if name == "top_rows_plain" else 0] for r in cur.execute(sql).fetchall()]
        assert got == want and len(got) == 3, name
        cur.execute(f"DROP VIEW dfs.tmp.`{name}`")
    cur.execute("ALTER SESSION SET `auger.cache.enabled` = false")
    parsed = "SELECT * FROM dfs.data.`top_rows/t.json` ORDER BY amount DESC, id LIMIT 7"
    assert "scalarsubquery()" not in explained(conn, parsed)
    assert cur.execute(parsed).fetchall()[0][1] == 999
    cur.execute("ALTER SESSION RESET `auger.scan.local_bytes`")  # rows held on the driver
    assert "scalarsubquery()" not in explained(conn, parsed)
    assert cur.execute(parsed).fetchall()[0][1] == 999
