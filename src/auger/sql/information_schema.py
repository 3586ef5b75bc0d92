"""``INFORMATION_SCHEMA``: SCHEMATA for now, as small Arrow tables (Spark has no such schema)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from auger.errors import UserError

if TYPE_CHECKING:
    from auger.session import UserSession

__all__ = ["info_schema_table"]


def _schemata(session: UserSession) -> pa.Table:
    names = session.catalog.schema_names()
    writable = {w.name for w in session.catalog.workspaces() if w.writable}
    return pa.table(
        {
            "CATALOG_NAME": ["DRILL"] * len(names),
            "SCHEMA_NAME": names,
            "SCHEMA_OWNER": ["<owner>"] * len(names),
            "TYPE": ["file" if "." in n else "system" for n in names],
            "IS_MUTABLE": ["YES" if n in writable else "NO" for n in names],
        }
    )


_TABLES = {"SCHEMATA": _schemata}


def info_schema_table(name: str, session: UserSession) -> pa.Table:
    builder = _TABLES.get(name.upper())
    if builder is None:
        raise UserError.validation(f"Object '{name}' not found within 'INFORMATION_SCHEMA'")
    return builder(session)
