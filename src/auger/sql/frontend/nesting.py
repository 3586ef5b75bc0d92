"""How deeply a statement may nest, and the PARSE error for one that nests deeper.

sqlglot's parser, its SQL generator and the planner's rewrites all recurse along the expression
tree: sqlglot's parser spends about 25 Python frames on each level of parentheses, so under
Python's default recursion limit (1,000 frames) some 40 nested parentheses already ended in a
``RecursionError``, which reached the user as a SYSTEM error. Here a statement's nesting is
measured on its tokens (a loop, no recursion) and bounded by :data:`MAX_NESTING`, and the
recursion limit is raised once so that every statement within the bound parses, plans and
transpiles. A ``RecursionError`` that still happens on a statement (a shape not counted here,
such as a long chain of ``NOT``) is reported by :func:`too_deep` as the same PARSE error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from sqlglot.tokens import Token, TokenType

from auger.errors import UserError

__all__ = ["MAX_NESTING", "check_nesting", "ensure_recursion_room", "nesting_depth", "too_deep"]

#: The most levels a statement may nest: parentheses (expressions, subqueries, function
#: arguments), brackets and ``CASE ... END``, counted together.
MAX_NESTING = 200

#: Frames the deepest path through parser, planner and generator may take per level (the
#: parser's ~25 per parenthesis, with room for the rewrites), and the frames beneath a
#: statement (the front door, the session, Spark's callbacks).
_FRAMES_PER_LEVEL = 40
_BASE_FRAMES = 2_000

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.CASE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.END})


def ensure_recursion_room() -> None:
    """Raise Python's recursion limit (never lower it) to what :data:`MAX_NESTING` needs.

    The limit is one per process, so it is only ever raised: lowering it again while another
    thread runs a deep statement would fail that statement. The C stack this allows stays
    well inside a default 8 MiB thread stack (sqlglot's frames are mostly Python-to-Python).
    """
    want = _BASE_FRAMES + _FRAMES_PER_LEVEL * MAX_NESTING
    if sys.getrecursionlimit() < want:
        sys.setrecursionlimit(want)


def nesting_depth(tokens: Sequence[Token]) -> tuple[int, Token | None]:
    """The deepest nesting of the tokens and the first token that opens a level beyond
    :data:`MAX_NESTING` (None when the statement stays within it)."""
    depth = deepest = 0
    beyond: Token | None = None
    for tok in tokens:
        if tok.token_type in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > MAX_NESTING and beyond is None:
                    beyond = tok
        elif tok.token_type in _CLOSE and depth:
            depth -= 1
    return deepest, beyond


def check_nesting(tokens: Sequence[Token], sql: str) -> None:
    """Refuse a statement nesting deeper than :data:`MAX_NESTING` with a PARSE error naming
    where it passes the limit."""
    deepest, beyond = nesting_depth(tokens)
    if beyond is None:
        return
    raise UserError.parse(
        f"The query nests too deeply: {deepest} levels of parentheses, brackets or CASE; "
        f"at most {MAX_NESTING} are supported",
        [
            f"SQL Query: {_abbreviated(sql)}",
            f"Line: {beyond.line}",
            f"Column: {beyond.col}",
            "Fix: flatten the expression (for example IN (...) instead of nested ORs, "
            "or a view or WITH clause for a nested subquery)",
        ],
    )


def too_deep(sql: str) -> UserError:
    """The PARSE error for a statement whose tree was too deep to walk (``RecursionError``)."""
    return UserError.parse(
        "The query nests too deeply to be planned",
        [
            f"SQL Query: {_abbreviated(sql)}",
            f"Limit: {MAX_NESTING} levels of parentheses, brackets or CASE",
            "Fix: flatten the expression, or split the query with a view or WITH clause",
        ],
    )


def _abbreviated(sql: str, most: int = 200) -> str:
    """The statement for a context line: a nesting error's statement can be huge."""
    text = " ".join(sql.split())
    return text if len(text) <= most else f"{text[: most - 3]}..."
