"""The one exception hierarchy of auger.

Everything a user can cause is a :class:`UserError` carrying one of Drill's error kinds, a one-line
message and context lines (file, line, column, table...). Its ``str()`` is Drill's wire form::

    DATA_READ ERROR: Unbalanced quote

    File: /data/a.csv
    Line: 12

Errors must be picklable: they are raised on Spark executors and re-raised on the driver.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "AugerError",
    "ErrorKind",
    "UserError",
    "closest_name",
    "context_line",
    "sql_with_caret",
]


class ErrorKind(str, enum.Enum):
    """Drill's user-facing error kinds (``UserException`` error types)."""

    PARSE = "PARSE"
    VALIDATION = "VALIDATION"
    DATA_READ = "DATA_READ"
    DATA_WRITE = "DATA_WRITE"
    PERMISSION = "PERMISSION"
    UNSUPPORTED_OPERATION = "UNSUPPORTED_OPERATION"
    RESOURCE = "RESOURCE"
    FUNCTION = "FUNCTION"
    PLAN = "PLAN"
    CONNECTION = "CONNECTION"
    EXECUTION = "EXECUTION"
    INTERNAL = "INTERNAL"
    SYSTEM = "SYSTEM"


class AugerError(Exception):
    """Root of every exception auger raises on purpose."""


def context_line(name: str, value: Any) -> str:
    """Format a ``name: value`` context line the way Drill does (a trailing ``:`` is dropped)."""
    return f"{name.rstrip(':')}: {value}"


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The one rule for "did you mean": the known name nearest to a misspelt ``name``.

    Names compare without case (SQL names are case-insensitive) and must be close enough that
    the suggestion helps (``regoin`` finds ``region``, ``UPPR`` finds ``UPPER``); the known
    name comes back spelt as it is known. None when nothing is close, or ``name`` itself is
    known.
    """
    spelled: dict[str, str] = {}
    for k in known:
        spelled.setdefault(k.lower(), k)
    lowered = name.lower()
    if lowered in spelled:
        return None
    close = difflib.get_close_matches(lowered, list(spelled), n=1, cutoff=0.75)
    return spelled[close[0]] if close else None


def sql_with_caret(text: str, line: int | None = None, column: int | None = None) -> str:
    """Drill's ``SQL Query`` context line: the statement, and under the line of the error a
    caret at its column (on the first line shifted past the ``SQL Query: `` label)."""
    label = "SQL Query: "
    if line is None or column is None:
        return label + text
    lines = text.split("\n")
    out: list[str] = []
    for n, piece in enumerate(lines, start=1):
        out.append(piece)
        if n == line:
            shift = column - 1 + (len(label) if n == 1 else 0)
            out.append(" " * shift + "^")
    return label + "\n".join(out)


class UserError(AugerError):
    """An error the user caused and can fix: bad SQL, a missing table, a malformed file.

    Args:
        kind: Drill's error kind (``ErrorKind`` or its name).
        message: one line naming the thing and the offending value.
        context: extra lines, either plain strings or ``"Name: value"`` pairs.
    """

    def __init__(
        self,
        kind: ErrorKind | str,
        message: str,
        context: Iterable[str] | None = None,
    ) -> None:
        self.kind = ErrorKind(kind)
        self.message = message
        self.context: list[str] = list(context or [])
        super().__init__(self.__str__())

    # ``Exception.__reduce__`` would call ``__init__(str(self))``; keep the data instead.
    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_user_error, (self.kind.value, self.message, list(self.context)))

    def add_context(self, name: str, value: Any = None) -> UserError:
        """Append a context line (``name`` alone, or ``name: value``) and return ``self``."""
        self.context.append(name if value is None else context_line(name, value))
        self.args = (self.__str__(),)
        return self

    @property
    def summary(self) -> str:
        """``KIND ERROR: message`` without the context lines."""
        return f"{self.kind.value} ERROR: {self.message}"

    def __str__(self) -> str:
        if not self.context:
            return self.summary
        return self.summary + "\n\n" + "\n".join(self.context)

    @classmethod
    def parse(cls, message: str, context: Sequence[str] = ()) -> UserError:
        return cls(ErrorKind.PARSE, message, context)

    @classmethod
    def validation(cls, message: str, context: Sequence[str] = ()) -> UserError:
        return cls(ErrorKind.VALIDATION, message, context)

    @classmethod
    def data_read(cls, message: str, context: Sequence[str] = ()) -> UserError:
        return cls(ErrorKind.DATA_READ, message, context)

    @classmethod
    def unsupported(cls, message: str, context: Sequence[str] = ()) -> UserError:
        return cls(ErrorKind.UNSUPPORTED_OPERATION, message, context)

    @classmethod
    def resource(cls, message: str, context: Sequence[str] = ()) -> UserError:
        return cls(ErrorKind.RESOURCE, message, context)

    @classmethod
    def permission(cls, message: str, context: Sequence[str] = ()) -> UserError:
        return cls(ErrorKind.PERMISSION, message, context)

    @classmethod
    def system(cls, message: str, context: Sequence[str] = ()) -> UserError:
        return cls(ErrorKind.SYSTEM, message, context)


def _rebuild_user_error(kind: str, message: str, context: list[str]) -> UserError:
    return UserError(kind, message, context)
