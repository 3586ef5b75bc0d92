"""DATE values in Parquet files written by Drill before 1.9, and how to read them correctly.

Those Drill versions stored a DATE as its day number shifted by twice the Julian day of the
Unix epoch (2 × 2440588 days), so other readers see years around 15000 (Drill's DRILL-4203).
Drill reads such files correctly, and so does auger, by deciding per file from its footer:

* a Drill version in the key-value metadata (``drill.version``): the dates are right when the
  Drill writer version (``drill-writer.version``) is 2 or more, or ``is.date.correct`` is true;
  otherwise they may be shifted;
* no Drill version: ``created_by`` missing, plain ``parquet-mr``, unparseable, or a
  ``parquet-mr`` 1.8.1 build tagged ``drill`` may be old Drill; any other writer is trusted;
* a file that may be shifted is judged by its values: when the first row group's statistics
  show a date past the year 5000 every date of the file is shifted back; without such a
  statistic each value past the year 5000 is shifted back on its own.

The format option ``auto_correct_corrupt_dates`` (Drill's ``autoCorrectCorruptDates``, default
true) switches the value-based correction off, for files that really hold such dates.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.config import format_option

__all__ = [
    "CORRUPTION_THRESHOLD",
    "CORRUPT_DATE_SHIFT",
    "DateCorruption",
    "auto_correct_dates",
    "correct_dates",
    "date_corruption",
    "has_dates",
]

#: Days between the Julian day epoch (4713 BC) and the Unix epoch.
JULIAN_DAY_OF_UNIX_EPOCH = 2440588
#: What old Drill writers added to every date's day number.
CORRUPT_DATE_SHIFT = 2 * JULIAN_DAY_OF_UNIX_EPOCH
#: Day number of 5000-01-01: later dates in a file that may be old Drill's are taken as shifted.
CORRUPTION_THRESHOLD = (dt.date(5000, 1, 1) - dt.date(1970, 1, 1)).days

#: Drill's Parquet writer version from which dates follow the Parquet specification.
_STANDARD_DATES_WRITER = 2

#: parquet-mr's ``created_by`` form: ``<application> version <version> (build <hash>)``.
_CREATED_BY = re.compile(r"^(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?$")
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)([^-+]*)?(?:-([^+]*))?(?:\+(.*))?$")


class DateCorruption(enum.Enum):
    """How a file's DATE values are to be read."""

    NONE = "dates are stored as the Parquet specification says"
    ALL = "every date is shifted by old Drill's writer"
    SUSPECT = "dates past the year 5000 are shifted by old Drill's writer"


def auto_correct_dates(format_options: Mapping[str, Any]) -> bool:
    """The ``autoCorrectCorruptDates`` format option, either spelling (default true)."""
    value = format_option(format_options, "autoCorrectCorruptDates", True)
    return value.strip().lower() != "false" if isinstance(value, str) else bool(value)


def has_dates(t: pa.DataType) -> bool:
    """Whether values of type ``t`` hold DATEs (also as struct members or list elements)."""
    if pa.types.is_date32(t):
        return True
    if pa.types.is_struct(t):
        return any(has_dates(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return has_dates(t.value_type)
    if pa.types.is_map(t):
        return has_dates(t.key_type) or has_dates(t.item_type)
    return False


def _may_be_old_drill(meta: pq.FileMetaData) -> bool:
    kv = {
        k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
        for k, v in (meta.metadata or {}).items()
    }
    if "drill.version" in kv:
        writer = kv.get("drill-writer.version")
        if writer is not None:
            try:
                return int(writer) < _STANDARD_DATES_WRITER
            except ValueError:
                return True
        return kv.get("is.date.correct", "").lower() != "true"
    created_by = (meta.created_by or "").strip()
    if not created_by or created_by == "parquet-mr":
        return True
    m = _CREATED_BY.match(created_by)
    if m is None:
        return True  # a writer Drill cannot name: judge by the values
    semver = _SEMVER.match((m.group(2) or "").strip())
    if semver is None:
        return False
    major, minor, patch = int(semver.group(1)), int(semver.group(2)), int(semver.group(3))
    # files Drill migrated carry parquet-mr 1.8.1 with "drill" in the pre-release part
    return (major, minor, patch) == (1, 8, 1) and "drill" in (semver.group(5) or "")


def _date_max_past_threshold(meta: pq.FileMetaData) -> bool:
    """Whether the first row group's statistics show a DATE beyond the year 5000."""
    if meta.num_row_groups == 0:
        return False
    group = meta.row_group(0)
    for i in range(group.num_columns):
        chunk = group.column(i)
        if meta.schema.column(i).converted_type != "DATE":
            continue
        stats = chunk.statistics
        if stats is None or not stats.has_min_max:
            continue
        if int(stats.max_raw) > CORRUPTION_THRESHOLD:
            return True
    return False


def date_corruption(meta: pq.FileMetaData, auto_correct: bool = True) -> DateCorruption:
    """How to read the DATE values of the file whose footer is ``meta``."""
    if not auto_correct:
        return DateCorruption.NONE
    if not any(meta.schema.column(i).converted_type == "DATE" for i in range(meta.num_columns)):
        return DateCorruption.NONE
    if not _may_be_old_drill(meta):
        return DateCorruption.NONE
    return DateCorruption.ALL if _date_max_past_threshold(meta) else DateCorruption.SUSPECT


def _shift(arr: pa.Array, status: DateCorruption) -> pa.Array:
    days = arr.cast(pa.int32())
    shifted = pc.subtract(days, pa.scalar(CORRUPT_DATE_SHIFT, pa.int32()))
    if status is DateCorruption.SUSPECT:
        shifted = pc.if_else(pc.greater(days, CORRUPTION_THRESHOLD), shifted, days)
    return shifted.cast(pa.date32())


def correct_dates(arr: pa.Array, status: DateCorruption) -> pa.Array:
    """``arr`` with its DATE values (at any depth) read back as Drill reads them."""
    t = arr.type
    if status is DateCorruption.NONE or not has_dates(t):
        return arr
    if pa.types.is_date32(t):
        return _shift(arr, status)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        kids = [correct_dates(arr.field(i), status) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=mask)
    if pa.types.is_map(t):
        offsets, start, stop = _own_offsets(arr)
        keys = correct_dates(arr.keys.slice(start, stop - start), status)
        items = correct_dates(arr.items.slice(start, stop - start), status)
        return pa.MapArray.from_arrays(offsets, keys, items, type=t, mask=mask)
    if pa.types.is_fixed_size_list(t):
        values = arr.values.slice(arr.offset * t.list_size, len(arr) * t.list_size)
        return pa.FixedSizeListArray.from_arrays(correct_dates(values, status), type=t, mask=mask)
    offsets, start, stop = _own_offsets(arr)
    values = correct_dates(arr.values.slice(start, stop - start), status)
    kind = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
    return kind.from_arrays(offsets, values, type=t, mask=mask)


def _own_offsets(arr: Any) -> tuple[pa.Array, int, int]:
    offsets = arr.offsets
    start, stop = offsets[0].as_py(), offsets[-1].as_py()
    return pc.subtract(offsets, offsets[0]), start, stop
