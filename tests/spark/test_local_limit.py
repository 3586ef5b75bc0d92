"""Small pushed LIMITs are read on the driver: same rows, types and errors as the data source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from auger.errors import ErrorKind, UserError


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local_limit")
    for year in ("2023", "2024"):
        d = root / "csv" / year
        d.mkdir(parents=True)
        (d / "a.csv").write_text("".join(f"{year},{i},x{i}\n" for i in range(30)))
        j = root / "json" / year
        j.mkdir(parents=True)
        rows = [{"id": i, "m": {"a": i, "b": [i, i + 1]}, "s": f"v{i}"} for i in range(30)]
        (j / "a.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        h = root / "csvh" / year
        h.mkdir(parents=True)
        (h / "a.csvh").write_text("k,v\n" + "".join(f"{i},{year}\n" for i in range(30)))
    bad = root / "bad"
    bad.mkdir()
    (bad / "a.json").write_text('{"a": 1}\n{"a": \n')
    return root


def _frame(conn: Any, sql: str, local_rows: int) -> Any:
    conn.cursor().execute(f"ALTER SESSION SET `auger.scan.local_limit_rows` = {local_rows}")
    return conn.session.execute(sql).dataframe


def _is_local(df: Any) -> bool:
    return "LocalRelation" in df._jdf.queryExecution().optimizedPlan().toString()


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM dfs.`{root}/csv` LIMIT 5",
        "SELECT columns[2] AS c, dir0, filename FROM dfs.`{root}/csv` LIMIT 3",
        "SELECT * FROM dfs.`{root}/json` LIMIT 7",
        "SELECT t.m.a, t.m.b[1] AS b1, nope FROM dfs.`{root}/json` t LIMIT 4",
        "SELECT k, CAST(v AS INT) + 1 AS v1, dir0 FROM dfs.`{root}/csvh` LIMIT 40",
        "SELECT * FROM dfs.`{root}/csv` LIMIT 0",
    ],
)
def test_local_limit_equals_the_data_source(conn: Any, tree: Path, query: str) -> None:
    sql = query.format(root=tree)
    local = _frame(conn, sql, 10_000)
    remote = _frame(conn, sql, 0)
    assert _is_local(local)
    if not sql.endswith("LIMIT 0"):  # Spark itself turns LIMIT 0 into an empty local relation
        assert not _is_local(remote)
    assert local.schema == remote.schema
    assert local.collect() == remote.collect()


def test_limit_above_the_option_runs_in_spark(conn: Any, tree: Path) -> None:
    df = _frame(conn, f"SELECT * FROM dfs.`{tree}/csv` LIMIT 50", 20)
    assert not _is_local(df)
    assert len(df.collect()) == 50


def test_unpushable_limit_is_not_read_locally(conn: Any, tree: Path) -> None:
    sql = f"SELECT COUNT(*) AS n FROM dfs.`{tree}/csv` WHERE columns[1] = '3' LIMIT 5"
    df = _frame(conn, sql, 10_000)
    assert not _is_local(df)
    assert df.collect()[0][0] == 2


def test_local_read_error_is_the_users(conn: Any, tree: Path) -> None:
    df = _frame(conn, f"SELECT * FROM dfs.`{tree}/csv` LIMIT 5", 10_000)
    assert _is_local(df)
    with pytest.raises(UserError) as err:
        conn.session.execute(f"SELECT * FROM dfs.`{tree}/bad` LIMIT 5").to_arrow()
    assert err.value.kind is ErrorKind.DATA_READ
    assert any("a.json" in c for c in err.value.context)
