"""``CURRENT_USER``, ``SESSION_USER``, ``USER`` and ``SYSTEM_USER`` name the session's user.

Spark would answer them with the user of the server process (``root`` in a container), which
tells a user logged in as ``bob`` the wrong identity. The planner knows the session, so each
form becomes a string literal of the session's user before Spark sees the query.

``CURRENT_USER`` (with or without parentheses) is a function in every dialect. The other three
are bare words, which can also be column names: an unqualified ``user`` stays a column
reference when a table of the query has a column of that name or the query names an
expression so (the rule Spark applies), and means the session's user otherwise (Spark would
fall back to the process's user even for a quoted name).
"""

from __future__ import annotations

from collections.abc import Collection

from sqlglot import exp

__all__ = ["session_user"]

#: Bare words (and calls) that name the session's user.
_USER_WORDS = frozenset({"user", "session_user", "system_user", "current_user"})


def session_user(tree: exp.Expression, user: str, columns: Collection[str] = ()) -> exp.Expression:
    """Replace the user functions in ``tree`` by the literal ``user``.

    Args:
        tree: the query.
        user: the session's user name.
        columns: the lower-cased column names of the query's tables, which win over a bare
            word of the same name.

    Returns:
        The rewritten tree (``tree`` itself is left alone).
    """
    known = {c.lower() for c in columns}
    known |= {a.alias.lower() for a in tree.find_all(exp.Alias)}  # ``... AS user ORDER BY user``

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.CurrentUser | exp.SessionUser):
            return exp.Literal.string(user)
        if isinstance(node, exp.Anonymous):
            called = not node.expressions and node.name.lower() in _USER_WORDS
            return exp.Literal.string(user) if called else node
        name = node.this if isinstance(node, exp.Column) and not node.table else None
        if isinstance(name, exp.Identifier) and name.name.lower() in _USER_WORDS - known:
            return exp.Literal.string(user)
        return node

    return tree.transform(fix)  # on a copy
