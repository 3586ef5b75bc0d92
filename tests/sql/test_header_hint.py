"""A ``.csv`` table whose first line looks like a header gets a scan message with the fix."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from auger.sql.planning.header_hint import looks_like_header

from .helpers import rows


def test_a_line_of_names_over_numbers_looks_like_a_header() -> None:
    assert looks_like_header([["id", "region"], ["1", "east"], ["2", "west"]])
    assert looks_like_header([["name", "born"], ["ann", "1990-01-02"]])
    # data all the way down: names over names, numbers in the first line, one line only
    assert not looks_like_header([["east", "west"], ["north", "south"]])
    assert not looks_like_header([["1", "east"], ["2", "west"]])
    assert not looks_like_header([["id", "region"]])
    assert not looks_like_header([["id", "true"], ["1", "2"]])


def _messages(conn: Any, sql: str) -> list[str]:
    cur = conn.cursor()
    cur.execute(sql)
    cur.fetchall()
    return [text for _, text in cur.messages]


def test_a_csv_file_with_a_header_says_how_to_read_it(conn: Any, data_dir: Path) -> None:
    (data_dir / "hh").mkdir(exist_ok=True)
    (data_dir / "hh" / "sales.csv").write_text("id,region,amount\n1,east,10.5\n2,west,20\n")
    messages = _messages(conn, "SELECT * FROM dfs.data.`hh/sales.csv`")
    hint = next(m for m in messages if "looks like a header" in m)
    assert "(id, region, amount)" in hint and "extractHeader => true" in hint and ".csvh" in hint
    query = re.search(r"table\(.*?\)\)", hint)
    assert query is not None
    got = rows(conn, f"SELECT region FROM {query.group(0)} ORDER BY id")
    assert got == [("east",), ("west",)]


def test_headerless_data_and_csvh_have_no_such_message(conn: Any, data_dir: Path) -> None:
    (data_dir / "hh").mkdir(exist_ok=True)
    (data_dir / "hh" / "plain.csv").write_text("1,east\n2,west\n")
    (data_dir / "hh" / "named.csvh").write_text("id,region\n1,east\n")
    for table in ("`hh/plain.csv`", "`hh/named.csvh`"):
        messages = _messages(conn, f"SELECT * FROM dfs.data.{table}")
        assert not any("looks like a header" in m for m in messages)
