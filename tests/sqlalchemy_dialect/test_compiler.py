"""The SQL the auger dialects write and the type names they reflect; no engine needed."""

from __future__ import annotations

import warnings

import pytest
import sqlalchemy as sa
from sqlalchemy import types as sqltypes

from auger import dbapi
from auger.sqlalchemy import AugerDialect, AugerHttpDialect, AugerHttpsDialect
from auger.sqlalchemy.reflection import sa_type


def sql(stmt: sa.ClauseElement) -> str:
    return " ".join(str(stmt.compile(dialect=AugerDialect())).split())


def test_entry_points_give_the_dialects() -> None:
    assert isinstance(sa.create_engine("auger://").dialect, AugerDialect)
    assert isinstance(sa.create_engine("auger+http://h:8047/dfs.tmp").dialect, AugerHttpDialect)
    assert isinstance(sa.create_engine("auger+https://h/dfs.tmp").dialect, AugerHttpsDialect)
    assert sa.create_engine("auger://").dialect.paramstyle == "qmark"


def test_names_are_backquoted_and_schemas_split_into_plugin_and_workspace() -> None:
    t = sa.table("employee.json", sa.column("full_name"), sa.column("select"), schema="cp.default")
    assert sql(sa.select(t)) == (
        "SELECT `employee.json`.`full_name`, `employee.json`.`select` "
        "FROM `cp`.`default`.`employee.json`"
    )
    t2 = sa.table("a`b", sa.column("x"))
    assert sql(sa.select(t2)) == "SELECT `a``b`.`x` FROM `a``b`"


def test_limit_and_offset_as_drill_writes_them() -> None:
    t = sa.table("t", sa.column("x"))
    assert sql(sa.select(t).limit(5).offset(2)) == "SELECT `t`.`x` FROM `t` LIMIT ? OFFSET ?"
    assert sql(sa.select(t).offset(2)) == "SELECT `t`.`x` FROM `t` OFFSET ?"


def test_cast_uses_drill_type_names() -> None:
    x = sa.column("x")
    assert sql(sa.select(sa.cast(x, sa.DateTime))) == "SELECT CAST(`x` AS TIMESTAMP) AS `x`"
    assert sql(sa.select(sa.cast(x, sa.Text))) == "SELECT CAST(`x` AS VARCHAR) AS `x`"
    decimal = "SELECT CAST(`x` AS DECIMAL(9, 2)) AS `x`"
    assert sql(sa.select(sa.cast(x, sa.Numeric(9, 2)))) == decimal
    assert sql(sa.select(sa.cast(x, sa.LargeBinary))) == "SELECT CAST(`x` AS VARBINARY) AS `x`"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("CHARACTER VARYING", sqltypes.String),
        ("INTEGER", sqltypes.INTEGER),
        ("BIGINT", sqltypes.BIGINT),
        ("DOUBLE", sqltypes.DOUBLE),
        ("FLOAT", sqltypes.FLOAT),
        ("BOOLEAN", sqltypes.BOOLEAN),
        ("DATE", sqltypes.DATE),
        ("TIMESTAMP", sqltypes.TIMESTAMP),
        ("TIME", sqltypes.TIME),
        ("BINARY VARYING", sqltypes.VARBINARY),
        ("INTERVAL DAY TO SECOND", sqltypes.Interval),
        ("ARRAY", sqltypes.NullType),
        ("STRUCT", sqltypes.NullType),
        ("ANY", sqltypes.NullType),
    ],
)
def test_drill_type_names_map_to_sqlalchemy_types(name: str, expected: type) -> None:
    assert isinstance(sa_type(name), expected)


def test_decimal_and_varchar_keep_precision_and_length() -> None:
    dec = sa_type("DECIMAL", precision=9, scale=2)
    assert isinstance(dec, sqltypes.DECIMAL) and (dec.precision, dec.scale) == (9, 2)
    dec = sa_type("DECIMAL(12, 3)")  # the REST API's spelling
    assert (dec.precision, dec.scale) == (12, 3)
    assert sa_type("CHARACTER VARYING", length=20).length == 20


def test_a_type_without_a_rule_warns_and_is_null_type() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = sa_type("GEOMETRY")
    assert isinstance(got, sqltypes.NullType)
    assert any("GEOMETRY" in str(w.message) for w in caught)


def test_bad_urls_say_what_to_write() -> None:
    with pytest.raises(dbapi.InterfaceError, match=r"auger\+http://host:8047/dfs.tmp"):
        sa.create_engine("auger://somehost/dfs.tmp").connect()
    with pytest.raises(dbapi.InterfaceError, match="takes no colour"):
        sa.create_engine("auger:///dfs.tmp?colour=red").connect()
    with pytest.raises(dbapi.InterfaceError, match="needs the server's host"):
        sa.create_engine("auger+http:///dfs.tmp").connect()


def test_url_database_is_the_default_schema() -> None:
    for url in ("auger+http://h:1/dfs.tmp", "auger+http://h:1/dfs/tmp"):
        dialect = sa.create_engine(url).dialect
        _, params = dialect.create_connect_args(sa.engine.make_url(url))
        assert params["schema"] == "dfs.tmp" and params["url"] == "http://h:1"
    _, params = AugerHttpsDialect().create_connect_args(sa.engine.make_url("auger+https://h"))
    assert params["url"] == "https://h:8047" and params["schema"] is None
