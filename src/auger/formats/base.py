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
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["FormatPlugin", "merge_schemas", "open_input", "widen"]


class FormatPlugin(ABC):
    """A file format: its reader type name, default config, schema discovery and reading."""

    #: reader type, as in ``type = "text"`` of a workspace format entry
    type_name: str = ""
    #: default extensions when a config names none
    extensions: tuple[str, ...] = ()

    @abstractmethod
    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        """The table columns of these files, as far as can be known cheaply on the driver."""

    @abstractmethod
    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        """Batches of the file's own columns; ``columns`` (lower-cased names) may be read only."""


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
