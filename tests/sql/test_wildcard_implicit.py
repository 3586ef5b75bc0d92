"""Drill's ``*`` lists the table's columns, never the implicit file columns a query also names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wildcard_implicit")
    (root / "j" / "d1").mkdir(parents=True)
    (root / "j" / "d1" / "x.json").write_text('{"a": 1}\n{"a": 2}\n')
    (root / "h").mkdir()
    (root / "h" / "basic.csvh").write_text("a,b,c\n10,foo,bar\n")
    return root


def q(conn: Any, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    cur = conn.cursor().execute(sql)
    return [d[0] for d in cur.description], cur.fetchall()


def test_star_and_filename(conn: Any, files: Path) -> None:
    # Drill's testImplicitColWildcard: (a, b, c, filename)
    assert q(conn, f"SELECT *, filename FROM dfs.`{files}/h/basic.csvh`") == (
        ["a", "b", "c", "filename"],
        [("10", "foo", "bar", "basic.csvh")],
    )
    cols, rows = q(conn, f"SELECT filename, *, suffix FROM dfs.`{files}/j` ORDER BY a")
    assert cols == ["filename", "a", "dir0", "suffix"]
    assert rows == [("x.json", 1, "d1", "json"), ("x.json", 2, "d1", "json")]


def test_implicit_column_only_in_where(conn: Any, files: Path) -> None:
    sql = f"SELECT * FROM dfs.`{files}/j` t WHERE t.filename = 'x.json' AND fqn LIKE '%d1%'"
    assert q(conn, sql)[0] == ["a", "dir0"]
    assert len(q(conn, sql)[1]) == 2


def test_qualified_star_and_subqueries(conn: Any, files: Path) -> None:
    sql = f"SELECT t.*, t.filename AS f FROM dfs.`{files}/h/basic.csvh` t"
    assert q(conn, sql)[0] == ["a", "b", "c", "f"]
    # a * over a subquery shows what the subquery selected, implicit columns included
    inner = f"SELECT *, filename FROM dfs.`{files}/h/basic.csvh`"
    assert q(conn, f"SELECT * FROM ({inner}) s")[0] == ["a", "b", "c", "filename"]
    assert q(conn, f"SELECT * FROM ({inner}) s LIMIT 1")[0] == ["a", "b", "c", "filename"]
