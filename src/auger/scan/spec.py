"""The planned scan: immutable values the driver builds and executors run.

Planning is kept apart from execution: the driver plans a scan into these frozen values once,
and executors only run them.

A :class:`ScanSpec` is everything an executor needs to produce a scan's batches without a
SparkSession, a user session or a config file: the files, the format and its options, the output
columns in order with where each comes from, and the session options a reader honours. It travels
as JSON inside the Spark data source's options.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from auger.storage import filesystem as fs
from auger.storage.splits import FileSplit, open_split, split_line_range
from auger.types import TupleSchema
from auger.types.schema_text import parse_schema

__all__ = ["ColumnSource", "FileSplit", "ScanSpec", "open_split", "split_line_range"]


class ColumnSource:
    """Where an output column's values come from (a string tag, JSON-friendly)."""

    TABLE = "table"  # read from the file
    MISSING = "missing"  # named by the query, absent from the data: typed nulls
    FQN = "fqn"
    FILEPATH = "filepath"
    FILENAME = "filename"
    SUFFIX = "suffix"
    LMT = "lmt"
    #: how many rows of the file this output row stands for (the scan then sends one row per
    #: batch: a query that only counts rows needs no more, see auger.sql.planning.row_counts)
    ROWS = "rows"
    # "dir<N>" for partition directories, "key:<name>" for hive-style key=value directories

    IMPLICIT = frozenset({FQN, FILEPATH, FILENAME, SUFFIX, LMT})

    @staticmethod
    def is_partition(source: str) -> bool:
        return source.startswith("dir") and source[3:].isdigit()

    @staticmethod
    def is_hive_key(source: str) -> bool:
        return source.startswith("key:")


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
        reader_schema: the types readers should produce for the table columns when they differ
            from the output's (a user-given schema over discovered files: readers read what the
            files hold, the scan converts); empty means the output's own table columns.
        plugin: a format plugin registered in code on the driver, pickled for the workers
            (:func:`auger.formats.registry.shipped_plugin`); empty for built-ins and entry points.
        footers: Parquet footers planning read, serialized, by path (may be empty).
        cache_columns: the columns a ``*`` scan of the table delivers (schema text), which is
            what the raw-file cache keeps of each file (:mod:`auger.scan.cache`); empty when
            the table is not cached.
        cache_build: the cache directory of the table's key, when the scan's tasks also write
            the entries of the files they read (:mod:`auger.scan.cache_build`); else empty.
        build_stop: a build's stop signal: a local path whose appearance asks its tasks to end
            at their next batch, so that the build gives way to a user's query without its
            Python workers being killed (:mod:`auger.spark.cache_builds`); else empty.
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
    reader_schema: str = ""
    plugin: str = ""
    #: Parquet: the serialized footers planning read (path -> base64 of a Parquet file of no
    #: data, :func:`auger.formats.parquet.footer_bytes_of`), so that planning the scan's tasks
    #: (row groups to skip, big files to cut) opens none of those files again
    footers: Mapping[str, str] = field(default_factory=dict)
    cache_columns: str = ""
    cache_build: str = ""
    build_stop: str = ""

    def schema(self) -> TupleSchema:
        return parse_schema(self.output_schema) if self.output_schema else TupleSchema()

    def missing_names(self) -> list[str]:
        """Columns the query names that the table schema lacks (read as NULL): a reader whose
        schema came from a sample may meet them later in a file and must say so."""
        return [name for name, src in self.sources.items() if src == ColumnSource.MISSING]

    def table_schema(self) -> TupleSchema:
        """Only the columns read from (or missing in) the files."""
        return TupleSchema(
            c
            for c in self.schema()
            if self.sources.get(c.name) in (ColumnSource.TABLE, ColumnSource.MISSING)
        )

    def _locations(self) -> list[str]:
        """Where the scan reads and writes: its files, and the cache it fills, if any."""
        return [
            self.selection_root,
            *(f.path for f in self.files),
            *filter(None, [self.cache_build]),
        ]

    def __getstate__(self) -> dict[str, Any]:
        # a spec pickled to an executor (inside Spark's data source) takes the settings of
        # the object stores its files are in along, as the JSON form does
        state = dict(self.__dict__)
        state["_filesystems"] = fs.shipped_for(self._locations())
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        fs.install(state.pop("_filesystems", ()))
        for key, value in state.items():
            object.__setattr__(self, key, value)

    def to_json(self) -> str:
        """The spec as JSON, with the settings of the object stores its files are in (an
        executor has no config file to find them in)."""
        raw = asdict(self)
        shipped = fs.shipped_for(self._locations())
        if shipped:
            raw["filesystems"] = shipped
        return json.dumps(raw, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ScanSpec:
        """The spec :meth:`to_json` wrote; object-store settings it carries are registered in
        this process (:func:`auger.storage.filesystem.install`)."""
        raw = json.loads(text)
        fs.install(raw.pop("filesystems", ()))
        raw["files"] = tuple(
            FileSplit(
                **{**f, "row_groups": tuple(f["row_groups"]) if f.get("row_groups") else None}
            )
            for f in raw["files"]
        )
        # an empty projection is meaningful (COUNT(*), implicit columns only): keep it
        raw["projection"] = tuple(raw["projection"]) if "projection" in raw else ("*",)
        return cls(**raw)

    def with_files(self, files: tuple[FileSplit, ...]) -> ScanSpec:

        return replace(self, files=files)
