"""Statement splitting and parsing, with Drill's error shape.

Statements sqlglot cannot parse (``ALTER SESSION``, ``SHOW FILES``, ``CREATE SCHEMA ... FOR
TABLE``...) are recognised first by :mod:`auger.sql.frontend.command_grammar`; everything else
goes through the :class:`~auger.sql.frontend.dialect.AugerDrill` dialect. Parse errors are
Drill's: the first token that makes no sense (``<EOF>`` when the statement ends too soon), its
line and column, and the statement with a caret under it; nothing of sqlglot's own wording
reaches the user.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from auger.errors import UserError, sql_with_caret
from auger.sql.frontend.dialect import AugerDrill
from auger.sql.frontend.nesting import check_nesting, ensure_recursion_room, too_deep

__all__ = ["encountered", "lexical_error", "parse_statement", "split_statements"]


def split_statements(sql: str) -> list[str]:
    """Split a script on top-level ``;`` (quotes, backticks and comments respected)."""
    try:
        tokens = AugerDrill().tokenize(sql)
    except TokenError:
        raise lexical_error(sql) from None
    out: list[str] = []
    # each statement starts at its first token: a comment between statements (one closing the
    # line of the statement before) is not part of the next
    start: int | None = None
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            if start is not None:
                out.append(sql[start : tok.start].strip())
            start = None
        elif start is None:
            start = tok.start
    if start is not None:
        out.append(sql[start:].strip())
    return out


def parse_statement(sql: str) -> exp.Expression:
    """Parse one statement (a trailing ``;`` is accepted).

    Raises:
        UserError: PARSE, in Drill's words (``Encountered "X" at line L, column C.``) with the
            statement and a caret under the spot, or where the statement nests deeper than
            :data:`~auger.sql.frontend.nesting.MAX_NESTING`; VALIDATION for a known function called
            with too many arguments.
    """
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise UserError.parse("Empty statement")
    ensure_recursion_room()
    dialect = AugerDrill()
    try:
        tokens = dialect.tokenize(text)
    except TokenError:
        raise lexical_error(text) from None
    if tokens and _not_a_statement(tokens[0]):
        raise encountered(text, tokens[0])
    try:
        check_nesting(tokens, text)
        trees = dialect.parser().parse(tokens, text)
    except RecursionError:
        raise too_deep(text) from None
    except ParseError as exc:
        raise _drill_parse_error(exc, tokens, text) from None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        raise UserError.parse("Expected exactly one statement", [sql_with_caret(text)])
    tree = trees[0]
    assert tree is not None
    if isinstance(tree, exp.Command):
        raise encountered(text, tokens[0] if tokens else None)
    return tree  # type: ignore[return-value]


# The words a statement may start with; anything else is Drill's "Encountered" at the first
# token, as Drill's grammar rejects it there.
_STATEMENT_STARTS = frozenset(
    {
        "SELECT",
        "WITH",
        "VALUES",
        "CREATE",
        "DROP",
        "ALTER",
        "SHOW",
        "DESCRIBE",
        "DESC",
        "USE",
        "EXPLAIN",
        "INSERT",
        "SET",
        "RESET",
        "REFRESH",
        "ANALYZE",
        "TABLE",
    }
)
_TOO_MANY_ARGS_RE = re.compile(
    r"number of provided arguments \((\d+)\) is greater than the maximum number of supported "
    r"arguments \((\d+)\)"
)
_TOO_FEW_ARGS_RE = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]+\.(\w+)'>")


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    before = text[:offset]
    line = before.count("\n") + 1
    return line, offset - (before.rfind("\n") + 1) + 1


def encountered(text: str, token: Token | None) -> UserError:
    """``Encountered "X" at line L, column C.`` for a token, or ``"<EOF>"`` past the end."""
    if token is None:
        offset, image = len(text), "<EOF>"
    else:
        offset, image = token.start, text[token.start : token.end + 1]
    line, column = _position(text, offset)
    return UserError.parse(
        f'Encountered "{image}" at line {line}, column {column}.',
        [sql_with_caret(text, line, column)],
    )


def lexical_error(text: str) -> UserError:
    """Drill's ``Lexical error`` for a statement that cannot be split into tokens: a quote,
    a quoted name or a comment left open (reported where the text ends)."""
    opened = _open_quote(text)
    if opened is None:
        line, column = _position(text, len(text))
        return UserError.parse(
            f"Lexical error at line {line}, column {column}.", [sql_with_caret(text)]
        )
    start = opened
    line, column = _position(text, len(text))
    return UserError.parse(
        f'Lexical error at line {line}, column {column}.  Encountered: <EOF> after : "'
        f'{text[start:]}"',
        [sql_with_caret(text, line, column)],
    )


def _open_quote(text: str) -> int | None:
    """Where a quote or block comment that never closes opens, if one does."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            end = i + 1
            while end < n:
                if text[end] == ch:
                    if end + 1 < n and text[end + 1] == ch:  # a doubled quote
                        end += 2
                        continue
                    break
                if text[end] == "\\" and ch != "`":
                    end += 1
                end += 1
            if end >= n:
                return i
            i = end + 1
        elif text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                return i
            i = close + 2
        else:
            i += 1
    return None


def _token_at(tokens: list[Token], line: int, col: int) -> int | None:
    """Index of the token sqlglot names by its line and last column."""
    for n, tok in enumerate(tokens):
        if tok.line == line and tok.col == col:
            return n
    return None


def _function_before(tokens: list[Token], close: int) -> Token | None:
    """The name of the call whose argument list ends at or before token ``close``."""
    depth = 0
    for n in range(close, -1, -1):
        kind = tokens[n].token_type
        if kind == TokenType.R_PAREN:
            depth += 1
        elif kind == TokenType.L_PAREN:
            depth -= 1
            if depth <= 0:
                return tokens[n - 1] if n > 0 else None
    return None


def _not_a_statement(first: Token) -> bool:
    """A statement opening with a plain word or a literal (``SELEC``, ``42``), which sqlglot
    would read as an expression."""
    if first.text.upper() in _STATEMENT_STARTS:
        return False
    return first.token_type in (TokenType.VAR, TokenType.NUMBER, TokenType.STRING)


def _drill_parse_error(exc: ParseError, tokens: list[Token], text: str) -> UserError:
    """sqlglot's first error as Drill words it: where the statement stops making sense."""
    if (
        tokens
        and tokens[0].text.upper() not in _STATEMENT_STARTS
        and tokens[0].token_type
        not in (
            TokenType.L_PAREN,
            TokenType.WITH,
            TokenType.SELECT,
        )
    ):
        return encountered(text, tokens[0])
    info = exc.errors[0] if exc.errors else {}
    description = str(info.get("description", ""))
    index = _token_at(tokens, int(info.get("line", 0) or 0), int(info.get("col", 0) or 0))
    many = _TOO_MANY_ARGS_RE.search(description)
    if many and index is not None:
        name = _function_before(tokens, index)
        if name is not None:
            return UserError.validation(
                f"Invalid number of arguments to function '{name.text}'. "
                f"Was expecting {many.group(2)} arguments",
                [sql_with_caret(text, *_position(text, name.start))],
            )
    few = _TOO_FEW_ARGS_RE.search(description)
    if few and index is not None and tokens[index].token_type == TokenType.R_PAREN:
        name = _function_before(tokens, index)
        if name is not None and name.token_type != TokenType.R_PAREN:
            return UserError.validation(
                f"Invalid number of arguments to function '{name.text}'",
                [sql_with_caret(text, *_position(text, name.start))],
            )
    if info.get("at_end") or index is None:
        return encountered(text, None)
    return encountered(text, tokens[index])
