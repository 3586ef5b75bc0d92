"""``split_script``: the shell's statement splitter, whose no-tokenizer branch must split as
the SQL tokenizer does (no Spark needed)."""

from __future__ import annotations

import pytest

from auger.cli.main import split_script
from auger.errors import UserError
from auger.sql.frontend.parser import split_statements

SCRIPTS = [
    "",
    "  ",
    ";",
    "SELECT 1",
    "SELECT 1;",
    "  SELECT 1 ;  \n",
    "SELECT `x` FROM cp.`employee.json`;",
    'SELECT "a" FROM t;',
    "SELECT 'it''s' AS s;",
    "SELECT 'a;b' AS s",
    "SELECT 1; SELECT 2",
    "SELECT 1 -- one; two\n",
    "/* c; */ SELECT 1;",
    "SELECT `a'b` , 'c;",
    "SELECT 'x",
]


def _outcome(split: object, text: str) -> object:
    try:
        return split(text)  # type: ignore[operator]
    except UserError as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("text", SCRIPTS)
def test_split_script_splits_as_the_tokenizer_does(text: str) -> None:
    expected = _outcome(split_statements, text)
    found = _outcome(split_script, text)
    if isinstance(expected, tuple) and found != expected:
        # an unterminated quote: the fast branch leaves the text whole for the statement's
        # own parse, which reports the same lexical error
        assert found == [text.strip()], found
        assert _outcome(split_statements, text.strip()) == expected
    else:
        assert found == expected
