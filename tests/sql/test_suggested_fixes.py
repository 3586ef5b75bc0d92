"""Every query an error suggests as its "Fix:" runs as written and gets an answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .helpers import error, rows

_ALTER = re.compile(r"ALTER SESSION SET `[^`]+` = \S+")
_SELECT = re.compile(r"SELECT \* FROM [\w.]+`[^`]+`")


def _fix_line(message: str) -> str:
    found = [line for line in message.splitlines() if line.startswith("Fix: ")]
    assert len(found) == 1, message
    return found[0]


def test_a_directory_of_several_formats_in_subdirectories_suggests_queries_that_run(
    conn: Any, tmp_path: Path
) -> None:
    mixed = tmp_path / "mixed"
    (mixed / "2024").mkdir(parents=True)
    (mixed / "2025").mkdir()
    (mixed / "2024" / "q1.csv").write_text("1,a\n2,b\n")
    (mixed / "2025" / "q1.csv").write_text("3,c\n")
    (mixed / "top.csv").write_text("4,d\n")
    (mixed / "2025" / "events.json").write_text(json.dumps({"id": 7}) + "\n")
    message = error(conn, f"SELECT * FROM dfs.`{mixed}`")
    assert "holds files of more than one format" in message
    # nothing was read, so no line says which format was
    assert "Format read" not in message
    queries = _SELECT.findall(_fix_line(message))
    assert len(queries) == 2, message
    answers = {}
    for query in queries:
        answers[query] = sorted(r[0] for r in rows(conn, query))
    csv_query = next(q for q in queries if ".csv" in q)
    json_query = next(q for q in queries if ".json" in q)
    assert answers[csv_query] == [["1", "a"], ["2", "b"], ["3", "c"], ["4", "d"]]
    assert answers[json_query] == [7]


def test_a_workspace_relative_directory_suggests_the_workspace_s_name(
    conn: Any, data_dir: Path
) -> None:
    mixed = data_dir / "fix_mixed"
    (mixed / "sub").mkdir(parents=True)
    (mixed / "sub" / "a.json").write_text('{"x": 1}\n')
    (mixed / "b.tsv").write_text("2\tz\n")
    message = error(conn, "SELECT * FROM dfs.data.`fix_mixed`")
    queries = _SELECT.findall(_fix_line(message))
    assert sorted(queries) == [
        "SELECT * FROM dfs.data.`fix_mixed/*.tsv`",
        "SELECT * FROM dfs.data.`fix_mixed/*/*.json`",
    ]
    assert rows(conn, queries[0]) and rows(conn, queries[1])


def test_an_invalid_json_record_suggests_skipping_it(conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"a": 1}\n{"a": }\n{"a": 3}\n')
    message = error(conn, f"SELECT a FROM dfs.`{path}`")
    statement = _ALTER.search(_fix_line(message))
    assert statement is not None, message
    conn.cursor().execute(statement.group(0))
    assert rows(conn, f"SELECT a FROM dfs.`{path}`") == [(1,), (3,)]


def test_a_json_type_change_suggests_all_text_mode(conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "change.json"
    path.write_text('{"a": 1}\n{"a": "two"}\n')
    message = error(conn, f"SELECT * FROM dfs.`{path}`")
    statement = _ALTER.search(_fix_line(message))
    assert statement is not None, message
    conn.cursor().execute(statement.group(0))
    assert len(rows(conn, f"SELECT * FROM dfs.`{path}`")) == 2


def test_a_value_past_the_json_sample_suggests_a_larger_sample(conn: Any, tmp_path: Path) -> None:
    path = tmp_path / "late.json"
    path.write_text("".join(f'{{"v": {i}}}\n' for i in range(5)) + '{"v": 1.5}\n')
    conn.cursor().execute("ALTER SESSION SET `auger.scan.json_sample_rows` = 3")
    message = error(conn, f"SELECT SUM(v) FROM dfs.`{path}`")
    statement = _ALTER.search(_fix_line(message))
    assert statement is not None, message
    conn.cursor().execute(statement.group(0))
    assert rows(conn, f"SELECT SUM(v) FROM dfs.`{path}`") == [(11.5,)]


def test_an_unknown_store_format_suggests_one_that_writes(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("ALTER SESSION SET `store.format` = 'nosuch'")
    message = error(conn, "CREATE TEMPORARY TABLE fix_fmt AS SELECT 1 AS x")
    statement = _ALTER.search(_fix_line(message))
    assert statement is not None, message
    cur.execute(statement.group(0))
    cur.execute("CREATE TEMPORARY TABLE fix_fmt AS SELECT 1 AS x")
    assert rows(conn, "SELECT x FROM fix_fmt") == [(1,)]
