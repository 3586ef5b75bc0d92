"""The shell's logic without a terminal: statement ends, ! commands, settings and completion.

A small fake connection answers canned results, so these run without Spark; the real terminal
and engine are exercised in ``test_terminal.py``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from auger.cli.completion import MetadataCache, SqlCompleter
from auger.cli.shell import Settings, Shell, statement_complete
from auger.dbapi import ProgrammingError

Answer = tuple[list[str], list[tuple[Any, ...]]]


class FakeCursor:
    def __init__(self, answers: Callable[[str], Answer], log: list[str]) -> None:
        self.answers = answers
        self.log = log
        self.description: list[tuple[Any, ...]] | None = None
        self.rows: list[tuple[Any, ...]] = []
        self.rowcount = -1
        self.fetched = 0  # rows handed out since the last execute

    def execute(self, sql: str, params: Any = None) -> FakeCursor:
        self.log.append(sql)
        names, self.rows = self.answers(sql)
        self.description = [(n, "ANY", None, None, None, None, True) for n in names]
        self.fetched = 0
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self.rows = self.rows, []
        self.fetched += len(rows)
        return rows

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        rows, self.rows = self.rows[:size], self.rows[size:]
        self.fetched += len(rows)
        return rows

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


class FakeConnection:
    def __init__(self, answers: Callable[[str], Answer]) -> None:
        self.answers = answers
        self.log: list[str] = []

    def cursor(self) -> FakeCursor:
        self.last = FakeCursor(self.answers, self.log)
        return self.last


def catalog(sql: str) -> Answer:
    text = " ".join(sql.split())
    if text == "SHOW SCHEMAS":
        return ["SCHEMA_NAME"], [("cp",), ("dfs.tmp",), ("dfs.data",), ("sys",)]
    if text.startswith("SHOW FILES"):
        return ["name", "isDirectory"], [("employee.json", False), ("tpch", True)]
    if text.startswith("SHOW TABLES"):
        return ["TABLE_SCHEMA", "TABLE_NAME"], [("cp", "my_view")]
    if text == "SELECT * FROM cp.`employee.json` LIMIT 0":
        return ["employee_id", "full_name", "salary"], []
    if text.startswith("USE "):
        return ["ok", "summary"], [(True, f"Default schema changed to [{text[4:]}]")]
    if text.startswith("BAD"):
        raise ProgrammingError("PARSE ERROR: Encountered BAD")
    return ["a", "b"], [(1, "x"), (2, None)]


def make_shell(settings: Settings | None = None) -> tuple[Shell, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Shell(FakeConnection(catalog), out, err, settings), out, err


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT 1\nFROM t\n;", True),
        ("SELECT 1; -- done", True),
        ("SELECT ';'", False),
        ("SELECT 'open;", False),
        ("SELECT `a;b`", False),
        ("SELECT 1 /* ; */", False),
        ("SELECT 1; SELECT 2", False),
        ("!quit", True),
        ("   ", True),
    ],
)
def test_statement_complete(text: str, complete: bool) -> None:
    assert statement_complete(text) is complete


def test_statements_print_table_and_footer() -> None:
    shell, out, err = make_shell()
    assert shell.handle("SELECT a, b FROM t;\nSELECT 2;")
    text = out.getvalue()
    assert text.count("| a | b    |") == 2
    assert "| 2 | null |" in text
    assert text.count("2 rows selected (") == 2
    assert err.getvalue() == ""


def test_errors_go_to_err_and_the_shell_goes_on() -> None:
    shell, _, err = make_shell()
    assert not shell.handle("BAD stuff;")
    assert err.getvalue() == "PARSE ERROR: Encountered BAD\n"
    assert "Traceback" not in err.getvalue()
    assert shell.handle("SELECT 1;")


def test_set_outputformat_and_showtime() -> None:
    shell, out, err = make_shell()
    assert shell.handle("!set outputformat csv")
    assert shell.handle("!set showtime false")
    shell.handle("SELECT a, b FROM t;")
    assert out.getvalue() == "a,b\n1,x\n2,\n"
    assert shell.handle("!outputformat json")
    assert shell.settings.outputformat == "json"
    assert not shell.handle("!set outputformat xml")
    assert "Unknown output format 'xml'" in err.getvalue()
    out.truncate(0), out.seek(0)
    shell.handle("!set")
    assert "outputformat  json" in out.getvalue() and "showtime      false" in out.getvalue()


def test_unknown_command_suggests_a_close_one() -> None:
    shell, _, err = make_shell()
    assert not shell.handle("!tabels")
    assert err.getvalue().strip() == "Unknown command: !tabels; did you mean !tables?"


def test_quit_help_history_and_columns() -> None:
    shell, out, _ = make_shell()
    shell.handle("!help")
    assert "!set outputformat FMT" in out.getvalue()
    shell.handle("SELECT 1;")
    out.truncate(0), out.seek(0)
    shell.handle("!history")
    assert "SELECT 1;" in out.getvalue()
    shell.handle("!columns cp.`employee.json`")
    assert shell.conn.log[-1] == "DESCRIBE cp.`employee.json`"
    assert not shell.done
    shell.handle("!quit")
    assert shell.done


def test_use_changes_the_prompt_and_the_completion_schema() -> None:
    shell, _, _ = make_shell()
    assert shell.prompt == "auger> "
    shell.handle("USE cp;")
    assert shell.prompt == "auger (cp)> "
    assert shell.cache.default_schema == "cp"


def completions(shell: Shell, text: str) -> list[str]:
    completer = SqlCompleter(shell.cache, ["!" + c for c in shell.commands])
    doc = Document(text, len(text))
    event = CompleteEvent(completion_requested=True)
    return [c.text for c in completer.get_completions(doc, event)]


def test_completes_keywords_commands_schemas_tables_and_columns() -> None:
    shell, _, _ = make_shell()
    assert "SELECT" in completions(shell, "sel")
    assert completions(shell, "!qu") == ["!quit"]
    # after FROM: schemas (no default schema yet, so no tables)
    assert completions(shell, "SELECT * FROM dfs") == ["dfs.tmp", "dfs.data"]
    # schema. -> its files and tables, quoted when they need it
    assert completions(shell, "SELECT * FROM cp.emp") == ["`employee.json`"]
    assert completions(shell, "SELECT * FROM cp.") == ["`employee.json`", "my_view", "tpch"]
    # default schema: files of it after FROM
    shell.handle("USE cp;")
    assert "`employee.json`" in completions(shell, "SELECT * FROM ")
    assert completions(shell, "SELECT * FROM emp") == ["`employee.json`"]
    # columns of the tables the statement reads
    text = "SELECT full FROM cp.`employee.json`"
    doc_text = text[: len("SELECT full")]
    completer = SqlCompleter(shell.cache)
    got = [
        c.text
        for c in completer.get_completions(
            Document(text, len(doc_text)), CompleteEvent(completion_requested=True)
        )
    ]
    assert got == ["full_name", "FULL"]  # columns first, then keywords
    assert "salary" in [
        c.text
        for c in completer.get_completions(
            Document("SELECT e.sal FROM cp.`employee.json` e", len("SELECT e.sal")),
            CompleteEvent(completion_requested=True),
        )
    ]


def test_metadata_cache_swallows_failures_and_caches() -> None:
    calls: list[str] = []

    def run(sql: str) -> Answer:
        calls.append(sql)
        raise RuntimeError("down")

    cache = MetadataCache(run)
    assert cache.schemas() == [] and cache.columns("t") == []
    cache.columns("t")
    assert calls.count("SELECT * FROM t LIMIT 0") == 1


def test_tables_lists_information_schema_or_falls_back_to_show_tables() -> None:
    def answers(sql: str) -> Answer:
        if "INFORMATION_SCHEMA" in sql:
            return ["TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE"], [("cp", "v", "VIEW")]
        return catalog(sql)

    out, err = io.StringIO(), io.StringIO()
    shell = Shell(FakeConnection(answers), out, err)
    assert shell.handle("!tables")
    lines = out.getvalue().splitlines()
    assert "| cp           | v             | VIEW       |" in lines
    # the files of cp (what SHOW FILES IN cp lists), which INFORMATION_SCHEMA leaves out
    assert "| cp           | employee.json | FILE       |" in lines
    assert "| cp           | tpch          | DIRECTORY  |" in lines
    assert "3 rows selected" in lines
    assert "SHOW FILES IN cp" in shell.conn.log
    out.truncate(0)
    assert shell.handle(".tables emp%")
    assert "employee.json" in out.getvalue() and "tpch" not in out.getvalue()

    def no_info_schema(sql: str) -> Answer:
        if "INFORMATION_SCHEMA" in sql:
            raise ProgrammingError("VALIDATION ERROR: no such table")
        return catalog(sql)

    shell = Shell(FakeConnection(no_info_schema), out, err)
    shell.handle("!tables")
    assert shell.conn.log[-1] == "SHOW TABLES"


def many(n: int, width: int = 1) -> Callable[[str], Answer]:
    def answers(sql: str) -> Answer:
        if sql.startswith("SELECT n"):
            return ["n", "word"], [(i, "w" * width) for i in range(n)]
        return catalog(sql)

    return answers


@pytest.mark.parametrize(
    ("text", "complete"),
    [(".tables", True), ("  .maxrows 5", True), (".mode csv\n", True), ("SELECT .5", False)],
)
def test_dot_commands_run_at_the_end_of_their_line(text: str, complete: bool) -> None:
    assert statement_complete(text) is complete


def test_dot_commands_set_what_their_bang_twins_set() -> None:
    shell, out, err = make_shell()
    assert shell.handle(".mode csv")
    assert shell.settings.outputformat == "csv" and shell.settings.format_chosen
    assert shell.handle(".mode line") and shell.settings.outputformat == "vertical"
    assert shell.handle(".mode tabs") and shell.settings.outputformat == "tsv"
    assert shell.handle(".MODE duckbox") and shell.settings.outputformat == "table"
    shell.handle(".mode")
    assert out.getvalue() == "current output mode: table\n"
    assert not shell.handle(".mode xml")
    assert "Unknown output format 'xml'" in err.getvalue()
    assert shell.handle(".maxrows 7") and shell.settings.maxrows == 7
    assert shell.handle("!set rowlimit 9") and shell.settings.maxrows == 9
    assert shell.handle(".maxrows -1") and shell.settings.maxrows == 0
    assert not shell.handle(".maxrows lots")
    assert "Expected a number of rows (0 for all), not 'lots'" in err.getvalue()
    assert shell.handle(".timer off") and not shell.settings.showtime
    assert shell.handle(".pager off") and not shell.settings.pager
    assert not shell.handle(".timer")
    assert "Usage: .timer on|off" in err.getvalue()
    out.truncate(0), out.seek(0)
    shell.handle(".help")
    assert ".maxrows [N]" in out.getvalue() and "!set outputformat FMT" in out.getvalue()
    shell.handle(".schema cp.`employee.json`")
    assert shell.conn.log[-1] == "DESCRIBE cp.`employee.json`"
    shell.handle(".schema")
    assert "INFORMATION_SCHEMA.`COLUMNS`" in shell.conn.log[-1]
    assert not shell.handle(".tabels")
    assert "Unknown command: .tabels; did you mean .tables?" in err.getvalue()
    assert not shell.done
    assert shell.handle(".exit") and shell.done


def test_dot_tables_filters_with_a_like_pattern() -> None:
    shell, _, _ = make_shell()
    shell.handle(".tables emp%")
    assert any("WHERE TABLE_NAME LIKE 'emp%'" in sql for sql in shell.conn.log)
    shell.handle(".tables it's")
    assert "LIKE 'it''s'" in [sql for sql in shell.conn.log if "LIKE" in sql][-1]


def test_results_are_capped_and_say_how_many_were_shown() -> None:
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(FakeConnection(many(1000)), out, err)
    assert shell.handle("SELECT n FROM t;")
    text = out.getvalue()
    assert "| 39 | w    |" in text and "| 40 " not in text
    assert shell.cursor.fetched == 41  # one past the cap: enough to know there are more
    assert "\nfirst 40 rows shown, more not fetched (" in text
    # A cursor that knows its row count (a remote result) gives it.
    shell.cursor.rowcount = 1000
    out.truncate(0), out.seek(0)
    shell.handle(".maxrows 5")
    shell.cursor.execute = _counting(shell.cursor.execute, 1000)  # type: ignore[method-assign]
    shell.handle("SELECT n FROM t;")
    assert "5 of 1000 rows shown (" in out.getvalue()
    # Exactly the cap: every row shows, with the usual footer.
    shell = Shell(FakeConnection(many(5)), out, err, Settings(maxrows=5))
    out.truncate(0), out.seek(0)
    shell.handle("SELECT n FROM t;")
    assert "5 rows selected (" in out.getvalue() and "shown" not in out.getvalue()
    # Formats for other programs hold every row.
    shell = Shell(FakeConnection(many(100)), out, err)
    shell.handle(".mode csv")
    out.truncate(0), out.seek(0)
    shell.handle("SELECT n FROM t;")
    assert out.getvalue().count("\n") == 101 + 1  # header, rows, footer


def _counting(execute: Callable[..., Any], total: int) -> Callable[..., Any]:
    def run(sql: str, params: Any = None) -> Any:
        cur = execute(sql, params)
        cur.rowcount = total
        return cur

    return run


def test_wide_results_fit_the_terminal_unless_a_format_was_chosen() -> None:
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(FakeConnection(many(3, width=200)), out, err)
    shell.terminal_size = lambda: (60, 100)
    shell.settings.pager = False
    shell.handle("SELECT n FROM t;")
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines[:-1]) == 60
    assert "…" in out.getvalue() or "~" in out.getvalue()
    # Too many columns to cut: one value per line.
    names = [f"col{i}" for i in range(30)]
    no_pager = Settings(pager=False)
    shell = Shell(FakeConnection(lambda sql: (names, [tuple(range(30))])), out, err, no_pager)
    shell.terminal_size = lambda: (80, 100)
    out.truncate(0), out.seek(0)
    shell.handle("SELECT * FROM wide;")
    assert "col0   0\ncol1   1\n" in out.getvalue()
    # A format the user chose prints as it is.
    shell.handle(".mode table")
    out.truncate(0), out.seek(0)
    shell.handle("SELECT * FROM wide;")
    assert len(out.getvalue().splitlines()[0]) > 200
    # No terminal: nothing is fitted.
    shell = Shell(FakeConnection(many(3, width=200)), out, err)
    out.truncate(0), out.seek(0)
    shell.handle("SELECT n FROM t;")
    assert "w" * 200 in out.getvalue()


def test_long_output_goes_through_the_pager_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    paged = tmp_path / "paged.txt"
    monkeypatch.setenv("AUGER_PAGER", f"cat > {paged}")
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(FakeConnection(many(30)), out, err)
    shell.terminal_size = lambda: (80, 20)
    shell.handle("SELECT n FROM t;")
    assert out.getvalue() == ""
    assert "| 29 | w    |" in paged.read_text() and "30 rows selected" in paged.read_text()
    paged.unlink()
    shell.handle(".pager off")
    shell.handle("SELECT n FROM t;")
    assert not paged.exists() and "| 29 | w    |" in out.getvalue()
    # Output that fits the terminal is printed, not paged.
    shell.handle(".pager on")
    shell.terminal_size = lambda: (80, 50)
    out.truncate(0), out.seek(0)
    shell.handle("SELECT n FROM t;")
    assert not paged.exists() and "| 29 | w    |" in out.getvalue()


def test_dot_commands_complete_like_bang_commands() -> None:
    shell, _, _ = make_shell()
    commands = ["!" + c for c in shell.commands] + ["." + c for c in shell.dot_commands]
    completer = SqlCompleter(shell.cache, commands)
    got = completer.get_completions(Document(".ma", 3), CompleteEvent(completion_requested=True))
    assert [c.text for c in got] == [".maxrows"]


def test_a_server_cursor_is_asked_for_one_row_past_the_cap_only() -> None:
    out, err = io.StringIO(), io.StringIO()
    conn = FakeConnection(many(1000))
    shell = Shell(conn, out, err)
    shell.cursor.max_rows = None  # type: ignore[attr-defined]  # as a server's cursor has
    assert shell.handle("SELECT n FROM t;")
    assert shell.cursor.max_rows == 41  # type: ignore[attr-defined]
    shell.handle(".mode csv")  # csv shows every row: no cap for the server either
    assert shell.handle("SELECT n FROM t;")
    assert shell.cursor.max_rows is None  # type: ignore[attr-defined]


def directories(sql: str) -> Answer:
    """A file system: / holds data/ and etc/; /data holds mixed/ and mini.csv; cp its files."""
    listing = {
        "SHOW FILES IN dfs.`/`": [("data", True), ("etc", True)],
        "SHOW FILES IN dfs.`/data`": [("mixed", True), ("mini.csv", False), ("big.csv", False)],
        "SHOW FILES IN cp": [("employee.json", False), ("tpch", True)],
        "SHOW FILES IN cp.`tpch`": [("nation.parquet", False), ("region.parquet", False)],
    }
    if sql in listing:
        return ["name", "isDirectory"], listing[sql]
    return catalog(sql)


def test_paths_complete_inside_backquotes_after_a_workspace() -> None:
    shell = Shell(FakeConnection(directories), io.StringIO(), io.StringIO())
    # a directory ends with / (Tab again goes into it); a file closes the backquote
    assert completions(shell, "SELECT * FROM dfs.`/da") == ["data/"]
    assert completions(shell, "SELECT * FROM dfs.`/data/mi") == ["mixed/", "mini.csv`"]
    assert completions(shell, "SELECT * FROM dfs.`/data/mini") == ["mini.csv`"]
    assert completions(shell, "SELECT * FROM cp.`") == ["employee.json`", "tpch/"]
    assert completions(shell, "SELECT * FROM cp.`tpch/r") == ["region.parquet`"]
    # only the part after the last / is replaced
    completer = SqlCompleter(shell.cache)
    text = "SELECT * FROM dfs.`/data/mi"
    (first, _) = completer.get_completions(Document(text, len(text)), CompleteEvent())
    assert first.start_position == -len("mi")
    # a directory that cannot be listed offers nothing, and a closed quote is no path
    assert completions(shell, "SELECT * FROM dfs.`/nowhere/x") == []
    assert "SHOW FILES IN dfs.`/nowhere`" in shell.conn.log
    assert "`" not in "".join(completions(shell, "SELECT * FROM cp.`employee.json` e"))


def test_files_lists_a_workspace_or_a_directory() -> None:
    shell = Shell(FakeConnection(directories), io.StringIO(), io.StringIO())
    assert shell.handle(".files")
    assert shell.conn.log[-1] == "SHOW FILES IN cp"  # no default schema yet: the sample data
    assert shell.handle("!files dfs.`/data`")
    assert shell.conn.log[-1] == "SHOW FILES IN dfs.`/data`"
    assert "mini.csv" in shell.out.getvalue()  # type: ignore[attr-defined]
    shell.handle("USE dfs.tmp;")
    assert shell.handle(".files") and shell.conn.log[-1] == "SHOW FILES IN dfs.tmp"


def test_explain_prints_the_plan_as_lines_in_table_mode_and_both_columns_as_data() -> None:
    plan = "00-00    Screen\n00-01      Scan(table=[cp.employee.json], files=[employee.json])\n"

    def answers(sql: str) -> Answer:
        if sql.startswith("EXPLAIN"):
            return ["text", "json"], [(plan, '{\n  "head": {}\n}')]
        return catalog(sql)

    out, err = io.StringIO(), io.StringIO()
    shell = Shell(FakeConnection(answers), out, err, Settings(pager=False, showtime=False))
    shell.terminal_size = lambda: (40, 50)  # narrower than the plan: nothing is cut
    assert shell.handle("EXPLAIN PLAN FOR SELECT * FROM cp.`employee.json`;")
    lines = out.getvalue().splitlines()
    assert lines[:2] == plan.splitlines()
    assert "\\n" not in out.getvalue() and "…" not in out.getvalue()
    out.truncate(0), out.seek(0)
    shell.handle(".mode json")
    shell.handle("EXPLAIN PLAN FOR SELECT * FROM cp.`employee.json`;")
    assert json.loads(out.getvalue()) == [{"text": plan, "json": '{\n  "head": {}\n}'}]
    out.truncate(0), out.seek(0)
    shell.handle(".mode csv")
    shell.handle("EXPLAIN PLAN FOR SELECT * FROM cp.`employee.json`;")
    assert out.getvalue().startswith("text,json\n")


def test_json_mode_is_one_array_and_ndjson_one_object_a_line() -> None:
    shell, out, _ = make_shell(Settings(showtime=False))
    shell.handle(".mode json")
    shell.handle("SELECT a, b FROM t;")
    assert json.loads(out.getvalue()) == [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
    out.truncate(0), out.seek(0)
    shell.handle(".mode jsonlines")  # DuckDB's name for the lines format
    assert shell.settings.outputformat == "ndjson"
    shell.handle("SELECT a, b FROM t;")
    lines = out.getvalue().splitlines()
    assert [json.loads(x) for x in lines] == [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
