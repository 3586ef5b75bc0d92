"""Parquet files through pyarrow: footers give the schema, row groups the units of work."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin, conflict_error, merge_schemas
from auger.scan.spec import FileSplit
from auger.types import TupleSchema
from auger.types.arrow import schema_from_arrow

__all__ = ["ParquetFormat"]


def _open(path: str) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise UserError.data_read(
            f"Not a readable Parquet file: {exc}", [f"File: {path}", "Fix: rewrite or remove it"]
        ) from exc


class ParquetFormat(FormatPlugin):
    type_name = "parquet"
    extensions = ("parquet",)

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        schema = TupleSchema()
        for path in files:
            file_schema = schema_from_arrow(_open(path).schema_arrow)
            merged = merge_schemas(schema, file_schema)
            if merged is None:
                for col in file_schema:
                    mine = schema.column(col.name)
                    if mine is not None:
                        raise conflict_error(path, col.name, mine, col)
                raise UserError.data_read("Incompatible Parquet schemas", [f"File: {path}"])
            schema = merged
        return schema

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        pf = _open(split.path)
        names = pf.schema_arrow.names
        wanted = None
        if columns is not None:
            lowered = set(columns)
            wanted = [n for n in names if n.lower() in lowered]
        try:
            yield from pf.iter_batches(
                batch_size=batch_rows, row_groups=split.row_groups, columns=wanted
            )
        except (pa.ArrowInvalid, OSError) as exc:
            raise UserError.data_read(
                f"Error reading Parquet data: {exc}", [f"File: {split.path}"]
            ) from exc
