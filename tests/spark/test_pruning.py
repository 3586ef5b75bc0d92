"""Plan-time file pruning from WHERE predicates on dirN, key=value and file-name columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from auger.scan.spec import FileSplit, ScanSpec
from auger.sql.planning.pruning import prune_files, prune_scan

ROOT = "/data/t"
FILES = tuple(
    FileSplit(f"{ROOT}/{path}")
    for path in (
        "2023/01/a.json",
        "2023/02/b.json",
        "2024/01/a.json",
        "2024/region=eu/c.json",
        "top.json",
    )
)
SOURCES = {
    "x": "table",
    "dir0": "dir0",
    "dir1": "dir1",
    "filename": "filename",
    "region": "key:region",
}


def spec() -> ScanSpec:
    return ScanSpec("json", "json", {}, ROOT, FILES, "", SOURCES)


def kept(where: str, alias: str = "t") -> list[str]:
    tree = sqlglot.parse_one(f"SELECT * FROM x AS t WHERE {where}", read="drill")
    files = prune_files(spec(), tree.args["where"].this, alias)
    return [f.path.removeprefix(ROOT + "/") for f in files]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("dir0 = '2023'", ["2023/01/a.json", "2023/02/b.json"]),
        ("'2023' = t.dir0", ["2023/01/a.json", "2023/02/b.json"]),
        ("dir0 = '2023' AND dir1 = '02'", ["2023/02/b.json"]),
        (
            "dir0 = '2024' OR filename = 'b.json'",
            ["2023/02/b.json", "2024/01/a.json", "2024/region=eu/c.json"],
        ),
        ("dir0 IN ('2024', '1999')", ["2024/01/a.json", "2024/region=eu/c.json"]),
        ("dir0 NOT IN ('2024')", ["2023/01/a.json", "2023/02/b.json"]),  # null dir0 is not kept
        ("dir0 > '2023'", ["2024/01/a.json", "2024/region=eu/c.json"]),
        ("dir0 >= 2024", ["2024/01/a.json", "2024/region=eu/c.json"]),  # compared as numbers
        ("dir0 <> '2023'", ["2024/01/a.json", "2024/region=eu/c.json"]),
        ("dir0 IS NULL", ["top.json"]),
        ("dir1 IS NOT NULL AND NOT dir1 = '01'", ["2023/02/b.json", "2024/region=eu/c.json"]),
        ("region = 'eu'", ["2024/region=eu/c.json"]),
        ("filename = 'a.json' AND x > 3", ["2023/01/a.json", "2024/01/a.json"]),
        # what pruning cannot judge keeps the file
        ("x = 1", [f.path.removeprefix(ROOT + "/") for f in FILES]),
        ("dir0 = '2023' OR x = 1", [f.path.removeprefix(ROOT + "/") for f in FILES]),
        ("UPPER(dir0) = '2023'", [f.path.removeprefix(ROOT + "/") for f in FILES]),
        ("dir0 LIKE '2023%' AND dir1 = '01'", ["2023/01/a.json", "2024/01/a.json"]),
        ("NOT (dir0 = '2023' OR x = 1)", ["2024/01/a.json", "2024/region=eu/c.json", "top.json"]),
        ("NOT (dir1 = '01' AND x = 1)", [f.path.removeprefix(ROOT + "/") for f in FILES]),
    ],
)
def test_where_prunes_files(where: str, expected: list[str]) -> None:
    assert kept(where) == expected


def test_other_tables_columns_are_not_ours() -> None:
    assert len(kept("u.dir0 = '2023'")) == len(FILES)


class Planned:
    def __init__(self, s: ScanSpec) -> None:
        self.spec = s


def _table(sql: str) -> exp.Table:
    tree = sqlglot.parse_one(sql, read="drill")
    return next(t for t in tree.find_all(exp.Table) if t.name == "x")


def test_prune_scan_finds_the_where_of_the_tables_select() -> None:
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class P:
        spec: ScanSpec

    p = P(spec())
    got = prune_scan(p, _table("SELECT * FROM x WHERE dir0 = '2024' AND dir1 = '01'"))
    assert [f.path for f in got.spec.files] == [f"{ROOT}/2024/01/a.json"]
    joined = _table("SELECT * FROM x JOIN y ON x.k = y.k WHERE x.dir0 = '2024'")
    assert len(prune_scan(p, joined).spec.files) == 2
    outer = _table("SELECT * FROM y LEFT JOIN x ON x.k = y.k WHERE x.dir0 IS NULL")
    assert prune_scan(p, outer) is p  # null-padded side: never pruned
    sub = _table("SELECT * FROM (SELECT * FROM x) s WHERE dir0 = '2024'")
    assert prune_scan(p, sub) is p


def _tree(root: Path) -> None:
    for year in ("2022", "2023", "2024"):
        (root / year).mkdir(parents=True)
        (root / year / "p.csv").write_text("".join(f"{i},{year}\n" for i in range(3)))
    # A file that fails when read (not valid UTF-8): a query only succeeds if it was pruned.
    (root / "2022" / "broken.csv").write_bytes(b"1,2022\n\xff\xfe,\xc3\n")


def test_sql_where_on_dir0_reads_only_matching_directories(conn: Any, data_dir: Path) -> None:
    root = data_dir / "pruned"
    _tree(root)
    cur = conn.cursor()
    cur.execute(
        "SELECT dir0, COUNT(*) AS n FROM dfs.data.`pruned` WHERE dir0 = '2023' GROUP BY dir0"
    )
    assert cur.fetchall() == [("2023", 3)]
    # OR is not pushed to the data source by Spark: only plan-time pruning saves this query
    cur.execute(
        "SELECT dir0, SUM(CAST(columns[1] AS INT)) AS s FROM dfs.data.`pruned` "
        "WHERE dir0 = '2024' OR filename = 'nothing.json' GROUP BY dir0"
    )
    assert cur.fetchall() == [("2024", 3 * 2024)]
    cur.execute("SELECT COUNT(*) FROM dfs.data.`pruned` t WHERE t.dir0 IN ('2023', '2024')")
    assert cur.fetchall() == [(6,)]
    from auger.dbapi import DataError

    with pytest.raises(DataError):  # the broken file is really there
        cur.execute("SELECT COUNT(*) FROM dfs.data.`pruned` WHERE dir0 = '2022'").fetchall()
