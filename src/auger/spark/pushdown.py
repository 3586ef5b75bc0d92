"""Filters Spark pushes into the ``auger`` source, used to skip files and Parquet row groups.

Spark hands ``pushFilters`` a conjunction of simple predicates (``EqualTo``, ``In``,
``GreaterThan``..., see the reference notes). auger uses them only to *skip* work that cannot
produce a matching row, and hands every filter back to Spark, which still applies it to the rows
that are read. So a filter auger misjudges can cost speed, never a wrong answer, and no filter
ever needs auger's reading of Spark's comparison semantics to be exact.

Two kinds of skipping:

- a file whose implicit or partition column (``dir0``, ``filename``, a ``key=value`` column)
  makes a filter false (or null) for all its rows;
- a Parquet row group whose min/max/null-count statistics rule a filter out.

Filters are carried as plain tuples ``(op, column, value)`` so that they pickle into
``partitions()`` without Spark's classes.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Sequence
from typing import Any

from auger.formats.parquet_dates import DateCorruption, date_corruption
from auger.scan.implicit import implicit_value
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec

__all__ = ["Predicate", "file_may_match", "row_groups_may_match", "to_predicates"]

#: (operator, lower-cased column name, value); operators are Spark's filter class names.
Predicate = tuple[str, str, Any]

_OPS = {
    "EqualTo",
    "EqualNullSafe",
    "GreaterThan",
    "GreaterThanOrEqual",
    "LessThan",
    "LessThanOrEqual",
    "In",
    "IsNull",
    "IsNotNull",
    "StringStartsWith",
}


def to_predicates(filters: Iterable[Any]) -> list[Predicate]:
    """The filters auger can reason about, as plain tuples (others are simply not used)."""
    out: list[Predicate] = []
    for f in filters:
        op = type(f).__name__
        attr: tuple[str, ...] = tuple(getattr(f, "attribute", None) or ())
        if op not in _OPS or len(attr) != 1:
            continue
        value = getattr(f, "value", None)
        if op == "In":
            value = tuple(value or ())
        out.append((op, attr[0].lower(), value))
    return out


def _compare(op: str, v: Any, x: Any) -> bool | None:
    """Spark's result of ``v <op> x`` for a known row value ``v`` (None: null/unknown)."""
    if op == "IsNull":
        return v is None
    if op == "IsNotNull":
        return v is not None
    if op == "EqualNullSafe":
        if v is None or x is None:
            return v is None and x is None
        return bool(v == x) if _comparable(v, x) else None
    if v is None:
        return None
    if op == "In":
        if not all(_comparable(v, i) for i in x if i is not None):
            return None
        return True if v in x else (None if None in x else False)
    if x is None or not _comparable(v, x):
        return None
    if op == "EqualTo":
        return bool(v == x)
    if op == "GreaterThan":
        return bool(v > x)
    if op == "GreaterThanOrEqual":
        return bool(v >= x)
    if op == "LessThan":
        return bool(v < x)
    if op == "LessThanOrEqual":
        return bool(v <= x)
    if op == "StringStartsWith":
        return str(v).startswith(str(x))
    return None


def _family(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float | decimal.Decimal):
        return "number"
    if isinstance(v, str):
        return "str"
    if isinstance(v, bytes):
        return "bytes"
    if isinstance(v, dt.datetime):
        return "naive-ts" if v.tzinfo is None else "aware-ts"
    if isinstance(v, dt.date):
        return "date"
    return type(v).__name__


def _comparable(a: Any, b: Any) -> bool:
    if (isinstance(a, float) and a != a) or (isinstance(b, float) and b != b):
        return False  # NaN: Spark orders it above everything; do not second-guess
    return _family(a) == _family(b)


def file_may_match(spec: ScanSpec, split: FileSplit, predicates: Sequence[Predicate]) -> bool:
    """False only when an implicit/partition-column predicate is false or null for this file."""
    sources = {name.lower(): src for name, src in spec.sources.items()}
    for op, column, value in predicates:
        source = sources.get(column)
        if source is None or source in (ColumnSource.TABLE, ColumnSource.MISSING):
            continue
        if source == ColumnSource.LMT:
            continue  # a string in the scan, but users compare it as a time
        actual = implicit_value(source, split.path, spec.selection_root, split.mtime)
        if _compare(op, actual, value) is not True:
            return False
    return True


def _stats(
    meta: Any, group: int, column: str, shifted_dates: bool = False
) -> tuple[Any, Any, int, int] | None:
    """(min, max, null_count, rows) of a top-level leaf column in a row group, if known.

    With ``shifted_dates`` (a file old Drill wrote) DATE statistics are not the values the scan
    delivers, so they are not known.
    """
    rg = meta.row_group(group)
    for i in range(rg.num_columns):
        col = rg.column(i)
        if col.path_in_schema.lower() != column:
            continue
        if shifted_dates and meta.schema.column(i).converted_type == "DATE":
            return None
        st = col.statistics
        if st is None:
            return None
        nulls = st.null_count if st.has_null_count else -1
        if not st.has_min_max:
            return (None, None, nulls, rg.num_rows)
        return (*_signed_bounds(st), nulls, rg.num_rows)
    return None


def _signed_bounds(st: Any) -> tuple[Any, Any]:
    """min/max in the order of the values the scan delivers.

    Parquet orders UINT_32/UINT_64 statistics as unsigned numbers, but Drill reads the stored
    bits as signed (4294967295 is -1): bounds on both sides of the signed maximum say nothing.
    """
    lo, hi = st.min, st.max
    width = {"UINT_32": 32, "UINT_64": 64}.get(str(getattr(st, "converted_type", "")))
    if width is None or not isinstance(hi, int) or not isinstance(lo, int):
        return lo, hi
    top = 2 ** (width - 1) - 1
    if hi <= top:
        return lo, hi  # every value fits: the same numbers either way
    if lo > top:
        return lo - 2**width, hi - 2**width  # all wrap by the same amount: order kept
    return None, None


def _group_may_match(stats: tuple[Any, Any, int, int], op: str, x: Any) -> bool:
    lo, hi, nulls, rows = stats
    if op == "IsNull":
        return nulls != 0
    if op == "IsNotNull":
        return nulls < 0 or nulls < rows
    if nulls == rows and nulls >= 0 and op != "EqualNullSafe":
        return False  # only nulls: no comparison is true
    if lo is None or hi is None:
        return True
    if op == "In":
        values = [v for v in x if v is not None]
        if not values or not all(_comparable(lo, v) and _comparable(hi, v) for v in values):
            return True
        return any(lo <= v <= hi for v in values)
    if op == "StringStartsWith":
        if not isinstance(lo, str) or not isinstance(hi, str) or not isinstance(x, str):
            return True
        return bool(lo[: len(x)] <= x <= hi[: len(x)])
    if x is None or not (_comparable(lo, x) and _comparable(hi, x)):
        return True
    if op in ("EqualTo", "EqualNullSafe"):
        return bool(lo <= x <= hi)
    if op == "GreaterThan":
        return bool(hi > x)
    if op == "GreaterThanOrEqual":
        return bool(hi >= x)
    if op == "LessThan":
        return bool(lo < x)
    if op == "LessThanOrEqual":
        return bool(lo <= x)
    return True


def row_groups_may_match(
    meta: Any, table_columns: set[str], predicates: Sequence[Predicate]
) -> list[int]:
    """Row groups of a Parquet file whose statistics do not rule out any predicate."""
    kept: list[int] = []
    shifted = date_corruption(meta) is not DateCorruption.NONE
    for g in range(meta.num_row_groups):
        ok = True
        for op, column, value in predicates:
            if column not in table_columns:
                continue
            try:
                stats = _stats(meta, g, column, shifted)
            except Exception:
                stats = None
            if stats is not None and not _group_may_match(stats, op, value):
                ok = False
                break
        if ok:
            kept.append(g)
    return kept
