"""The ``iceberg`` and ``delta`` format types: a workspace that has them (``dfs`` does by
default) reads a directory of either layout as one table; ``enabled = false`` on the format
turns that off. They are table formats, not file formats: no file is read as ``iceberg`` or
``delta`` by itself. A table's data files are read as Parquet, except an Iceberg table with
Avro or ORC data files, whose scan reads each file by its own format
(:mod:`.data_files`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin
from auger.formats.lakehouse.data_files import DATA_FILE_FORMATS, read_data_file
from auger.storage.splits import FileSplit
from auger.types import TupleSchema

__all__ = ["DeltaFormat", "IcebergFormat"]


class _TableFormat(FormatPlugin):
    def error_context(self, config: FormatConfig) -> list[str]:
        return []  # as Parquet's: the file alone

    def _not_a_file(self, path: str) -> UserError:
        return UserError.validation(
            f"File [{path}] is not a {self.type_name} table",
            [f"A {self.type_name} table is a directory; name the table's directory"],
        )

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        raise self._not_a_file(files[0] if files else "")

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        raise self._not_a_file(split.path)


class IcebergFormat(_TableFormat):
    type_name = "iceberg"

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        if DATA_FILE_FORMATS not in config.options:
            raise self._not_a_file(split.path)
        return read_data_file(split, config, options, columns, batch_rows)


class DeltaFormat(_TableFormat):
    type_name = "delta"
