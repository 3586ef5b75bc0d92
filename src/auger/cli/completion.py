"""Tab completion for the shell: SQL keywords, shell commands, schemas, tables, columns, and
file and directory names inside backquotes after a workspace (``dfs.`/data/mi``, ``cp.`t``), as
DuckDB completes paths in quotes.

Names come from the server the shell talks to, through the same connection as the statements
(``SHOW SCHEMAS``, ``SHOW FILES``/``SHOW TABLES``, ``SHOW FILES IN dfs.`/data``` for a
directory, and a ``LIMIT 0`` query for a table's columns), so paths complete the same way on the
embedded engine and on a server; cached per name so that a key press costs nothing after the
first look-up. The completer runs on prompt_toolkit's completion thread and never raises: a
look-up that fails just offers nothing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

__all__ = ["KEYWORDS", "MetadataCache", "SqlCompleter"]

KEYWORDS: tuple[str, ...] = (
    "ALL", "ALTER", "AND", "ANY", "AS", "ASC", "BETWEEN", "BY", "CASE", "CAST", "COUNT",
    "CREATE", "CROSS", "DATABASES", "DESC", "DESCRIBE", "DISTINCT", "DROP", "ELSE", "END",
    "EXISTS", "EXPLAIN", "FALSE", "FILES", "FLATTEN", "FOR", "FROM", "FULL", "GROUP", "HAVING",
    "IF", "IN", "INNER", "INTERVAL", "INTO", "IS", "JOIN", "LEFT", "LIKE", "LIMIT", "NOT", "NULL",
    "OFFSET", "ON", "OR", "ORDER", "OUTER", "PARTITION", "PLAN", "REPLACE", "RESET", "RIGHT",
    "SCHEMA", "SCHEMAS", "SELECT", "SESSION", "SET", "SHOW", "SYSTEM", "TABLE", "TABLES",
    "TEMPORARY", "THEN", "TRUE", "UNION", "USE", "VALUES", "VIEW", "WHEN", "WHERE", "WITH",
    "AVG", "MAX", "MIN", "SUM", "COALESCE", "CONCAT", "LOWER", "UPPER", "TRIM", "SUBSTR",
    "TO_DATE", "TO_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIMESTAMP", "VARCHAR", "INTEGER",
    "BIGINT", "DOUBLE", "DECIMAL", "BOOLEAN", "DATE", "TIMESTAMP",
)  # fmt: skip

_TABLE_CONTEXT = re.compile(r"\b(FROM|JOIN|USE|TABLE|DESCRIBE|INTO|IN)\s+[\w.`/$-]*$", re.I)
_TABLE_REF = re.compile(r"\b(?:FROM|JOIN)\s+((?:`[^`]+`|[\w$]+)(?:\.(?:`[^`]+`|[\w$]+))*)", re.I)
_WORD = re.compile(r"[\w$`./-]*$")
# A workspace (dfs, dfs.tmp, `dfs`.`tmp`) then a backquote still open: a path being typed.
_PATH = re.compile(r"((?:`[^`]*`|[\w$]+)(?:\.(?:`[^`]*`|[\w$]+))*)\.`([^`]*)$")


def _quote(name: str) -> str:
    """A name as it must be typed: plain if it is a simple identifier, else in backquotes."""
    return name if re.fullmatch(r"[A-Za-z_][\w$]*", name) else f"`{name}`"


class MetadataCache:
    """Schemas, tables and columns, looked up through ``run(sql) -> (names, rows)`` on demand."""

    def __init__(self, run: Callable[[str], tuple[list[str], list[tuple[Any, ...]]]]) -> None:
        self._run = run
        self._lock = threading.Lock()
        self._schemas: list[str] | None = None
        self._tables: dict[str, list[str]] = {}
        self._columns: dict[str, list[str]] = {}
        self._files: dict[tuple[str, str], list[tuple[str, bool]]] = {}
        self.default_schema: str | None = None

    def _query(self, sql: str) -> list[tuple[Any, ...]]:
        try:
            return self._run(sql)[1]
        except Exception:
            return []

    def invalidate(self) -> None:
        """Forget what may have changed (after DDL, ``USE``...)."""
        with self._lock:
            self._schemas = None
            self._tables.clear()
            self._files.clear()

    def schemas(self) -> list[str]:
        with self._lock:
            if self._schemas is None:
                self._schemas = [str(r[0]) for r in self._query("SHOW SCHEMAS") if r]
            return list(self._schemas)

    def tables(self, schema: str | None) -> list[str]:
        """Tables, views and files of ``schema`` (the default schema when None)."""
        key = (schema or self.default_schema or "").lower()
        if not key:
            return []
        with self._lock:
            if key not in self._tables:
                names: list[str] = []
                target = f" IN {schema}" if schema else ""
                for row in self._query(f"SHOW FILES{target}"):
                    if row:
                        names.append(str(row[0]))
                for row in self._query(f"SHOW TABLES{target}"):
                    if len(row) > 1:
                        names.append(str(row[1]))
                self._tables[key] = sorted(set(names))
            return list(self._tables[key])

    def files(self, schema: str, directory: str) -> list[tuple[str, bool]]:
        """``(name, is a directory)`` of what ``directory`` of the workspace ``schema`` holds
        (the workspace's own directory when ``directory`` is empty), as ``SHOW FILES`` lists it."""
        key = (schema.lower(), directory)
        with self._lock:
            if key not in self._files:
                target = f"{schema}.`{directory}`" if directory else schema
                self._files[key] = [
                    (str(row[0]), bool(row[1]))
                    for row in self._query(f"SHOW FILES IN {target}")
                    if len(row) > 1
                ]
            return list(self._files[key])

    def columns(self, table: str) -> list[str]:
        key = table.lower()
        with self._lock:
            if key not in self._columns:
                try:
                    names, _ = self._run(f"SELECT * FROM {table} LIMIT 0")
                except Exception:
                    names = []
                self._columns[key] = list(names)
            return list(self._columns[key])


class SqlCompleter(Completer):
    """Completes the word before the cursor from keywords, commands and catalog names."""

    def __init__(self, cache: MetadataCache, commands: Iterable[str] = ()) -> None:
        self.cache = cache
        self.commands = sorted(commands)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        try:
            yield from self._completions(document)
        except Exception:
            return

    def _completions(self, document: Document) -> Iterator[Completion]:
        before = document.text_before_cursor
        word = _WORD.search(before).group(0)  # type: ignore[union-attr]
        stripped = document.text.lstrip()
        if stripped.startswith(("!", ".")) and " " not in before.strip():
            for cmd in self.commands:
                if cmd.startswith(before.strip()):
                    yield Completion(cmd, -len(before.strip()))
            return
        path = _PATH.search(before)
        if path is not None:
            yield from self._paths(path.group(1), path.group(2))
            return
        if "." in word.strip("`"):  # schema.table or table.column
            yield from self._dotted(word, document.text)
            return
        bare = word.strip("`").lower()
        seen: set[str] = set()

        def offer(candidates: Iterable[str], meta: str) -> Iterator[Completion]:
            for name in candidates:
                if name.strip("`").lower().startswith(bare) and name.lower() not in seen:
                    seen.add(name.lower())
                    yield Completion(name, -len(word), display_meta=meta)

        if _TABLE_CONTEXT.search(before):
            yield from offer((_quote(t) for t in self.cache.tables(None)), "table")
            yield from offer(self.cache.schemas(), "schema")
            return
        if not bare:
            return
        for table in _TABLE_REF.findall(document.text):
            yield from offer((_quote(c) for c in self.cache.columns(table)), "column")
        yield from offer(KEYWORDS, "keyword")

    def _paths(self, schema: str, typed: str) -> Iterator[Completion]:
        """The entries of the directory ``typed`` names in workspace ``schema`` that start as its
        last part does: a directory completes with ``/`` (Tab again goes into it), a file with
        the closing backquote."""
        directory, slash, start = typed.rpartition("/")
        if slash and not directory and typed.startswith("/"):
            directory = "/"
        for name, is_dir in self.cache.files(schema, directory):
            if name.startswith(start):
                shown = name + "/" if is_dir else name
                yield Completion(
                    name + ("/" if is_dir else "`"),
                    -len(start),
                    display=shown,
                    display_meta="directory" if is_dir else "file",
                )

    def _dotted(self, word: str, text: str) -> Iterator[Completion]:
        head, _, tail = word.rpartition(".")
        prefix = tail.strip("`").lower()
        schemas = {s.lower(): s for s in self.cache.schemas()}
        start = -len(tail)
        # "dfs.d" may be the start of a schema name ("dfs.data") rather than schema.table
        for name in schemas.values():
            if name.lower().startswith(word.lower()):
                yield Completion(name, -len(word), display_meta="schema")
        if head.lower() in schemas:
            names = [_quote(t) for t in self.cache.tables(schemas[head.lower()])]
            below = f"{head.lower()}."
            names += [s[len(below) :] for s in schemas.values() if s.lower().startswith(below)]
            for name in names:
                if name.strip("`").lower().startswith(prefix):
                    yield Completion(name, start, display_meta="table")
            return
        # alias.column or table.column: columns of the tables the statement reads
        for table in _TABLE_REF.findall(text):
            for col in self.cache.columns(table):
                if col.lower().startswith(prefix):
                    yield Completion(_quote(col), start, display_meta="column")
