"""Error contexts and the schema-conflict errors of the scan, with Drill's texts.

A scan's errors must say where they happened: the scan (table, plugin) and, once a reader runs,
the file. :class:`ErrorContext` carries those context lines from the scan to each reader and on
into the errors the schema tracker and the projection filter raise.

Every conflict error the scan raises is built here. Those of the schema tracker and the
projection filter are VALIDATION errors, with Drill's texts:

* a column whose type cannot satisfy its projection (``a[2]`` on an INT)::

    VALIDATION ERROR: Reader column type not compatible with projection specification

    Projected column: a[2]
    Reader column: `a` INT NOT NULL

* a column whose type differs from the one the scan already settled on::

    VALIDATION ERROR: Scan and Reader column type conflict

    Scan column: `a` INT NOT NULL
    Reader column: `a` BIGINT NOT NULL

Those of the conversion of a file's values to the scan's types are DATA_READ errors naming the
file (from the context), the column and both types (:func:`conversion_conflict`,
:func:`null_in_not_null`). Conflicts found while discovering a table's schema, before the query
is known, are a different job: :mod:`auger.formats.conflicts` keeps them until a query reads
the column.
"""

from __future__ import annotations

from collections.abc import Iterable

from auger.errors import ErrorKind, UserError
from auger.projection import RequestedColumn
from auger.types import ColumnMetadata

__all__ = [
    "ErrorContext",
    "ScanStateError",
    "SchemaMismatchError",
    "conversion_conflict",
    "illegal_conversion",
    "null_in_not_null",
    "projection_conflict",
    "type_conflict",
]


class ErrorContext:
    """Context lines added to every error raised on behalf of a scan or one of its readers.

    A reader's context usually extends the scan's (``ErrorContext("File: /w/a.csv",
    parent=scan_context)``) so its errors name both.
    """

    __slots__ = ("lines", "parent")

    def __init__(self, *lines: str, parent: ErrorContext | None = None) -> None:
        self.lines: list[str] = list(lines)
        self.parent = parent

    def all_lines(self) -> list[str]:
        """This context's lines, then its parent's (most specific first)."""
        out = list(self.lines)
        if self.parent is not None:
            out.extend(line for line in self.parent.all_lines() if line not in out)
        return out

    def add_context(self, error: UserError) -> UserError:
        """Append the context lines to ``error`` (once each) and return it."""
        for line in self.all_lines():
            if line not in error.context:
                error.add_context(line)
        return error

    def __repr__(self) -> str:
        return f"ErrorContext({self.all_lines()!r})"


def _with_context(error: UserError, context: ErrorContext | None) -> UserError:
    return context.add_context(error) if context is not None else error


def projection_conflict(
    source: str,
    projection: RequestedColumn,
    column: ColumnMetadata,
    context: ErrorContext | None = None,
) -> UserError:
    """A column offered by ``source`` (``Provided``, ``Reader``...) cannot meet its projection."""
    error = UserError(
        ErrorKind.VALIDATION,
        f"{source} column type not compatible with projection specification",
        [f"Projected column: {projection.project_string()}", f"{source} column: {_plain(column)}"],
    )
    return _with_context(error, context)


def type_conflict(
    source: str,
    scan_column: ColumnMetadata,
    column: ColumnMetadata,
    context: ErrorContext | None = None,
) -> UserError:
    """A column offered by ``source`` differs in type or mode from the scan's settled column."""
    error = UserError(
        ErrorKind.VALIDATION,
        f"Scan and {source} column type conflict",
        [f"Scan column: {_plain(scan_column)}", f"{source} column: {_plain(column)}"],
    )
    return _with_context(error, context)


def conversion_conflict(
    column: ColumnMetadata, file_type: object, reason: str, context: ErrorContext | None = None
) -> UserError:
    """A file's value of ``column`` cannot be converted to the type the scan settled on."""
    error = UserError(
        ErrorKind.DATA_READ,
        f"Scan and file column type conflict for column [{column.name}]: the file has "
        f"{file_type}, the table schema says {column.type_string()}",
        [f"Column: {column.name}", f"Reason: {reason}"],
    )
    return _with_context(error, context)


def illegal_conversion(
    column: ColumnMetadata, value: str, context: ErrorContext | None = None
) -> UserError:
    """A text value of a column a provided schema types does not read as that type."""
    error = UserError(
        ErrorKind.DATA_READ,
        f"Illegal conversion: Column `{column.name}` of type {column.type.value}, "
        f"Illegal value `{value}`",
        [f"Column: {column.name}"],
    )
    return _with_context(error, context)


def null_in_not_null(column: ColumnMetadata, context: ErrorContext | None = None) -> UserError:
    """A file has nulls in a column the scan's schema declares NOT NULL."""
    error = UserError(
        ErrorKind.DATA_READ,
        f"Column [{column.name}] is declared NOT NULL but the file has null values",
        [f"Column: {column.name}"],
    )
    return _with_context(error, context)


def _plain(column: ColumnMetadata) -> str:
    """The column as written in conflict messages: name and type, no properties."""
    if column.properties:
        column = ColumnMetadata(
            column.name,
            column.type,
            column.mode,
            column.children,
            column.precision,
            column.scale,
        )
    return str(column)


class SchemaMismatchError(UserError, ValueError):
    """A defined schema that does not match the project list (a planning bug, not user data).

    Also a ``ValueError`` because it is an invalid argument to the tracker, like Drill's
    ``IllegalArgumentException``.
    """

    def __init__(self, message: str, context: Iterable[str] | None = None) -> None:
        super().__init__(ErrorKind.SYSTEM, message, context)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (SchemaMismatchError, (self.message, list(self.context)))


class ScanStateError(UserError, RuntimeError):
    """A reader broke the scan's protocol (e.g. wrote a column the scan never projected).

    Also a ``RuntimeError``, like Drill's ``IllegalStateException``.
    """

    def __init__(self, message: str, context: Iterable[str] | None = None) -> None:
        super().__init__(ErrorKind.SYSTEM, message, context)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (ScanStateError, (self.message, list(self.context)))
