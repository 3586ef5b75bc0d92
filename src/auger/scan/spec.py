"""The planned scan: immutable values the driver builds and executors run (STYLE #12).

A :class:`ScanSpec` is everything an executor needs to produce a scan's batches without a
SparkSession, a user session or a config file: the files, the format and its options, the output
columns in order with where each comes from, and the session options a reader honours. It travels
as JSON inside the Spark data source's options.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from auger.types import TupleSchema

__all__ = ["ColumnSource", "FileSplit", "ScanSpec"]


class ColumnSource:
    """Where an output column's values come from (a string tag, JSON-friendly)."""

    TABLE = "table"  # read from the file
    MISSING = "missing"  # named by the query, absent from the data: typed nulls
    FQN = "fqn"
    FILEPATH = "filepath"
    FILENAME = "filename"
    SUFFIX = "suffix"
    LMT = "lmt"
    # "dir<N>" for partition directories, "key:<name>" for hive-style key=value directories

    IMPLICIT = frozenset({FQN, FILEPATH, FILENAME, SUFFIX, LMT})

    @staticmethod
    def is_partition(source: str) -> bool:
        return source.startswith("dir") and source[3:].isdigit()

    @staticmethod
    def is_hive_key(source: str) -> bool:
        return source.startswith("key:")


@dataclass(frozen=True)
class FileSplit:
    """One file (or a part of one) that a task reads."""

    path: str
    size: int = 0
    mtime: float = 0.0
    start: int = 0
    length: int = -1  # -1: to the end of the file
    row_groups: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ScanSpec:
    """A planned scan of one table reference.

    Attributes:
        format_name: the workspace's format entry (``csv``, ``json``...).
        format_type: the reader type (``text``, ``json``, ``parquet`` or a plugin's name).
        format_options: the format's options (delimiter, extract_header...).
        selection_root: the directory ``dirN`` columns count from.
        files: the files to read.
        output_schema: the columns the scan delivers, in order, with Drill types (schema text).
        sources: output column name → :class:`ColumnSource` tag.
        projection: the projected table columns as Drill paths (``["*"]`` for all).
        options: session options readers honour (``store.json.*`` ...).
        limit: stop after this many rows (LIMIT push-down), or None.
        table: the table name as the query wrote it, for error context.
    """

    format_name: str
    format_type: str
    format_options: Mapping[str, Any]
    selection_root: str
    files: tuple[FileSplit, ...]
    output_schema: str
    sources: Mapping[str, str]
    projection: tuple[str, ...] = ("*",)
    options: Mapping[str, Any] = field(default_factory=dict)
    limit: int | None = None
    table: str = ""

    def schema(self) -> TupleSchema:
        return TupleSchema.parse(self.output_schema) if self.output_schema else TupleSchema()

    def table_schema(self) -> TupleSchema:
        """Only the columns read from (or missing in) the files."""
        return TupleSchema(
            c
            for c in self.schema()
            if self.sources.get(c.name) in (ColumnSource.TABLE, ColumnSource.MISSING)
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ScanSpec:
        raw = json.loads(text)
        raw["files"] = tuple(
            FileSplit(
                **{**f, "row_groups": tuple(f["row_groups"]) if f.get("row_groups") else None}
            )
            for f in raw["files"]
        )
        raw["projection"] = tuple(raw.get("projection") or ("*",))
        return cls(**raw)

    def with_files(self, files: tuple[FileSplit, ...]) -> ScanSpec:
        from dataclasses import replace

        return replace(self, files=files)
