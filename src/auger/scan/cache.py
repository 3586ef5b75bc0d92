"""The raw-file cache: what the scan framework read from a text or JSON file, kept as Parquet.

Exploring a directory of raw files means many queries over the same files; parsing them again
for each one is most of a query's time. So a scan may keep, per file, every column a ``*`` scan
of its table delivers (the table's columns with Drill's types, as the scan framework produced
them) in Parquet files that Spark's own reader reads: a later query over the unchanged file, of
the same columns or of others, is then a Parquet scan (``auger.spark.cached_scan``).

Layout, under the location (``auger.cache.location``; by default ``cache`` in the state
directory)::

    <location>/<table key>/<file key>/r<start>-<end>.parquet

* the **table key** digests everything that changes what a reader produces: the format and its
  options (table-function options included), the session options readers honour, the provided
  or positional schema, the table's columns and types, and auger's version;
* the **file key** is the file's identity: a digest of its path, its size and its modification
  time, so a changed (or appended) file has another key and is read again, alone;
* each **part** holds the rows of the byte range ``[start, end)`` a task read (a whole file is
  ``r0-<size>``). An entry is complete when its parts chain from 0 to the file's size; parts
  from builds that cut the file differently are each right, and one chain is taken.

A part is written under a hidden temporary name and renamed into place (an object store's
upload appears whole or not at all), so a crash, a full disk or two builders of the same entry
never leave a half part that a reader takes. Least recently used entries (their directory's
modification time, refreshed on every use) are removed once the location holds more than
``auger.cache.max_bytes``.

Pure Python without Spark: the executors that write parts import it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auger.config import state_dir
from auger.formats.text.positions import compact_position
from auger.storage import filesystem as fs
from auger.storage.splits import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.metadata import column_type_text
from auger.types.schema_text import parse_schema
from auger.version import __version__

__all__ = [
    "ENABLED",
    "KEPT_POSITIONS",
    "LOCATION",
    "MAX_BYTES",
    "REST_COLUMN",
    "CachePart",
    "cache_enabled",
    "cache_location",
    "cached_column",
    "complete_parts",
    "disk_room",
    "entry_dir",
    "evict",
    "part_name",
    "positional_array",
    "table_dir",
    "table_key",
    "touch",
]

_log = logging.getLogger(__name__)

#: Session options: the cache on or off, where it is, and how many bytes it may hold.
ENABLED = "auger.cache.enabled"
LOCATION = "auger.cache.location"
MAX_BYTES = "auger.cache.max_bytes"
DEFAULT_MAX_BYTES = 10 * 1024**3
#: Free bytes a local cache always leaves on its disk (:func:`disk_room`).
DISK_RESERVE = 256 * 1024**2

#: Session options that change how a scan is cut into tasks or where it runs, never what a
#: reader produces: left out of the table key so that they do not split the cache.
_SCHEDULING_OPTIONS = frozenset(
    {
        "auger.scan.target_split_bytes",
        "auger.scan.parallelism",
        "auger.scan.parallel_discovery_files",
        "auger.scan.local_limit_rows",
        "auger.scan.local_bytes",
        "auger.scan.native_parquet",
        "auger.scan.batch_rows",
        "auger.scan.batch_bytes",
    }
)

_PART = re.compile(r"^r(\d+)-(\d+)\.parquet$")


def _true(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


def cache_enabled(options: Mapping[str, Any]) -> bool:
    """Whether the session's scans use and fill the cache (``auger.cache.enabled``)."""
    return _true(options.get(ENABLED, False))


def cache_location(options: Mapping[str, Any]) -> str:
    """Where the cache is: ``auger.cache.location``, else ``cache`` in the state directory."""
    given = str(options.get(LOCATION) or "").strip()
    if not given:
        return os.path.join(state_dir(), "cache")
    if fs.is_uri(given):
        return fs.normpath(given)
    return os.path.abspath(os.path.expanduser(given))


def max_bytes(options: Mapping[str, Any]) -> int:
    try:
        return int(options.get(MAX_BYTES, DEFAULT_MAX_BYTES))
    except (TypeError, ValueError):
        return DEFAULT_MAX_BYTES


def table_key(
    format_type: str,
    format_name: str,
    format_options: Mapping[str, Any],
    options: Mapping[str, Any],
    reader_schema: str,
    plugin: str,
    columns: str,
) -> str:
    """The digest of everything that decides what readers produce for a table's files."""
    reader_options = {k: v for k, v in options.items() if k not in _SCHEDULING_OPTIONS}
    raw = json.dumps(
        [
            __version__,
            format_type,
            format_name,
            dict(format_options),
            reader_options,
            reader_schema,
            plugin,
            columns,
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def _file_key(split: FileSplit) -> str:
    identity = json.dumps([split.path, split.size, repr(split.mtime)])
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]


def table_dir(location: str, key: str) -> str:
    """Where the entries of one table key are."""
    return fs.join(location, key)


def entry_dir(table: str, split: FileSplit) -> str:
    """The directory of one file's entry (the split's file identity: path, size, mtime)."""
    return fs.join(table, _file_key(split))


def part_name(start: int, end: int) -> str:
    return f"r{start}-{end}.parquet"


def part_range(split: FileSplit) -> tuple[int, int]:
    """The byte range ``[start, end)`` a task's split covers (the data source's pieces carry
    their own length as ``size``; a whole file its size)."""
    return split.start, split.start + max(split.size, 0)


@dataclass(frozen=True)
class CachePart:
    """One published part of an entry: a Parquet file Spark reads."""

    path: str
    size: int
    mtime: float


def complete_parts(entry: str, file_size: int) -> list[CachePart] | None:
    """The parts that together cover the file ``[0, file_size)``, or None (no complete entry)."""
    try:
        listed = fs.list_dir(entry) if fs.isdir(entry) else []
    except Exception:  # an unreadable location is a miss, never a failed query
        return None
    by_start: dict[int, list[tuple[int, Any]]] = {}
    for info in listed:
        m = _PART.match(fs.basename(info.path))
        if m is None or info.is_dir:
            continue
        start, end = int(m.group(1)), int(m.group(2))
        by_start.setdefault(start, []).append((end, info))
    chain: list[CachePart] = []
    pos = 0
    while pos < file_size or (file_size == 0 and not chain):
        options = sorted(by_start.get(pos, []), key=lambda e: -e[0])
        if not options:
            return None
        end, info = options[0]  # the longest part from here
        if end <= pos and not (file_size == 0 and end == 0):
            return None
        chain.append(CachePart(info.path, info.size, info.mtime))
        pos = end
    return chain if pos == file_size else None


def touch(entry: str) -> None:
    """Mark an entry used now (its directory's modification time orders eviction)."""
    if fs.is_uri(entry):
        return  # objects have no settable time: eviction there goes by the parts' times
    try:
        os.utime(entry)
    except OSError:
        pass


def disk_room(location: str) -> int | None:
    """Bytes new entries may take on a local location's disk; None for an object store.

    The cache is a convenience on a disk it shares with temporary tables, Spark's shuffle files
    and the user's own files, and it is on without being asked for: it never takes the last
    tenth of the disk's free space, nor the last :data:`DISK_RESERVE` bytes of it.
    """
    if fs.is_uri(location):
        return None
    probe = os.path.abspath(location)
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)  # the location is made by its first entry
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return 0
    return max(0, free - max(DISK_RESERVE, free // 10))


def evict(location: str, limit: int, keep: frozenset[str] = frozenset()) -> int:
    """Remove least recently used entries until the location holds at most ``limit`` bytes;
    the bytes removed. ``keep``: entries a query being planned reads, never removed. Local
    locations only (an object store's lifecycle rules bound it)."""
    if fs.is_uri(location) or not os.path.isdir(location):
        return 0
    entries: list[tuple[float, int, str]] = []
    total = 0
    for table in os.scandir(location):
        if not table.is_dir() or table.name.startswith("."):
            continue
        for entry in os.scandir(table.path):
            if not entry.is_dir():
                continue
            size = sum(f.stat().st_size for f in os.scandir(entry.path) if f.is_file())
            entries.append((entry.stat().st_mtime, size, entry.path))
            total += size
    removed = 0
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        if path in keep:
            continue
        try:
            shutil.rmtree(path)
        except OSError as exc:
            _log.debug("cache entry %s not removed: %s", path, exc)
            continue
        total -= size
        removed += size
    return removed


def cached_column(col: ColumnMetadata, entry_columns: TupleSchema) -> str | None:
    """How a scan column is read from an entry: its name there, or ``columns[<n>]`` for a
    headerless file's single position (``__columns_<n>``) taken from the ``columns`` array;
    None when the entry does not hold it with the same type."""

    held = entry_columns.column(col.name)
    if held is not None:
        return col.name if held.name == col.name and _within(col, held) else None
    position = compact_position(col.name)
    array = entry_columns.column("columns")
    if (
        position is not None
        and array is not None
        and array.type is MinorType.VARCHAR
        and array.mode is DataMode.REPEATED
    ):
        return f"columns[{position}]"
    return None


def _within(col: ColumnMetadata, held: ColumnMetadata) -> bool:
    """``col`` is ``held``, or a map of some of its members (a member projection), each the
    same type there."""
    if column_type_text(col) == column_type_text(held):
        return True
    if not (col.is_map and held.is_map and col.mode == held.mode and col.children):
        return False
    members = {m.name: m for m in held.children or ()}
    return all(m.name in members and _within(m, members[m.name]) for m in col.children)


def entry_schema(columns_text: str) -> TupleSchema:
    return parse_schema(columns_text) if columns_text else TupleSchema()


#: A headerless text file's ``columns`` array is kept as one Parquet column per position for
#: its first this many fields (named as the reader names a single position, ``__columns_<n>``,
#: NULL past a row's end), and the fields after them as one array, :data:`REST_COLUMN`: so
#: ``columns[n]`` reads one column of the entry, and Spark's reader prunes the others. Every
#: entry of a table has the same columns, however wide its rows.
KEPT_POSITIONS = 32
REST_COLUMN = "__columns_rest"


def positional_array(kept: TupleSchema) -> bool:
    """Whether the entries keep a headerless file's ``columns`` array by position."""
    array = kept.column("columns")
    return (
        array is not None
        and array.name == "columns"
        and array.type is MinorType.VARCHAR
        and array.mode is DataMode.REPEATED
    )
