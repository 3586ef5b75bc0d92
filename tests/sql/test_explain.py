"""EXPLAIN PLAN in Drill's layout: numbered operators, scans named with what auger planned."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from .helpers import rows

LINE = re.compile(r"^00-(\d\d)( {4,})(\w+)(\(.*\))?$")


def explain(conn: Any, sql: str) -> tuple[str, dict[str, Any]]:
    text, plan = rows(conn, sql)[0]
    return text, json.loads(plan)


@pytest.fixture
def parts(data_dir: Path) -> Path:
    root = data_dir / "explain_parts"
    for year, a in (("2023", 1), ("2024", 2)):
        (root / year).mkdir(parents=True, exist_ok=True)
        (root / year / "a.json").write_text(json.dumps({"a": a, "b": "x"}) + "\n")
    return root


def test_physical_plan_layout_and_json_agree(conn: Any, parts: Path) -> None:
    text, plan = explain(
        conn,
        "EXPLAIN PLAN FOR SELECT dir0, COUNT(*) AS n FROM dfs.data.explain_parts "
        "WHERE dir0 = '2024' AND a > 0 GROUP BY dir0 ORDER BY dir0 LIMIT 3",
    )
    lines = text.rstrip("\n").split("\n")
    depths = []
    for number, line in enumerate(lines):
        m = LINE.match(line)
        assert m, line
        assert int(m.group(1)) == number
        depths.append((len(m.group(2)) - 4) // 2)
    assert lines[0] == "00-00    Screen" and depths[0] == 0
    assert all(b - a <= 1 for a, b in itertools.pairwise(depths))  # one level deeper at most
    ops = [LINE.match(line).group(3) for line in lines]  # type: ignore[union-attr]
    assert {"HashAgg", "Filter", "Scan"} <= set(ops) and ops[-1] == "Scan"
    assert not {"WholeStageCodegen", "BatchScan", "InputAdapter"} & set(ops)
    scan = lines[-1]
    assert "table=[dfs.data.explain_parts]" in scan
    assert "numFiles=1" in scan and "files=[2024/a.json]" in scan
    assert "columns=[`dir0`, `a`]" in scan
    assert "partitions pruned=[1 of 2 files]" in scan
    assert re.search(r"filters=\[.*dir0 = '2024'.*a > 0", scan)
    assert "#" not in text  # no Spark expression ids
    graph = {g["@id"]: g for g in plan["graph"]}
    assert plan["head"]["type"] == "APACHE_DRILL_PHYSICAL"
    assert sorted(graph) == list(range(len(lines)))
    assert graph[0]["pop"] == "screen" and graph[0]["child"] == 1
    fs = [g for g in graph.values() if g["pop"] == "fs-scan"]
    assert len(fs) == 1 and fs[0]["@id"] == len(lines) - 1
    assert fs[0]["files"] == [str(parts / "2024" / "a.json")]
    assert (fs[0]["listedFiles"], fs[0]["prunedFiles"]) == (2, 1)


def test_each_scan_of_a_self_join_and_a_native_parquet_scan_is_named(
    conn: Any, parts: Path
) -> None:
    text, _ = explain(
        conn,
        "EXPLAIN PLAN FOR SELECT x.a, y.b FROM dfs.data.explain_parts x "
        "JOIN dfs.data.explain_parts y ON x.a = y.a",
    )
    scans = [line for line in text.splitlines() if " Scan(" in line]
    assert len(scans) == 2
    assert all("table=[dfs.data.explain_parts]" in s and "numFiles=2" in s for s in scans)
    assert sorted("`b`" in s for s in scans) == [False, True]  # y reads b, x does not
    text, _ = explain(
        conn, "EXPLAIN PLAN FOR SELECT n_name FROM cp.`tpch/nation.parquet` WHERE n_regionkey = 1"
    )
    scans = [line for line in text.splitlines() if " Scan(" in line]
    assert len(scans) == 1 and "table=[cp.tpch/nation.parquet]" in scans[0]
    assert "columns=[`n_name`, `n_regionkey`]" in scans[0]


def test_a_views_scan_is_its_tables(conn: Any, parts: Path) -> None:
    rows(conn, "CREATE OR REPLACE VIEW dfs.tmp.explain_v AS SELECT a FROM dfs.data.explain_parts")
    text, _ = explain(conn, "EXPLAIN PLAN FOR SELECT a FROM dfs.tmp.explain_v WHERE a = 2")
    scans = [line for line in text.splitlines() if " Scan(" in line]
    assert len(scans) == 1 and "table=[dfs.data.explain_parts]" in scans[0]


def test_without_implementation_gives_the_logical_plan(conn: Any, parts: Path) -> None:
    text, plan = explain(
        conn,
        "EXPLAIN PLAN WITHOUT IMPLEMENTATION FOR SELECT b FROM dfs.data.explain_parts WHERE a > 1",
    )
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "DrillScreenRel"
    assert lines[1].startswith("  DrillProjectRel(b=[")
    assert any(line.strip().startswith("DrillFilterRel(condition=[") for line in lines)
    assert lines[-1].strip().startswith("DrillScanRel(table=[dfs.data.explain_parts]")
    assert not any(line.startswith("00-") for line in lines)
    assert plan["head"]["type"] == "APACHE_DRILL_LOGICAL"
    assert plan["query"][0]["op"] == "scan" and plan["query"][-1]["op"] == "screen"


def test_system_tables_temporary_tables_and_values(conn: Any) -> None:
    text, _ = explain(conn, "EXPLAIN PLAN FOR SELECT name FROM sys.options WHERE name LIKE 'exec%'")
    scans = [line for line in text.splitlines() if " Scan(" in line]
    assert len(scans) == 1 and "table=[sys.options]" in scans[0]
    rows(conn, "CREATE TEMPORARY TABLE explain_tt AS SELECT 1 AS x FROM (VALUES(1))")
    text, _ = explain(conn, "EXPLAIN PLAN FOR SELECT x FROM explain_tt")
    scans = [line for line in text.splitlines() if " Scan(" in line]
    assert len(scans) == 1 and re.search(r"table=\[[\w.]*explain_tt\]", scans[0])
    text, _ = explain(conn, "EXPLAIN PLAN FOR SELECT 1 AS x FROM (VALUES(1))")
    assert text.startswith("00-00    Screen\n") and "Values" in text and "Scan" not in text


def test_profile_graph_is_explains_tree_with_spark_measures(session: Any, parts: Path) -> None:
    from auger.sql.planning import explain as drill_plan

    sql = (
        "SELECT dir0, COUNT(*) AS n FROM dfs.data.explain_parts "
        "WHERE a > 0 GROUP BY dir0 ORDER BY dir0"
    )
    # both runs plan the same scan: not one building raw-file cache entries, one reading them
    session.options.set("auger.cache.enabled", False)
    result = session.execute(sql, record_scans=True)
    df, scans = result.dataframe, result.planned_scans
    assert scans is not None and len(df.toArrow()) == 2
    graph = drill_plan.plan_graph(df, scans)

    def walk(node: dict[str, Any]) -> list[dict[str, Any]]:
        return [node, *(n for c in node["children"] for n in walk(c))]

    nodes = walk(graph)
    assert graph["name"] == "Screen"
    assert {"HashAgg", "Sort"} <= {n["name"] for n in nodes}
    (scan,) = [n for n in nodes if n["name"] == "Scan"]
    assert scan["detail"].startswith("Scan(table=[dfs.data.explain_parts]")
    assert "columns=[" in scan["detail"] and "numFiles=2" in scan["detail"]
    assert scan["rows"] == 2  # one record in each of the two files
    assert any(n["timeMs"] is not None for n in nodes)
    # the operators are EXPLAIN's, in the same order
    again = session.execute(sql, record_scans=True)
    assert again.planned_scans is not None
    text = (
        drill_plan.explain_result(again.dataframe, again.planned_scans, True)
        .table.column("text")[0]
        .as_py()
    )
    assert [ln.split()[1].split("(")[0] for ln in text.splitlines()] == [n["name"] for n in nodes]


def test_scan_files_are_named_relative_to_the_selection_root(conn: Any, data_dir: Path) -> None:
    root = data_dir / "explain_same_names"
    for quarter in ("2024", "2025"):
        (root / quarter).mkdir(parents=True, exist_ok=True)
        (root / quarter / "q1.csv").write_text("1,a\n")
    text, _ = explain(conn, "EXPLAIN PLAN FOR SELECT * FROM dfs.data.explain_same_names")
    assert "files=[2024/q1.csv, 2025/q1.csv]" in text
