"""COUNT(*) queries that read no data column send one weighted row per batch: same answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("row_counts")
    for d, n in (("a", 5000), ("b", 3), ("c", 0)):
        (root / "csv" / d).mkdir(parents=True)
        (root / "csv" / d / "x.csvh").write_text("k,v\n" + "".join(f"{i},{i}\n" for i in range(n)))
        (root / "json" / d).mkdir(parents=True)
        (root / "json" / d / "x.json").write_text(
            "".join(json.dumps({"k": i}) + "\n" for i in range(n))
        )
    return root


def run(conn: Any, sql: str) -> tuple[list[tuple[Any, ...]], bool]:
    """The rows, and whether the query counted weighted rows."""
    df = conn.session.execute(sql).frame()
    weighted = "__auger_rows" in df._jdf.queryExecution().analyzed().toString()
    return [tuple(r) for r in df.collect()], weighted


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_counts_are_exact(conn: Any, tree: Path, fmt: str) -> None:
    t = f"dfs.`{tree}/{fmt}`"
    conn.cursor().execute("ALTER SESSION SET `auger.scan.batch_rows` = 1000")
    assert run(conn, f"SELECT COUNT(*) FROM {t}") == ([(5003,)], True)
    assert run(conn, f"SELECT COUNT(1) AS n, COUNT(*) + 1 FROM {t} WHERE dir0 = 'b'") == (
        [(3, 4)],
        True,
    )
    grouped = f"SELECT dir0, COUNT(*) FROM {t} GROUP BY dir0 HAVING COUNT(*) > 1 ORDER BY dir0"
    assert run(conn, grouped) == ([("a", 5000), ("b", 3)], True)
    assert run(conn, f"SELECT COUNT(*) FROM {t} WHERE dir0 = 'c'") == ([(0,)], True)


def test_queries_that_read_data_are_not_weighted(conn: Any, tree: Path) -> None:
    t = f"dfs.`{tree}/csv`"
    assert run(conn, f"SELECT COUNT(k) FROM {t}") == ([(5003,)], False)
    assert run(conn, f"SELECT COUNT(*) FROM {t} WHERE CAST(k AS INT) < 10") == ([(13,)], False)
    assert run(conn, f"SELECT COUNT(DISTINCT dir0) FROM {t}") == ([(2,)], False)
