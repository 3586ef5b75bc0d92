"""The one place where Spark's exceptions become auger's (STYLE #7).

A ``UserError`` raised inside a Python worker cannot cross the JVM as itself: it is encoded into
the message of the exception the worker raises and decoded here on the driver, so the user sees
the original kind, message and context (file, line, column). Spark's own errors (analysis,
parse, ANSI cast failures) are mapped onto Drill's error kinds.
"""

from __future__ import annotations

import base64
import json
import re

from auger.errors import ErrorKind, UserError

__all__ = ["encode_user_error", "unwrap_spark_error"]

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
    if "Py4JJavaError" in type(exc).__name__ or "Py4J" in text[:200]:
        return UserError.system(_clean(text.split("\n", 1)[-1]) or "Spark failed")
    return UserError.system(_clean(text) or type(exc).__name__)
