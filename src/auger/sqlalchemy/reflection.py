"""What the SQLAlchemy inspector asks auger, and Drill's type names as SQLAlchemy types.

Schemas, tables, views and stored columns come from ``INFORMATION_SCHEMA``, as any Drill client
reads them. A file table has no stored columns unless it has a provided schema, so its columns
are those of its plan: ``SELECT * FROM t LIMIT 0`` is planned (schemas discovered from footers,
headers or a sample) without reading the table, and its result description names each column's
type. Every query here takes its names as parameters, never spliced into the SQL text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import exc, util
from sqlalchemy import types as sqltypes
from sqlalchemy.engine.interfaces import ReflectedColumn

__all__ = [
    "COLUMNS_SQL",
    "SCHEMAS_SQL",
    "TABLES_SQL",
    "VIEWS_SQL",
    "VIEW_DEFINITION_SQL",
    "column_info",
    "columns_from_description",
    "no_such_table",
    "sa_type",
]

SCHEMAS_SQL = "SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA ORDER BY SCHEMA_NAME"
#: tables of a schema: files and directories a format reads, and system tables; not views
TABLES_SQL = (
    "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.`TABLES` "
    "WHERE TABLE_SCHEMA = ? AND TABLE_TYPE <> 'VIEW' ORDER BY TABLE_NAME"
)
VIEWS_SQL = (
    "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.VIEWS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME"
)
VIEW_DEFINITION_SQL = (
    "SELECT VIEW_DEFINITION FROM INFORMATION_SCHEMA.VIEWS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"
)
COLUMNS_SQL = (
    "SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, "
    "NUMERIC_SCALE FROM INFORMATION_SCHEMA.COLUMNS "
    "WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION"
)


def _string(length: int | None, precision: int | None, scale: int | None) -> Any:
    return sqltypes.String(length)


def _decimal(length: int | None, precision: int | None, scale: int | None) -> Any:
    return sqltypes.DECIMAL(precision, scale)


def _plain(cls: type[sqltypes.TypeEngine[Any]]) -> Callable[..., Any]:
    return lambda length, precision, scale: cls()


#: Drill's SQL type names (as INFORMATION_SCHEMA, DESCRIBE and result descriptions spell them,
#: and the REST API's short names) → a SQLAlchemy type built from length, precision and scale.
#: Nested values (arrays, maps, structs) and ``ANY`` have no SQLAlchemy type: NullType, so they
#: pass through as the driver returns them.
_TYPES: dict[str, Callable[[int | None, int | None, int | None], Any]] = {
    "CHARACTER VARYING": _string,
    "VARCHAR": _string,
    "CHARACTER": _string,
    "CHAR": _string,
    "BINARY VARYING": _plain(sqltypes.VARBINARY),
    "VARBINARY": _plain(sqltypes.VARBINARY),
    "BINARY": _plain(sqltypes.BINARY),
    "BOOLEAN": _plain(sqltypes.BOOLEAN),
    "BIT": _plain(sqltypes.BOOLEAN),
    "TINYINT": _plain(sqltypes.SMALLINT),
    "SMALLINT": _plain(sqltypes.SMALLINT),
    "INTEGER": _plain(sqltypes.INTEGER),
    "INT": _plain(sqltypes.INTEGER),
    "BIGINT": _plain(sqltypes.BIGINT),
    "FLOAT": _plain(sqltypes.FLOAT),
    "FLOAT4": _plain(sqltypes.FLOAT),
    "REAL": _plain(sqltypes.FLOAT),
    "DOUBLE": _plain(sqltypes.DOUBLE),
    "DOUBLE PRECISION": _plain(sqltypes.DOUBLE),
    "FLOAT8": _plain(sqltypes.DOUBLE),
    "DECIMAL": _decimal,
    "VARDECIMAL": _decimal,
    "NUMERIC": _decimal,
    "DATE": _plain(sqltypes.DATE),
    "TIME": _plain(sqltypes.TIME),
    "TIMESTAMP": _plain(sqltypes.TIMESTAMP),
    "INTERVAL": _plain(sqltypes.Interval),
    "INTERVAL DAY TO SECOND": _plain(sqltypes.Interval),
    "INTERVAL YEAR TO MONTH": _plain(sqltypes.Interval),
    "INTERVALDAY": _plain(sqltypes.Interval),
    "INTERVALYEAR": _plain(sqltypes.Interval),
    "ARRAY": _plain(sqltypes.NullType),
    "MAP": _plain(sqltypes.NullType),
    "DICT": _plain(sqltypes.NullType),
    "STRUCT": _plain(sqltypes.NullType),
    "LIST": _plain(sqltypes.NullType),
    "ANY": _plain(sqltypes.NullType),
    "NULL": _plain(sqltypes.NullType),
}


def sa_type(
    name: str, length: int | None = None, precision: int | None = None, scale: int | None = None
) -> Any:
    """The SQLAlchemy type of a Drill type name such as ``CHARACTER VARYING`` or ``DECIMAL(9,2)``.

    A name with no rule warns (as SQLAlchemy's own dialects do) and gives ``NullType``.
    """
    base, _, args = name.strip().upper().partition("(")
    base = base.strip()
    if args:  # ``DECIMAL(9, 2)``, ``VARCHAR(10)``: the REST API's spelling
        numbers = [int(a) for a in args.rstrip(")").split(",") if a.strip().isdigit()]
        if base in ("DECIMAL", "VARDECIMAL", "NUMERIC") and numbers:
            precision = numbers[0]
            scale = numbers[1] if len(numbers) > 1 else scale
        elif numbers:
            length = numbers[0]
    rule = _TYPES.get(base)
    if rule is None:
        util.warn(f"auger: no SQLAlchemy type for the Drill type {name!r}; using NullType")
        return sqltypes.NullType()
    return rule(length, precision, scale)


def column_info(
    name: str,
    type_name: str,
    nullable: bool,
    length: int | None = None,
    precision: int | None = None,
    scale: int | None = None,
) -> ReflectedColumn:
    """One column as ``Inspector.get_columns`` lists it."""
    return {
        "name": name,
        "type": sa_type(type_name, length, precision, scale),
        "nullable": nullable,
        "default": None,
        "autoincrement": False,
        "comment": None,
    }


def columns_from_description(description: Sequence[Sequence[Any]]) -> list[ReflectedColumn]:
    """Columns from a PEP 249 result description whose ``type_code`` is a Drill type name."""
    out = []
    for entry in description:
        name, type_code = entry[0], entry[1]
        precision, scale = (entry[4], entry[5]) if len(entry) > 5 else (None, None)
        nullable = bool(entry[6]) if len(entry) > 6 and entry[6] is not None else True
        out.append(column_info(name, str(type_code), nullable, None, precision, scale))
    return out


def no_such_table(table: str, schema: str | None) -> exc.NoSuchTableError:
    return exc.NoSuchTableError(f"{schema}.{table}" if schema else table)
