"""The Flight SQL metadata calls, answered from auger's INFORMATION_SCHEMA.

Catalogs, schemas and tables come from the same ``INFORMATION_SCHEMA`` tables a user can
query (catalog ``DRILL``, schemas such as ``dfs.tmp``, ``cp.default``, ``INFORMATION_SCHEMA``),
read in the caller's session so that what a tool lists is what its user may see. A table's
Arrow schema, when a client asks for it, is the schema its ``SELECT *`` answers with, as the
statement path ships it. Each answer is an Arrow table in the layout the Flight SQL protocol
fixes for the call; keys (primary, exported, imported) are always empty, as files have none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from auger.version import __version__

__all__ = [
    "CATALOGS_SCHEMA",
    "DB_SCHEMAS_SCHEMA",
    "KEYS_SCHEMA",
    "PRIMARY_KEYS_SCHEMA",
    "SQL_INFO_SCHEMA",
    "TABLES_SCHEMA",
    "TABLE_TYPES",
    "TABLE_TYPES_SCHEMA",
    "XDBC_TYPE_INFO_SCHEMA",
    "catalogs",
    "db_schemas",
    "sql_info",
    "table_types",
    "tables",
    "xdbc_type_info",
]

#: Runs a metadata query in the caller's session and answers its rows.
RunQuery = Callable[[str], pa.Table]
#: The Arrow schema a table's ``SELECT *`` answers with (None: it cannot be read).
TableSchema = Callable[[str, str], pa.Schema | None]

CATALOGS_SCHEMA = pa.schema([pa.field("catalog_name", pa.utf8(), False)])
DB_SCHEMAS_SCHEMA = pa.schema(
    [pa.field("catalog_name", pa.utf8()), pa.field("db_schema_name", pa.utf8(), False)]
)
TABLES_SCHEMA = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), False),
        pa.field("table_type", pa.utf8(), False),
    ]
)
TABLES_WITH_SCHEMA = TABLES_SCHEMA.append(pa.field("table_schema", pa.binary(), False))
TABLE_TYPES_SCHEMA = pa.schema([pa.field("table_type", pa.utf8(), False)])
#: The table types INFORMATION_SCHEMA.TABLES names.
TABLE_TYPES = ("SYSTEM_TABLE", "TABLE", "VIEW")
PRIMARY_KEYS_SCHEMA = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), False),
        pa.field("column_name", pa.utf8(), False),
        pa.field("key_name", pa.utf8()),
        pa.field("key_sequence", pa.int32(), False),
    ]
)
KEYS_SCHEMA = pa.schema(
    [
        pa.field("pk_catalog_name", pa.utf8()),
        pa.field("pk_db_schema_name", pa.utf8()),
        pa.field("pk_table_name", pa.utf8(), False),
        pa.field("pk_column_name", pa.utf8(), False),
        pa.field("fk_catalog_name", pa.utf8()),
        pa.field("fk_db_schema_name", pa.utf8()),
        pa.field("fk_table_name", pa.utf8(), False),
        pa.field("fk_column_name", pa.utf8(), False),
        pa.field("key_sequence", pa.int32(), False),
        pa.field("fk_key_name", pa.utf8()),
        pa.field("pk_key_name", pa.utf8()),
        pa.field("update_rule", pa.uint8(), False),
        pa.field("delete_rule", pa.uint8(), False),
    ]
)

_INFO_VALUE = pa.dense_union(
    [
        pa.field("string_value", pa.utf8()),
        pa.field("bool_value", pa.bool_()),
        pa.field("bigint_value", pa.int64()),
        pa.field("int32_bitmask", pa.int32()),
        pa.field("string_list", pa.list_(pa.utf8())),
        pa.field("int32_to_int32_list_map", pa.map_(pa.int32(), pa.list_(pa.int32()))),
    ]
)
SQL_INFO_SCHEMA = pa.schema(
    [pa.field("info_name", pa.uint32(), False), pa.field("value", _INFO_VALUE, False)]
)

XDBC_TYPE_INFO_SCHEMA = pa.schema(
    [
        pa.field("type_name", pa.utf8(), False),
        pa.field("data_type", pa.int32(), False),
        pa.field("column_size", pa.int32()),
        pa.field("literal_prefix", pa.utf8()),
        pa.field("literal_suffix", pa.utf8()),
        pa.field("create_params", pa.list_(pa.field("item", pa.utf8(), False))),
        pa.field("nullable", pa.int32(), False),
        pa.field("case_sensitive", pa.bool_(), False),
        pa.field("searchable", pa.int32(), False),
        pa.field("unsigned_attribute", pa.bool_()),
        pa.field("fixed_prec_scale", pa.bool_(), False),
        pa.field("auto_increment", pa.bool_()),
        pa.field("local_type_name", pa.utf8()),
        pa.field("minimum_scale", pa.int32()),
        pa.field("maximum_scale", pa.int32()),
        pa.field("sql_data_type", pa.int32(), False),
        pa.field("datetime_subcode", pa.int32()),
        pa.field("num_prec_radix", pa.int32()),
        pa.field("interval_precision", pa.int32()),
    ]
)

#: Drill's SQL types as JDBC knows them: name, java.sql.Types code, column size, quote, radix.
_XDBC_TYPES: list[tuple[str, int, int | None, str | None, int | None]] = [
    ("BOOLEAN", 16, 1, None, None),
    ("TINYINT", -6, 3, None, 10),
    ("SMALLINT", 5, 5, None, 10),
    ("INTEGER", 4, 10, None, 10),
    ("BIGINT", -5, 19, None, 10),
    ("FLOAT", 6, 7, None, 2),
    ("DOUBLE", 8, 15, None, 2),
    ("DECIMAL", 3, 38, None, 10),
    ("CHARACTER VARYING", 12, 65536, "'", None),
    ("BINARY VARYING", -3, 65536, None, None),
    ("DATE", 91, 10, "DATE '", None),
    ("TIME", 92, 8, "TIME '", None),
    ("TIMESTAMP", 93, 23, "TIMESTAMP '", None),
]

# SqlInfo ids (the protocol's numbering) and the facts a tool asks about when it connects.
_SERVER_NAME, _SERVER_VERSION, _ARROW_VERSION, _READ_ONLY, _SQL, _SUBSTRAIT = 0, 1, 2, 3, 4, 5
_TRANSACTION, _CANCEL = 8, 9
_KEYWORDS = [
    "ALTER",
    "ANALYZE",
    "CREATE",
    "DESCRIBE",
    "DROP",
    "EXPLAIN",
    "REFRESH",
    "RESET",
    "SCHEMA",
    "SHOW",
    "TEMPORARY",
    "USE",
]


def _sql_info_values() -> dict[int, Any]:
    """Each answered SqlInfo id and its value (str, bool, int or list of str)."""
    return {
        _SERVER_NAME: "auger",
        _SERVER_VERSION: __version__,
        _ARROW_VERSION: pa.__version__,
        _READ_ONLY: False,
        _SQL: True,
        _SUBSTRAIT: False,
        _TRANSACTION: ("int32", 0),  # no transactions
        _CANCEL: True,
        500: False,  # CREATE/DROP CATALOG
        501: False,  # CREATE/DROP SCHEMA
        502: True,  # CREATE/DROP TABLE
        503: ("int32", 1),  # identifiers: case insensitive
        504: "`",  # identifier quote
        505: ("int32", 1),  # quoted identifiers: case insensitive
        506: True,  # every listed table is selectable
        507: ("int32", 0),  # NULLs sort high (last ascending)
        508: _KEYWORDS,
        513: "\\",  # escape of LIKE patterns
        515: True,  # column aliases
        516: True,  # NULL + non-NULL is NULL
        529: "schema",
        530: "procedure",
        531: "catalog",
        532: True,  # the catalog leads a qualified name
    }


def sql_info(requested: Sequence[int]) -> pa.Table:
    """The GetSqlInfo answer: the ids asked for that the server knows (all when none)."""
    values = _sql_info_values()
    ids = [i for i in requested if i in values] if requested else sorted(values)
    children: list[list[Any]] = [[] for _ in range(6)]
    type_ids: list[int] = []
    offsets: list[int] = []
    for info in ids:
        value = values[info]
        if isinstance(value, tuple):
            code, value = 3, value[1]
        elif isinstance(value, bool):
            code = 1
        elif isinstance(value, str):
            code = 0
        elif isinstance(value, int):
            code = 2
        else:
            code = 4
        type_ids.append(code)
        offsets.append(len(children[code]))
        children[code].append(value)
    arrays = [pa.array(children[i], type=_INFO_VALUE.field(i).type) for i in range(len(children))]
    union = pa.UnionArray.from_dense(
        pa.array(type_ids, pa.int8()),
        pa.array(offsets, pa.int32()),
        arrays,
        [_INFO_VALUE.field(i).name for i in range(len(children))],
        list(range(len(children))),
    )
    return pa.Table.from_arrays([pa.array(ids, pa.uint32()), union], schema=SQL_INFO_SCHEMA)


def xdbc_type_info(data_type: int | None) -> pa.Table:
    """The GetXdbcTypeInfo answer: Drill's SQL types (only ``data_type``'s when given)."""
    rows = [t for t in _XDBC_TYPES if data_type is None or t[1] == data_type]
    quoted = [p for _, _, _, p, _ in rows]
    return pa.Table.from_pydict(
        {
            "type_name": [r[0] for r in rows],
            "data_type": [r[1] for r in rows],
            "column_size": [r[2] for r in rows],
            "literal_prefix": quoted,
            "literal_suffix": ["'" if p else None for p in quoted],
            "create_params": [["precision", "scale"] if r[0] == "DECIMAL" else None for r in rows],
            "nullable": [1] * len(rows),  # columnNullable
            "case_sensitive": [r[1] == 12 for r in rows],
            "searchable": [3] * len(rows),  # searchable in any WHERE
            "unsigned_attribute": [False if r[4] == 10 else None for r in rows],
            "fixed_prec_scale": [False] * len(rows),
            "auto_increment": [None] * len(rows),
            "local_type_name": [r[0] for r in rows],
            "minimum_scale": [0 if r[0] == "DECIMAL" else None for r in rows],
            "maximum_scale": [38 if r[0] == "DECIMAL" else None for r in rows],
            "sql_data_type": [r[1] for r in rows],
            "datetime_subcode": [None] * len(rows),
            "num_prec_radix": [r[4] for r in rows],
            "interval_precision": [None] * len(rows),
        },
        schema=XDBC_TYPE_INFO_SCHEMA,
    )


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _like(column: str, pattern: str) -> str:
    return f"{column} LIKE {_literal(pattern)} ESCAPE '\\'"


def catalogs(run: RunQuery) -> pa.Table:
    table = run("SELECT CATALOG_NAME FROM INFORMATION_SCHEMA.CATALOGS ORDER BY CATALOG_NAME")
    return pa.Table.from_arrays(
        [table.column(0).cast(pa.utf8()).combine_chunks()], schema=CATALOGS_SCHEMA
    )


def db_schemas(run: RunQuery, catalog: str, pattern: str) -> pa.Table:
    where = ["1 = 1"]
    if catalog:
        where.append(f"CATALOG_NAME = {_literal(catalog)}")
    if pattern:
        where.append(_like("SCHEMA_NAME", pattern))
    table = run(
        "SELECT CATALOG_NAME, SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA "
        f"WHERE {' AND '.join(where)} ORDER BY CATALOG_NAME, SCHEMA_NAME"
    )
    return pa.Table.from_arrays(
        [c.cast(pa.utf8()).combine_chunks() for c in table.columns], schema=DB_SCHEMAS_SCHEMA
    )


def tables(
    run: RunQuery,
    catalog: str,
    schema_pattern: str,
    table_pattern: str,
    types: Sequence[str],
    table_schema: TableSchema | None,
) -> pa.Table:
    """The GetTables answer; with ``table_schema``, each table's serialized Arrow schema."""
    where = ["1 = 1"]
    if catalog:
        where.append(f"TABLE_CATALOG = {_literal(catalog)}")
    if schema_pattern:
        where.append(_like("TABLE_SCHEMA", schema_pattern))
    if table_pattern:
        where.append(_like("TABLE_NAME", table_pattern))
    if types:
        where.append(f"TABLE_TYPE IN ({', '.join(_literal(t) for t in types)})")
    table = run(
        "SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM "
        f"INFORMATION_SCHEMA.`TABLES` WHERE {' AND '.join(where)} "
        "ORDER BY TABLE_TYPE, TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME"
    )
    columns = [c.cast(pa.utf8()).combine_chunks() for c in table.columns]
    if table_schema is None:
        return pa.Table.from_arrays(columns, schema=TABLES_SCHEMA)
    schemas = []
    for schema_name, table_name in zip(columns[1].to_pylist(), columns[2].to_pylist(), strict=True):
        found = table_schema(schema_name, table_name)
        schemas.append((found or pa.schema([])).serialize().to_pybytes())
    columns.append(pa.array(schemas, pa.binary()))
    return pa.Table.from_arrays(columns, schema=TABLES_WITH_SCHEMA)


def table_types() -> pa.Table:
    return pa.Table.from_arrays([pa.array(TABLE_TYPES, pa.utf8())], schema=TABLE_TYPES_SCHEMA)
