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
from auger.types import TupleSchema

__all__ = [
    "DELTA",
    "ICEBERG",
    "TableSelection",
    "TableSnapshot",
    "read_schema",
    "read_snapshot",
    "table_kind",
]


def read_snapshot(kind: str, location: str, options: Mapping[str, Any]) -> TableSnapshot:
    """The snapshot (Iceberg) or version (Delta) of a table that ``options`` choose.

    Raises:
        UserError: UNSUPPORTED_OPERATION when the library for ``kind`` is not installed;
            what the reader of that kind raises otherwise.
    """
    # pyiceberg and deltalake are optional: their modules load when such a table is read
    try:
        if kind == ICEBERG:
            # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
            from auger.formats.lakehouse.iceberg import iceberg_snapshot

            return iceberg_snapshot(location, options)
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.formats.lakehouse.delta import delta_snapshot

        return delta_snapshot(location, options)
    except ImportError as exc:
        raise _missing_library(kind, location, exc) from None


def read_schema(kind: str, location: str) -> TupleSchema:
    """The current columns of a table, from its metadata alone (no data file is planned).

    Raises:
        UserError: as :func:`read_snapshot`.
    """
    try:
        if kind == ICEBERG:
            # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
            from auger.formats.lakehouse.iceberg import current_schema

            return current_schema(location)
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.formats.lakehouse.delta import current_schema as delta_schema

        return delta_schema(location)
    except ImportError as exc:
        raise _missing_library(kind, location, exc) from None


def _missing_library(kind: str, location: str, exc: ImportError) -> UserError:
    package = "pyiceberg" if kind == ICEBERG else "deltalake"
    return UserError.unsupported(
        f"Reading {kind} table [{location}] needs the {package} package",
        [f"Fix: pip install 'auger[lakehouse]' (missing: {exc.name})"],
    )
