"""What a format plugin implements (STYLE #8: ABCs for what plugins implement).

A plugin answers two questions: what columns do these files have (``discover_schema``, on the
driver, cheap: headers, footers, a sample) and what is in this file (``read_arrow``, on an
executor, as Arrow batches of the file's own columns). The scan adds implicit, partition and
missing columns and conforms types; the plugin only reads.
"""

from __future__ import annotations

import bz2
import gzip
import io
from abc import ABC
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

if TYPE_CHECKING:
    from auger.scan.lifecycle import FormatReader

__all__ = ["FormatPlugin", "merge_schemas", "open_input", "uses_reader", "valid_utf8", "widen"]


class FormatPlugin(ABC):  # noqa: B024 - every method has a default; a plugin picks its own
    """A file format: its reader type name, default extensions, schema discovery and reading.

    A plugin either implements :meth:`reader` (DESIGN §3.4: one :class:`FormatReader` per file,
    writing rows through the result set loader) and gets ``discover_schema`` and ``read_arrow``
    derived from it, or it reads Arrow itself and overrides those two (the built-in readers do,
    for speed). ``name`` and ``type_name`` are the same thing: the reader type of a workspace
    format entry (``type = "regexlog"``).
    """

    #: reader type, as in ``type = "text"`` of a workspace format entry
    type_name: str = ""
    #: the same, under the name DESIGN §3.4 gives it
    name: str = ""
    #: default extensions when a config names none
    extensions: tuple[str, ...] = ()
    #: how many files the derived ``discover_schema`` opens to learn the columns
    discovery_sample: int = 8

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name and not cls.type_name:
            cls.type_name = cls.name
        elif cls.type_name and not cls.name:
            cls.name = cls.type_name

    def reader(self, file: FileSplit, config: FormatConfig) -> FormatReader:
        """A new reader for one file (its negotiator brings projection, options, schemas)."""
        raise NotImplementedError(
            f"format plugin {type(self).__name__} implements neither reader() nor read_arrow()"
        )

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        """The table columns of these files, as far as can be known cheaply on the driver.

        Derived from :meth:`reader`: the union of the first files' schemas (each reader's early
        schema, else its first batch's)."""
        from auger.scan.operator import discover_through_reader

        return discover_through_reader(self, files, config, options)

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        """Batches of the file's own columns; ``columns`` (lower-cased names) may be read only.

        Derived from :meth:`reader`: the file runs through the reader lifecycle."""
        from auger.scan.operator import read_through_reader

        return read_through_reader(self, split, config, options, columns, batch_rows)


def uses_reader(plugin: FormatPlugin) -> bool:
    """Whether the plugin reads through :meth:`FormatPlugin.reader` (not Arrow-native)."""
    return type(plugin).reader is not FormatPlugin.reader


def open_input(path: str) -> IO[bytes]:
    """Open a file for reading, decompressing ``.gz``, ``.bz2`` and ``.zst`` by suffix."""
    lower = path.lower()
    if lower.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if lower.endswith(".bz2"):
        return bz2.open(path, "rb")
    if lower.endswith((".zst", ".zstd")):
        import zstandard

        raw = open(path, "rb")  # noqa: SIM115 - handed to the caller
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))  # type: ignore[arg-type]
    return open(path, "rb")


_NUMERIC_ORDER = [
    MinorType.TINYINT,
    MinorType.SMALLINT,
    MinorType.INT,
    MinorType.BIGINT,
    MinorType.FLOAT4,
    MinorType.FLOAT8,
]


def valid_utf8(data: bytes | memoryview, size: int) -> bool:
    """Whether the first ``size`` bytes are valid UTF-8, checked by Arrow's vectorised
    validator (the input of the compiled readers, before any value cut from it is trusted:
    their delimiters are ASCII, which never occurs inside a multi-byte character)."""
    import numpy as np
    import pyarrow as pa

    whole = pa.StringArray.from_buffers(
        1, pa.py_buffer(np.array([0, size], dtype=np.int32)), pa.py_buffer(data)
    )
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def widen(a: ColumnMetadata, b: ColumnMetadata) -> ColumnMetadata | None:
    """A type that holds both columns' values losslessly, or None when there is none."""
    if a.type is MinorType.NULL or a.type is MinorType.LATE:
        return b.renamed(a.name)
    if b.type is MinorType.NULL or b.type is MinorType.LATE:
        return a
    mode = a.mode
    if a.mode is not b.mode:
        if DataMode.REPEATED in (a.mode, b.mode):
            return None
        mode = DataMode.OPTIONAL
    if a.type is b.type:
        if a.type is MinorType.MAP:
            merged = merge_schemas(a.schema, b.schema)
            if merged is None:
                return None
            return ColumnMetadata(a.name, MinorType.MAP, mode, merged.columns())
        if a.type is MinorType.VARDECIMAL:
            scale = max(a.scale, b.scale)
            digits = max(a.precision - a.scale, b.precision - b.scale)
            return ColumnMetadata(a.name, a.type, mode, None, min(38, digits + scale), scale)
        return a.with_mode(mode)
    if a.type in _NUMERIC_ORDER and b.type in _NUMERIC_ORDER:
        wider = max(a.type, b.type, key=_NUMERIC_ORDER.index)
        if MinorType.BIGINT in (a.type, b.type) and wider is MinorType.FLOAT4:
            wider = MinorType.FLOAT8
        return ColumnMetadata(a.name, wider, mode)
    return None


def merge_schemas(a: TupleSchema, b: TupleSchema) -> TupleSchema | None:
    """Union of two schemas by name (first spelling and order kept); None on a type conflict."""
    out = a.copy()
    for col in b:
        mine = out.column(col.name)
        if mine is None:
            out.add(col.with_mode(DataMode.OPTIONAL) if col.mode is DataMode.REQUIRED else col)
            continue
        merged = widen(mine, col)
        if merged is None:
            return None
        out.replace(merged)
    return out


def conflict_error(path: str, column: str, a: ColumnMetadata, b: ColumnMetadata) -> UserError:
    return UserError.data_read(
        f"Column [{column}] has type {b.type_string()} in one file and {a.type_string()} in "
        "another; auger cannot combine them",
        [f"File: {path}", f"Column: {column}", "Fix: cast the column, or give a provided schema"],
    )
