"""The shell's logic without a terminal: statement ends, ! commands, settings and completion.

A small fake connection answers canned results, so these run without Spark; the real terminal
and engine are exercised in ``test_terminal.py``.
"""

from __future__ import annotations

import io
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

    def execute(self, sql: str, params: Any = None) -> FakeCursor:
        self.log.append(sql)
        names, self.rows = self.answers(sql)
        self.description = [(n, "ANY", None, None, None, None, True) for n in names]
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self.rows = self.rows, []
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
        return FakeCursor(self.answers, self.log)


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
    assert "| cp           | v          | VIEW       |" in out.getvalue()
    assert "1 row selected" in out.getvalue()

    def no_info_schema(sql: str) -> Answer:
        if "INFORMATION_SCHEMA" in sql:
            raise ProgrammingError("VALIDATION ERROR: no such table")
        return catalog(sql)

    shell = Shell(FakeConnection(no_info_schema), out, err)
    shell.handle("!tables")
    assert shell.conn.log[-1] == "SHOW TABLES"
