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

import errno
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import unquote

from auger.errors import ErrorKind, UserError, closest_name, sql_with_caret

__all__ = [
    "OUT_OF_MEMORY",
    "SPARK_LOST",
    "encode_user_error",
    "out_of_memory",
    "spark_lost",
    "unwrap_spark_error",
    "worker_error",
    "write_errors",
    "write_failure",
]

_log = logging.getLogger(__name__)

#: The line that ends a UserError's text in a Python worker's error: what comes before it, back
#: to ``KIND ERROR: ``, is the error as the user reads it, and all the driver needs to restore it.
_END = "[auger]"
_KINDS = "|".join(k.value for k in ErrorKind)
_TEXT_RE = re.compile(rf"(?:^|[\s:\]])({_KINDS}) ERROR: ([^\n]*)((?:\n[^\n]*)*?)\n\[auger\]")
#: Spark hides a failing Python worker's traceback when this is set in the worker's environment.
_HIDE_TRACEBACK = "SPARK_HIDE_TRACEBACK"


def encode_user_error(exc: UserError) -> str:
    """The text of a UserError as a Python worker raises it: Drill's words first (``KIND ERROR:
    message``, then its context lines), closed by a short end line; no payload besides."""
    return f"{exc}\n{_END}"


class _WorkerError(RuntimeError):
    """A UserError as a Python worker raises it, for Spark to carry to the driver.

    Spark formats it with Python's ``traceback`` module: a class whose qualified name is the
    Drill kind (``VALIDATION ERROR``) makes that line read as Drill's error does, and the
    traceback of auger's own frames, noise for a user's error, is hidden for this one error
    (the worker's setting is put back as the text is formatted, so the user's own UDF errors
    keep their tracebacks).
    """

    def __init__(self, text: str, restore: bool) -> None:
        super().__init__(text)
        self._restore = restore

    def __str__(self) -> str:
        if self._restore:
            os.environ.pop(_HIDE_TRACEBACK, None)
            self._restore = False
        return str(self.args[0])


def worker_error(exc: UserError) -> RuntimeError:
    """The exception a Python worker (a data source's schema or read, a discovery task) raises
    for ``exc``: its text is :func:`encode_user_error`'s without the ``KIND ERROR: `` head,
    which the class name gives."""
    text = encode_user_error(exc).removeprefix(f"{exc.kind.value} ERROR: ")
    cls = type(f"{exc.kind.value} ERROR", (_WorkerError,), {"__module__": "builtins"})
    restore = _HIDE_TRACEBACK not in os.environ
    if restore:
        os.environ[_HIDE_TRACEBACK] = "1"
    return cls(text, restore)


def _decode(text: str) -> UserError | None:
    m = _TEXT_RE.search(text)
    if not m:
        return None
    body = m.group(3).split("\n")
    context = body[2:] if len(body) > 1 and body[1] == "" else body[1:]
    return UserError(m.group(1), m.group(2), context)


# Spark error condition → Drill error kind, for conditions without a Drill text of their own
# below. Checked in order; the first match wins.
_CONDITION_KINDS: tuple[tuple[str, ErrorKind], ...] = (
    ("PARSE_", ErrorKind.PARSE),
    ("UNRESOLVED_", ErrorKind.VALIDATION),
    ("TABLE_OR_VIEW_NOT_FOUND", ErrorKind.VALIDATION),
    ("AMBIGUOUS", ErrorKind.VALIDATION),
    ("DATATYPE_MISMATCH", ErrorKind.VALIDATION),
    ("WRONG_NUM_ARGS", ErrorKind.VALIDATION),
    ("MISSING_AGGREGATION", ErrorKind.VALIDATION),
    ("MISSING_GROUP_BY", ErrorKind.VALIDATION),
    ("GROUP_BY_", ErrorKind.VALIDATION),
    ("INVALID_", ErrorKind.VALIDATION),
    ("CAST_", ErrorKind.FUNCTION),
    ("ARITHMETIC_OVERFLOW", ErrorKind.FUNCTION),
    ("DIVIDE_BY_ZERO", ErrorKind.FUNCTION),
    ("CANNOT_PARSE_TIMESTAMP", ErrorKind.FUNCTION),
    ("TASK_CANCELLED", ErrorKind.EXECUTION),
    ("OPERATION_CANCELED", ErrorKind.EXECUTION),
)

# Spark's advice and positions, which name Spark's settings, its functions or the rewritten SQL.
_NOISE_RES = (
    re.compile(r"^\[[A-Z_.]+\]\s*"),  # the condition
    re.compile(r"\s*SQLSTATE: \w+\.?"),
    re.compile(r"[^.]*`?try_\w+`?[^.]*\.\s*"),  # "Use `try_cast` to tolerate ..."
    re.compile(r"[^.]*spark\.sql\.[\w.]+[^.]*\.\s*"),  # "set spark.sql.ansi.enabled ..."
    re.compile(r";?\s*line \d+,? pos \d+;?"),
    re.compile(r"\s*\(line \d+, pos \d+\)"),
)


def _clean(message: str) -> str:
    """First meaningful line of a Spark message, without its condition, SQLSTATE, advice about
    Spark's settings and functions, and positions in the SQL auger gave Spark."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    first = lines[0] if lines else message
    for noise in _NOISE_RES:
        first = noise.sub(" " if noise.pattern.startswith("[^.]") else "", first)
    return re.sub(r"\s+", " ", first).strip()


def _statement_query(statement: str | None) -> list[str]:
    return [f"SQL Query: {statement.strip()}"] if statement else []


# Spark's type names → Drill's.
_DRILL_TYPES = {
    "STRING": "VARCHAR",
    "INT": "INTEGER",
    "BINARY": "VARBINARY",
    "TIMESTAMP_NTZ": "TIMESTAMP",
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "BOOLEAN": "BOOLEAN",
    "BIGINT": "BIGINT",
    "SMALLINT": "SMALLINT",
    "TINYINT": "TINYINT",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "VOID": "NULL",
}


def _drill_type(spark_type: str) -> str:
    spark_type = spark_type.strip('"').upper()
    head = re.split(r"[<(]", spark_type, maxsplit=1)[0]
    if head == "ARRAY":
        return "ARRAY"
    if head == "STRUCT":
        return "MAP"
    if head == "MAP":
        return "DICT"
    if head == "DECIMAL":
        return spark_type
    return _DRILL_TYPES.get(head, head)


def _call_arguments(statement: str, name: str) -> list[str] | None:
    """The argument texts of the first call of function ``name`` in the user's statement."""
    m = re.search(rf"(?<![\w.`]){re.escape(name)}\s*\(", statement, re.IGNORECASE)
    if not m:
        return None
    args: list[str] = []
    depth, quote, current = 0, "", ""
    for ch in statement[m.end() :]:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                if current.strip() or args:
                    args.append(current.strip())
                return args
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
            continue
        current += ch
    return None


_CAST_RE = re.compile(r"^CAST\s*\(.*\s+AS\s+(\w+)", re.IGNORECASE | re.DOTALL)
# Drill's type families, as its "function signature" messages name an argument's type.
_FAMILIES = {
    "INT": "NUMERIC",
    "INTEGER": "NUMERIC",
    "BIGINT": "NUMERIC",
    "SMALLINT": "NUMERIC",
    "TINYINT": "NUMERIC",
    "FLOAT": "NUMERIC",
    "DOUBLE": "NUMERIC",
    "DECIMAL": "NUMERIC",
    "NUMERIC": "NUMERIC",
    "VARCHAR": "CHARACTER",
    "CHAR": "CHARACTER",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    "TIME": "TIME",
    "TIMESTAMP": "TIMESTAMP",
}


def _argument_family(arg: str) -> str:
    """Drill's type family of an argument as written: literals by their kind, a cast by its
    type, and anything else (a column of a schema-free table, a call) ``ANY``."""
    text = arg.strip()
    if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return "NUMERIC"
    if text.startswith("'"):
        return "CHARACTER"
    upper = text.upper()
    if upper in ("TRUE", "FALSE"):
        return "BOOLEAN"
    if upper == "NULL":
        return "NULL"
    m = re.match(r"^(DATE|TIMESTAMP|TIME)\s*'", upper)
    if m:
        return m.group(1)
    cast = _CAST_RE.match(text)
    if cast:
        return _FAMILIES.get(cast.group(1).upper(), "ANY")
    return "ANY"


_ROUTINE_RE = re.compile(r"routine `?([\w.`]+?)`? (?:on|cannot)", re.IGNORECASE)


def _unknown_function(text: str, statement: str | None) -> UserError | None:
    """Drill's ``No match found for function signature f(<NUMERIC>, <ANY>)``."""
    m = _ROUTINE_RE.search(text)
    if not m:
        return None
    name = m.group(1).replace("`", "").split(".")[-1]
    statement = statement or ""
    args = _call_arguments(statement, name) if statement else None
    if args is not None:
        found = re.search(rf"(?<![\w.`]){re.escape(name)}(?=\s*\()", statement, re.IGNORECASE)
        written = found.group(0) if found else name
        signature = f"{written}({', '.join(f'<{_argument_family(a)}>' for a in args)})"
    else:
        signature = f"{name.lower()}(...)"
    close = closest_name(name, _function_names())
    hint = f"; did you mean {close.upper()}?" if close else ""
    return UserError.validation(
        f"No match found for function signature {signature}{hint}", _statement_query(statement)
    )


_FUNCTION_NAMES: list[tuple[str, ...]] = []


def _function_names() -> tuple[str, ...]:
    """The SQL functions Spark knows (built-in ones, asked once per process), for a "did you
    mean" on an unknown one; none when no Spark session is active."""
    if _FUNCTION_NAMES:
        return _FUNCTION_NAMES[0]
    # deferred: loads pyspark (heavy)
    from pyspark.sql import SparkSession  # loaded already wherever Spark raised this error

    spark = SparkSession.getActiveSession()
    if spark is None:
        return ()
    try:
        rows = spark.sql("SHOW SYSTEM FUNCTIONS").collect()
    except Exception:  # a suggestion is never worth failing the error it adorns
        return ()
    _FUNCTION_NAMES.append(tuple(r[0] for r in rows if r[0].replace("_", "").isalnum()))
    return _FUNCTION_NAMES[0]


_COLUMN_RE = re.compile(r"with name (`[^`]+`(?:\.`[^`]+`)*) cannot be resolved")


def _unknown_column(text: str, statement: str | None) -> UserError | None:
    """Drill's ``Column 'c' not found in any table`` (``in table 't'`` when qualified)."""
    m = _COLUMN_RE.search(text)
    if not m:
        return None
    parts = re.findall(r"`([^`]+)`", m.group(1))
    if len(parts) >= 2:
        message = f"Column '{parts[-1]}' not found in table '{parts[-2]}'"
    else:
        message = f"Column '{parts[-1]}' not found in any table"
    return UserError.validation(message, _statement_query(statement))


_MISMATCH_FN_RE = re.compile(r'Cannot resolve "(\w+)\(')
_MISMATCH_PARAM_RE = re.compile(
    r'The (\w+) parameter requires the (.+?) type, however "(.*?)" has the type "([^"]+)"'
)
_MISMATCH_OPERANDS_RE = re.compile(
    r'Cannot resolve "\((.+?)\)" due to data type mismatch: the left and right operands of the '
    r'binary operator have incompatible types \("([^"]+)" and "([^"]+)"\)'
)


def _type_mismatch(text: str, statement: str | None) -> UserError | None:
    """Drill's ``Cannot apply 'f' to arguments of type ...`` for a wrong argument type."""
    operands = _MISMATCH_OPERANDS_RE.search(text)
    if operands:
        left, right = _drill_type(operands.group(2)), _drill_type(operands.group(3))
        op = re.search(r"\s([-+*/%]|\|\||=|<>|<=|>=|<|>|AND|OR)\s", operands.group(1))
        symbol = op.group(1) if op else "operator"
        return UserError.validation(
            f"Cannot apply '{symbol}' to arguments of type '<{left}> {symbol} <{right}>'",
            _statement_query(statement),
        )
    fn = _MISMATCH_FN_RE.search(text)
    param = _MISMATCH_PARAM_RE.search(text)
    if not fn or not param:
        # Spark names the expression as it rewrote it: keep only what is wrong with it
        reason = _clean(text).split("due to data type mismatch:", 1)[-1].strip()
        return UserError.validation(f"Type mismatch: {reason}", _statement_query(statement))
    name = fn.group(1).lower()
    if statement and not re.search(rf"(?<![\w.`]){name}\s*\(", statement, re.IGNORECASE):
        # a function of auger's translation (``a + DATE '...'`` runs as ``date_add``)
        name = "an operator"
    ordinal, wanted, actual = param.group(1), param.group(2), _drill_type(param.group(4))
    wanted_types = " or ".join(_drill_type(w) for w in re.findall(r'"([^"]+)"', wanted)) or wanted
    return UserError.validation(
        f"Cannot apply {name if name == 'an operator' else repr(name)} to arguments of type: "
        f"its {ordinal} argument is {actual}, "
        f"where {wanted_types} is expected",
        _statement_query(statement),
    )


_NUM_ARGS_RE = re.compile(
    r"The `?(\w+)`? requires (.+?) parameters? but the actual number is (\d+)"
)


def _wrong_arguments(text: str, statement: str | None) -> UserError | None:
    """Drill's ``Invalid number of arguments to function 'f'. Was expecting n arguments``."""
    m = _NUM_ARGS_RE.search(text)
    if not m:
        return None
    return UserError.validation(
        f"Invalid number of arguments to function '{m.group(1)}'. "
        f"Was expecting {m.group(2)} arguments",
        _statement_query(statement),
    )


_NEAR_RE = re.compile(r"Syntax error at or near (end of input|'((?:[^']|'')*)')")


def _syntax_error(text: str, statement: str | None) -> UserError | None:
    """A statement sqlglot let through and Spark's parser refused, as Drill's PARSE error."""
    m = _NEAR_RE.search(text)
    if not m:
        return None
    image = "<EOF>" if m.group(1) == "end of input" else m.group(2)
    written = (statement or "").strip().rstrip(";").rstrip()
    if written and image == "<EOF>":
        line, column = _end_position(written)
        return UserError.parse(
            f'Encountered "<EOF>" at line {line}, column {column}.',
            [sql_with_caret(written, line, column)],
        )
    return UserError.parse(f'Encountered "{image}"', _statement_query(statement))


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


_GROUPED_RE = re.compile(r'non-aggregating expression "([^"]+)"')


def _not_grouped(text: str, statement: str | None) -> UserError:
    m = _GROUPED_RE.search(text)
    what = f"Expression '{m.group(1)}'" if m else "An expression of the select list"
    return UserError.validation(
        f"{what} is not being grouped",
        [
            *_statement_query(statement),
            "Fix: add it to GROUP BY, or aggregate it (MIN, MAX, ANY_VALUE)",
        ],
    )


_CAST_INPUT_RE = re.compile(r"The value (.+?) of the type \"(\w+)\" cannot be cast to \"([^\"]+)\"")


def _failed_cast(text: str) -> UserError | None:
    m = _CAST_INPUT_RE.search(text)
    if not m:
        return None
    value, target = m.group(1), _drill_type(m.group(3))
    return UserError(
        ErrorKind.FUNCTION,
        f"Failure while attempting to cast value {value} to {target}",
        ["Fix: correct the value, or filter out rows that do not hold a number"],
    )


def _drill_error(condition: str, text: str, statement: str | None) -> UserError | None:
    """Drill's own words for the Spark conditions a user meets most."""
    if condition.startswith("UNRESOLVED_ROUTINE"):
        return _unknown_function(text, statement)
    if condition.startswith("UNRESOLVED_COLUMN"):
        return _unknown_column(text, statement)
    if condition.startswith("DATATYPE_MISMATCH"):
        return _type_mismatch(text, statement)
    if condition.startswith("WRONG_NUM_ARGS"):
        return _wrong_arguments(text, statement)
    if condition.startswith("PARSE_SYNTAX_ERROR"):
        return _syntax_error(text, statement)
    if condition.startswith(("MISSING_AGGREGATION", "MISSING_GROUP_BY")):
        return _not_grouped(text, statement)
    if condition.startswith("CAST_INVALID_INPUT"):
        return _failed_cast(text)
    if condition.startswith("AMBIGUOUS_REFERENCE"):
        m = re.search(r"Reference `?([^`\s]+)`? is ambiguous", text)
        if m:
            return UserError.validation(
                f"Column '{m.group(1)}' is ambiguous", _statement_query(statement)
            )
    if condition.startswith("ORDER_BY_POS_OUT_OF_RANGE"):
        return UserError.validation("Ordinal out of range", _statement_query(statement))
    if condition.startswith("DIVIDE_BY_ZERO"):
        # Drill's generated code divides as Java does, and reports Java's exception
        return UserError.system("ArithmeticException: / by zero")
    if condition.startswith(("ARITHMETIC_OVERFLOW", "CAST_OVERFLOW")):
        return UserError(
            ErrorKind.FUNCTION,
            "Arithmetic overflow: the result does not fit its type",
            ["Fix: cast an operand to a wider type (BIGINT, DECIMAL or DOUBLE)"],
        )
    return None


_FAILED_READ_RE = re.compile(r"\[FAILED_READ_FILE[A-Z_.]*\][^\n]*? reading file (\S+)")
_CAUSE_RE = re.compile(r"^Caused by: [\w.$]+: (.+)$", re.MULTILINE)


def _failed_read(text: str) -> UserError | None:
    """A file Spark's own reader could not read (the native Parquet path): DATA_READ, naming
    the file as a path (Spark names it as a URI) and the innermost cause."""
    m = _FAILED_READ_RE.search(text)
    if not m:
        return None

    uri = m.group(1).rstrip(".")
    path = unquote(re.sub(r"^file:(//)?", "", uri))
    causes = [c.strip() for c in _CAUSE_RE.findall(text)]
    reason = causes[-1] if causes else _clean(text)
    return UserError.data_read(
        "Error reading file",
        [f"File: {path}", f"Reason: {reason}"],
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
            )
    if condition.startswith("DECIMAL_SCALE_EXCEEDS_PRECISION"):
        m = _SCALE_RE.search(text)
        if m:
            scale, precision = m.groups()
            return UserError.validation(
                "Expected scale less than or equal to precision, "
                f"but was precision {precision} and scale {scale}",
            )
    return None


def _too_deep(condition: str, text: str) -> UserError | None:
    """Spark's parser and optimizer recurse along the tree: a statement deeper than they go
    (a sum of thousands of terms, a long chain of unary minus) is the query's shape, a PARSE
    error, whether Spark caught its stack overflow or not."""
    if not (
        condition.startswith("FAILED_TO_PARSE_TOO_COMPLEX")
        or "java.lang.StackOverflowError" in text[:2000]
    ):
        return None
    return UserError.parse(
        "The query nests too deeply for Spark to plan",
        ["Fix: flatten the expression, or split the query with a view or WITH clause"],
    )


#: What a query in flight hears when Spark's JVM exits under it.
SPARK_LOST = (
    "Spark stopped while the query ran (its JVM exited); the server starts a new one for the "
    "next query"
)
#: The exceptions of a call whose JVM went away: py4j's, or the socket's own.
_LOST_NAMES = frozenset(
    {
        "Py4JNetworkError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "BrokenPipeError",
        "ConnectionAbortedError",
        "EOFError",
    }
)


def spark_lost(exc: BaseException) -> UserError | None:
    """The error of a query whose Spark died under it, or None when Spark still runs.

    Only a broken connection is asked about (a plain failure never waits); the JVM is then
    given a moment to finish exiting, since its socket closes first.
    """
    if not any(type(e).__name__ in _LOST_NAMES for e in _chain(exc)):
        text = str(exc)[:2000]
        if "Connection refused" not in text and "Answer from Java side is empty" not in text:
            return None
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from auger.spark.handles import jvm_exited

    if not jvm_exited(wait=2.0):
        return None
    return UserError.system(SPARK_LOST, ["Fix: run the query again"])


#: Drill's words for a query that ran out of memory (its ``OutOfMemoryException`` handling)
OUT_OF_MEMORY = "One or more nodes ran out of memory while executing the query."
#: What the JVM or Python says when memory ran out somewhere along a query's way: the heap,
#: Spark's result-size limit (``spark.driver.maxResultSize``), a task's memory, Python's own.
_OOM_RE = re.compile(
    r"java\.lang\.OutOfMemoryError|SparkOutOfMemoryError|Java heap space|GC overhead limit"
    r"|Requested array size exceeds VM limit|Total size of serialized results of"
    r"|MemoryError|Unable to acquire \d+ bytes of memory"
)


#: Spark's words when a result collected to the driver passes ``spark.driver.maxResultSize``
_RESULT_SIZE = "Total size of serialized results of"


def out_of_memory(exc: BaseException) -> UserError | None:
    """The RESOURCE error of a query that ran out of memory (on the driver, in a task, or past
    Spark's result-size limit), or None when ``exc`` is something else.

    Never SYSTEM: memory is a resource the query asked too much of, and the server goes on.
    """
    if isinstance(exc, UserError):
        return None
    texts = [str(e)[:20000] for e in _chain(exc)]
    if not any(isinstance(e, MemoryError) for e in _chain(exc)) and not any(
        _OOM_RE.search(t) for t in texts
    ):
        return None
    if any(_RESULT_SIZE in t for t in texts):
        # Spark's guard on one collected piece, not the heap: raising the heap does not help
        more = (
            "raise Spark's bound on a result collected at once ([spark] conf "
            "spark.driver.maxResultSize, with spark.driver.memory above it)"
        )
    else:
        more = "give the server more memory ([spark] conf spark.driver.memory)"
    return UserError.resource(
        OUT_OF_MEMORY,
        [f"Fix: ask for fewer or smaller rows (a LIMIT, a WHERE, fewer columns), or {more}"],
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


def unwrap_spark_error(exc: BaseException, statement: str | None = None) -> UserError:
    """Turn any exception from a Spark call into the ``UserError`` the user should see.

    Args:
        exc: what the Spark call raised.
        statement: the statement the user sent, when known: Spark's messages quote the SQL
            auger rewrote, so the words and positions a user can act on are found in this
            text instead (and it is quoted as ``SQL Query``).
    """
    if isinstance(exc, UserError):
        return exc
    lost = spark_lost(exc)
    if lost is not None:
        return lost
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
    if condition:
        _log.debug("Spark condition %s: %s", condition, text[:2000])
    too_deep = _too_deep(condition, text)
    if too_deep is not None:
        return too_deep
    memory = out_of_memory(exc)
    if memory is not None:
        return memory
    drill = _drill_error(condition, text, statement)
    if drill is not None:
        return drill
    decimal = _decimal_error(condition, text)
    if decimal is not None:
        return decimal
    for prefix, kind in _CONDITION_KINDS:
        if condition.startswith(prefix):
            return UserError(
                kind, _clean(text) or "The statement failed", _statement_query(statement)
            )
    if type(exc).__name__ == "AnalysisException":
        # Spark's analyzer refused the statement: a name or type the user got wrong
        return UserError.validation(
            _clean(text) or "The statement is not valid", _statement_query(statement)
        )
    write = _unattributed_write_failure(exc)
    if write is not None:
        return write
    if "Py4JJavaError" in type(exc).__name__ or "Py4J" in text[:200]:
        text = text.split("\n", 1)[-1]
    if _AWAITED in text[:500] and _CAUSED_BY in text:
        # a failure Spark passed between threads (a collect's): its own words are the cause's
        text = text.split(_CAUSED_BY, 1)[1]
    # a Java exception's message without its package path (``java.io.IOException: x`` → ``x``)
    message = _JAVA_PREFIX_RE.sub("", _clean(text))
    return UserError.system(message or "The statement failed")


#: Spark's wrapper of a failure passed between threads, and where its cause is told
_AWAITED = "Exception thrown in awaitResult"
_CAUSED_BY = "Caused by: "
_JAVA_PREFIX_RE = re.compile(r"^:?\s*(?:[a-z][\w$]*\.)+[\w$]*(?:Exception|Error):\s*")
