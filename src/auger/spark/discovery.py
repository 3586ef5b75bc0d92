"""Schema discovery on the driver, before planning: what columns a table's files have.

Parquet footers, text headers and a JSON sample are read by the format plugin; the result becomes
the defined schema every executor conforms to. Results are cached per file list and modification
times, so repeated queries over unchanged files skip the work.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from auger.config import FormatConfig
from auger.formats.registry import get_format
from auger.storage.selection import FileSelection
from auger.types import TupleSchema

__all__ = ["discover_schema"]

_CACHE_SIZE = 256
_cache: OrderedDict[tuple[Any, ...], str] = OrderedDict()
_lock = threading.Lock()

# Options that change what discovery finds, and so belong in the cache key.
_SCHEMA_OPTIONS = (
    "store.json.all_text_mode",
    "store.json.read_numbers_as_double",
    "store.json.reader.skip_invalid_records",
    "auger.scan.json_sample_rows",
)


def discover_schema(
    selection: FileSelection, fmt: FormatConfig, options: Mapping[str, Any]
) -> TupleSchema:
    """The table schema of a file selection in one format."""
    key = (
        fmt.name,
        fmt.type,
        tuple(sorted((k, repr(v)) for k, v in fmt.options.items())),
        tuple((f.path, f.mtime, f.size) for f in selection.files),
        tuple(options.get(k) for k in _SCHEMA_OPTIONS),
    )
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return TupleSchema.parse(hit)
    plugin = get_format(fmt.type)
    schema = plugin.discover_schema([f.path for f in selection.files], fmt, options)
    with _lock:
        _cache[key] = schema.to_text()
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return schema
