"""The raw-file cache against the scan framework: the same answers with it off, on before its
entries are built, and on when files come from them; never stale; bounded.

Each query runs three times: cache off (the scan framework, the oracle), cache on with no entry
(the scan framework; the entries are built after the answer), cache on again once the build
is done (Spark's Parquet reader over them). The connections read no scan on the driver
(``auger.scan.local_bytes`` and ``auger.scan.local_answer_bytes`` = 0): the test files are
small, and such scans skip the cache.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from auger.dbapi import Connection, Error
from auger.scan.cache import complete_parts, evict, part_name
from auger.scan.spec import FileSplit
from auger.spark.cache_builds import wait_for_builds
from tests.fakes import count_calls
from tests.formats.bad_input import cases, counted_together, write_corpus
from tests.spark.shared import cached_connection, explained


def _key(row: Any) -> str:
    return repr(tuple(row))


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("raw_cache")


@pytest.fixture
def cc(make_conn: Any, cache_dir: Path) -> Iterator[Connection]:
    """A connection whose cache is on, in the test's own location."""
    conn = cached_connection(make_conn, cache_dir)
    conn.cursor().execute("ALTER SESSION SET `auger.scan.local_answer_bytes` = 0")
    yield conn


def _run(conn: Connection, sql: str, cache: bool) -> tuple[list[str], list[Any], int]:
    cur = conn.cursor()
    cur.execute(f"ALTER SESSION SET `auger.cache.enabled` = {str(cache).lower()}")
    cur.execute(sql)
    rows = cur.fetchall()
    names = [d[0] for d in cur.description]
    cached = sum(s["files_from_cache"] for s in cur.scan_statistics)
    wait_for_builds()  # the entries the query left to build after its answer
    return names, sorted(rows, key=_key), cached


def _error_kinds(conn: Connection, sql: str, caches: tuple[bool, ...]) -> list[str]:
    """The kind of error the query fails with, run once per cache setting (each must fail)."""
    kinds = []
    for cache in caches:
        with pytest.raises(Error) as info:
            _run(conn, sql, cache)
        kinds.append(info.value.kind)
    return kinds


def _same_three_ways(conn: Connection, sql: str, files: int | None = None) -> list[Any]:
    """The query's answer with the cache off, building, and read from it: all equal."""
    names, want, _ = _run(conn, sql, cache=False)
    got_names, built, _ = _run(conn, sql, cache=True)
    assert (got_names, built) == (names, want), sql
    got_names, hit, cached = _run(conn, sql, cache=True)
    assert (got_names, hit) == (names, want), sql
    assert cached == (files if files is not None else cached) and cached > 0, sql
    return want


# ---------------------------------------------------------------------------- the corpus
CORPUS = cases()


@pytest.fixture(scope="module")
def corpus(data_dir: Path) -> str:
    root = data_dir / "cache_corpus"
    if not root.exists():
        write_corpus(root, CORPUS)
    return "cache_corpus"


@pytest.mark.parametrize(
    "directory", [d for d in counted_together(CORPUS) if not d.startswith("parquet")]
)
def test_corpus_tables_same_answers(cc: Connection, corpus: str, directory: str) -> None:
    """Every readable file of the bad-input corpus, by format, all columns and implicit ones."""
    _same_three_ways(cc, f"SELECT *, filename FROM dfs.data.`{corpus}/{directory}`")


def _first_failures() -> list[Any]:
    """One failing text or JSON table of each corpus directory (each costs Spark jobs)."""
    seen: dict[str, Any] = {}
    for case in CORPUS:
        top = case.table.split("/", 1)[0]
        if case.error is not None and "parquet" not in case.table and top not in seen:
            seen[top] = case
    return list(seen.values())


@pytest.mark.parametrize("case", _first_failures(), ids=lambda c: c.name)
def test_corpus_failures_still_fail(cc: Connection, corpus: str, case: Any) -> None:
    """A file that cannot be read fails the same way with the cache on, every time (no entry
    is left that would answer instead)."""
    sql = f"SELECT * FROM dfs.data.`{corpus}/{case.table}`"
    assert _error_kinds(cc, sql, (False, True, True)) == [case.error] * 3


# ----------------------------------------------------------------------- the scan's rules
@pytest.fixture(scope="module")
def tree(data_dir: Path) -> str:
    """JSON files under two partition directories, with columns some files lack and types
    the readers must keep (BIGINT, DOUBLE, BOOLEAN, maps, arrays)."""
    root = data_dir / "cache_tree"
    for d, lines in {
        "2023/q1": [
            '{"id": 1, "amount": 1.5, "ok": true, "m": {"a": 1, "b": "x"}, "arr": [1, 2]}',
            '{"id": 2, "amount": 2.25, "ok": false, "m": {"a": 2, "b": "y"}, "arr": []}',
        ],
        "2024/q2": [
            '{"id": 3, "amount": 3.0, "extra": "only here", "m": {"a": 3}, "arr": [5]}',
        ],
    }.items():
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / "f.json").write_text("\n".join(lines) + "\n")
    return "cache_tree"


def test_implicit_partition_missing_and_types(cc: Connection, tree: str) -> None:
    table = f"dfs.data.`{tree}`"
    _same_three_ways(
        cc,
        f"SELECT dir0, dir1, filename, fqn, id, amount, ok, t.m.a, arr, extra, nope FROM {table} t",
        files=2,
    )
    # another query over other columns of the same files: served by the same entries
    names, rows, cached = _run(cc, f"SELECT m, filepath, extra FROM {table}", cache=True)
    assert cached == 2 and len(rows) == 3
    assert _run(cc, f"SELECT m, filepath, extra FROM {table}", cache=False)[:2] == (names, rows)


def test_headerless_positions_and_array(cc: Connection, data_dir: Path) -> None:
    d = data_dir / "cache_headerless"
    d.mkdir(exist_ok=True)
    wide = ",".join(f"w{n}" for n in range(40))  # past the positions an entry keeps apart
    (d / "a.csv").write_text(f'1,x,2.5\n2,"y, z"\n3,,4,5\n{wide}\n')
    table = "dfs.data.`cache_headerless`"
    _same_three_ways(cc, f"SELECT columns[0], columns[3], columns[1] FROM {table}", files=1)
    _same_three_ways(cc, f"SELECT columns, columns[2] FROM {table}", files=1)
    _same_three_ways(cc, f"SELECT columns[31], columns[32], columns[39], columns[40] FROM {table}")
    _same_three_ways(cc, f"SELECT * FROM {table}", files=1)


def test_provided_schema_and_header(cc: Connection, data_dir: Path) -> None:
    (data_dir / "cache_tf.csvh").write_text("id,start,name\n1,2019-02-01,a\n2,,b\n")
    inline = (
        "SELECT id, `start`, name FROM table(dfs.data.`cache_tf.csvh`(schema => "
        "'inline=(id int, `start` date)'))"
    )
    typed = _same_three_ways(cc, inline, files=1)
    assert [type(r[0]) for r in typed] == [int, int]
    # the same file without the provided schema is another entry: text, not INT
    plain = _same_three_ways(cc, "SELECT id FROM dfs.data.`cache_tf.csvh`", files=1)
    assert plain == [("1",), ("2",)]


def test_reader_options_key_the_entry(cc: Connection, data_dir: Path) -> None:
    (data_dir / "cache_num.json").write_text('{"n": 1}\n{"n": 2}\n')
    sql = "SELECT n FROM dfs.data.`cache_num.json`"
    assert _same_three_ways(cc, sql, files=1) == [(1,), (2,)]
    cc.cursor().execute("ALTER SESSION SET `store.json.read_numbers_as_double` = true")
    try:
        assert _same_three_ways(cc, sql, files=1) == [(1.0,), (2.0,)]
    finally:
        cc.cursor().execute("ALTER SESSION RESET `store.json.read_numbers_as_double`")


# ------------------------------------------------------------------------------ staleness
def _bump(path: Path) -> None:
    """Make sure the modification time moves even on a coarse clock."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_changed_and_added_files_are_read_again_alone(cc: Connection, data_dir: Path) -> None:
    d = data_dir / "cache_stale"
    d.mkdir(exist_ok=True)
    (d / "a.json").write_text('{"k": "a", "v": 1}\n')
    (d / "b.json").write_text('{"k": "b", "v": 2}\n')
    sql = "SELECT k, SUM(v) AS s FROM dfs.data.`cache_stale` GROUP BY k"
    assert _same_three_ways(cc, sql, files=2) == [("a", 1), ("b", 2)]
    with open(d / "a.json", "a") as fh:
        fh.write('{"k": "a", "v": 10}\n')  # an appended line
    _bump(d / "a.json")
    (d / "c.json").write_text('{"k": "c", "v": 5}\n')  # an added file
    _, rows, cached = _run(cc, sql, cache=True)
    assert rows == [("a", 11), ("b", 2), ("c", 5)]
    assert cached == 1  # b only: a changed, c is new
    _, rows, cached = _run(cc, sql, cache=True)
    assert rows == [("a", 11), ("b", 2), ("c", 5)] and cached == 3


def test_row_counts_come_from_the_entries(cc: Connection, data_dir: Path) -> None:
    """A query that only counts rows reads no column of the entries: Spark's reader counts
    their rows. Headerless and header text (blank lines, a header alone) and JSON, with the
    implicit and partition columns a count may filter and group by; a changed file is
    counted again from the raw file, the others from their entries."""
    d = data_dir / "cache_counted"
    for table, files in {
        "csv": {"x/a.csv": "1,a\n\n2,b\n3\n", "y/b.csv": "4\n5,e\n"},
        "csvh": {"x/a.csvh": "k,v\n1,2\n\n3,4\n5,6\n", "y/b.csvh": "k,v\n"},
        "json": {"x/a.json": '{"a": 1}\n{}\n\n{"b": [1, 2]}\n', "y/b.json": '{"a": 2}\n'},
    }.items():
        for name, text in files.items():
            (d / table / name).parent.mkdir(parents=True, exist_ok=True)
            (d / table / name).write_text(text)
    counts = {}
    for table in ("csv", "csvh", "json"):
        src = f"dfs.data.`cache_counted/{table}`"
        counts[table] = _same_three_ways(cc, f"SELECT COUNT(*) AS n FROM {src}", files=2)
        grouped = f"SELECT dir0, filename, COUNT(*) AS n FROM {src} GROUP BY dir0, filename"
        by_file = _same_three_ways(cc, grouped, files=2)
        assert sum(n for *_, n in by_file) == counts[table][0][0]
        filtered = f"SELECT COUNT(1) AS n FROM {src} WHERE dir0 = 'y'"
        in_y = sum(n for dir0, _, n in by_file if dir0 == "y")
        assert _same_three_ways(cc, filtered, files=1) == [(in_y,)]
    assert counts == {"csv": [(5,)], "csvh": [(3,)], "json": [(4,)]}
    table = "dfs.data.`cache_counted/csv`"
    assert "FileScan parquet" in explained(cc, f"SELECT COUNT(*) FROM {table}")
    with open(d / "csv" / "x" / "a.csv", "a") as fh:
        fh.write("6,f\n")  # an appended line
    _bump(d / "csv" / "x" / "a.csv")
    _, rows, cached = _run(cc, f"SELECT COUNT(*) AS n FROM {table}", cache=True)
    assert (rows, cached) == ([(6,)], 1)


def test_file_read_in_byte_ranges(cc: Connection, data_dir: Path, cache_dir: Path) -> None:
    """A big text file read by several tasks (line-aligned byte ranges): its entry is their
    parts together, each line once."""
    path = data_dir / "cache_big.csvh"
    if not path.exists():
        lines = "".join(f"{i},{'x' * 40}{i % 7}\n" for i in range(250_000))
        path.write_text("a,b\n" + lines)
    cc.cursor().execute("ALTER SESSION SET `auger.scan.target_split_bytes` = 4194304")
    try:
        sql = (
            "SELECT COUNT(*), SUM(CAST(a AS BIGINT)), COUNT(DISTINCT b) "
            "FROM dfs.data.`cache_big.csvh`"
        )
        assert _same_three_ways(cc, sql, files=1) == [(250_000, 249_999 * 125_000, 7)]
    finally:
        cc.cursor().execute("ALTER SESSION RESET `auger.scan.target_split_bytes`")
    size = path.stat().st_size
    chains = [complete_parts(str(e), size) for e in cache_dir.glob("*/*") if e.is_dir()]
    assert any(c is not None and len(c) >= 2 for c in chains)


# ------------------------------------------------------------------- typed copies
def test_casts_to_numbers_read_the_typed_copies(cc: Connection, data_dir: Path) -> None:
    """Casts of text columns to numbers give the strings' own numbers from the entries' typed
    copies (tricky decimals, 18 digits, leading zeros, rows too short), and the copies are
    read only where they answer: an INT cast of values past INT's range still fails."""
    d = data_dir / "cache_typed"
    d.mkdir(exist_ok=True)
    (d / "a.csv").write_text(
        "1,0.1,7,x\n-20,9007199254740993,007,y\n999999999999999999,-0.30000000000000004,-0,x\n"
        "5\n42,2.5,12,y\n"
    )
    (d / "b.csvh").write_text("name,amount\nu,1.10\nv,-3\nw,\n")  # "" has no copy
    (d / "c.csvh").write_text("day,n\n2024-02-29,1\n1999-12-31,2\n2024-03-01,3\n")
    table = "dfs.data.`cache_typed/a.csv`"
    sql = (
        f"SELECT columns[3] AS k, COUNT(*) AS n, SUM(CAST(columns[1] AS DOUBLE)) AS s, "
        f"MAX(CAST(columns[0] AS BIGINT)) AS m, MIN(CAST(columns[2] AS INT)) AS i, "
        f"MAX(CAST(columns[0] AS DOUBLE)) AS d FROM {table} GROUP BY columns[3]"
    )
    rows = _same_three_ways(cc, sql, files=1)
    assert rows[0][:5] == ("x", 2, 0.1 - 0.30000000000000004, 999999999999999999, 0)
    plan = explained(cc, sql)
    # (Spark may fold the frame's cast into the query: the copies' own names are read)
    for copy in ("double____columns_1", "bigint____columns_0", "bigint____columns_2"):
        assert f"__auger_{copy}" in plan, plan
    # the scan under the table's name and files, as without the cache, not the entry's Parquet
    assert "Scan(table=[dfs.data.cache_typed/a.csv]" in plan, plan
    assert "files=[a.csv]" in plan and "Scan parquet" not in plan, plan
    # grouped by the string itself: its cast outside an aggregate stays Spark's own
    by_string = (
        f"SELECT columns[2] AS s, CAST(columns[2] AS INT) AS i, COUNT(*) AS n FROM {table} "
        f"WHERE columns[2] IS NOT NULL GROUP BY columns[2]"
    )
    assert len(_same_three_ways(cc, by_string, files=1)) == 4
    where = f"SELECT columns[0] FROM {table} WHERE CAST(columns[1] AS DOUBLE) > 0.2"
    assert _same_three_ways(cc, where, files=1) == [("-20",), ("42",)]
    assert "__auger_double____columns_1" in explained(cc, where)
    # in a grouped query too: WHERE filters the rows before they are grouped
    grouped_where = (
        f"SELECT columns[3] AS k, COUNT(*) AS n FROM {table} "
        f"WHERE CAST(columns[1] AS DOUBLE) > 0.2 GROUP BY columns[3]"
    )
    assert _same_three_ways(cc, grouped_where, files=1) == [("y", 2)]
    assert "__auger_double____columns_1" in explained(cc, grouped_where)
    # past INT's range: the copy does not answer, and Spark's cast fails as without the cache
    too_big = f"SELECT SUM(CAST(columns[0] AS INT)) FROM {table}"
    off, on = _error_kinds(cc, too_big, (False, True))
    assert off == on
    assert "__auger_" not in explained(cc, too_big)
    # a header file whose column has an empty value: no copy, the strings are cast
    header = "SELECT name, CAST(amount AS DOUBLE) * 2 AS a FROM dfs.data.`cache_typed/b.csvh`"
    with pytest.raises(Error):
        _run(cc, header, cache=True)
    ok = (
        "SELECT name, CAST(amount AS DOUBLE) * 2 AS a FROM dfs.data.`cache_typed/b.csvh` "
        "WHERE amount <> ''"
    )
    assert _same_three_ways(cc, ok, files=1) == [("u", 2.2), ("v", -6.0)]
    assert "__auger_" not in explained(cc, ok)
    # dates
    days = (
        "SELECT MAX(CAST(`day` AS DATE)) AS m, COUNT(*) AS n FROM dfs.data.`cache_typed/c.csvh` "
        "WHERE CAST(`day` AS DATE) > DATE '2000-01-01'"
    )
    assert [(str(m), n) for m, n in _same_three_ways(cc, days, files=1)] == [("2024-03-01", 2)]
    assert "__auger_date__day" in explained(cc, days)
    named = "SELECT CAST(`day` AS DATE) AS `day` FROM dfs.data.`cache_typed/c.csvh` ORDER BY `day`"
    assert [str(d) for (d,) in _same_three_ways(cc, named, files=1)] == [
        "1999-12-31",
        "2024-02-29",
        "2024-03-01",
    ]
    assert "__auger_date__day" in explained(cc, named)
    # under * too: the table's columns, as with the cache off (names, types), no copy among them
    star = (
        "SELECT * FROM dfs.data.`cache_typed/c.csvh` WHERE CAST(n AS INT) > 1 "
        "ORDER BY CAST(`day` AS DATE) DESC LIMIT 5"
    )
    assert _same_three_ways(cc, star, files=1) == [("1999-12-31", "2"), ("2024-03-01", "3")]
    assert "__auger_date__day" in explained(cc, star) and "__auger_bigint__n" in explained(cc, star)
    described = []
    for cache in (False, True):
        cur = cc.cursor()
        cur.execute(f"ALTER SESSION SET `auger.cache.enabled` = {str(cache).lower()}")
        assert len(cur.execute(f"{star.replace('LIMIT 5', 'LIMIT 1')}").fetchall()) == 1
        described.append(cur.description)
    assert described[0] == described[1] and [d[0] for d in described[0]] == ["day", "n"]


def test_string_extremes_over_few_groups_run_without_a_sort(cc: Connection, data_dir: Path) -> None:
    """Grouped by integers whose range the entries' typed copies give (few groups), a string
    MAX or MIN runs in Spark's object hash aggregate (EXPLAIN: HashAgg), with the same rows;
    grouped by a range of more values, or over a file parsed beside the entries (whose range
    is unknown), it is Spark's sort-based aggregate (StreamAgg) as before."""
    d = data_dir / "cache_few_groups"
    d.mkdir(exist_ok=True)
    (d / "a.csv").write_text(
        "".join(f"{i % 7},{i},name{(i * 37) % 1000},{i % 300}\n" for i in range(2000))
        + "3,5\n"  # a row too short: a NULL string
    )
    table = "dfs.data.`cache_few_groups`"
    few = (
        f"SELECT CAST(columns[0] AS INT) AS q, MAX(columns[2]) AS x, MIN(columns[2]) AS y, "
        f"MAX(CAST(columns[1] AS BIGINT)) AS m, COUNT(*) AS n FROM {table} "
        f"GROUP BY CAST(columns[0] AS INT)"
    )
    rows = _same_three_ways(cc, few, files=1)
    assert len(rows) == 7 and sum(r[4] for r in rows) == 2001
    plan = explained(cc, few)
    assert "HashAgg" in plan and "StreamAgg" not in plan and "collect_list" in plan, plan
    many = (
        f"SELECT CAST(columns[3] AS INT) AS q, MAX(columns[2]) AS x FROM {table} "
        f"GROUP BY CAST(columns[3] AS INT)"
    )
    assert len(_same_three_ways(cc, many, files=1)) == 301
    assert "StreamAgg" in explained(cc, many)
    (d / "b.csv").write_text("3,9,zzz,1\n")  # parsed beside a.csv's entry
    assert "StreamAgg" in explained(cc, few)
    beside = _run(cc, few, cache=True)[1]
    assert beside == _run(cc, few, cache=False)[1]
    assert "zzz" in {r[1] for r in beside} and len(beside) == 7


def test_string_extremes_grouped_by_a_column_of_few_values_run_without_a_sort(
    cc: Connection, data_dir: Path
) -> None:
    """A text column whose parts list its few values (here 5, with blanks) groups a string MAX
    or MIN in Spark's object hash aggregate, with the same rows; a column of many values, or
    one of few values in a file parsed beside the entries, keeps the sort-based aggregate."""
    d = data_dir / "cache_few_values"
    d.mkdir(exist_ok=True)
    (d / "a.csvh").write_text(
        "category,name\n"
        + "".join(
            f"{'' if i % 11 == 0 else f'cat{i % 5}'},name{(i * 37) % 3000}\n" for i in range(3000)
        )
    )
    table = "dfs.data.`cache_few_values`"
    few = (
        f"SELECT category, MAX(name) AS x, MIN(name) AS y, COUNT(*) AS n FROM {table} "
        "GROUP BY category"
    )
    rows = _same_three_ways(cc, few, files=1)
    assert len(rows) == 6 and sum(r[3] for r in rows) == 3000
    plan = explained(cc, few)
    assert "HashAgg" in plan and "StreamAgg" not in plan, plan
    many = f"SELECT name, MAX(category) AS c FROM {table} GROUP BY name"
    assert len(_same_three_ways(cc, many, files=1)) == 3000
    assert "StreamAgg" in explained(cc, many)
    (d / "b.csvh").write_text("category,name\ncat9,zzz\n")  # parsed beside a.csvh's entry
    assert "StreamAgg" in explained(cc, few)
    beside = _run(cc, few, cache=True)[1]
    assert beside == _run(cc, few, cache=False)[1] and len(beside) == 7


def test_grouped_by_a_text_column_of_few_values_groups_by_its_codes(
    cc: Connection, data_dir: Path
) -> None:
    """A column of few values (blank, NULL, quoted, accented, differing in case alone) is
    grouped by its key copy's codes where every file comes from the cache, with the same rows
    and names as the cache off gives, in CSV with a header, a headerless file's position and
    JSON (and ``SELECT DISTINCT`` of it); a file parsed beside the entries groups by the
    strings again."""
    import json

    d = data_dir / "cache_group_keys"
    d.mkdir(exist_ok=True)
    values = ["red", "Red", "", "it's", "grün", '"q,uoted"']
    (d / "a.csvh").write_text("cat,n\n" + "".join(f"{values[i % 6]},{i}\n" for i in range(600)))
    (d / "h.csv").write_text("".join(f"{i},{values[i % 6]}\n" for i in range(600)))
    (d / "j.json").write_text(
        "".join(
            json.dumps({"cat": None if i % 7 == 0 else values[i % 6], "n": i}) + "\n"
            for i in range(600)
        )
    )
    key = "__auger_as_key__"
    queries = {
        "a.csvh": (
            "SELECT cat, COUNT(*) AS k, SUM(CAST(n AS BIGINT)) AS s, MIN(cat) AS lo "
            "FROM {t} WHERE cat <> 'Red' GROUP BY cat HAVING COUNT(*) > 1 ORDER BY cat"
        ),
        "h.csv": "SELECT columns[1] AS c, COUNT(*) AS k FROM {t} GROUP BY columns[1]",
        "j.json": "SELECT UPPER(t.cat) AS u, COUNT(*) AS k FROM {t} t GROUP BY t.cat",
    }
    answers = {}
    for name, sql in queries.items():
        query = sql.format(t=f"dfs.data.`cache_group_keys/{name}`")
        answers[name] = _same_three_ways(cc, query, files=1)
        assert sum(r[1] for r in answers[name]) == (500 if name == "a.csvh" else 600)
        plan = explained(cc, query)
        assert f"HashAgg(keys=[{key}" in plan, plan
    described = []  # the columns' types and nullability, too, are the same
    for cache in (False, True):
        cur = cc.cursor()
        cur.execute(f"ALTER SESSION SET `auger.cache.enabled` = {str(cache).lower()}")
        cur.execute(queries["h.csv"].format(t="dfs.data.`cache_group_keys/h.csv`")).fetchall()
        described.append(cur.description)
    assert described[0] == described[1]
    distinct = "SELECT DISTINCT cat FROM dfs.data.`cache_group_keys/a.csvh` ORDER BY cat"
    seen = sorted(r[0] for r in _same_three_ways(cc, distinct, files=1))
    assert seen == sorted(["red", "Red", "", "it's", "grün", "q,uoted"])
    assert f"HashAgg(keys=[{key}" in explained(cc, distinct)
    assert ("it's", 100, sum(range(3, 600, 6)), "it's") in answers["a.csvh"]
    assert (None, len(range(0, 600, 7))) in answers["j.json"]  # NULLs make a group of their own
    counted = {  # distinct values counted by their codes: NULL is no value
        "j.json": "SELECT COUNT(DISTINCT cat) AS k, COUNT(DISTINCT cat, n) AS kn FROM {t}",
        "a.csvh": "SELECT MOD(CAST(n AS INT), 4) AS m, COUNT(DISTINCT cat) FROM {t} GROUP BY 1",
    }
    for name, sql in counted.items():
        query = sql.format(t=f"dfs.data.`cache_group_keys/{name}`")
        answers[name] = _same_three_ways(cc, query, files=1)
        plan = explained(cc, query)
        assert f"{key}cat" in plan and "count(distinct cat)" not in plan, plan
    assert answers["j.json"] == [(6, 600 - len(range(0, 600, 7)))]
    assert answers["a.csvh"] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    (d / "b.csvh").write_text("cat,n\nred,1\n")  # parsed beside a.csvh's entry
    both = "SELECT cat, COUNT(*) AS k FROM dfs.data.`cache_group_keys/*.csvh` GROUP BY cat"
    assert key not in explained(cc, both)
    all_counted = "SELECT COUNT(DISTINCT cat) AS k FROM dfs.data.`cache_group_keys/*.csvh`"
    assert key not in explained(cc, all_counted) and _run(cc, all_counted, True)[1] == [(6,)]
    beside = _run(cc, both, cache=True)[1]
    assert beside == _run(cc, both, cache=False)[1] and ("red", 101) in beside


def test_string_extremes_grouped_by_a_json_map_member_of_few_values_run_without_a_sort(
    cc: Connection, data_dir: Path
) -> None:
    """JSON numbers are integers in the parts, which give the range of those of few values, a
    map's member too: grouped by one (``t.m.qty``, ``m.qty``, a top-level ``q``), a string MAX
    or MIN runs in Spark's object hash aggregate, with the same rows; a member of many values,
    or one in a file parsed beside the entries, keeps the sort-based aggregate."""
    import json

    d = data_dir / "cache_few_members"
    d.mkdir(exist_ok=True)
    records = [
        {"id": i, "name": f"name{(i * 37) % 3000}", "q": i % 4, "m": {"qty": i % 9, "id": i}}
        for i in range(3000)
    ]
    records[5]["m"] = None
    records[6]["q"] = None
    (d / "a.json").write_text("".join(json.dumps(r) + "\n" for r in records))
    table = "dfs.data.`cache_few_members`"
    few = (
        f"SELECT t.m.qty AS q, MAX(t.name) AS x, MIN(name) AS y, COUNT(*) AS n FROM {table} t "
        "GROUP BY t.m.qty"
    )
    rows = _same_three_ways(cc, few, files=1)
    assert len(rows) == 10 and sum(r[3] for r in rows) == 3000  # 9 values and NULL
    plan = explained(cc, few)
    assert "HashAgg" in plan and "StreamAgg" not in plan and "collect_list" in plan, plan
    both = f"SELECT q, m.qty AS k, MAX(name) AS x FROM {table} GROUP BY q, m.qty"
    assert len(_same_three_ways(cc, both, files=1)) == 4 * 9 + 2  # a NULL in row 5, in row 6
    assert "StreamAgg" not in explained(cc, both)
    many = f"SELECT t.m.id AS i, MAX(name) AS x FROM {table} t GROUP BY t.m.id"
    assert len(_same_three_ways(cc, many, files=1)) == 3000
    assert "StreamAgg" in explained(cc, many)
    (d / "b.json").write_text('{"id": 1, "name": "zzz", "q": 1, "m": {"qty": 2}}\n')
    assert "StreamAgg" in explained(cc, few)
    beside = _run(cc, few, cache=True)[1]
    assert beside == _run(cc, few, cache=False)[1] and len(beside) == 10


def test_lengths_of_ascii_text_count_bytes(cc: Connection, data_dir: Path) -> None:
    """A column of ASCII text alone in every part has its LENGTH counted in bytes, with the
    same answers; a column with another character in one value (past the part's first row
    group), or one in a file parsed beside the entries, keeps Spark's count of characters."""
    import json

    d = data_dir / "cache_ascii"
    d.mkdir(exist_ok=True)
    rows = 200_000  # a part's first row group holds about 140 k of them
    records = [
        {"id": i, "s": "x" * (i % 50), "u": "éé" if i == 180_045 else "e" * (i % 7)}
        for i in range(rows)
    ]
    (d / "a.json").write_text("".join(json.dumps(r) + "\n" for r in records))
    table = "dfs.data.`cache_ascii`"
    query = (
        f"SELECT LENGTH(s) AS n, COUNT(*) AS c, MAX(CHAR_LENGTH(u)) AS m, SUM(LENGTH(u)) AS t "
        f"FROM {table} WHERE LENGTH(s) > 40 GROUP BY LENGTH(s)"
    )
    got = _same_three_ways(cc, query, files=1)
    assert [r[0] for r in got] == list(range(41, 50)) and max(r[2] for r in got) == 6
    plan = explained(cc, query).lower()
    assert "octet_length(s" in plan and "octet_length(u" not in plan, plan
    (d / "b.json").write_text('{"id": -1, "s": "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"}\n')
    assert "octet_length" not in explained(cc, query).lower()
    beside = _run(cc, query, cache=True)[1]
    assert beside == _run(cc, query, cache=False)[1] and beside[4][1] == got[4][1] + 1


def test_files_larger_than_the_cache_get_no_entries(cc: Connection, data_dir: Path) -> None:
    """Files whose bytes (those not cached yet) pass ``auger.cache.max_bytes`` are answered as
    with the cache off and not built: their entries would push out every other one and the
    cache past its bound. The query's messages say so and what to change."""
    d = data_dir / "cache_too_big"
    d.mkdir(exist_ok=True)
    (d / "a.csvh").write_text("k,v\n" + "".join(f"k{i % 3},{i}\n" for i in range(500)))
    query = "SELECT k, SUM(CAST(v AS BIGINT)) AS s FROM dfs.data.`cache_too_big` GROUP BY k"
    cur = cc.cursor()
    cur.execute("ALTER SESSION SET `auger.cache.max_bytes` = 1000")
    for _ in range(2):
        cur.execute(query)
        rows = cur.fetchall()
        wait_for_builds()
        assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 0
        assert any("Raise auger.cache.max_bytes" in w for w in cur.warnings), cur.warnings
    assert sorted(rows) == [("k0", 41583), ("k1", 41750), ("k2", 41417)]
    cur.execute("ALTER SESSION SET `auger.cache.max_bytes` = 1000000")
    cur.execute(query)
    assert not any("max_bytes" in w for w in cur.warnings)
    cur.fetchall()
    wait_for_builds()
    cur.execute(query)
    assert sorted(cur.fetchall()) == sorted(rows)
    assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 1


def test_a_build_on_a_local_spark_gives_way_without_cancelling_its_tasks(
    cc: Connection, data_dir: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's tasks see its stop signal in Spark's Python workers and end by themselves:
    the build's job succeeds (a cancelled one fails), no part of a file it did not read whole
    is published, and the next build, with no user's job beside it, writes the entries."""
    from auger.spark import cache_builds
    from auger.spark import jobs as spark_jobs

    d = data_dir / "cache_give_way"
    d.mkdir(exist_ok=True)
    for f in range(2):  # half a second of building each
        records = (json.dumps({"id": f * 10**6 + i, "s": f"v{i % 5}"}) for i in range(100_000))
        (d / f"f{f}.json").write_text("\n".join(records) + "\n")
    query = "SELECT s, COUNT(*) AS n FROM dfs.data.`cache_give_way` GROUP BY s"
    want = [(f"v{k}", 40_000) for k in range(5)]
    tracker = spark.sparkContext.statusTracker()
    earlier = set(tracker.getJobIdsForGroup(cache_builds.JOB_GROUP))
    yields = cache_builds.yields
    monkeypatch.setattr(cache_builds, "MAX_YIELDS", 0)
    monkeypatch.setattr(spark_jobs, "jobs_outside", lambda tracker, group: {-1})  # a user's
    cur = cc.cursor()
    cur.execute(query)
    assert sorted(cur.fetchall()) == want
    wait_for_builds()
    assert cache_builds.yields == yields + 1
    ran = set(tracker.getJobIdsForGroup(cache_builds.JOB_GROUP)) - earlier
    assert ran and {tracker.getJobInfo(i).status for i in ran} == {"SUCCEEDED"}
    cur.execute(query)  # its build gives way again
    assert sorted(cur.fetchall()) == want
    assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 0  # no entry published
    wait_for_builds()
    monkeypatch.undo()
    cur.execute(query)
    assert sorted(cur.fetchall()) == want
    wait_for_builds()
    cur.execute(query)
    assert sorted(cur.fetchall()) == want
    assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 2


def test_a_disk_without_room_gets_no_entries(
    cc: Connection, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the cache's disk has no room left (its reserve of free space), the query is
    answered as with the cache off, builds nothing, and its messages say why and what to do;
    once there is room, the next query builds."""
    from auger.spark import cached_scan

    d = data_dir / "cache_no_room"
    d.mkdir(exist_ok=True)
    (d / "a.csvh").write_text("k,v\n" + "".join(f"k{i % 2},{i}\n" for i in range(300)))
    query = "SELECT k, SUM(CAST(v AS BIGINT)) AS s FROM dfs.data.`cache_no_room` GROUP BY k"
    cur = cc.cursor()
    monkeypatch.setattr(cached_scan, "disk_room", lambda location: 10)
    cur.execute(query)
    rows = sorted(cur.fetchall())
    wait_for_builds()
    assert any("has room for (10 bytes" in w for w in cur.warnings), cur.warnings
    assert rows == [("k0", 22350), ("k1", 22500)]
    monkeypatch.undo()
    cur.execute(query)
    assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 0  # nothing was built
    assert sorted(cur.fetchall()) == rows and not any("room" in w for w in cur.warnings)
    wait_for_builds()
    cur.execute(query)
    assert sorted(cur.fetchall()) == rows
    assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 1


def test_only_a_query_that_runs_builds_entries(cc: Connection, data_dir: Path) -> None:
    """EXPLAIN plans the scan over the files and builds nothing; the query itself does."""
    d = data_dir / "cache_explained"
    d.mkdir(exist_ok=True)
    (d / "a.csvh").write_text("k,v\n" + "".join(f"k{i % 3},{i}\n" for i in range(100)))
    query = "SELECT k, COUNT(*) AS n FROM dfs.data.`cache_explained` GROUP BY k"
    assert "HashAgg" in explained(cc, query)
    wait_for_builds()
    cur = cc.cursor()
    for cached in (0, 1):
        cur.execute(query)
        assert sorted(cur.fetchall()) == [("k0", 34), ("k1", 33), ("k2", 33)]
        assert sum(s["files_from_cache"] for s in cur.scan_statistics) == cached
        wait_for_builds()


def test_an_unreadable_part_offers_no_typed_copy(tmp_path: Path) -> None:
    """A part whose footer cannot be read answers no cast (and fails no query: the frame
    builder then declines the parts, and the data source reads the files)."""
    from auger.scan.plan import PlannedScan
    from auger.scan.spec import ScanSpec
    from auger.spark.cached_scan import _answered_casts
    from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

    bad = tmp_path / "r0-10.parquet"
    bad.write_bytes(b"not parquet at all")
    schema = TupleSchema([ColumnMetadata("a", MinorType.VARCHAR, DataMode.OPTIONAL)])
    spec = ScanSpec("text", "csvh", {}, "/d", (FileSplit("/d/a.csvh", 10, 1.0),), "", {})
    part = FileSplit(str(bad), bad.stat().st_size, bad.stat().st_mtime)
    assert _answered_casts(PlannedScan(spec, schema), {"a": "a"}, [part]) == {}


def test_a_guarded_cast_over_a_file_parsed_beside_the_entries(
    cc: Connection, data_dir: Path
) -> None:
    """A file not in the cache yet is cast by Spark in the scan's frame: a cast the query
    guards (CASE) stays the query's, so a value it never casts fails nothing."""
    d = data_dir / "cache_typed_guard"
    d.mkdir(exist_ok=True)
    (d / "a.csv").write_text("1,1.5\n2,2.5\n")
    table = "dfs.data.`cache_typed_guard`"
    plain = f"SELECT SUM(CAST(columns[1] AS DOUBLE)) FROM {table}"
    assert _same_three_ways(cc, plain, files=1) == [(4.0,)]
    (d / "b.csv").write_text("3,n/a\n4,0.5\n")  # parsed beside a.csv's entry
    guarded = (
        f"SELECT SUM(CASE WHEN columns[1] = 'n/a' THEN 0 ELSE CAST(columns[1] AS DOUBLE) END) "
        f"FROM {table}"
    )
    for cache in (False, True):
        assert _run(cc, guarded, cache)[1] == [(4.5,)]
    off, on = _error_kinds(cc, plain, (False, True))
    assert off == on


def test_statistics_and_cache_off(cc: Connection, data_dir: Path) -> None:
    (data_dir / "cache_stats.csvh").write_text("a,b\n1,2\n3,4\n")
    sql = "SELECT a, b FROM dfs.data.`cache_stats.csvh`"
    _same_three_ways(cc, sql, files=1)
    cur = cc.cursor()
    cur.execute("ALTER SESSION SET `auger.cache.enabled` = false")
    cur.execute(sql).fetchall()
    assert cur.scan_statistics[0]["files_from_cache"] == 0


def test_cache_location_is_denied(make_conn: Any, data_dir: Path) -> None:
    """A location a workspace reaches is still no query's to read."""
    inside = data_dir / "_cache_inside"  # hidden: the workspace's directory scans pass it over
    (data_dir / "cache_denied.csvh").write_text("a\n1\n")
    cur = cached_connection(make_conn, inside).cursor()
    assert cur.execute("SELECT a FROM dfs.data.`cache_denied.csvh`").fetchall() == [("1",)]
    wait_for_builds()
    assert any(p.suffix == ".parquet" for p in inside.rglob("*"))
    with pytest.raises(Error) as info:
        cur.execute("SELECT * FROM dfs.data.`_cache_inside`").fetchall()
    assert "raw-file cache" in str(info.value)


# ----------------------------------------------------------------- layout (no Spark needed)
def test_incomplete_or_temporary_parts_are_never_used(tmp_path: Path) -> None:
    entry = tmp_path / "entry"
    entry.mkdir()
    (entry / f".tmp-123-{part_name(0, 100)}").write_bytes(b"half")
    assert complete_parts(str(entry), 100) is None  # only a temporary file
    (entry / part_name(0, 60)).write_bytes(b"x")
    assert complete_parts(str(entry), 100) is None  # a gap from 60 to 100
    (entry / part_name(60, 100)).write_bytes(b"y")
    (entry / part_name(0, 30)).write_bytes(b"z")  # another build's cut: one chain is taken
    got = complete_parts(str(entry), 100)
    assert got is not None
    assert [os.path.basename(p.path) for p in got] == [part_name(0, 60), part_name(60, 100)]
    assert complete_parts(str(entry), 120) is None  # the file grew: not this entry


def test_least_recently_used_entries_go_first(tmp_path: Path) -> None:
    now = time.time()
    for n, age in enumerate((300, 200, 100)):
        entry = tmp_path / "key" / f"e{n}"
        entry.mkdir(parents=True)
        (entry / part_name(0, 10)).write_bytes(b"x" * 1000)
        os.utime(entry, (now - age, now - age))
    kept = frozenset({str(tmp_path / "key" / "e0")})
    removed = evict(str(tmp_path), 2000, keep=kept)
    assert removed == 1000
    assert sorted(os.listdir(tmp_path / "key")) == ["e0", "e2"]  # e1: oldest not in use
    assert evict(str(tmp_path), 10_000) == 0


def test_many_files_come_from_the_cache(cc: Connection, data_dir: Path) -> None:
    """More files than Spark lists on the driver by default (32) still come from the cache."""
    d = data_dir / "cache_many"
    d.mkdir(exist_ok=True)
    for n in range(40):
        (d / f"f{n:02d}.json").write_text(f'{{"n": {n}, "g": "{"ab"[n % 2]}"}}\n')
    sql = (
        "SELECT g, SUM(n) AS s, COUNT(*) AS c, COUNT(DISTINCT filename) AS f "
        "FROM dfs.data.`cache_many` GROUP BY g"
    )
    assert _same_three_ways(cc, sql, files=40) == [("a", 380, 20, 20), ("b", 400, 20, 20)]


def test_a_build_waits_until_spark_has_run_no_stage_for_a_moment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The statement's own job first: a build starts once Spark has been quiet."""
    from auger.spark import cache_builds

    busy = [[3], [3], [4], [], [], [], [], [], [], [], []]
    asked: list[int] = []

    class Tracker:
        def getActiveStageIds(self) -> list[int]:
            asked.append(1)
            return busy.pop(0) if busy else []

        def getActiveJobsIds(self) -> list[int]:
            return []

    class Context:
        def statusTracker(self) -> Tracker:
            return Tracker()

    class Spark:
        sparkContext = Context()

    monkeypatch.setattr(cache_builds, "QUIET_S", 0.2)
    cache_builds._wait_idle(Spark())
    # it asked past the three busy answers, then stayed quiet for a while before starting
    assert len(asked) >= 4 and not any(busy[:1])


def test_a_build_waits_for_the_statements_job_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scheduled while the statement is planned, a build does not take the moment before the
    statement's first job starts (Spark may plan a Python read for longer than the quiet it
    waits for) as the statement's end."""
    from auger.spark import cache_builds

    started = threading.Event()
    polls: list[bool] = []

    class Scheduler:
        def nextJobId(self) -> int:
            return 8 if started.is_set() else 7

    class Jvm:
        def sc(self) -> Jvm:
            return self

        def dagScheduler(self) -> Scheduler:
            return Scheduler()

    class Tracker:
        def getActiveStageIds(self) -> list[int]:
            polls.append(started.is_set())
            return []

        def getActiveJobsIds(self) -> list[int]:
            return []

    class Context:
        _jsc = Jvm()

        def statusTracker(self) -> Tracker:
            return Tracker()

    class Spark:
        sparkContext = Context()

    monkeypatch.setattr(cache_builds, "QUIET_S", 0.1)
    assert cache_builds._next_job_id(Spark()) == 7
    threading.Timer(0.5, started.set).start()
    t0 = time.monotonic()
    cache_builds._wait_idle(Spark(), after=7)
    assert time.monotonic() - t0 >= 0.5  # quiet before the job started did not count
    assert polls[-1] is True
    cache_builds._wait_idle(Spark())  # with nothing to wait for: quiet alone
    assert cache_builds._next_job_id(None) is None  # unreadable: quiet alone


class _Jobs:
    """Spark's side of a build, faked: the build's job runs until ``user_job`` is set (then
    Spark sees a user's job beside it) or until ``finish`` is set. On a local ``master`` its
    tasks end by themselves once the build's stop signal exists, where ``honour_stop``."""

    def __init__(self, master: str = "local[2]", honour_stop: bool = True) -> None:
        self.master = master
        self.honour_stop = honour_stop
        self.user_job = threading.Event()
        self.finish = threading.Event()
        self.cancelled = threading.Event()
        self.stopped = threading.Event()
        self.groups: list[str] = []
        self.signal = ""  # the stop signal the build's job was given

    # the SparkContext
    def statusTracker(self) -> _Jobs:
        return self

    def setJobGroup(self, group: str, description: str, interrupt: bool) -> None:
        self.groups.append(group)

    def cancelJobGroup(self, group: str) -> None:
        assert group == self.groups[-1]
        self.cancelled.set()

    # the status tracker
    def getJobIdsForGroup(self, group: str) -> list[int]:
        return [1]

    def getActiveJobsIds(self) -> list[int]:
        return [1, 2] if self.user_job.is_set() else [1]

    def getActiveStageIds(self) -> list[int]:
        return []

    # the build's job
    def run(self) -> None:
        while not (self.cancelled.is_set() or self.finish.is_set()):
            if self.honour_stop and self.signal and os.path.exists(self.signal):
                self.stopped.set()
                return
            time.sleep(0.01)
        if self.cancelled.is_set():
            raise RuntimeError("Job 1 cancelled part of cancelled job group")


def _fake_build(monkeypatch: pytest.MonkeyPatch, jobs: _Jobs) -> Any:
    from auger.spark import cache_builds

    class Writer:
        def format(self, name: str) -> Writer:
            return self

        def mode(self, name: str) -> Writer:
            return self

        def save(self) -> None:
            jobs.run()

    class Frame:
        write = Writer()

    read: list[list[str]] = []

    def frame(spark: Any, job: Any) -> Frame:
        read.append([f.path for f in job.spec.files])
        jobs.signal = job.spec.build_stop
        return Frame()

    class Spark:
        sparkContext = jobs

    monkeypatch.setattr(cache_builds, "datasource_frame", frame)
    monkeypatch.setattr(cache_builds, "QUIET_S", 0.0)
    return Spark(), read


def test_a_build_gives_way_to_a_users_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's job appearing while a build's job runs on a local Spark makes the build create
    its stop signal, and its tasks end by themselves: nothing is cancelled (a cancelled task's
    Python worker is killed in the middle of its work), and the signal is removed after the
    run. The build reports it gave way instead of failing. With no user's job it runs to its
    end."""
    from auger.scan.plan import PlannedScan
    from auger.scan.spec import ScanSpec
    from auger.spark import cache_builds
    from auger.types import TupleSchema

    jobs = _Jobs()
    spark, read = _fake_build(monkeypatch, jobs)
    spec = ScanSpec("json", "json", {}, "/d", (FileSplit("/d/a.json", 10, 1.0),), "", {})
    job = PlannedScan(spec, TupleSchema())
    jobs.user_job.set()
    assert cache_builds._run_giving_way(spark, job) is False
    assert jobs.stopped.is_set() and not jobs.cancelled.is_set()
    assert jobs.groups == [cache_builds.JOB_GROUP]
    assert jobs.signal and not os.path.exists(jobs.signal)
    jobs2 = _Jobs()
    spark2, read2 = _fake_build(monkeypatch, jobs2)
    jobs2.finish.set()
    assert cache_builds._run_giving_way(spark2, job) is True
    assert not (jobs2.cancelled.is_set() or jobs2.stopped.is_set())
    assert jobs2.signal != jobs.signal and not os.path.exists(jobs2.signal)
    assert read == read2 == [["/d/a.json"]]


@pytest.mark.parametrize("master", ["spark://head:7077", "local[2]"])
def test_a_build_that_cannot_be_stopped_is_cancelled(
    monkeypatch: pytest.MonkeyPatch, master: str
) -> None:
    """A cluster's executors cannot see the driver's files: the build's job gets no signal and
    is cancelled at once. On a local Spark, tasks still running a moment after the signal
    (:data:`auger.spark.jobs.STOP_WAIT_S`) are cancelled."""
    from auger.scan.plan import PlannedScan
    from auger.scan.spec import ScanSpec
    from auger.spark import cache_builds
    from auger.spark import jobs as spark_jobs
    from auger.types import TupleSchema

    monkeypatch.setattr(spark_jobs, "STOP_WAIT_S", 0.3)
    jobs = _Jobs(master, honour_stop=False)  # tasks that go on, as a cluster's would
    spark, _ = _fake_build(monkeypatch, jobs)
    spec = ScanSpec("json", "json", {}, "/d", (FileSplit("/d/a.json", 10, 1.0),), "", {})
    jobs.user_job.set()
    t0 = time.monotonic()
    assert cache_builds._run_giving_way(spark, PlannedScan(spec, TupleSchema())) is False
    took = time.monotonic() - t0
    assert jobs.cancelled.is_set() and not jobs.stopped.is_set()
    if master.startswith("local"):
        assert jobs.signal and not os.path.exists(jobs.signal) and took >= 0.3
    else:
        assert jobs.signal == ""


@pytest.mark.parametrize("master", ["spark://head:7077", "local[2]"])
def test_a_build_job_submitted_after_giving_way_is_cancelled_too(
    monkeypatch: pytest.MonkeyPatch, master: str
) -> None:
    """The build's job may still be being planned when a user's job appears: cancelling its
    group (or, on a local Spark, its stop signal's wait) then stops nothing, so the build
    cancels the job once it is submitted and still runs, rather than let it hold the cores
    ahead of the user's job."""
    from auger.scan.plan import PlannedScan
    from auger.scan.spec import ScanSpec
    from auger.spark import cache_builds
    from auger.spark import jobs as spark_jobs
    from auger.types import TupleSchema

    class Late(_Jobs):
        def __init__(self) -> None:
            super().__init__(master, honour_stop=False)
            self.user_job.set()
            self.cancels = 0
            self.submitted = threading.Event()

        def cancelJobGroup(self, group: str) -> None:
            self.cancels += 1
            if self.submitted.is_set():
                self.cancelled.set()  # only a submitted job is cancelled

        def getActiveJobsIds(self) -> list[int]:
            return [1, 2] if self.submitted.is_set() else [2]

        def run(self) -> None:
            time.sleep(0.5)  # planned while the user's job 2 starts
            self.submitted.set()
            deadline = time.monotonic() + 10
            while not self.cancelled.is_set() and time.monotonic() < deadline:
                time.sleep(0.01)
            if self.cancelled.is_set():
                raise RuntimeError("Job 1 cancelled part of cancelled job group")

    monkeypatch.setattr(spark_jobs, "STOP_WAIT_S", 0.2)
    jobs = Late()
    spark, _ = _fake_build(monkeypatch, jobs)
    spec = ScanSpec("json", "json", {}, "/d", (FileSplit("/d/a.json", 10, 1.0),), "", {})
    t0 = time.monotonic()
    assert cache_builds._run_giving_way(spark, PlannedScan(spec, TupleSchema())) is False
    assert jobs.cancelled.is_set() and time.monotonic() - t0 < 5
    assert jobs.cancels >= (1 if master.startswith("local") else 2)


def test_a_build_that_gave_way_builds_only_the_entries_still_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """After giving way the build waits for quiet and runs again over the files whose entries
    its cut job did not publish; an entry published before the cut is not built twice."""
    from auger.scan.plan import PlannedScan
    from auger.scan.spec import ScanSpec
    from auger.spark import cache_builds
    from auger.types import TupleSchema

    a, b = FileSplit("/d/a.json", 10, 1.0), FileSplit("/d/b.json", 10, 1.0)
    table = str(tmp_path / "key")
    spec = ScanSpec("json", "json", {}, "/d", (a, b), "", {}, cache_build=table)
    job = PlannedScan(spec, TupleSchema())
    runs: list[list[str]] = []

    def run(spark: Any, todo: Any) -> bool:
        runs.append([f.path for f in todo.spec.files])
        if len(runs) == 1:  # a's entry is published, then a user's job cuts the build
            entry = Path(cache_builds.entry_dir(table, a))
            entry.mkdir(parents=True)
            (entry / part_name(0, 10)).write_bytes(b"x")
            return False
        return True

    monkeypatch.setattr(cache_builds, "_run_giving_way", run)
    monkeypatch.setattr(cache_builds, "_wait_idle", lambda spark, after=None: None)
    before = cache_builds.yields
    entries = [cache_builds.entry_dir(table, f) for f in (a, b)]
    cache_builds._build(None, job, entries, str(tmp_path), 10**9)
    assert runs == [["/d/a.json", "/d/b.json"], ["/d/b.json"]]
    assert cache_builds.yields == before + 1


def test_one_build_per_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two queries over a file whose entry is being built schedule one build of it; once that
    build is over, another may be scheduled (a failed build is tried again)."""
    from auger.scan.plan import PlannedScan
    from auger.scan.spec import ScanSpec
    from auger.spark import cache_builds
    from auger.types import TupleSchema

    built: list[list[str]] = []
    given: list[tuple[list[str], dict[str, str]]] = []  # what each build job gives Spark
    release = threading.Event()

    def build(
        spark: Any, job: Any, entries: list[str], location: str, limit: int, after: Any = None
    ) -> None:
        release.wait(30)  # still building while the second query schedules
        built.append([f.path for f in job.spec.files])
        given.append(([c.name for c in job.schema], dict(job.spec.sources)))
        cache_builds._building.difference_update(entries)

    monkeypatch.setattr(cache_builds, "_build", build)
    a, b = FileSplit("/d/a.json", 10, 1.0), FileSplit("/d/b.json", 10, 1.0)
    spec = ScanSpec("json", "json", {}, "/d", (a,), "", {}, cache_columns="`x` BIGINT")
    planned = PlannedScan(spec, TupleSchema())
    table = str(tmp_path / "key")
    cache_builds.schedule_build(None, planned, table, [a], str(tmp_path), 1000)
    cache_builds.schedule_build(None, planned, table, [a, b], str(tmp_path), 1000)
    release.set()
    wait_for_builds()
    assert built == [["/d/a.json"], ["/d/b.json"]]
    cache_builds.schedule_build(None, planned, table, [a], str(tmp_path), 1000)
    wait_for_builds()
    assert built[-1] == ["/d/a.json"]
    # the kept columns stay in the build's tasks: Spark is given one column of nulls
    only = ([cache_builds.BUILD_COLUMN], {cache_builds.BUILD_COLUMN: "missing"})
    assert given == [only] * 3


def test_frame_metadata_goes_on_columns_by_their_names_as_they_are(spark: Any) -> None:
    """A name holding a dot or a backtick is the column's own name, not a member's path."""
    from auger.spark.cached_scan import _with_metadata

    frame = spark.sql("SELECT 1 AS `a.b`, 'x' AS `c``d`, 2 AS e")
    told = _with_metadata(frame, {"a.b": {"k": [1, 2]}, "c`d": {"n": 3}})
    assert told.columns == ["a.b", "c`d", "e"]
    assert [f.metadata for f in told.schema.fields] == [{"k": [1, 2]}, {"n": 3}, {}]
    assert told.collect()[0] == (1, "x", 2)


def test_frame_metadata_leaves_struct_columns_as_they_are(spark: Any) -> None:
    """Told columns beside a struct get their metadata by a select, which leaves the struct
    as it is (``DataFrame.to`` would rebuild it member by member)."""
    from auger.spark.cached_scan import _with_metadata

    frame = spark.sql(
        "SELECT named_struct('n', named_struct('n', id)) AS s, 'x' AS `a.b` FROM range(2)"
    )
    told = _with_metadata(frame, {"a.b": {"k": [1, 2]}})
    assert told.columns == ["s", "a.b"]
    assert [f.metadata for f in told.schema.fields] == [{}, {"k": [1, 2]}]
    assert told.schema["s"].dataType == frame.schema["s"].dataType
    top = told._jdf.queryExecution().analyzed().toString().splitlines()[0]
    assert "named_struct" not in top, top  # s is passed through, not rebuilt
    assert [tuple(r) for r in told.collect()] == [(((0,),), "x"), (((1,),), "x")]


def test_a_struct_nested_63_deep_beside_told_columns_reads_from_the_cache(
    cc: Connection, data_dir: Path
) -> None:
    """JSON nested as deep as its reader allows, beside a text column of few values (whose
    count of values the frame tells Spark): the struct was rebuilt at every depth from the
    projection below, quadratic code whose compilation took the driver's whole heap."""
    d = data_dir / "cache_deep"
    d.mkdir(exist_ok=True)
    deep: Any = 1
    for _ in range(62):  # 63 levels with the record's own
        deep = {"n": deep}
    (d / "deep.json").write_text(json.dumps({"e": "thé", "n": deep}) + "\n")
    flat = [{"c": {"d": "xéy"}, "e": e} for e in ("café", "thé", "café")]
    (d / "flat.json").write_text("".join(json.dumps(r) + "\n" for r in flat))
    sql = f"SELECT c, e, n, filename FROM dfs.data.`{d.name}`"
    names, want, _ = _run(cc, sql, cache=False)
    assert _run(cc, sql, cache=True)[:2] == (names, want)  # the entries are built after it
    plan = explained(cc, sql)
    assert "isnull" not in plan and len(plan) < 50_000, len(plan)
    got_names, got, cached = _run(cc, sql, cache=True)
    assert (got_names, got, cached) == (names, want, 2)


def test_an_embedded_engine_caches_by_default_in_its_state_directory(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody turns it on: an engine on a local Spark keeps what its scans parsed under the
    state directory, and the next query over the unchanged file reads it from there."""
    from auger.engine import Engine

    home = tmp_path / "home"
    monkeypatch.setenv("AUGER_HOME", str(home))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.csv").write_text("".join(f"{i},n{i % 4}\n" for i in range(400)))
    engine = Engine(
        {
            "spark": {"master": "local[2]"},
            "storage": {"dfs": {"type": "file", "workspaces": {"w": {"location": str(tmp_path)}}}},
            "options": {"auger.scan.local_bytes": 0, "auger.scan.local_answer_bytes": 0},
        }
    )
    try:
        cur = Connection(engine.open_session("tester")).cursor()
        query = "SELECT columns[1] AS n, COUNT(*) AS c FROM dfs.w.`d` GROUP BY columns[1]"
        cur.execute(query)
        first = sorted(cur.fetchall())
        assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 0
        wait_for_builds()
        cur.execute(query)
        assert sorted(cur.fetchall()) == first == [(f"n{k}", 100) for k in range(4)]
        assert sum(s["files_from_cache"] for s in cur.scan_statistics) == 1
        assert list((home / "cache").rglob("*.parquet")), "no entry under the state directory"
    finally:
        engine.shutdown()


# ------------------------------------------------------------------- kept frames
def test_a_repeated_query_plans_over_the_frame_the_last_one_built(
    cc: Connection, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query over the same entries again reads them through the frame the last one built
    (not built again), with the same answer and scan figures; a query reading another cast of
    them has a frame of its own, and a changed file is read from its new entry, never through
    the frame kept over the old one."""
    from auger.spark import cached_scan

    d = data_dir / "cache_kept"
    d.mkdir(exist_ok=True)
    path = d / "a.csvh"
    path.write_text("k,v,w\n" + "".join(f"k{i % 3},{i},{i * 2}\n" for i in range(30)))
    built = count_calls(monkeypatch, cached_scan, "_entries_frame")
    sql = "SELECT k, COUNT(*) AS n, SUM(CAST(v AS INT)) AS s FROM dfs.data.`cache_kept` GROUP BY k"
    want = [("k0", 10, 135), ("k1", 10, 145), ("k2", 10, 155)]
    assert _run(cc, sql, cache=True)[1:] == (want, 0)  # parsed, its entry built after
    cur = cc.cursor()
    stats = []
    for _ in range(3):
        cur.execute(sql)
        assert sorted(cur.fetchall()) == want
        stats.append(cur.scan_statistics)
    assert len(built) == 1, built
    assert stats[0] == stats[1] == stats[2] and stats[0][0]["files_from_cache"] == 1
    assert stats[0][0]["rows_read"] == 30
    other = sql.replace("CAST(v AS INT)", "CAST(w AS INT)")
    assert _run(cc, other, cache=True)[1:] == (
        [("k0", 10, 270), ("k1", 10, 290), ("k2", 10, 310)],
        1,
    )
    assert len(built) == 2
    path.write_text("k,v,w\nk0,1000,0\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    assert _run(cc, sql, cache=True)[1:] == ([("k0", 1, 1000)], 0)  # its new entry built after
    assert _run(cc, sql, cache=True)[1:] == ([("k0", 1, 1000)], 1)
    assert len(built) == 3
