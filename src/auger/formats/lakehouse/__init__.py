"""Lakehouse tables, Iceberg and Delta, read as Drill's Iceberg and Delta format plugins read
them: the table's metadata names the data files of one snapshot or version and gives the
schema; auger's own scan reads the files (see :mod:`.snapshot`).

pyiceberg and deltalake read the metadata; they are optional, loaded only when such a table is
queried.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auger.errors import UserError
from auger.formats.lakehouse.detect import DELTA, ICEBERG, table_kind
from auger.formats.lakehouse.snapshot import TableSelection, TableSnapshot

__all__ = [
    "DELTA",
    "ICEBERG",
    "TableSelection",
    "TableSnapshot",
    "read_snapshot",
    "table_kind",
]


def read_snapshot(kind: str, location: str, options: Mapping[str, Any]) -> TableSnapshot:
    """The snapshot (Iceberg) or version (Delta) of a table that ``options`` choose.

    Raises:
        UserError: UNSUPPORTED_OPERATION when the library for ``kind`` is not installed;
            what the reader of that kind raises otherwise.
    """
    try:
        if kind == ICEBERG:
            from auger.formats.lakehouse.iceberg import iceberg_snapshot

            return iceberg_snapshot(location, options)
        from auger.formats.lakehouse.delta import delta_snapshot

        return delta_snapshot(location, options)
    except ImportError as exc:
        package = "pyiceberg" if kind == ICEBERG else "deltalake"
        raise UserError.unsupported(
            f"Reading {kind} table [{location}] needs the {package} package",
            [f"Fix: pip install 'auger[lakehouse]' (missing: {exc.name})"],
        ) from None
