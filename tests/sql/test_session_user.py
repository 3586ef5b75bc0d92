"""CURRENT_USER and its siblings answer with the session's user, never the process's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from auger.sql.frontend.parser import parse_statement
from auger.sql.planning.session_user import session_user

from .helpers import rows

FORMS = [
    "CURRENT_USER",
    "SESSION_USER",
    "USER",
    "SYSTEM_USER",
    "CURRENT_USER()",
    "session_user()",
    "user()",
]


@pytest.mark.parametrize("form", FORMS)
def test_every_form_names_the_session_user(make_conn: Any, form: str) -> None:
    conn = make_conn("bob")
    assert rows(conn, f"SELECT {form} FROM (VALUES(1))") == [("bob",)]


def test_each_session_sees_its_own_user(make_conn: Any) -> None:
    alice, bob = make_conn("alice"), make_conn("bob")
    sql = "SELECT CURRENT_USER AS c, SESSION_USER AS s FROM (VALUES(1))"
    assert rows(alice, sql) == [("alice", "alice")]
    assert rows(bob, sql) == [("bob", "bob")]


def test_embedded_connect_takes_the_user(engine: Any) -> None:
    from auger.dbapi import Connection

    with Connection(engine.open_session("carol")) as conn:
        assert rows(conn, "SELECT CURRENT_USER") == [("carol",)]


def test_a_column_named_user_stays_a_column(make_conn: Any, data_dir: Path) -> None:
    (data_dir / "logins.json").write_text('{"user": "dave", "n": 1}\n')
    conn = make_conn("bob")
    got = rows(conn, "SELECT user, CURRENT_USER AS me FROM dfs.data.`logins.json`")
    assert got == [("dave", "bob")]
    sql = "SELECT x AS user FROM (VALUES(5)) t(x) ORDER BY user"
    assert rows(conn, sql) == [(5,)]


def test_rule_leaves_qualified_names_and_arguments_alone() -> None:
    tree = parse_statement("SELECT t.user, CURRENT_USER, f(user) FROM t")
    out = session_user(tree, "bob", columns=["user"])
    assert out.sql() == "SELECT t.user, 'bob', F(user) FROM t"
    without_column = session_user(parse_statement("SELECT user FROM t"), "bob")
    assert isinstance(without_column.expressions[0], exp.Literal)
