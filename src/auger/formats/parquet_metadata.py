"""Drill's Parquet metadata cache: written by ``REFRESH TABLE METADATA``, read by planning.

``REFRESH TABLE METADATA [COLUMNS ((c1, c2, ...) | NONE)] t`` writes into the directory ``t``,
and into every directory below it, the three files Drill's metadata cache (version 4.2) has:

* ``.drill.parquet_summary_metadata.v4``: the merged column types (``columnTypeInfo``), the
  directories below (``directories``, relative), the total row count and whether every
  column's statistics were collected (``allColumnsInteresting``);
* ``.drill.parquet_file_metadata.v4``: each Parquet file below the directory (paths relative
  to it) with its length and row groups (start, length, row count, and the min/max/null count
  of the columns the ``COLUMNS`` list names, all of them without one, none with ``NONE``);
* ``.drill.parquet_metadata_directories``: the directories below, relative.

Drill reads these files and ignores fields it does not know; auger adds two to each file's
entry: ``augerModificationTime`` (the file's modification time when the cache was written) and
``augerFooter`` (the file's footer serialized, base64: a Parquet file of no data, see
:func:`auger.storage.parquet_footers.footer_bytes_of`). Planning a directory whose cache is valid
takes every footer from there and opens no Parquet file (:func:`use_metadata_cache`).

The cache is valid while the directory holds exactly the files it describes, each of the same
size and modification time (an object store's objects included: they have no directory to
compare), and, on a local disk, no directory of the table was modified after the summary was
written (Drill's rule). A stale, unreadable or foreign (Drill-written: no footers) cache is
passed over: the directory is planned from its files, which is always right, and the next
``REFRESH TABLE METADATA`` writes it afresh. Unlike Drill, planning never rewrites a stale cache
itself: a query only reads.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from auger.errors import UserError
from auger.formats.parquet import footer_of_bytes, has_footer, keep_footer
from auger.storage import filesystem as fs
from auger.storage.parquet_footers import footer_bytes_of
from auger.storage.selection import FileSelection, FileStatus, select_files
from auger.version import __version__

__all__ = [
    "DIRECTORIES_FILE",
    "FILES_FILE",
    "METADATA_VERSION",
    "SUMMARY_FILE",
    "refresh_metadata",
    "use_metadata_cache",
]

_log = logging.getLogger(__name__)

SUMMARY_FILE = ".drill.parquet_summary_metadata.v4"
FILES_FILE = ".drill.parquet_file_metadata.v4"
DIRECTORIES_FILE = ".drill.parquet_metadata_directories"
#: Drill's files of the metadata versions before 4, removed by a refresh as Drill does
_OLD_FILES = (".drill.parquet_metadata", ".drill.parquet_metadata.v2")
#: The version written (Drill's newest), and the form of a version (``4``, ``4.2``, ``v3.1``)
METADATA_VERSION = "4.2"
_VERSION = re.compile(r"v?([1-9]\d*)(?:\.(\d+))?")


@dataclass
class _FileEntry:
    """One Parquet file of a refresh: its listing and its footer."""

    status: FileStatus
    meta: Any  # pyarrow.parquet.FileMetaData
    arrow: pa.Schema
    raw: bytes


# ------------------------------------------------------------------------------ writing
def refresh_metadata(root: str, columns: Collection[str] | None) -> int:
    """Write the metadata cache into ``root`` and every directory below it.

    Args:
        root: a directory of Parquet files (local, or an object store's prefix).
        columns: the columns whose statistics are kept (top-level names, any case); None for
            every column (no ``COLUMNS`` list), empty for none (``COLUMNS NONE``).

    Returns:
        The number of Parquet files described.

    Raises:
        UserError: a file that is not a readable Parquet file (naming it), or a directory the
            cache cannot be written into.
    """
    selection = select_files(root)
    entries = list(fs.parallel_map(_read_entry, selection.files, force=fs.is_uri(root)))
    wanted = None if columns is None else {c.lower() for c in columns}
    for directory in sorted(_directories(root, entries), key=lambda d: -d.count("/")):
        _write_directory(root, directory, entries, wanted)
    return len(entries)


def _read_entry(status: FileStatus) -> _FileEntry:
    """A file's footer, read once: what the cache keeps of it and what planning keeps."""
    try:
        meta, arrow = fs.read_parquet_footer(status.path, status.size or None)
    except UserError:
        raise
    except Exception as exc:  # not Parquet, truncated, unreadable
        raise UserError.data_read(
            "Error reading the Parquet footer: the file is not a readable Parquet file",
            [f"File: {status.path}", f"Reason: {exc}", "Fix: rewrite or remove the file"],
        ) from exc
    raw = footer_bytes_of(meta)
    keep_footer(status.path, status.mtime, status.size, footer_of_bytes(raw), raw)
    return _FileEntry(status, meta, arrow, raw)


def _directories(root: str, entries: Sequence[_FileEntry]) -> set[str]:
    """``root`` and every directory between it and its files."""
    found = {root}
    for e in entries:
        d = fs.dirname(e.status.path)
        while d not in found and d.startswith(root.rstrip("/") + "/"):
            found.add(d)
            d = fs.dirname(d)
    return found


def _write_directory(
    root: str, directory: str, entries: Sequence[_FileEntry], wanted: set[str] | None
) -> None:
    prefix = directory.rstrip("/") + "/"
    below = [e for e in entries if e.status.path.startswith(prefix)]
    subdirs = sorted(
        fs.relpath(d, directory)
        for d in _directories(root, entries)
        if d.startswith(prefix) and d != directory
    )
    types: dict[str, dict[str, Any]] = {}
    files = [_file_json(e, directory, wanted, types) for e in below]
    summary = {
        "metadata_version": METADATA_VERSION,
        "columnTypeInfo": types,
        "directories": subdirs,
        "drillVersion": f"auger-{__version__}",
        "totalRowCount": sum(e.meta.num_rows for e in below),
        "allColumnsInteresting": wanted is None,
    }
    for old in _OLD_FILES:
        _delete_quietly(fs.join(directory, old))
    _write_json(fs.join(directory, FILES_FILE), {"files": files})
    _write_json(fs.join(directory, DIRECTORIES_FILE), {"directories": subdirs})
    # the summary last: its modification time is the one the directories are compared with
    summary_path = fs.join(directory, SUMMARY_FILE)
    _write_json(summary_path, summary)
    if not fs.is_uri(summary_path):
        # later than the directory's own time, which writing the files above just set
        os.utime(summary_path)


def _write_json(path: str, value: Any) -> None:
    """Write a cache file whole or not at all: a local one under a hidden name first, then
    renamed (an object is put whole anyway), so a planning that reads it meanwhile sees the old
    file or the new one, never a part."""
    data = json.dumps(value, indent=2).encode("utf-8")
    try:
        if fs.is_uri(path):
            with fs.open_output(path) as out:
                out.write(data)
            return
        partial = f"{path}.{uuid.uuid4().hex}.partial"  # two refreshes at once: each its own
        with open(partial, "wb") as fh:
            fh.write(data)
        os.replace(partial, path)
    except UserError:
        raise
    except OSError as exc:
        raise UserError.permission(
            f"Cannot write the metadata cache file {fs.basename(path)}",
            [f"Path: {path}", f"Reason: {exc}", "Fix: make the directory writable"],
        ) from exc


def _delete_quietly(path: str) -> None:
    try:
        if fs.isfile(path):
            fs.delete_file(path)
    except (OSError, UserError):
        _log.debug("old metadata file %s not removed", path)


def _file_json(
    e: _FileEntry, directory: str, wanted: set[str] | None, types: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """A file's entry of Drill's file metadata (and auger's two fields), adding its columns'
    types and null counts to ``types``."""
    meta = e.meta
    leaves = meta.schema
    groups: list[dict[str, Any]] = []
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        if rg.num_rows == 0 and meta.num_row_groups > 1:
            continue  # an empty row group is left out, unless it is the only one (Drill's)
        cols = []
        length = 0
        for i in range(rg.num_columns):
            chunk = rg.column(i)
            length += chunk.total_compressed_size
            name = chunk.path_in_schema.split(".")
            _add_type(types, leaves.column(i), name, e.arrow, chunk.statistics, wanted)
            if wanted is None or name[0].lower() in wanted:
                cols.append(_column_json(name, chunk.statistics))
        first = rg.column(0) if rg.num_columns else None
        start = 0
        if first is not None:
            start = first.data_page_offset
            if first.has_dictionary_page and first.dictionary_page_offset:
                start = min(start, first.dictionary_page_offset)
        groups.append(
            {
                "start": start,
                "length": length,
                "rowCount": rg.num_rows,
                "hostAffinity": {},
                "columns": cols,
            }
        )
    if not groups:
        # a file of no row groups: one empty group of its columns, as Drill writes it
        cols = []
        for i in range(len(leaves)):
            name = leaves.column(i).path.split(".")
            _add_type(types, leaves.column(i), name, e.arrow, None, wanted)
            if wanted is None or name[0].lower() in wanted:
                cols.append({"name": name, "nulls": 0})
        groups.append({"start": 0, "length": 0, "rowCount": 0, "hostAffinity": {}, "columns": cols})
    return {
        "path": fs.relpath(e.status.path, directory),
        "length": e.status.size,
        "rowGroups": groups,
        "augerModificationTime": e.status.mtime,
        "augerFooter": base64.b64encode(e.raw).decode("ascii"),
    }


def _stat_value(value: Any) -> Any:
    """A statistic as Drill's cache writes it: bytes as base64, numbers as they are."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and value != value:
        return None
    return value


def _column_json(name: list[str], stats: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if stats is not None and stats.has_min_max:
        try:
            lo, hi = _stat_value(stats.min_raw), _stat_value(stats.max_raw)
        except Exception:  # a physical type pyarrow gives no raw value of (INT96)
            lo = hi = None
        if lo is not None and hi is not None:
            out["minValue"] = lo
            out["maxValue"] = hi
    out["nulls"] = stats.null_count if stats is not None and stats.has_null_count else -1
    return out


def _parent_types(arrow: pa.Schema, name: list[str]) -> list[str | None]:
    """The annotations of the groups above a leaf (Drill's ``parentTypes``): ``LIST`` and
    ``MAP`` for Arrow's lists and maps, none for structs and the groups inside them."""
    out: list[str | None] = []
    t: pa.DataType | None = None
    for i, part in enumerate(name[:-1]):
        if i == 0:
            idx = arrow.get_field_index(part)
            t = arrow.field(idx).type if idx >= 0 else None
            out.append(_annotation(t))
            continue
        if t is None:
            out.append(None)
        elif pa.types.is_struct(t):
            j = t.get_field_index(part)
            t = t.field(j).type if j >= 0 else None
            out.append(_annotation(t))
        elif pa.types.is_map(t):
            out.append(None)  # key_value
            t = t.item_type if name[i + 1 :][:1] == ["value"] else t.key_type
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            out.append(None)  # the repeated group of the list
            t = t.value_type
        else:
            out.append(None)
    return out


def _annotation(t: pa.DataType | None) -> str | None:
    if t is None:
        return None
    if pa.types.is_map(t):
        return "MAP"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "LIST"
    return None


def _add_type(
    types: dict[str, dict[str, Any]],
    leaf: Any,
    name: list[str],
    arrow: pa.Schema,
    stats: Any,
    wanted: set[str] | None,
) -> None:
    key = ".".join(f"`{p}`" for p in name)
    nulls = stats.null_count if stats is not None and stats.has_null_count else 0
    if stats is not None and not stats.has_null_count:
        nulls = -1
    known = types.get(key)
    if known is not None:
        if known["totalNullCount"] < 0 or nulls < 0:
            known["totalNullCount"] = -1
        else:
            known["totalNullCount"] += nulls
        return
    converted = leaf.converted_type
    parents = _parent_types(arrow, name)
    if leaf.max_repetition_level > 0 or "LIST" in parents:
        repetition = "REPEATED"
    elif leaf.max_definition_level == 0:
        repetition = "REQUIRED"
    else:
        repetition = "OPTIONAL"
    types[key] = {
        "name": name,
        "primitiveType": leaf.physical_type,
        "originalType": None if converted in (None, "NONE") else converted,
        "parentTypes": parents,
        "precision": leaf.precision if converted == "DECIMAL" else 0,
        "scale": leaf.scale if converted == "DECIMAL" else 0,
        "repetitionLevel": leaf.max_repetition_level,
        "definitionLevel": leaf.max_definition_level,
        "totalNullCount": nulls,
        "isInteresting": wanted is None or name[0].lower() in wanted,
        "repetition": repetition,
    }


# ------------------------------------------------------------------------------ reading
def _supported(version: object) -> bool:
    """Whether a cache of this ``metadata_version`` is one auger reads (version 4)."""
    m = _VERSION.fullmatch(str(version))
    return m is not None and int(m.group(1)) == 4


def _read_json(path: str) -> Any:
    with fs.open_input(path) as fh:
        return json.loads(fh.read().decode("utf-8"))


def use_metadata_cache(selection: FileSelection) -> bool:
    """Take the footers of a directory's Parquet files from its metadata cache, when it holds a
    valid one: planning then opens none of them. False when there is none (or it is stale,
    unreadable or written without footers) or when planning keeps every footer already.
    """
    if not selection.is_directory or not selection.files:
        return False
    if all(has_footer(f.path, f.mtime, f.size) for f in selection.files):
        return False  # nothing to gain: not even the cache files are read
    root = selection.root
    summary_path = fs.join(root, SUMMARY_FILE)
    summary_info = fs.file_info(summary_path)
    if summary_info is None:
        return False
    try:
        summary = _read_json(summary_path)
        if not _supported(summary.get("metadata_version")):
            return False
        if not fs.is_uri(root) and _directory_modified(root, summary, summary_info.mtime):
            return False
        listed = _read_json(fs.join(root, FILES_FILE)).get("files") or []
        cached: dict[str, tuple[int, float, str]] = {}
        for entry in listed:
            footer = entry.get("augerFooter")
            mtime = entry.get("augerModificationTime")
            if not isinstance(footer, str) or not isinstance(mtime, int | float):
                return False  # a cache Drill wrote: no footers in it
            cached[fs.join(root, entry["path"])] = (int(entry["length"]), float(mtime), footer)
        if len(cached) != len(selection.files):
            return False
        for f in selection.files:
            hit = cached.get(f.path)
            if hit is None or hit[0] != f.size or hit[1] != f.mtime:
                return False
        for f in selection.files:
            raw = base64.b64decode(cached[f.path][2])
            keep_footer(f.path, f.mtime, f.size, footer_of_bytes(raw), raw)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, pa.ArrowException) as exc:
        _log.warning("metadata cache of %s not used: %s", root, exc)
        return False
    except UserError as exc:
        _log.warning("metadata cache of %s not used: %s", root, exc.message)
        return False
    return True


def _directory_modified(root: str, summary: Any, written: float) -> bool:
    """Drill's rule: the table's directory, or one below it, was modified after the summary."""
    for rel in [".", *(summary.get("directories") or [])]:
        info = fs.file_info(root if rel == "." else fs.join(root, rel))
        if info is None or info.mtime > written:
            return True
    return False
