"""DB-API pieces that need no engine: module globals, type objects, errors, parameter binding."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from auger import dbapi
from auger.errors import ErrorKind, UserError


def test_module_globals() -> None:
    assert dbapi.apilevel == "2.0"
    assert dbapi.paramstyle == "qmark"
    assert dbapi.threadsafety in (0, 1, 2, 3)


def test_exception_tree_follows_pep_249() -> None:
    assert issubclass(dbapi.Warning, Exception)
    assert issubclass(dbapi.Error, Exception)
    for cls in (dbapi.InterfaceError, dbapi.DatabaseError):
        assert issubclass(cls, dbapi.Error)
    for cls in (
        dbapi.DataError,
        dbapi.OperationalError,
        dbapi.IntegrityError,
        dbapi.InternalError,
        dbapi.ProgrammingError,
        dbapi.NotSupportedError,
    ):
        assert issubclass(cls, dbapi.DatabaseError)
    assert dbapi.Connection.ProgrammingError is dbapi.ProgrammingError


@pytest.mark.parametrize(
    ("kind", "cls"),
    [
        (ErrorKind.PARSE, dbapi.ProgrammingError),
        (ErrorKind.VALIDATION, dbapi.ProgrammingError),
        (ErrorKind.DATA_READ, dbapi.DataError),
        (ErrorKind.UNSUPPORTED_OPERATION, dbapi.NotSupportedError),
        (ErrorKind.RESOURCE, dbapi.OperationalError),
        (ErrorKind.SYSTEM, dbapi.InternalError),
    ],
)
def test_user_errors_map_to_pep_249_classes_keeping_kind_and_text(
    kind: ErrorKind, cls: type
) -> None:
    err = dbapi.to_dbapi_error(UserError(kind, "it broke", ["File: /x.csv"]))
    assert type(err) is cls
    assert err.kind is kind
    assert str(err) == f"{kind.value} ERROR: it broke\n\nFile: /x.csv"
    assert err.summary == f"{kind.value} ERROR: it broke"
    assert err.context == ["File: /x.csv"]


def test_type_objects_compare_equal_to_drill_type_names() -> None:
    assert dbapi.STRING == "CHARACTER VARYING"
    assert dbapi.NUMBER == "INTEGER" and dbapi.NUMBER == "DOUBLE" and dbapi.NUMBER == "DECIMAL"
    assert dbapi.DATETIME == "TIMESTAMP" and dbapi.DATETIME == "DATE"
    assert dbapi.BINARY == "BINARY VARYING"
    assert dbapi.STRING != "INTEGER"
    assert dbapi.NUMBER != "CHARACTER VARYING"


def test_constructors() -> None:
    assert dbapi.Date(2024, 1, 2) == dt.date(2024, 1, 2)
    assert dbapi.Timestamp(2024, 1, 2, 3, 4, 5) == dt.datetime(2024, 1, 2, 3, 4, 5)
    assert dbapi.Binary(b"ab") == b"ab"
    assert isinstance(dbapi.TimestampFromTicks(0), dt.datetime)


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (None, "NULL"),
        (True, "TRUE"),
        (False, "FALSE"),
        (42, "42"),
        (-7, "-7"),
        (0.5, "CAST(0.5 AS DOUBLE)"),
        (float("nan"), "CAST('NaN' AS DOUBLE)"),
        (float("-inf"), "CAST('-Infinity' AS DOUBLE)"),
        (decimal.Decimal("12.340"), "CAST('12.340' AS DECIMAL(5, 3))"),
        (decimal.Decimal("1E+3"), "CAST('1000' AS DECIMAL(4, 0))"),
        (dt.date(2024, 2, 29), "DATE '2024-02-29'"),
        (dt.datetime(2024, 2, 29, 1, 2, 3, 4000), "TIMESTAMP '2024-02-29 01:02:03.004000'"),
        (
            dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "TIMESTAMP '2024-01-01 10:00:00'",
        ),
        (dt.time(13, 14, 15), "TIME '13:14:15'"),
        (b"\x00\xff", "X'00ff'"),
        ("it's", "'it''s'"),
    ],
)
def test_literals(value: object, literal: str) -> None:
    assert dbapi.bind_parameters("SELECT ?", (value,)) == f"SELECT {literal}"


def test_placeholders_inside_strings_names_and_comments_are_not_bound() -> None:
    sql = "SELECT '?' AS q, `odd?name`, ? AS v -- what?\nFROM t /* ? */ WHERE a = ?"
    bound = dbapi.bind_parameters(sql, ("x", 3))
    assert bound == ("SELECT '?' AS q, `odd?name`, 'x' AS v -- what?\nFROM t /* ? */ WHERE a = 3")


@pytest.mark.parametrize(
    "hostile",
    [
        "x' OR '1'='1",
        "'; DROP TABLE t; --",
        "\\' OR 1=1 --",
        "a\\",
        "?",
        "`",
        "/*",
        "--",
        "\n'\n",
    ],
)
def test_hostile_strings_stay_one_literal(hostile: str) -> None:
    from sqlglot import exp, parse_one

    from auger.sql.frontend.dialect import AugerDrill

    bound = dbapi.bind_parameters("SELECT a FROM t WHERE b = ?", (hostile,))
    tree = parse_one(bound, read=AugerDrill)
    where = tree.args["where"].this
    assert isinstance(where, exp.EQ)
    assert isinstance(where.expression, exp.Literal) and where.expression.is_string
    assert where.expression.this == hostile


def test_wrong_parameter_counts_and_styles_are_errors() -> None:
    with pytest.raises(dbapi.ProgrammingError, match="2 parameter markers but 1 values"):
        dbapi.bind_parameters("SELECT ?, ?", (1,))
    with pytest.raises(dbapi.ProgrammingError, match="0 parameter markers but 1 values"):
        dbapi.bind_parameters("SELECT '?'", [1])
    with pytest.raises(dbapi.InterfaceError, match="qmark"):
        dbapi.bind_parameters("SELECT ?", {"a": 1})  # type: ignore[arg-type]
    with pytest.raises(dbapi.InterfaceError, match="qmark"):
        dbapi.bind_parameters("SELECT ?", "x")
    with pytest.raises(dbapi.InterfaceError, match="parameter of type type"):
        dbapi.bind_parameters("SELECT ?", (object,))
    assert dbapi.bind_parameters("SELECT '?'", None) == "SELECT '?'"


def test_the_package_exposes_the_pep_249_names() -> None:
    import auger

    assert auger.apilevel == "2.0" and auger.paramstyle == "qmark"
    assert auger.threadsafety == dbapi.threadsafety
    assert auger.Error is dbapi.Error and auger.DatabaseError is dbapi.DatabaseError
    assert auger.ProgrammingError is dbapi.ProgrammingError
    assert auger.Warning is dbapi.Warning
