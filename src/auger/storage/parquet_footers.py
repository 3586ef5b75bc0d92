"""Parquet footers as bytes: serialized, read back, and kept for the scans planning just read.

A footer serialized by :func:`footer_bytes_of` is a Parquet file of no data (``PAR1``, the
footer, its length, ``PAR1``: what ``_metadata`` files hold); :func:`footer_from_bytes` reads
it back, row-group statistics and all, without the file. Planning keeps the bytes of the
footers it read (:func:`keep_footer_bytes`, at most :data:`KEPT_BYTES` together), so that
the planning of a scan's tasks (row groups to skip, big files to cut) opens none of those
files again: in this process from here, in Spark's planner process from the scan spec, which
carries them (``ScanSpec.footers``).
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from typing import Any

__all__ = [
    "KEPT_BYTES",
    "clear_footer_bytes",
    "footer_bytes_of",
    "footer_from_bytes",
    "keep_footer_bytes",
    "kept_footer_bytes",
]

#: The most bytes of serialized footers kept in a process.
KEPT_BYTES = 64 * 1024 * 1024

_Key = tuple[str, float | None, int]
_kept: OrderedDict[_Key, bytes] = OrderedDict()
_total = 0
_lock = threading.Lock()


def footer_bytes_of(meta: Any) -> bytes:
    """A footer (``pyarrow.parquet.FileMetaData``) serialized as a Parquet file of no data."""
    sink = io.BytesIO()
    meta.write_metadata_file(sink)
    return sink.getvalue()


def footer_from_bytes(raw: bytes, int96_unit: str = "us") -> Any:
    """The footer :func:`footer_bytes_of` serialized: (``FileMetaData``, its Arrow schema with
    INT96 values as timestamps of ``int96_unit``), as reading the file itself gives them."""
    import pyarrow as pa  # loaded with the readers that use it
    import pyarrow.parquet as pq

    with pq.ParquetFile(pa.BufferReader(raw), coerce_int96_timestamp_unit=int96_unit) as pf:
        return pf.metadata, pf.schema_arrow


def _key(path: str, mtime: float | None, size: int | None) -> _Key:
    return (path, mtime, size or 0)


def keep_footer_bytes(path: str, mtime: float | None, size: int | None, raw: bytes) -> None:
    """Keep the serialized footer of the file of this path, modification time and size (one
    larger than a 64th of :data:`KEPT_BYTES` is not kept; the oldest go first)."""
    global _total
    key = _key(path, mtime, size)
    with _lock:
        old = _kept.pop(key, None)
        if old is not None:
            _total -= len(old)
        if len(raw) <= KEPT_BYTES // 64:
            _kept[key] = raw
            _total += len(raw)
        while _total > KEPT_BYTES and _kept:
            _total -= len(_kept.popitem(last=False)[1])


def kept_footer_bytes(path: str, mtime: float | None, size: int | None) -> bytes | None:
    """The serialized footer kept for this file, or None."""
    key = _key(path, mtime, size)
    with _lock:
        raw = _kept.get(key)
        if raw is not None:
            _kept.move_to_end(key)
        return raw


def clear_footer_bytes() -> None:
    """Forget every kept footer (tests; after bulk file changes)."""
    global _total
    with _lock:
        _kept.clear()
        _total = 0
