"""Column analysis: which columns (and paths) each scan must deliver (no Spark needed)."""

from __future__ import annotations

from sqlglot import exp

from auger.sql.frontend.parser import parse_statement
from auger.sql.planning.columns import DIV_TAG, TABLE_TAG, Analysis, analyse_columns
from auger.sql.planning.tables import table_nodes

SCHEMAS = {
    "dfs.data.a.json": {"id": "bigint", "m": "struct<a:bigint,b:struct<c:string>>", "x": "int"},
    "dfs.data.b.csv": {"columns": "array<string>"},
    "dfs.data.c.json": {"id": "bigint", "y": "double"},
}


def analyse(sql: str) -> tuple[Analysis, list[str]]:
    tree = parse_statement(sql)
    tables = table_nodes(tree)
    views = []
    schemas = {}
    for n, node in enumerate(tables):
        node.meta[TABLE_TAG] = n
        key = ".".join(p.name for p in node.parts)
        views.append(f"v{n}")
        schemas[f"v{n}"] = SCHEMAS[key]
    for k, div in enumerate(tree.find_all(exp.Div)):
        div.meta[DIV_TAG] = k
    result = analyse_columns(tree, views, schemas)
    assert result is not None
    return result, [".".join(p.name for p in t.parts) for t in tables]


def projections(sql: str) -> dict[str, tuple[str, ...]]:
    result, keys = analyse(sql)
    return {keys[n]: r.projection() for n, r in result.requested.items()}


def test_member_paths_and_index_paths() -> None:
    got = projections(
        "SELECT t.m.a, t.m.b.c, u.columns[2] FROM dfs.data.`a.json` t "
        "JOIN dfs.data.`b.csv` u ON t.id = u.columns[0]"
    )
    assert got == {
        "dfs.data.a.json": ("m.a", "m.b.c", "id"),
        "dfs.data.b.csv": ("columns[2]", "columns[0]"),
    }


def test_whole_column_wins_over_members() -> None:
    got = projections("SELECT t.m, t.m.a FROM dfs.data.`a.json` t")
    assert got == {"dfs.data.a.json": ("m",)}


def test_missing_columns_are_attributed_in_joins() -> None:
    got = projections(
        "SELECT t.NoSuch, u.y FROM dfs.data.`a.json` t JOIN dfs.data.`c.json` u ON t.id = u.id"
    )
    assert got == {"dfs.data.a.json": ("NoSuch", "id"), "dfs.data.c.json": ("y", "id")}


def test_aliases_are_not_columns_but_same_named_columns_are() -> None:
    got = projections(
        "SELECT CAST(fname AS VARCHAR) AS fname, x AS k, COUNT(*) AS n FROM dfs.data.`a.json` "
        "GROUP BY fname, k ORDER BY n"
    )
    assert got == {"dfs.data.a.json": ("fname", "x")}


def test_star_and_count_star() -> None:
    assert projections("SELECT * FROM dfs.data.`a.json`") == {"dfs.data.a.json": ("*",)}
    assert projections("SELECT COUNT(*) FROM dfs.data.`a.json`") == {"dfs.data.a.json": ()}
    got = projections(
        "SELECT u.*, t.x FROM dfs.data.`a.json` t JOIN dfs.data.`c.json` u ON t.id = u.id"
    )
    assert got == {"dfs.data.a.json": ("x", "id"), "dfs.data.c.json": ("*",)}


def test_subqueries_and_ctes() -> None:
    got = projections(
        "WITH c AS (SELECT id, x FROM dfs.data.`a.json`) "
        "SELECT s.id FROM c JOIN (SELECT id, y FROM dfs.data.`c.json`) s ON c.id = s.id "
        "WHERE c.x IN (SELECT CAST(columns[1] AS INT) FROM dfs.data.`b.csv`)"
    )
    assert got == {
        "dfs.data.a.json": ("id", "x"),
        "dfs.data.c.json": ("id", "y"),
        "dfs.data.b.csv": ("columns[1]",),
    }


def test_integer_divisions_are_found() -> None:
    result, _ = analyse(
        "SELECT x / 2, y / 2, t.id / x, 7 / 2 FROM dfs.data.`a.json` t, dfs.data.`c.json`"
    )
    assert result.integer_divisions == {0, 2, 3}


def test_correlated_names_belong_to_the_outer_table() -> None:
    got = projections(
        "SELECT t.id FROM dfs.data.`a.json` t WHERE EXISTS "
        "(SELECT 1 FROM dfs.data.`c.json` u WHERE u.y = x)"
    )
    assert got == {"dfs.data.a.json": ("x", "id"), "dfs.data.c.json": ("y",)}
