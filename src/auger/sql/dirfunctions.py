"""Drill's query directory functions: ``MAXDIR``, ``MINDIR``, ``IMAXDIR``, ``IMINDIR``.

``dir0 = MAXDIR('dfs.tmp', 'logs')`` names the greatest sub-directory of ``logs`` (the ``I``
forms compare case-insensitively). The answer depends only on the file system, so the planner
replaces each call by its value as a string literal before the query reaches Spark (which also
lets partition pruning use it).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sqlglot import exp

from auger.errors import UserError
from auger.storage.selection import is_hidden

if TYPE_CHECKING:
    from auger.session import UserSession

__all__ = ["DIRECTORY_FUNCTIONS", "query_directory_functions"]

DIRECTORY_FUNCTIONS = ("MAXDIR", "MINDIR", "IMAXDIR", "IMINDIR")


def _value(name: str, args: list[str], session: UserSession) -> str:
    if len(args) != 2:
        raise UserError.validation(
            f"{name} takes two string literals: the schema and the table, e.g. "
            f"{name}('dfs.tmp', 'logs')"
        )
    schema, table = args
    found = session.catalog.resolve_schema(schema, session.default_schema)
    if isinstance(found, str):
        raise UserError.validation(f"{name}: schema [{schema}] is not a file workspace")
    path = found.resolve(table)
    if not os.path.isdir(path):
        raise UserError.validation(f"{name}: [{schema}.{table}] is not a directory")
    subdirs = [
        d for d in os.listdir(path) if not is_hidden(d) and os.path.isdir(os.path.join(path, d))
    ]
    if not subdirs:
        raise UserError.validation(f"{name}: [{schema}.{table}] has no sub-directories")
    key = (lambda d: d.lower()) if name.startswith("I") else (lambda d: d)
    return max(subdirs, key=key) if "MAX" in name else min(subdirs, key=key)


def query_directory_functions(tree: exp.Expression, session: UserSession) -> exp.Expression:
    """Replace every directory function call by the directory name it answers."""

    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Anonymous) and node.name.upper() in DIRECTORY_FUNCTIONS:
            args = node.expressions
            if not all(isinstance(a, exp.Literal) and a.is_string for a in args):
                raise UserError.validation(f"{node.name.upper()} needs string literal arguments")
            return exp.Literal.string(_value(node.name.upper(), [a.name for a in args], session))
        return node

    return tree.transform(fix)
