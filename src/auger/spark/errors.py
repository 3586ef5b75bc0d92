"""The one place where Spark's exceptions become auger's.

A ``UserError`` raised inside a Python worker cannot cross the JVM as itself: it is encoded into
the message of the exception the worker raises and decoded here on the driver, so the user sees
the original kind, message and context (file, line, column). Spark's own errors (analysis,
parse, ANSI cast failures) are mapped onto Drill's error kinds.

A write that fails in the file system (read-only, full, a loop of symbolic links) is the user's
to fix, never a SYSTEM error: :func:`write_failure` finds the cause in the exception chain (a
Python ``OSError``'s errno, or the C library's words in a Java ``IOException`` of a Spark task)
and words it as a DATA_WRITE error, or RESOURCE when space runs out.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from auger.errors import ErrorKind, UserError

__all__ = [
    "encode_user_error",
    "unwrap_spark_error",
    "write_errors",
    "write_failure",
]

_MARK = "AUGER-USER-ERROR["
_MARK_RE = re.compile(r"AUGER-USER-ERROR\[([A-Za-z0-9+/=]+)\]")


def encode_user_error(exc: UserError) -> str:
    payload = json.dumps({"k": exc.kind.value, "m": exc.message, "c": exc.context})
    return f"{_MARK}{base64.b64encode(payload.encode()).decode()}] {exc.summary}"


def _decode(text: str) -> UserError | None:
    m = _MARK_RE.search(text)
    if not m:
        return None
    data = json.loads(base64.b64decode(m.group(1)))
    return UserError(data["k"], data["m"], data["c"])


# Spark error condition → Drill error kind. Checked in order; the first match wins.
_CONDITION_KINDS: tuple[tuple[str, ErrorKind], ...] = (
    ("PARSE_SYNTAX_ERROR", ErrorKind.PARSE),
    ("PARSE_", ErrorKind.PARSE),
    ("UNRESOLVED_COLUMN", ErrorKind.VALIDATION),
    ("UNRESOLVED_ROUTINE", ErrorKind.VALIDATION),
    ("TABLE_OR_VIEW_NOT_FOUND", ErrorKind.VALIDATION),
    ("AMBIGUOUS", ErrorKind.VALIDATION),
    ("DATATYPE_MISMATCH", ErrorKind.VALIDATION),
    ("WRONG_NUM_ARGS", ErrorKind.VALIDATION),
    ("MISSING_AGGREGATION", ErrorKind.VALIDATION),
    ("MISSING_GROUP_BY", ErrorKind.VALIDATION),
    ("CAST_INVALID_INPUT", ErrorKind.FUNCTION),
    ("CAST_OVERFLOW", ErrorKind.FUNCTION),
    ("ARITHMETIC_OVERFLOW", ErrorKind.FUNCTION),
    ("DIVIDE_BY_ZERO", ErrorKind.FUNCTION),
    ("INVALID_ARRAY_INDEX", ErrorKind.FUNCTION),
    ("CANNOT_PARSE_TIMESTAMP", ErrorKind.FUNCTION),
    ("TASK_CANCELLED", ErrorKind.EXECUTION),
    ("OPERATION_CANCELED", ErrorKind.EXECUTION),
)


def _clean(message: str) -> str:
    """First meaningful line of a Spark message, without the SQLSTATE and query-context noise."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    first = lines[0] if lines else message
    first = re.sub(r"\s*SQLSTATE: \w+", "", first)
    return first


_FAILED_READ_RE = re.compile(r"\[FAILED_READ_FILE[A-Z_.]*\][^\n]*? reading file (\S+)")
_CAUSE_RE = re.compile(r"^Caused by: [\w.$]+: (.+)$", re.MULTILINE)


def _failed_read(text: str) -> UserError | None:
    """A file Spark's own reader could not read (the native Parquet path): DATA_READ, naming
    the file as a path (Spark names it as a URI) and the innermost cause."""
    m = _FAILED_READ_RE.search(text)
    if not m:
        return None
    from urllib.parse import unquote

    uri = m.group(1).rstrip(".")
    path = unquote(re.sub(r"^file:(//)?", "", uri))
    causes = [c.strip() for c in _CAUSE_RE.findall(text)]
    reason = causes[-1] if causes else _clean(text)
    return UserError.data_read(
        "Error reading file",
        [f"File: {path}", f"Reason: {reason}", "Spark condition: FAILED_READ_FILE"],
    )


_OUT_OF_RANGE_RE = re.compile(r"(\S+) cannot be represented as Decimal\((\d+), ?(\d+)\)")
_SCALE_RE = re.compile(r"Decimal scale \((\d+)\) cannot be greater than precision \((\d+)\)")


def _decimal_error(condition: str, text: str) -> UserError | None:
    """Drill's VALIDATION errors for a DECIMAL cast, instead of Spark's texts (whose advice to
    turn off ``spark.sql.ansi.enabled`` means nothing to a Drill user)."""
    if condition.startswith("NUMERIC_VALUE_OUT_OF_RANGE"):
        m = _OUT_OF_RANGE_RE.search(text)
        if m:
            value, precision, scale = m.groups()
            return UserError.validation(
                f"Value {value} overflows specified precision {precision} with scale {scale}",
                [f"Spark condition: {condition}"],
            )
    if condition.startswith("DECIMAL_SCALE_EXCEEDS_PRECISION"):
        m = _SCALE_RE.search(text)
        if m:
            scale, precision = m.groups()
            return UserError.validation(
                "Expected scale less than or equal to precision, "
                f"but was precision {precision} and scale {scale}",
                [f"Spark condition: {condition}"],
            )
    return None


def _too_deep(condition: str, text: str) -> UserError | None:
    """Spark's parser and optimizer recurse along the tree: a statement deeper than they go
    (a sum of thousands of terms, a long chain of unary minus) is the query's shape, a PARSE
    error, whether Spark caught its stack overflow or not."""
    if condition.startswith("FAILED_TO_PARSE_TOO_COMPLEX"):
        cause = f"Spark condition: {condition}"
    elif "java.lang.StackOverflowError" in text[:2000]:
        cause = "Spark error: java.lang.StackOverflowError"
    else:
        return None
    return UserError.parse(
        "The query nests too deeply for Spark to plan",
        [cause, "Fix: flatten the expression, or split the query with a view or WITH clause"],
    )


@dataclass(frozen=True)
class _WriteCause:
    """A file-system reason a write fails: Drill's kind for it and the words users read."""

    code: int
    kind: ErrorKind
    words: str
    fix: str

    @property
    def strerror(self) -> str:
        """The C library's text, which a Java ``IOException`` carries as its message."""
        return os.strerror(self.code)


_FREE_SPACE = "Fix: free space on that file system or point the workspace elsewhere"
_WRITABLE = "Fix: make that location writable or point the workspace elsewhere"

# errno → what a failed write means to the user: a table, not an if chain.
_WRITE_CAUSES: tuple[_WriteCause, ...] = (
    _WriteCause(errno.EROFS, ErrorKind.DATA_WRITE, "the file system is read-only", _WRITABLE),
    _WriteCause(errno.ENOSPC, ErrorKind.RESOURCE, "no space left on device", _FREE_SPACE),
    _WriteCause(errno.EDQUOT, ErrorKind.RESOURCE, "the disk quota is exceeded", _FREE_SPACE),
    _WriteCause(
        errno.ELOOP,
        ErrorKind.DATA_WRITE,
        "the path runs into a loop of symbolic links",
        "Fix: remove the looping link or write under another name",
    ),
    _WriteCause(
        errno.ENOTDIR,
        ErrorKind.DATA_WRITE,
        "a part of the path is a file, not a directory",
        "Fix: write under another name",
    ),
    _WriteCause(
        errno.ENAMETOOLONG,
        ErrorKind.DATA_WRITE,
        "a name in the path is too long",
        "Fix: choose a shorter name",
    ),
    _WriteCause(errno.EACCES, ErrorKind.PERMISSION, "permission denied", _WRITABLE),
    _WriteCause(errno.EPERM, ErrorKind.PERMISSION, "the operation is not permitted", _WRITABLE),
    _WriteCause(errno.EIO, ErrorKind.DATA_WRITE, "the device reported an I/O error", _WRITABLE),
)
_BY_CODE = {c.code: c for c in _WRITE_CAUSES}

# The message of a Java exception in a Spark trace: ``Caused by: java.io.IOException: ...``.
_JAVA_MESSAGE_RE = re.compile(
    r"^(?:Caused by: |: )?(?:[\w$]+\.)+[\w$]*(?:Exception|Error): (.*)$", re.MULTILINE
)
# Hadoop's local file system reports a failed directory creation without the reason.
_MKDIRS_RE = re.compile(r"Mkdirs failed to create (\S+)")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _java_cause(text: str) -> _WriteCause | None:
    """The cause named by the innermost Java exception of a trace that names one.

    Only exception messages are read, never the rest of the trace: a failed task's message may
    quote a row of the user's data.
    """
    for message in reversed(_JAVA_MESSAGE_RE.findall(text)):
        message = message.strip()
        for cause in _WRITE_CAUSES:
            # Java words it ``No space left on device``, ``/a/b: Read-only file system`` or
            # ``/a/b (Read-only file system)``.
            if message.endswith((f": {cause.strerror}", f"({cause.strerror})")) or (
                message == cause.strerror
            ):
                return cause
    return None


def _probe(path: str) -> _WriteCause | None:
    """Why nothing can be created at ``path``: asked of the nearest existing ancestor.

    For the failures whose reason got lost on the way (Hadoop's ``Mkdirs failed``).
    """
    current = os.path.abspath(path)
    while True:
        try:
            os.stat(current)
            break
        except OSError as exc:
            if exc.errno in _BY_CODE and exc.errno != errno.ENOENT:
                return _BY_CODE[exc.errno]
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    try:
        fs = os.statvfs(current)
    except OSError:
        return None
    if fs.f_flag & os.ST_RDONLY:
        return _BY_CODE[errno.EROFS]
    free = fs.f_bfree if os.geteuid() == 0 else fs.f_bavail
    if free == 0:
        return _BY_CODE[errno.ENOSPC]
    if not os.access(current, os.W_OK | os.X_OK):
        return _BY_CODE[errno.EACCES]
    return None


def _write_cause(exc: BaseException, path: str) -> _WriteCause | None:
    for link in _chain(exc):
        if isinstance(link, OSError) and link.errno in _BY_CODE:
            return _BY_CODE[link.errno]
    text = "\n".join(str(link) for link in _chain(exc))
    cause = _java_cause(text)
    if cause is None and _MKDIRS_RE.search(text):
        cause = _probe(path)
    return cause


def write_failure(exc: BaseException, what: str, path: str) -> UserError | None:
    """The user's error for a write of ``what`` to ``path`` that the file system refused.

    Args:
        exc: what the write raised (an ``OSError``, a Py4J/Spark error, or one wrapping them).
        what: the thing written, as the message names it: ``table [t]``, ``view [v]``...
        path: where it was being written.

    Returns:
        DATA_WRITE (RESOURCE when space or quota ran out, PERMISSION when access was denied)
        naming ``what``, ``path`` and the cause in plain words; None when ``exc`` is not a
        file-system failure (a failure of the query itself, say).
    """
    if isinstance(exc, UserError) or _decode(str(exc)) is not None:
        return None
    cause = _write_cause(exc, path)
    if cause is None:
        return None
    return UserError(cause.kind, f"Cannot write {what} to [{path}]: {cause.words}", [cause.fix])


@contextmanager
def write_errors(what: str, path: str) -> Iterator[None]:
    """Raise :func:`write_failure`'s error for a write in the block that the file system refused.

    Anything else (the query's own errors, a table that appeared meanwhile) passes unchanged.
    """
    try:
        yield
    except Exception as exc:
        error = write_failure(exc, what, path)
        if error is None:
            raise
        raise error from exc


_WRITE_TARGET_RE = re.compile(r"(?:writing rows to|Mkdirs failed to create) (?:file:)?(/\S+)")


def _unattributed_write_failure(exc: BaseException) -> UserError | None:
    """A Spark write failure that reached the driver without a caller naming what was written."""
    m = _WRITE_TARGET_RE.search(str(exc))
    if not m:
        return None
    # The task's file lies in Spark's ``_temporary`` tree below the directory being written.
    path = m.group(1).split("/_temporary/", 1)[0].rstrip(".")
    return write_failure(exc, "data", path)


def unwrap_spark_error(exc: BaseException) -> UserError:
    """Turn any exception from a Spark call into the ``UserError`` the user should see."""
    if isinstance(exc, UserError):
        return exc
    text = str(exc)
    restored = _decode(text)
    if restored is not None:
        return restored
    failed_read = _failed_read(text)
    if failed_read is not None:
        return failed_read
    condition = ""
    get_condition = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    if callable(get_condition):
        try:
            condition = get_condition() or ""
        except Exception:
            condition = ""
    if not condition:
        m = re.search(r"\[([A-Z_]+(?:\.[A-Z_]+)?)\]", text)
        condition = m.group(1) if m else ""
    too_deep = _too_deep(condition, text)
    if too_deep is not None:
        return too_deep
    decimal = _decimal_error(condition, text)
    if decimal is not None:
        return decimal
    for prefix, kind in _CONDITION_KINDS:
        if condition.startswith(prefix):
            return UserError(kind, _clean(text), [f"Spark condition: {condition}"])
    write = _unattributed_write_failure(exc)
    if write is not None:
        return write
    if "Py4JJavaError" in type(exc).__name__ or "Py4J" in text[:200]:
        return UserError.system(_clean(text.split("\n", 1)[-1]) or "Spark failed")
    return UserError.system(_clean(text) or type(exc).__name__)
