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
from typing import Any

from auger.storage.bounded_cache import BoundedCache

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
#: serialized footers by path, modification time and size, weighed by their bytes
KEPT: BoundedCache[_Key, bytes] = BoundedCache("serialized Parquet footers", KEPT_BYTES, len)


def footer_bytes_of(meta: Any) -> bytes:
    """A footer (``pyarrow.parquet.FileMetaData``) serialized as a Parquet file of no data."""
    sink = io.BytesIO()
    meta.write_metadata_file(sink)
    return sink.getvalue()


def footer_from_bytes(raw: bytes, int96_unit: str = "us") -> Any:
    """The footer :func:`footer_bytes_of` serialized: (``FileMetaData``, its Arrow schema with
    INT96 values as timestamps of ``int96_unit``), as reading the file itself gives them."""
    # deferred: loads pyarrow (heavy)
    import pyarrow as pa  # loaded with the readers that use it

    # deferred: loads pyarrow (heavy)
    import pyarrow.parquet as pq

    with pq.ParquetFile(pa.BufferReader(raw), coerce_int96_timestamp_unit=int96_unit) as pf:
        return pf.metadata, pf.schema_arrow


def _key(path: str, mtime: float | None, size: int | None) -> _Key:
    return (path, mtime, size or 0)


def keep_footer_bytes(path: str, mtime: float | None, size: int | None, raw: bytes) -> None:
    """Keep the serialized footer of the file of this path, modification time and size (one
    larger than a 64th of :data:`KEPT_BYTES` is not kept; the oldest go first)."""
    key = _key(path, mtime, size)
    if len(raw) <= KEPT_BYTES // 64:
        KEPT.put(key, raw)
    else:
        KEPT.discard(key)


def kept_footer_bytes(path: str, mtime: float | None, size: int | None) -> bytes | None:
    """The serialized footer kept for this file, or None."""
    return KEPT.get(_key(path, mtime, size))


def clear_footer_bytes() -> None:
    """Forget every kept footer (tests; after bulk file changes)."""
    KEPT.clear()
