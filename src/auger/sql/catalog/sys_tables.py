"""The ``sys`` schema: options, version and drillbits, as small Arrow tables.

Versions report the Drill release whose behaviour auger follows, because Drill clients check it
(sqlalchemy-drill wants at least 1.19); auger's own version is in ``commit_message``.
"""

from __future__ import annotations

import datetime as dt
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa

import auger
from auger.errors import UserError

if TYPE_CHECKING:
    from auger.session import UserSession

__all__ = ["DRILL_VERSION", "SYS_TABLES", "sys_table"]

DRILL_VERSION = "1.22.0"


def _options(session: UserSession) -> pa.Table:
    rows = list(session.options.values())
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


def _version(session: UserSession) -> pa.Table:
    return pa.table(
        {
            "version": [DRILL_VERSION],
            "commit_id": [f"auger-{auger.__version__}"],
            "commit_message": [
                f"auger {auger.__version__} (Apache Drill semantics on Apache Spark)"
            ],
            "commit_time": [""],
            "build_email": [""],
            "build_time": [dt.date.today().isoformat()],
        }
    )


def _drillbits(session: UserSession) -> pa.Table:
    server = session.engine.config.server
    return pa.table(
        {
            "hostname": [socket.gethostname()],
            "user_port": pa.array([31010], pa.int32()),
            "control_port": pa.array([31011], pa.int32()),
            "data_port": pa.array([31012], pa.int32()),
            "http_port": pa.array([int(server.get("port", 8047))], pa.int32()),
            "current": [True],
            "version": [DRILL_VERSION],
            "state": ["ONLINE"],
        }
    )


SYS_TABLES: dict[str, Callable[[UserSession], pa.Table]] = {
    "options": _options,
    "version": _version,
    "drillbits": _drillbits,
}


def sys_table(name: str, session: UserSession) -> pa.Table:
    builder = SYS_TABLES.get(name.lower())
    if builder is None:
        raise UserError.validation(
            f"Object '{name}' not found within 'sys'",
            [f"Known sys tables: {', '.join(sorted(SYS_TABLES))}"],
        )
    return builder(session)
