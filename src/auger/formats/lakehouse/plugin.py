"""The ``iceberg`` and ``delta`` format types: a workspace that has them (``dfs`` does by
default) reads a directory of either layout as one table; ``enabled = false`` on the format
turns that off. They are table formats, not file formats: no file is read as ``iceberg``, the
table's data files are read as Parquet."""

from __future__ import annotations

from typing import TYPE_CHECKING

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin

if TYPE_CHECKING:
    from auger.scan.lifecycle import FormatReader
    from auger.storage.splits import FileSplit

__all__ = ["DeltaFormat", "IcebergFormat"]


class _TableFormat(FormatPlugin):
    def reader(self, file: FileSplit, config: FormatConfig) -> FormatReader:
        raise UserError.validation(
            f"File [{file.path}] is not a {self.type_name} table",
            [f"A {self.type_name} table is a directory; name the table's directory"],
        )


class IcebergFormat(_TableFormat):
    type_name = "iceberg"


class DeltaFormat(_TableFormat):
    type_name = "delta"
