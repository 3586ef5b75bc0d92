"""The ``sys`` schema: options, version and drillbits, as small Arrow tables.

Versions report the Drill release whose behaviour auger follows, because Drill clients check it
(sqlalchemy-drill wants at least 1.19); auger's own version is in ``commit_message``, and
``build_time`` is when the installed package was built (or its source checkout's commit).

``sys.drillbits`` reports only ports something listens on: the ones the servers over this
engine opened (:meth:`auger.engine.Engine.listeners`). auger has no Drill user, control or
data port, so those are NULL, and an engine no server serves has no HTTP port either.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa

import auger
from auger.errors import UserError
from auger.version import build_time

if TYPE_CHECKING:
    from auger.sql.context import StatementContext

__all__ = ["DRILL_VERSION", "SYS_TABLES", "sys_table"]

DRILL_VERSION = "1.22.0"


def _options(statement: StatementContext) -> pa.Table:
    rows = list(statement.options.values())
    num = [v.value if v.kind == "LONG" else None for v in rows]
    return pa.table(
        {
            "name": pa.array([v.name for v in rows], pa.string()),
            "kind": pa.array([v.kind for v in rows], pa.string()),
            "accessibleScopes": pa.array([v.accessible_scopes for v in rows], pa.string()),
            "optionScope": pa.array([v.scope for v in rows], pa.string()),
            "status": pa.array(
                ["DEFAULT" if v.value == v.default else "CHANGED" for v in rows], pa.string()
            ),
            "num_val": pa.array(num, pa.int64()),
            "string_val": pa.array(
                [v.value if v.kind == "STRING" else None for v in rows], pa.string()
            ),
            "bool_val": pa.array(
                [v.value if v.kind == "BOOLEAN" else None for v in rows], pa.bool_()
            ),
            "float_val": pa.array(
                [v.value if v.kind == "DOUBLE" else None for v in rows], pa.float64()
            ),
        }
    )


def _version(statement: StatementContext) -> pa.Table:
    return pa.table(
        {
            "version": [DRILL_VERSION],
            "commit_id": [f"auger-{auger.__version__}"],
            "commit_message": [
                f"auger {auger.__version__} (Apache Drill semantics on Apache Spark)"
            ],
            "commit_time": [""],
            "build_email": [""],
            "build_time": [build_time()],
        }
    )


def _drillbits(statement: StatementContext) -> pa.Table:
    ports = statement.engine.drill_ports()
    return pa.table(
        {
            "hostname": [socket.gethostname()],
            **{f"{name}_port": pa.array([port], pa.int32()) for name, port in ports.items()},
            "current": [True],
            "version": [DRILL_VERSION],
            "state": ["ONLINE"],
        }
    )


SYS_TABLES: dict[str, Callable[[StatementContext], pa.Table]] = {
    "options": _options,
    "version": _version,
    "drillbits": _drillbits,
}


def sys_table(name: str, statement: StatementContext) -> pa.Table:
    builder = SYS_TABLES.get(name.lower())
    if builder is None:
        raise UserError.validation(
            f"Object '{name}' not found within 'sys'",
            [f"Known sys tables: {', '.join(sorted(SYS_TABLES))}"],
        )
    return builder(statement)
