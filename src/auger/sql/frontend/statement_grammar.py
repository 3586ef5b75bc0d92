"""Grammars of Drill's metadata and DDL statements that sqlglot does not parse.

``SHOW TABLES``, ``SHOW FILES``, ``DESCRIBE``, ``DESCRIBE SCHEMA FOR TABLE``, ``CREATE|DROP
SCHEMA ... FOR TABLE``, ``CREATE|DROP VIEW``, ``REFRESH TABLE METADATA`` and ``EXPLAIN PLAN
FOR``. Each parses into a frozen value; :func:`parse_statement_command` returns None for text
that does not start like one of them (it then goes to sqlglot), and a PARSE error for text that
starts like one but is malformed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auger.sql.frontend.token_cursor import Cursor

__all__ = [
    "AlterSchema",
    "CreateSchema",
    "CreateView",
    "Describe",
    "DescribeSchema",
    "DescribeSchemaOf",
    "DropSchema",
    "DropView",
    "Explain",
    "RefreshMetadata",
    "ShowFiles",
    "ShowTables",
    "parse_statement_command",
]


@dataclass(frozen=True)
class ShowTables:
    schema: tuple[str, ...] | None
    like: str | None
    where: str | None = None  # the condition of ``WHERE ...``, as written


@dataclass(frozen=True)
class ShowFiles:
    target: tuple[str, ...] | None


@dataclass(frozen=True)
class Describe:
    table: tuple[str, ...]
    column: str | None = None
    pattern: bool = False  # ``column`` is a LIKE pattern (``DESCRIBE t 'a%'``)


@dataclass(frozen=True)
class DescribeSchema:
    table: tuple[str, ...]
    form: str = "JSON"  # or STATEMENT


@dataclass(frozen=True)
class DescribeSchemaOf:
    """``DESCRIBE SCHEMA dfs.tmp``: a schema's (workspace's) configuration."""

    schema: tuple[str, ...]


@dataclass(frozen=True)
class CreateSchema:
    replace: bool
    columns: str | None  # the column list text, None when absent (LOAD or no list)
    load: str | None
    table: tuple[str, ...] | None
    path: str | None
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AlterSchema:
    table: tuple[str, ...] | None
    path: str | None
    add: bool  # ADD, else REMOVE
    replace: bool
    columns: str | None  # ADD: column definitions; REMOVE: names
    properties: dict[str, str] = field(default_factory=dict)  # REMOVE: keys only (values "")


@dataclass(frozen=True)
class DropSchema:
    if_exists: bool
    table: tuple[str, ...]


@dataclass(frozen=True)
class RefreshMetadata:
    table: tuple[str, ...]
    #: the ``COLUMNS (...)`` list (top-level names); () for ``COLUMNS NONE``; None: every column
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Explain:
    query: str
    with_implementation: bool = True


@dataclass(frozen=True)
class CreateView:
    replace: bool
    if_not_exists: bool
    name: tuple[str, ...]
    columns: tuple[str, ...] | None
    query: str


@dataclass(frozen=True)
class DropView:
    if_exists: bool
    name: tuple[str, ...]


def _show(c: Cursor) -> object | None:
    if c.accept("SHOW", "TABLES"):
        schema = None
        like = None
        if c.accept("IN") or c.accept("FROM"):
            schema = tuple(c.name())
        where = None
        if c.accept("LIKE"):
            like = c.string()
        elif c.accept("WHERE"):
            where = c.rest()
            if not where:
                c.fail()
            return ShowTables(schema, None, where)
        c.end()
        return ShowTables(schema, like)
    if c.accept("SHOW", "FILES"):
        target = None
        if c.accept("IN") or c.accept("FROM"):
            target = tuple(c.name())
        c.end()
        return ShowFiles(target)
    return None


def _describe(c: Cursor) -> object | None:
    if not (c.accept("DESCRIBE") or c.accept("DESC")):
        return None
    if c.at("SCHEMA") or c.at("DATABASE"):
        c.take()
        if not c.at("FOR"):
            schema = tuple(c.name())
            c.end()
            return DescribeSchemaOf(schema)
        c.expect("FOR", "TABLE")
        table = tuple(c.name())
        form = "JSON"
        if c.accept("AS"):
            t = c.take()
            form = t.text.upper()
            if form not in ("JSON", "STATEMENT"):
                c.i -= 1
                c.fail()
        c.end()
        return DescribeSchema(table, form)
    nxt = c.peek()
    if nxt is None or nxt.kind not in ("word", "quoted") or c.at("SELECT") or c.at("WITH"):
        return None  # DESCRIBE <query>: not Drill's; let sqlglot report it
    c.accept("TABLE")
    table = tuple(c.name())
    column = None
    pattern = False
    if not c.at_end():
        tok = c.take()
        if tok.kind in ("string", "word", "quoted"):
            column = tok.value
            pattern = tok.kind == "string"
        else:
            c.i -= 1
            c.fail()
    c.end()
    return Describe(table, column, pattern)


def _properties(c: Cursor) -> dict[str, str]:
    props: dict[str, str] = {}
    c.expect_punct("(")
    while not c.at_punct(")"):
        key = c.string()
        c.expect_punct("=")
        props[key] = c.string()
        if c.at_punct(","):
            c.take()
    c.expect_punct(")")
    return props


def _create(c: Cursor) -> object | None:
    start = c.i
    if not c.accept("CREATE"):
        return None
    replace = c.accept("OR", "REPLACE")
    if c.accept("SCHEMA"):
        return _create_schema(c, replace)
    if c.accept("VIEW"):
        return _create_view(c, replace)
    c.i = start
    return None


def _create_schema(c: Cursor, replace: bool) -> CreateSchema:
    load = None
    columns = None
    table = None
    path = None
    if c.accept("LOAD"):
        load = c.string()
    if c.at_punct("("):
        columns = c.balanced()
    if c.accept("FOR"):
        c.expect("TABLE")
        table = tuple(c.name())
    elif c.at("PATH"):
        if replace:
            c.fail("<OR REPLACE> cannot be used with <PATH> property")
        c.take()
        path = c.string()
    props = _properties(c) if c.accept("PROPERTIES") else {}
    if table is None and path is None:
        c.fail()
    c.end()
    return CreateSchema(replace, columns, load, table, path, props)


def _create_view(c: Cursor, replace: bool) -> CreateView:
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = tuple(c.name())
    columns = None
    if c.at_punct("("):
        inner = Cursor(c.balanced())
        cols: list[str] = []
        while not inner.at_end():
            cols.append(inner.name()[-1])
            if inner.at_punct(","):
                inner.take()
            elif not inner.at_end():
                inner.fail()
        columns = tuple(cols)
    c.expect("AS")
    query = c.rest()
    if not query:
        c.fail()
    return CreateView(replace, if_not_exists, name, columns, query)


def _alter(c: Cursor) -> object | None:
    if not c.accept("ALTER", "SCHEMA"):
        return None
    table = path = None
    if c.accept("FOR"):
        c.expect("TABLE")
        table = tuple(c.name())
    else:
        c.expect("PATH")
        path = c.string()
    add = c.accept("ADD")
    if not add:
        c.expect("REMOVE")
    replace = add and c.accept("OR", "REPLACE")
    columns = None
    props: dict[str, str] = {}
    if c.accept("COLUMNS"):
        columns = c.balanced()
    if c.accept("PROPERTIES"):
        if add:
            props = _properties(c)
        else:
            c.expect_punct("(")
            while not c.at_punct(")"):
                props[c.string()] = ""
                if c.at_punct(","):
                    c.take()
            c.expect_punct(")")
    if columns is None and not props:
        c.fail()
    c.end()
    return AlterSchema(table, path, add, replace, columns, props)


def _drop(c: Cursor) -> object | None:
    start = c.i
    if not c.accept("DROP"):
        return None
    if c.accept("SCHEMA"):
        if_exists = c.accept("IF", "EXISTS")
        c.expect("FOR", "TABLE")
        table = tuple(c.name())
        c.end()
        return DropSchema(if_exists, table)
    if c.accept("VIEW"):
        if_exists = c.accept("IF", "EXISTS")
        name = tuple(c.name())
        c.end()
        return DropView(if_exists, name)
    c.i = start
    return None


def _refresh(c: Cursor) -> object | None:
    if not c.accept("REFRESH", "TABLE", "METADATA"):
        return None
    # Drill's grammar: REFRESH TABLE METADATA [COLUMNS ((c1, c2, ...) | NONE)] table
    columns: tuple[str, ...] | None = None
    if c.accept("COLUMNS"):
        if c.at_punct("("):
            c.expect_punct("(")
            names = [c.name()]
            while c.at_punct(","):
                c.expect_punct(",")
                names.append(c.name())
            c.expect_punct(")")
            # a member (``m.a``) stands for its top-level column, as in Drill
            columns = tuple(dict.fromkeys(n[0] for n in names))
        else:
            c.expect("NONE")
            columns = ()
    table = tuple(c.name())
    c.end()
    return RefreshMetadata(table, columns)


def _explain(c: Cursor) -> object | None:
    if not c.accept("EXPLAIN", "PLAN"):
        return None
    c.accept("INCLUDING", "ALL", "ATTRIBUTES")
    c.accept("EXCLUDING", "ATTRIBUTES")
    c.accept("AS", "XML") or c.accept("AS", "JSON")
    with_impl = True
    if c.accept("WITHOUT", "IMPLEMENTATION"):
        with_impl = False
    else:
        c.accept("WITH", "IMPLEMENTATION")
    c.expect("FOR")
    query = c.rest()
    if not query:
        c.fail()
    return Explain(query, with_impl)


_GRAMMARS = (_show, _describe, _create, _alter, _drop, _refresh, _explain)


def parse_statement_command(sql: str) -> object | None:
    """Parse one of this module's statements, or None when the text is none of them."""
    text = sql.strip().rstrip(";").strip()
    first = text.split(None, 1)[0].upper() if text else ""
    if first not in ("SHOW", "DESCRIBE", "DESC", "CREATE", "ALTER", "DROP", "REFRESH", "EXPLAIN"):
        return None
    c = Cursor(text)
    for grammar in _GRAMMARS:
        c.i = 0
        found = grammar(c)
        if found is not None:
            return found
    return None
