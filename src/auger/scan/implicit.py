"""Implicit file columns (``fqn``, ``filepath``, ``filename``, ``suffix``, ``lmt``...) and
partition columns (``dir0``, ``dir1``... and, beyond Drill, ``key`` for ``key=value`` folders).

Two halves, both pure functions of plain values so an executor can run them:

* **resolution**, once per scan: :func:`resolve_implicit_columns` finds which projected names are
  implicit (names come from options, match without regard to case, and keep the spelling of the
  project list), honours provided-schema tags (``drill.implicit``), and for a wildcard adds the
  partition columns ``dir0..dir{depth-1}`` (and the ``key=value`` keys) the query did not name,
  after the table columns. A projected name that is not simple (``filename.a``, ``dir0[1]``)
  *shadows* the implicit column: it stays a table column.
* **values**, once per file: :class:`FileDescrip` (or :func:`implicit_values`) computes each
  column's value from the file path and the selection root; :meth:`ImplicitColumns.arrays`
  builds constant Arrow columns of a batch's row count. A planned scan tags its columns with
  :class:`~auger.scan.spec.ColumnSource` strings; :func:`source_marker` maps a tag to its marker
  and :func:`implicit_value` gives its value for a file, so the planner's pruning, the native
  Parquet path and the scan compute implicit values by the same rule.

Values follow Drill: ``fqn`` is the full path without scheme, ``filepath`` its directory,
``filename`` the last component, ``suffix`` the text after the last dot (``""`` if none);
``dirN`` is the N-th directory below the selection root, NULL past the file's depth.
"""

from __future__ import annotations

import enum
import logging
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

import pyarrow as pa

from auger.errors import UserError
from auger.scan.schema import ScanColumn
from auger.scan.spec import ColumnSource
from auger.scan.tracker import ProjectionType, ScanSchemaTracker
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.arrow_values import text_scalar

__all__ = [
    "IMPLICIT_PROPERTY",
    "FileDescrip",
    "ImplicitColumn",
    "ImplicitColumns",
    "ImplicitKind",
    "ImplicitMarker",
    "ImplicitOptions",
    "constant_array",
    "describe_file",
    "implicit_value",
    "implicit_values",
    "max_partition_depth",
    "partition_keys",
    "resolve_implicit_columns",
    "source_marker",
]

log = logging.getLogger(__name__)

#: Provided-schema column property naming the implicit column it stands for.
IMPLICIT_PROPERTY = "drill.implicit"

#: The value Hive and Spark write for a NULL partition value.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


class ImplicitKind(enum.StrEnum):
    """Which piece of file metadata an implicit column carries."""

    FQN = "fqn"
    FILEPATH = "filepath"
    FILENAME = "filename"
    SUFFIX = "suffix"
    LMT = "last_modified_time"
    PROJECT_METADATA = "project_metadata"
    RGI = "row_group_index"
    RGS = "row_group_start"
    RGL = "row_group_length"
    PARTITION = "partition"  # dirN
    PARTITION_KEY = "partition_key"  # key=value directories (auger only)
    #: how many rows of the file one output row stands for (a scan for a query that only
    #: counts rows sends one row per batch)
    ROWS = "rows"


#: File columns users may name (and tag in a provided schema).
_FILE_KINDS = (ImplicitKind.FQN, ImplicitKind.FILEPATH, ImplicitKind.FILENAME, ImplicitKind.SUFFIX)
#: Internal columns: projectable by name, never declarable in a provided schema.
_INTERNAL_KINDS = (
    ImplicitKind.LMT,
    ImplicitKind.PROJECT_METADATA,
    ImplicitKind.RGI,
    ImplicitKind.RGS,
    ImplicitKind.RGL,
)

#: Drill's default labels.
DEFAULT_LABELS: Mapping[ImplicitKind, str] = {
    ImplicitKind.FQN: "fqn",
    ImplicitKind.FILEPATH: "filepath",
    ImplicitKind.FILENAME: "filename",
    ImplicitKind.SUFFIX: "suffix",
    ImplicitKind.LMT: "lmt",
    ImplicitKind.PROJECT_METADATA: "$project_metadata$",
    ImplicitKind.RGI: "rgi",
    ImplicitKind.RGS: "rgs",
    ImplicitKind.RGL: "rgl",
}

PARTITION_LABEL_OPTION = "drill.exec.storage.file.partition.column.label"


def label_option(kind: ImplicitKind) -> str:
    """The option that renames an implicit column, e.g.
    ``drill.exec.storage.implicit.suffix.column.label``."""
    return f"drill.exec.storage.implicit.{kind.value}.column.label"


@dataclass(frozen=True)
class ImplicitMarker:
    """Tags an implicit column in the scan schema: its kind, and for partitions which one."""

    kind: ImplicitKind
    index: int = -1  # dirN: N
    key: str = ""  # key=value: the key

    def describe(self) -> str:
        if self.kind is ImplicitKind.PARTITION:
            return f"dir{self.index}"
        if self.kind is ImplicitKind.PARTITION_KEY:
            return f"partition key {self.key}"
        return self.kind.value


@dataclass(frozen=True)
class ImplicitOptions:
    """What the implicit-column resolver needs to know about the session and the selection.

    Attributes:
        labels: column name per kind; an empty name disables that column.
        partition_label: prefix of partition columns (``dir``).
        max_partition_depth: the deepest directory level of any file in the whole selection
            (so every file of the scan yields the same wildcard columns).
        partition_keys: keys of ``key=value`` directories in the selection, in order.
        legacy_wildcard_expansion: a wildcard brings the partition columns (Drill's default).
    """

    labels: Mapping[ImplicitKind, str] = field(default_factory=lambda: dict(DEFAULT_LABELS))
    partition_label: str = "dir"
    max_partition_depth: int = 0
    partition_keys: tuple[str, ...] = ()
    legacy_wildcard_expansion: bool = True

    @classmethod
    def from_options(
        cls,
        options: Mapping[str, object] | None = None,
        *,
        max_partition_depth: int = 0,
        partition_keys: Iterable[str] = (),
        legacy_wildcard_expansion: bool = True,
    ) -> ImplicitOptions:
        """Read labels from session options (Drill's option names; missing ones default)."""
        options = options or {}
        labels = {
            kind: str(options.get(label_option(kind), default))
            for kind, default in DEFAULT_LABELS.items()
        }
        return cls(
            labels=labels,
            partition_label=str(options.get(PARTITION_LABEL_OPTION, "dir")),
            max_partition_depth=max_partition_depth,
            partition_keys=tuple(partition_keys),
            legacy_wildcard_expansion=legacy_wildcard_expansion,
        )

    def marker_for(self, name: str) -> ImplicitMarker | None:
        """The implicit column a projected name refers to, if any."""
        lname = name.lower()
        for kind, label in self.labels.items():
            if label and label.lower() == lname:
                return ImplicitMarker(kind)
        if self.partition_label:
            m = re.fullmatch(re.escape(self.partition_label) + r"(\d+)", name, re.IGNORECASE)
            if m:
                return ImplicitMarker(ImplicitKind.PARTITION, int(m.group(1)))
        for key in self.partition_keys:
            if key.lower() == lname:
                return ImplicitMarker(ImplicitKind.PARTITION_KEY, key=key)
        return None


def implicit_type(marker: ImplicitMarker, name: str) -> ColumnMetadata:
    """The column an implicit marker produces: VARCHAR, NOT NULL for file columns, nullable for
    partitions (a file may sit above a level) and ``$project_metadata$``."""
    nullable = marker.kind in (
        ImplicitKind.PARTITION,
        ImplicitKind.PARTITION_KEY,
        ImplicitKind.PROJECT_METADATA,
    )
    mode = DataMode.OPTIONAL if nullable else DataMode.REQUIRED
    return ColumnMetadata(name, MinorType.VARCHAR, mode)


# ---------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class ImplicitColumn:
    """One implicit column of the output: its metadata and what fills it."""

    column: ColumnMetadata
    marker: ImplicitMarker

    @property
    def name(self) -> str:
        return self.column.name


@dataclass(frozen=True)
class ImplicitColumns:
    """The implicit columns of a scan, in output order (the result of resolution)."""

    columns: tuple[ImplicitColumn, ...] = ()

    @property
    def schema(self) -> TupleSchema:
        return TupleSchema(c.column for c in self.columns)

    def is_empty(self) -> bool:
        return not self.columns

    def values(self, file: FileDescrip) -> list[str | None]:
        """Each column's value for ``file``."""
        return [file.value(c.marker) for c in self.columns]

    def arrays(self, file: FileDescrip, row_count: int) -> list[pa.Array]:
        """Constant Arrow string columns of ``row_count`` rows for ``file``."""
        return [constant_array(text_scalar(v, pa.string()), row_count) for v in self.values(file)]


def constant_array(
    value: pa.Scalar, row_count: int, arrow_type: pa.DataType | None = None
) -> pa.Array:
    """``row_count`` copies of one implicit value (a null scalar gives nulls), as
    ``arrow_type`` (default: the value's own type)."""
    arr = pa.repeat(value, row_count)
    return arr if arrow_type is None or arr.type.equals(arrow_type) else arr.cast(arrow_type)


def _check_provided_tag(col: ColumnMetadata, tag: str, options: ImplicitOptions) -> ImplicitMarker:
    lower = tag.strip().lower()
    for kind in _FILE_KINDS:
        if lower == kind.value:
            if col.type is not MinorType.VARCHAR or col.mode is DataMode.REPEATED:
                raise UserError.validation(
                    f"Provided column `{col.name}` is marked as implicit '{tag}', "
                    "but is of the wrong type",
                    ["Expected type: VARCHAR", "Expected cardinality: REQUIRED or OPTIONAL"],
                )
            return ImplicitMarker(kind)
    prefixes = {"dir", options.partition_label.lower()} - {""}
    for prefix in prefixes:
        m = re.fullmatch(re.escape(prefix) + r"(\d+)", lower)
        if m:
            if col.type is not MinorType.VARCHAR or col.mode is not DataMode.OPTIONAL:
                raise UserError.validation(
                    f"Provided column `{col.name}` is marked as a parition column, "
                    "but is of the wrong type",
                    ["Expected type: VARCHAR", "Expected cardinality: OPTIONAL"],
                )
            return ImplicitMarker(ImplicitKind.PARTITION, int(m.group(1)))
    raise UserError.validation(
        f"Provided column {col.name} references an undefined implicit column type '{tag}'"
    )


def resolve_implicit_columns(
    tracker: ScanSchemaTracker, options: ImplicitOptions | None = None
) -> ImplicitColumns:
    """Mark the implicit columns of a scan in its tracker and return them in output order.

    Call once, right after building the tracker and before any reader runs.

    Raises:
        UserError: a provided-schema column is tagged with a wrong type or an unknown kind.
    """
    options = options or ImplicitOptions()
    schema = tracker.internal_schema()
    referenced: set[tuple[ImplicitKind, int, str]] = set()

    def mark(sc: ScanColumn, column: ColumnMetadata, marker: ImplicitMarker) -> None:
        schema.replace(sc, ScanColumn(column, sc.projection, None, marker))
        referenced.add((marker.kind, marker.index, marker.key.lower()))

    for sc in schema.columns():
        tag = sc.column.properties.get(IMPLICIT_PROPERTY)
        if tag is not None:
            mark(sc, sc.column, _check_provided_tag(sc.column, str(tag), options))
            continue
        if sc.projection is None:
            continue  # found by a wildcard: a table column, whatever its name
        marker = options.marker_for(sc.name)
        if marker is None:
            continue
        if not sc.projection.is_simple:
            log.warning("Projected column %s shadows implicit column %s", sc.name, sc.name)
            continue
        mark(sc, implicit_type(marker, sc.name), marker)

    if tracker.projection_type is ProjectionType.ALL and options.legacy_wildcard_expansion:
        for i in range(options.max_partition_depth):
            if (ImplicitKind.PARTITION, i, "") not in referenced and options.partition_label:
                marker = ImplicitMarker(ImplicitKind.PARTITION, i)
                name = f"{options.partition_label}{i}"
                if name not in schema:
                    tracker.expand_implicit_col(implicit_type(marker, name), marker)
        for key in options.partition_keys:
            if (
                ImplicitKind.PARTITION_KEY,
                -1,
                key.lower(),
            ) not in referenced and key not in schema:
                marker = ImplicitMarker(ImplicitKind.PARTITION_KEY, key=key)
                tracker.expand_implicit_col(implicit_type(marker, key), marker)

    tracker.apply_implicit_cols()
    return ImplicitColumns(
        tuple(
            ImplicitColumn(sc.metadata(), sc.implicit) for sc in schema.columns() if sc.is_implicit
        )
    )


# -------------------------------------------------------------------------------- values


#: ``scheme://authority`` of a URI other than ``file:``, and the rest of it
_REMOTE_URI = re.compile(r"^((?!file://)[A-Za-z][A-Za-z0-9+.-]+://[^/]*)(.*)$", re.DOTALL)


def strip_scheme(path: str) -> str:
    """``file:/w/x.csv`` → ``/w/x.csv``; plain paths as is. A file in another file system
    keeps its URI (``s3a://bucket/w/x.csv``): without it two buckets' files look the same."""
    remote = _REMOTE_URI.match(path)
    if remote is not None:
        key = posixpath.normpath("/" + remote.group(2).lstrip("/"))
        return remote.group(1) + ("" if key == "/" else key)
    parsed = urlparse(path)
    if parsed.scheme and len(parsed.scheme) > 1:
        path = unquote(parsed.path) or "/"
    if path.startswith("//"):
        path = "/" + path.lstrip("/")
    return posixpath.normpath(path) if path else path


@dataclass(frozen=True)
class FileDescrip:
    """One file of a scan and the facts implicit columns are made of.

    Args:
        path: the file (a path or a URI).
        selection_root: the directory the query named; partitions are relative to it.
        modification_time: last modification, epoch milliseconds (``lmt``).
        row_group: (index, start, length) of the Parquet row group being read, if any.
        empty: the file has no rows (answers ``$project_metadata$``).

    Raises:
        ValueError: the file is not under the selection root.
    """

    path: str
    selection_root: str | None = None
    modification_time: int | None = None
    row_group: tuple[int, int, int] | None = None
    empty: bool = False
    dirs: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "dirs", tuple(_dirs_below(self.fqn, self.selection_root)))

    @property
    def fqn(self) -> str:
        return strip_scheme(self.path)

    @property
    def filepath(self) -> str:
        return posixpath.dirname(self.fqn)

    @property
    def filename(self) -> str:
        return posixpath.basename(self.fqn)

    @property
    def suffix(self) -> str:
        name = self.filename
        dot = name.rfind(".")
        return "" if dot < 0 else name[dot + 1 :]

    def partition(self, index: int) -> str | None:
        """The ``dir{index}`` value: the index-th directory below the root, or ``None``."""
        return self.dirs[index] if 0 <= index < len(self.dirs) else None

    def partition_key(self, key: str) -> str | None:
        """The value of a ``key=value`` directory on this file's path, or ``None``."""
        lkey = key.lower()
        for d in self.dirs:
            k, eq, v = d.partition("=")
            if eq and unquote(k).lower() == lkey:
                value = unquote(v)
                return None if value == HIVE_NULL else value
        return None

    def value(self, marker: ImplicitMarker) -> str | None:
        kind = marker.kind
        if kind is ImplicitKind.FQN:
            return self.fqn
        if kind is ImplicitKind.FILEPATH:
            return self.filepath
        if kind is ImplicitKind.FILENAME:
            return self.filename
        if kind is ImplicitKind.SUFFIX:
            return self.suffix
        if kind is ImplicitKind.PARTITION:
            return self.partition(marker.index)
        if kind is ImplicitKind.PARTITION_KEY:
            return self.partition_key(marker.key)
        if kind is ImplicitKind.LMT:
            return None if self.modification_time is None else str(self.modification_time)
        if kind is ImplicitKind.PROJECT_METADATA:
            return "false" if self.empty else None
        if self.row_group is None or kind is ImplicitKind.ROWS:
            return None
        pos = {ImplicitKind.RGI: 0, ImplicitKind.RGS: 1, ImplicitKind.RGL: 2}[kind]
        return str(self.row_group[pos])


def _dirs_below(fqn: str, root: str | None) -> list[str]:
    if not root:
        return []
    root_path = strip_scheme(root).rstrip("/") or "/"
    parent = posixpath.dirname(fqn)
    if parent == root_path:
        return []
    prefix = root_path if root_path.endswith("/") else root_path + "/"
    if not parent.startswith(prefix):
        raise ValueError(f"File {fqn} is not under the selection root {root_path}")
    return parent[len(prefix) :].split("/")


def implicit_values(
    path: str,
    selection_root: str | None = None,
    *,
    options: ImplicitOptions | None = None,
    modification_time: int | None = None,
) -> dict[str, str | None]:
    """Every implicit and partition value of one file, keyed by (label) column name.

    ``dirN`` runs to the file's own depth (or ``options.max_partition_depth`` if deeper), and
    each ``key=value`` directory adds ``key``. Disabled labels are left out.

    Example:
        >>> v = implicit_values("file:/w/x/y/foo.csv", "file:/w")
        >>> v["fqn"], v["filepath"], v["filename"], v["suffix"], v["dir0"], v["dir1"]
        ('/w/x/y/foo.csv', '/w/x/y', 'foo.csv', 'csv', 'x', 'y')
    """
    options = options or ImplicitOptions()
    file = FileDescrip(path, selection_root, modification_time)
    out: dict[str, str | None] = {}
    for kind in (*_FILE_KINDS, ImplicitKind.LMT):
        label = options.labels.get(kind, "")
        if label:
            out[label] = file.value(ImplicitMarker(kind))
    if options.partition_label:
        for i in range(max(len(file.dirs), options.max_partition_depth)):
            out[f"{options.partition_label}{i}"] = file.partition(i)
    keys = list(options.partition_keys) or _keys_of(file.dirs)
    for key in keys:
        out.setdefault(key, file.partition_key(key))
    return out


def _keys_of(dirs: Sequence[str]) -> list[str]:
    return [unquote(d.split("=", 1)[0]) for d in dirs if "=" in d and not d.startswith("=")]


def max_partition_depth(paths: Iterable[str], selection_root: str | None) -> int:
    """The deepest directory level below the root over all files (the wildcard's dirN count)."""
    return max((len(FileDescrip(p, selection_root).dirs) for p in paths), default=0)


def partition_keys(paths: Iterable[str], selection_root: str | None) -> list[str]:
    """Keys of ``key=value`` directories over all files, in first-seen order, one per key
    (case-insensitive)."""
    seen: dict[str, str] = {}
    for p in paths:
        for key in _keys_of(FileDescrip(p, selection_root).dirs):
            seen.setdefault(key.lower(), key)
    return list(seen.values())


#: Column sources of a planned scan that are file metadata, and their kinds.
_SOURCE_KINDS: Mapping[str, ImplicitKind] = {
    ColumnSource.FQN: ImplicitKind.FQN,
    ColumnSource.FILEPATH: ImplicitKind.FILEPATH,
    ColumnSource.FILENAME: ImplicitKind.FILENAME,
    ColumnSource.SUFFIX: ImplicitKind.SUFFIX,
    ColumnSource.LMT: ImplicitKind.LMT,
    ColumnSource.ROWS: ImplicitKind.ROWS,
}


def source_marker(source: str) -> ImplicitMarker | None:
    """The marker of a planned column's source tag (``None``: a table or missing column)."""
    kind = _SOURCE_KINDS.get(source)
    if kind is not None:
        return ImplicitMarker(kind)
    if ColumnSource.is_partition(source):
        return ImplicitMarker(ImplicitKind.PARTITION, int(source[3:]))
    if ColumnSource.is_hive_key(source):
        return ImplicitMarker(ImplicitKind.PARTITION_KEY, key=source[4:])
    return None


def describe_file(path: str, selection_root: str | None, mtime: float = 0.0) -> FileDescrip:
    """The :class:`FileDescrip` of a planned file (``mtime`` in seconds, 0 if unknown).

    A file outside the selection root (a planning slip) still has its file columns, and no
    partition values.
    """
    lmt = int(mtime * 1000) if mtime else None
    try:
        return FileDescrip(path, selection_root, lmt)
    except ValueError:
        log.warning("File %s is outside the selection root %s", path, selection_root)
        return FileDescrip(path, None, lmt)


def implicit_value(
    source: str, path: str, selection_root: str | None, mtime: float = 0.0
) -> str | None:
    """The value of a planned implicit or partition column for one file (``None``: a
    directory level or ``key=value`` directory the file does not have).

    Raises:
        ValueError: ``source`` is not an implicit or partition column's tag.
    """
    marker = source_marker(source)
    if marker is None or marker.kind is ImplicitKind.ROWS:
        raise ValueError(f"unknown column source {source}")
    return describe_file(path, selection_root, mtime).value(marker)
