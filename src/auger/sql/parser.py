"""Statement splitting and parsing, with Drill's error shape.

Statements sqlglot cannot parse (``ALTER SESSION``, ``SHOW FILES``, ``CREATE SCHEMA ... FOR
TABLE``...) are recognised first by :mod:`auger.sql.commands`; everything else goes through the
:class:`~auger.sql.dialect.AugerDrill` dialect. Parse errors name the line and column.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from auger.errors import UserError
from auger.sql.dialect import AugerDrill
from auger.sql.nesting import check_nesting, ensure_recursion_room, too_deep

__all__ = ["parse_statement", "split_statements"]


def split_statements(sql: str) -> list[str]:
    """Split a script on top-level ``;`` (quotes, backticks and comments respected)."""
    try:
        tokens = AugerDrill().tokenize(sql)
    except TokenError as exc:
        raise UserError.parse(f"Unable to tokenize the statement: {exc}") from exc
    out: list[str] = []
    start = 0
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            piece = sql[start : tok.start].strip()
            if piece:
                out.append(piece)
            start = tok.end + 1
    tail = sql[start:].strip()
    if tail:
        out.append(tail)
    return out


def parse_statement(sql: str) -> exp.Expression:
    """Parse one statement (a trailing ``;`` is accepted).

    Raises:
        UserError: PARSE, naming the line and column of the first error, or where the
            statement nests deeper than :data:`~auger.sql.nesting.MAX_NESTING`.
    """
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise UserError.parse("Empty statement")
    ensure_recursion_room()
    dialect = AugerDrill()
    try:
        tokens = dialect.tokenize(text)
        check_nesting(tokens, text)
        trees = dialect.parser().parse(tokens, text)
    except RecursionError:
        raise too_deep(text) from None
    except ParseError as exc:
        info = exc.errors[0] if exc.errors else {}
        line, col = info.get("line", 1), info.get("col", 1)
        desc = str(info.get("description", exc)).split("<Token")[0].strip()
        highlight = info.get("highlight", "")
        raise UserError.parse(
            f'Encountered "{highlight}" at line {line}, column {col}: {desc}',
            [f"SQL Query: {text}", f"Line: {line}", f"Column: {col}"],
        ) from None
    except TokenError as exc:
        raise UserError.parse(
            f"Unable to tokenize the statement: {exc}", [f"SQL Query: {text}"]
        ) from None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        raise UserError.parse("Expected exactly one statement", [f"SQL Query: {text}"])
    tree = trees[0]
    assert tree is not None
    if isinstance(tree, exp.Command):
        raise UserError.parse(
            f"Unsupported or malformed statement: {text.split()[0].upper()} ...",
            [f"SQL Query: {text}"],
        )
    return tree  # type: ignore[return-value]
