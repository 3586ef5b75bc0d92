"""Deeply nested statements: within the limit they run, beyond it they are a PARSE error that
says so, never a RecursionError reported as a SYSTEM error."""

from __future__ import annotations

from typing import Any

import pytest

from auger.errors import ErrorKind, UserError
from auger.sql.frontend.nesting import MAX_NESTING
from auger.sql.frontend.parser import parse_statement


def parens(n: int) -> str:
    return "SELECT " + "(" * n + "1" + ")" * n


@pytest.mark.parametrize(
    "sql",
    [
        parens(MAX_NESTING),
        "SELECT " + "abs(" * MAX_NESTING + "1" + ")" * MAX_NESTING,
        "SELECT " + "CASE WHEN 1 = 1 THEN " * MAX_NESTING + "1" + " END" * MAX_NESTING,
        "SELECT * FROM " + "(SELECT * FROM " * (MAX_NESTING - 1) + "t" + ") x" * (MAX_NESTING - 1),
    ],
    ids=["parentheses", "functions", "case", "subqueries"],
)
def test_nesting_up_to_the_limit_parses(sql: str) -> None:
    # Before: RecursionError from 50 levels on
    assert parse_statement(sql) is not None


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 5000])
def test_nesting_beyond_the_limit_is_a_parse_error_naming_it(depth: int) -> None:
    with pytest.raises(UserError) as info:
        parse_statement(parens(depth))
    err = info.value
    assert err.kind is ErrorKind.PARSE
    assert "nests too deeply" in err.message
    assert f"{depth} levels" in err.message and f"at most {MAX_NESTING}" in err.message
    # the column of the first parenthesis past the limit ("SELECT " is 7 characters)
    assert "Line: 1" in err.context and f"Column: {7 + MAX_NESTING + 1}" in err.context
    assert all(len(line) < 400 for line in err.context)  # the statement is abbreviated


def test_deep_chain_of_operators_is_a_parse_error() -> None:
    # a shape the token count does not see: NOT nests without parentheses
    with pytest.raises(UserError) as info:
        parse_statement("SELECT " + "NOT " * 20_000 + "TRUE")
    assert info.value.kind is ErrorKind.PARSE
    assert "nests too deeply" in info.value.message
    assert f"Limit: {MAX_NESTING} levels of parentheses, brackets or CASE" in info.value.context


def test_deep_queries_through_the_dbapi(conn: Any) -> None:
    from auger.dbapi import ProgrammingError

    cur = conn.cursor()
    # Before: SYSTEM ERROR: maximum recursion depth exceeded (from 50 levels on)
    assert cur.execute(parens(150)).fetchall() == [(1,)]
    deep_sub = "SELECT * FROM " + "(SELECT 2 AS v FROM " * 1 + "(VALUES (1))" + ") t"
    for _ in range(99):
        deep_sub = f"SELECT * FROM ({deep_sub}) t"
    assert cur.execute(deep_sub).fetchall() == [(2,)]
    for sql in (parens(5000), "SELECT " + "- " * 3000 + "1"):
        with pytest.raises(ProgrammingError) as info:
            cur.execute(sql)
        assert str(info.value).startswith("PARSE ERROR: The query nests too deeply")
    assert cur.execute("SELECT 1 + 1").fetchall() == [(2,)]
