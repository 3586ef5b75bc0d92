"""Errors raised by the result set loader.

Two sorts: misuse of the protocol by the code driving the loader (a programming error, Drill's
``IllegalStateException``), and values or columns the data cannot provide (a ``UserError``).
Both derive from ``UserError`` so that a reader's failure always reaches the user with a kind and
a message, and from the matching built-in exception so plain ``except`` clauses work too.
"""

from __future__ import annotations

from typing import Any

from auger.errors import ErrorKind, UserError

__all__ = [
    "ConversionError",
    "LoaderStateError",
    "UndefinedColumnError",
    "format_size",
    "oversize_error",
]


class _Rebuildable(UserError):
    """Keeps the subclass when pickled (``UserError.__reduce__`` would rebuild the base)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.kind.value, self.message, list(self.context)))


def _rebuild(cls: type[UserError], kind: str, message: str, context: list[str]) -> UserError:
    err = cls.__new__(cls)
    UserError.__init__(err, kind, message, context)
    return err


class LoaderStateError(_Rebuildable, RuntimeError):
    """A loader or writer method was called in a state that does not allow it."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorKind.SYSTEM, message)


class UndefinedColumnError(_Rebuildable, KeyError):
    """A column name that the tuple does not hold."""

    def __init__(self, name: str, known: list[str]) -> None:
        context = [f"Known columns: {', '.join(known) if known else '(none)'}"]
        super().__init__(ErrorKind.VALIDATION, f"Undefined column: {name}", context)

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return UserError.__str__(self)


class ConversionError(_Rebuildable, ValueError):
    """A value that cannot be stored in the column without losing information."""

    def __init__(self, message: str, context: list[str] | None = None) -> None:
        super().__init__(ErrorKind.DATA_READ, message, context)


def format_size(nbytes: int) -> str:
    """Render a byte limit the way Drill's message does: ``16 MB`` for 16 MiB."""
    mib = 1024 * 1024
    if nbytes % mib == 0:
        return f"{nbytes // mib} MB"
    if nbytes % 1024 == 0:
        return f"{nbytes // 1024} KB"
    return f"{nbytes} bytes"


def oversize_error(limit: int, column: str) -> UserError:
    """The RESOURCE error for a row that does not fit even into an empty batch."""
    size = format_size(limit)
    return UserError.resource(
        "One or more nodes ran out of memory while executing the query.",
        [
            f"A single column value is larger than the maximum allowed size of {size}",
            f"Column: {column}",
            f"Limit: {limit} bytes",
        ],
    )
