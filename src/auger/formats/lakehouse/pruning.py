"""Files of a lakehouse table that a query's filter may match, by the table's own statistics:
Iceberg's manifests (partition values and column bounds, through pyiceberg's scan planning)
and Delta's log (each file's minimum, maximum and null count). Conservative: a file is ruled
out only when its statistics prove no row can match; without statistics it stays. Spark still
applies the whole filter to the rows read, so this changes speed, never answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import pyarrow as pa

from auger.formats.lakehouse.delta import data_file_path, open_version
from auger.formats.lakehouse.detect import ICEBERG
from auger.formats.lakehouse.iceberg import load_table
from auger.formats.lakehouse.snapshot import TableSnapshot
from auger.formats.lakehouse.stores import same_store_path

__all__ = ["Comparison", "files_matching"]

_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class Comparison:
    """``column op value``, one conjunct of a query's filter (``value`` a str, int or float)."""

    column: str
    op: str  # =, <, <=, >, >=
    value: Any

    def flipped(self) -> Comparison:
        """``value op column`` written the other way round."""
        return Comparison(self.column, _FLIPPED[self.op], self.value)


def files_matching(snapshot: TableSnapshot, filters: Sequence[Comparison]) -> frozenset[str] | None:
    """The paths of the snapshot's files that may hold rows matching every comparison; None
    when the statistics cannot tell (no usable filter, or they could not be read)."""
    names = {c.name.lower(): c.name for c in snapshot.schema}
    usable = [
        Comparison(names[f.column.lower()], f.op, f.value)
        for f in filters
        if f.column.lower() in names and f.op in _FLIPPED
    ]
    if not usable or snapshot.version is None:
        return None
    try:
        if snapshot.kind == ICEBERG:
            return _iceberg(snapshot, usable)
        return _delta(snapshot, usable)
    except Exception:  # statistics are an optimisation: when they cannot be used, read all
        return None


def _iceberg(snapshot: TableSnapshot, filters: Sequence[Comparison]) -> frozenset[str]:
    # deferred: loads pyiceberg (heavy)
    from pyiceberg import expressions as ex

    make = {
        "=": ex.EqualTo,
        "<": ex.LessThan,
        "<=": ex.LessThanOrEqual,
        ">": ex.GreaterThan,
        ">=": ex.GreaterThanOrEqual,
    }
    parts = [make[f.op](f.column, f.value) for f in filters]
    row_filter = parts[0] if len(parts) == 1 else ex.And(*parts)
    table = load_table(snapshot.location)
    try:
        tasks = table.scan(snapshot_id=snapshot.version, row_filter=row_filter).plan_files()
        paths = [t.file.file_path for t in tasks]
    except ValueError:
        # a snapshot with equality deletes, which pyiceberg does not plan: the data files the
        # statistics of its manifests keep (a delete only ever removes rows)
        # deferred: loads pyiceberg (heavy)
        from pyiceberg.manifest import DataFileContent

        # deferred: loads pyiceberg (heavy)
        from pyiceberg.table import ManifestGroupPlanner

        planner = ManifestGroupPlanner(table.metadata, table.io, row_filter)
        manifests = table.snapshot_by_id(snapshot.version).manifests(table.io)
        entries = chain.from_iterable(planner.plan_manifest_entries(manifests))
        paths = [
            e.data_file.file_path for e in entries if e.data_file.content == DataFileContent.DATA
        ]
    return frozenset(same_store_path(p, snapshot.location) for p in paths)


def _delta(snapshot: TableSnapshot, filters: Sequence[Comparison]) -> frozenset[str] | None:

    if snapshot.version is None:
        return None
    table = open_version(snapshot.location, snapshot.version)
    actions = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    kept = []
    for i, path in enumerate(actions["path"]):
        if all(_may_match(actions, i, f) for f in filters):
            kept.append(data_file_path(snapshot.location, path))
    return frozenset(kept)


def _may_match(actions: dict[str, list[Any]], i: int, f: Comparison) -> bool:
    """Whether a Delta file's statistics leave room for a row with ``column op value``."""
    part = actions.get(f"partition.{f.column}")
    if part is not None:
        low = high = _coerce(part[i], f.value)
    else:
        lows, highs = actions.get(f"min.{f.column}"), actions.get(f"max.{f.column}")
        if lows is None or highs is None:
            return True
        low, high = lows[i], highs[i]
    if low is None or high is None:
        return True  # no statistics (or only nulls, which no comparison matches: kept anyway)
    try:
        if f.op == "=":
            return bool(low <= f.value <= high)
        if f.op == "<":
            return bool(low < f.value)
        if f.op == "<=":
            return bool(low <= f.value)
        if f.op == ">":
            return bool(high > f.value)
        return bool(high >= f.value)
    except TypeError:
        return True


def _coerce(text: Any, like: Any) -> Any:
    """A partition value (text in the log) as the type of the literal it is compared with."""
    if text is None or isinstance(text, type(like)):
        return text
    try:
        return type(like)(text)
    except (TypeError, ValueError):
        return None
