"""Statement splitting and Drill's parse errors (auger.sql.frontend.parser)."""

from __future__ import annotations

import pytest

from auger.errors import ErrorKind, UserError
from auger.sql.frontend.parser import parse_statement, split_statements


def test_a_comment_closing_a_line_does_not_start_the_next_statement() -> None:
    # Before: "-- note\nALTER SESSION ..." was one piece, which no command grammar matched
    script = (
        "CREATE TEMPORARY TABLE t AS SELECT 1 AS a FROM (VALUES(1));  -- note\n"
        "-- another\n"
        "ALTER SESSION SET `store.format` = 'json';\n"
        "SELECT ';' FROM x -- tail\n"
        ";  -- end\n"
    )
    assert split_statements(script) == [
        "CREATE TEMPORARY TABLE t AS SELECT 1 AS a FROM (VALUES(1))",
        "ALTER SESSION SET `store.format` = 'json'",
        "SELECT ';' FROM x -- tail",
    ]


def test_a_script_of_comments_only_has_no_statements() -> None:
    assert split_statements("-- nothing\n/* at all */\n;") == []


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT * FROM t WHERE", 'Encountered "<EOF>" at line 1, column 22.'),
        ("SELECT a b c FROM t", 'Encountered "c" at line 1, column 12.'),
        ("FOO BAR", 'Encountered "FOO" at line 1, column 1.'),
        ("SELECT 'abc", 'Lexical error at line 1, column 12.  Encountered: <EOF> after : "\'abc"'),
    ],
)
def test_parse_errors_in_drills_words(sql: str, message: str) -> None:
    with pytest.raises(UserError) as info:
        parse_statement(sql)
    assert info.value.kind is ErrorKind.PARSE
    assert info.value.message == message
    assert "sqlglot" not in str(info.value) and "<class" not in str(info.value)


def test_too_many_arguments_to_a_known_function_is_a_validation_error() -> None:
    with pytest.raises(UserError) as info:
        parse_statement("SELECT upper(a, b) FROM t")
    assert str(info.value) == (
        "VALIDATION ERROR: Invalid number of arguments to function 'upper'. "
        "Was expecting 1 arguments\n\n"
        "SQL Query: SELECT upper(a, b) FROM t\n"
        "                  ^"
    )
