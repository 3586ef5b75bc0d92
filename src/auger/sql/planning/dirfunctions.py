"""Drill's query directory functions: ``MAXDIR``, ``MINDIR``, ``IMAXDIR``, ``IMINDIR``.

``dir0 = MAXDIR('dfs.tmp', 'logs')`` names the greatest sub-directory of ``logs`` (the ``I``
forms compare case-insensitively); with the schema alone, ``MAXDIR('dfs.tmp')``, the greatest
sub-directory of the workspace's own directory. The answer depends only on the file system, so
the planner replaces each call by its value as a string literal before the query reaches Spark
(which also lets partition pruning use it).

As in Drill, the functions belong in filters: in a select list, ORDER BY or GROUP BY they are
refused (UNSUPPORTED_OPERATION), whatever they are nested in.
"""

from __future__ import annotations

from sqlglot import exp

from auger.errors import UserError
from auger.sql.catalog.resolution import SessionCatalog
from auger.storage import filesystem as fs
from auger.storage.selection import is_hidden

__all__ = ["DIRECTORY_FUNCTIONS", "query_directory_functions"]

DIRECTORY_FUNCTIONS = ("MAXDIR", "MINDIR", "IMAXDIR", "IMINDIR")

#: The functions as Drill's messages list them.
_LISTED = "[MAXDIR, IMAXDIR, MINDIR, IMINDIR]"
_JIRA = "See Apache Drill JIRA: DRILL-3944"


def _value(name: str, args: list[str], catalog: SessionCatalog) -> str:
    if len(args) not in (1, 2):
        raise UserError.validation(
            f"{name} takes one or two string literals: the schema and (optionally) the table, "
            f"e.g. {name}('dfs.tmp', 'logs') or {name}('dfs.tmp')"
        )
    schema, table = args[0], (args[1] if len(args) == 2 else "")
    found = catalog.resolve_schema(schema)
    if isinstance(found, str):
        raise UserError.validation(f"{name}: schema [{schema}] is not a file workspace")
    path = found.resolve(table)
    where = f"{schema}.{table}" if table else schema
    if not fs.isdir(path):
        raise UserError.validation(f"{name}: [{where}] is not a directory")
    entries = (fs.basename(e.path) for e in fs.list_dir(path) if e.is_dir)
    subdirs = [d for d in entries if not is_hidden(d)]
    if not subdirs:
        raise UserError.validation(f"{name}: [{where}] has no sub-directories")
    key = (lambda d: d.lower()) if name.startswith("I") else (lambda d: d)
    return max(subdirs, key=key) if "MAX" in name else min(subdirs, key=key)


def _is_call(node: object) -> bool:
    return isinstance(node, exp.Anonymous) and node.name.upper() in DIRECTORY_FUNCTIONS


def _uses_call(nodes: list[exp.Expression]) -> bool:
    return any(_is_call(n) for node in nodes for n in node.walk())


def _check_placement(tree: exp.Expression) -> None:
    """Refuse the functions where Drill does: in a select list, ORDER BY or GROUP BY.

    Raises:
        UserError: UNSUPPORTED_OPERATION naming the clause.
    """
    for select in tree.find_all(exp.Select):
        order = select.args.get("order")
        group = select.args.get("group")
        clauses = (
            ("Select List", list(select.expressions)),
            ("Order By", list(order.expressions) if order is not None else []),
            ("Group By", list(group.expressions) if group is not None else []),
        )
        for clause, nodes in clauses:
            if _uses_call(nodes):
                raise UserError.unsupported(
                    f"Directory explorers {_LISTED} functions are not supported in {clause}",
                    [_JIRA],
                )


def query_directory_functions(tree: exp.Expression, catalog: SessionCatalog) -> exp.Expression:
    """Replace every directory function call by the directory name it answers.

    Raises:
        UserError: UNSUPPORTED_OPERATION for a call outside a filter; VALIDATION for bad
            arguments or a directory without sub-directories.
    """
    if not any(_is_call(n) for n in tree.walk()):
        return tree
    _check_placement(tree)

    def fix(node: exp.Expression) -> exp.Expression:
        if _is_call(node):
            args = node.expressions
            if not all(isinstance(a, exp.Literal) and a.is_string for a in args):
                raise UserError.validation(f"{node.name.upper()} needs string literal arguments")
            return exp.Literal.string(_value(node.name.upper(), [a.name for a in args], catalog))
        return node

    return tree.transform(fix)
