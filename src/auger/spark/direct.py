"""Plain PySpark reads: ``spark.read.format("auger").option("format", "csv").load(path)``.

Without auger's SQL layer the data source turns the reader options into a table and a
projection and plans the scan with the very function SQL uses (:mod:`auger.scan.plan`), so a
read gives what ``SELECT <columns> FROM <path>`` gives: a headerless text file is one
``columns`` array, ``dir0``, ``dir1``... and hive-style ``key=value`` columns come with ``*``
(before the data for Parquet, after it otherwise), implicit columns (``filename``, ``fqn``...)
appear when asked, columns named in ``columns`` that the files lack are typed nulls (blanks for
text), a directory's ``.drill.schema`` is honoured (over text files the scan itself converts the
columns it types: trims, blanks, defaults, date patterns), and a directory of two known formats
is an error.

Options (keys are case-insensitive, values strings, as Spark passes them):

- ``path`` / ``paths`` (from ``load``): a file, a directory or a glob, local or an object's URI
  (``s3a://bucket/logs``);
- ``fs.s3a.endpoint``, ``fs.s3a.access.key``... : the object store's settings, as a storage
  plugin's ``config`` takes them (default: the environment's);
- ``format``: ``csv``, ``tsv``, ``psv``, ``csvh``, ``json``, ``parquet`` (Drill's format names)
  or a reader type (``text``); default from the first file's extension;
- format options: ``delimiter``, ``extract_header``, ``skip_first_line``, ``quote``,
  ``escape``, ``comment``... (``true``/``false`` become booleans);
- ``columns``: the projection, comma-separated (``a, m.x, columns[1]``) or a JSON list;
  default ``*``;
- ``implicit_columns``: ``true`` for ``fqn, filepath, filename, suffix``, or a comma list of
  labels (``filename,lmt``);
- session options by name (``store.json.all_text_mode``, ``auger.scan.json_sample_rows``,
  ``auger.scan.target_split_bytes``, the ``drill.exec.storage.*`` labels).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from auger.config import DEFAULT_FORMATS, FormatConfig, PluginConfig, default_formats
from auger.errors import UserError
from auger.formats.lakehouse import DELTA, ICEBERG, table_kind
from auger.formats.registry import known_formats
from auger.options import OPTIONS
from auger.scan.lakehouse import lakehouse_scan_table
from auger.scan.missing import planned_fill
from auger.scan.plan import (
    Discover,
    Requested,
    ScanTable,
    discover_table,
    implicit_labels,
    partition_label,
    partition_source,
    plan_scan,
)
from auger.scan.spec import ColumnSource, ScanSpec
from auger.spark.discovery import discover_schema
from auger.storage import filesystem as fs
from auger.storage.selection import FileSelection, select_files
from auger.types import TupleSchema
from auger.types.spark import spark_to_column

__all__ = ["plan_direct_read", "respec_for_schema"]

_RESERVED = {"path", "paths", "format", "columns", "implicit_columns", "pushdown", "spec"}
_SESSION_PREFIXES = ("store.", "auger.", "drill.", "exec.", "planner.")


def _value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low.lstrip("-").isdigit() and len(low) < 19:
        return int(low)
    return text


def _paths(options: Mapping[str, str]) -> list[str]:
    if options.get("paths"):
        return [str(p) for p in json.loads(options["paths"])]
    if options.get("path"):
        return [str(options["path"])]
    raise UserError.validation(
        "No path given to the auger data source",
        ["Fix: spark.read.format('auger').option('format', 'csv').load('/path/to/files')"],
    )


def _select(paths: list[str], options: Mapping[str, str]) -> FileSelection:
    settings = {k: v for k, v in options.items() if k.startswith("fs.")}
    for p in paths:
        # an object store's settings given as options (``fs.s3a.endpoint``...) are its own
        remote = fs.config_for_plugin(p, settings) if fs.is_uri(p) else None
        if remote is not None and settings:
            fs.register(remote)
    selections = [
        select_files(p if fs.is_uri(p) else os.path.abspath(os.path.expanduser(p))) for p in paths
    ]
    if len(selections) == 1:
        return selections[0]
    files = tuple(f for s in selections for f in s.files)
    roots = [s.root for s in selections]
    if any(fs.is_uri(r) for r in roots):
        common: list[str] = []
        for parts in zip(*(r.split("/") for r in roots), strict=False):
            if len(set(parts)) != 1:
                break
            common.append(parts[0])
        root = "/".join(common)
    else:
        root = os.path.commonpath(roots)
    return FileSelection(root, files, True)


def _format(options: Mapping[str, str], selection: FileSelection) -> FormatConfig:
    name = str(options.get("format") or "").strip().lower()
    if not name:
        # the first file of a known format decides, as SQL picks a directory's format (a
        # README listed first is no reason to refuse a directory of JSON files)
        format_of = _format_of()
        found = next((f for f in (format_of(s.path) for s in selection.files) if f), None)
        if found is None:
            probe = selection.files[0].path if selection.files else selection.root
            raise UserError.validation(
                f"Cannot tell the format of [{probe}]",
                ["Fix: .option('format', 'csv' | 'tsv' | 'psv' | 'csvh' | 'json' | 'parquet')"],
            )
        name = found.name
    if name == "text":
        name = "csv"
    # a built-in format needs no look-up of the installed plugins' entry points
    raw: dict[str, Any] | None = DEFAULT_FORMATS.get(name) or default_formats().get(name)
    if raw is None:
        if name not in known_formats():
            raise UserError.validation(
                f"Unknown format [{name}]",
                [f"Known formats: {', '.join([*default_formats(), *known_formats()])}"],
            )
        raw = {"type": name, "extensions": [name]}
    fmt_options = {k: v for k, v in raw.items() if k not in ("type", "extensions")}
    for key, value in options.items():
        if key in _RESERVED or key.startswith(_SESSION_PREFIXES):
            continue
        fmt_options[key] = _value(str(value))
    return FormatConfig(name, raw["type"], tuple(raw["extensions"]), fmt_options)


def _known_formats(defaults: Mapping[str, Mapping[str, Any]] | None = None) -> PluginConfig:
    """The default file formats (``defaults``, else the built-in and installed plugins'), to
    tell a file's format by its extension."""
    formats = {
        name: FormatConfig(name, str(raw["type"]), tuple(raw["extensions"]))
        for name, raw in (default_formats() if defaults is None else defaults).items()
    }
    return PluginConfig("auger", "file", {}, formats)


def _format_of() -> Callable[[str], FormatConfig | None]:
    """A file's default format by its name: a built-in format's extension is told without
    looking up the installed plugins' entry points (their extensions are others), which a
    Python worker planning a read of JSON or CSV then never imports."""
    builtin = _known_formats(DEFAULT_FORMATS)
    every: list[PluginConfig] = []

    def format_of(path: str) -> FormatConfig | None:
        found = builtin.format_for(path)
        if found is None:
            if not every:
                every.append(_known_formats())
            found = every[0].format_for(path)
        return found

    return format_of


def _projection(options: Mapping[str, str]) -> list[str]:
    text = str(options.get("columns") or "").strip()
    if not text or text == "*":
        return ["*"]
    if text.startswith("["):
        return [str(c) for c in json.loads(text)]
    return [c.strip() for c in text.split(",") if c.strip()]


def _session_options(options: Mapping[str, str]) -> dict[str, Any]:

    out: dict[str, Any] = {name: d.default for name, d in OPTIONS.items()}
    lowered = {name.lower(): name for name in OPTIONS}
    for key, value in options.items():
        if key.startswith(_SESSION_PREFIXES):
            out[lowered.get(key, key)] = _value(str(value))
    return out


def _root_name(path: str) -> str:
    """The root column of a projected path: ``m.x`` → ``m``, ``columns[1]`` → ``columns``."""
    name = path.strip().strip("`")
    for sep in (".", "["):
        if sep in name:
            name = name.split(sep, 1)[0]
    return name.strip("`")


def plan_direct_read(options: Mapping[str, str], given_schema: Any = None) -> ScanSpec:
    """Plan a scan from data source options (see the module docstring).

    ``given_schema`` is a Spark schema the user passed with ``.schema(...)``. For Parquet it
    replaces discovery (the footers are read by the tasks anyway, and the scan converts); text and
    JSON are still discovered, so that their readers produce the files' own types.
    """

    options = {k.lower(): v for k, v in options.items()}
    paths = _paths(options)
    lakehouse = _lakehouse(paths, options)
    if lakehouse is not None:
        return _plan(lakehouse, options, _session_options(options))
    selection = _select(paths, options)
    fmt = _format(options, selection)
    session = _session_options(options)
    labels = implicit_labels(session)
    discover: Discover = discover_schema
    if given_schema is not None and fmt.type == "parquet":
        dir_label = partition_label(session)
        hive = {k.lower() for k in selection.hive_keys()}
        given = TupleSchema(
            spark_to_column(f.name, f.dataType, True)
            for f in given_schema.fields
            if f.name.lower() not in labels
            and f.name.lower() not in hive
            and partition_source(f.name, dir_label) is None
        )

        def discover_given(*_: Any) -> TupleSchema:
            return given

        discover = discover_given

    location = ", ".join(paths)

    def load_of(glob: str) -> str | None:
        return f'load("{paths[0].rstrip("/")}/{glob}")' if len(paths) == 1 else None

    found = discover_table(
        selection, fmt, session, discover, _format_of(), location, location, table_for=load_of
    )
    return _plan(found, options, session)


def _lakehouse(paths: list[str], options: Mapping[str, str]) -> ScanTable | None:
    """An Iceberg or Delta table's directory, read as that table (not as its files), unless
    the options name a file format."""
    fmt = str(options.get("format") or "").strip().lower()
    if len(paths) != 1 or fmt not in ("", ICEBERG, DELTA):
        return None
    path = paths[0] if fs.is_uri(paths[0]) else os.path.abspath(os.path.expanduser(paths[0]))
    if not fmt and _format_of()(path) is not None:
        return None  # a file of a known format is no table directory: nothing more to ask
    kind = fmt or table_kind(path)
    if kind is None:
        return None
    known = _known_formats(DEFAULT_FORMATS)
    return lakehouse_scan_table(
        kind,
        path,
        options,
        lambda ftype: next((f for f in known.formats.values() if f.type == ftype), None),
        _session_options(options),
        path,
    )


def _plan(found: ScanTable, options: Mapping[str, str], session: Mapping[str, Any]) -> ScanSpec:
    """The scan of a discovered table for the columns the options ask for."""
    labels = implicit_labels(session)
    requested = Requested()
    for item in _projection(options):
        if item == "*":
            requested.star = True
        else:
            requested.add(_root_name(item), item.strip().replace("`", ""))
    for label in _wanted_implicit(options, labels):
        requested.add(label)
    return plan_scan(found, requested, session, check_types=True).spec


def _wanted_implicit(options: Mapping[str, str], labels: Mapping[str, str]) -> list[str]:
    text = str(options.get("implicit_columns") or "").strip().lower()
    if not text or text == "false":
        return []
    if text in ("true", "all", "*"):
        wanted = [ColumnSource.FQN, ColumnSource.FILEPATH, ColumnSource.FILENAME]
        wanted.append(ColumnSource.SUFFIX)
        by_source = {src: label for label, src in labels.items()}
        return [by_source[s] for s in wanted]
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in labels]
    if unknown:
        raise UserError.validation(
            f"Unknown implicit column [{unknown[0]}]", [f"Known: {', '.join(sorted(labels))}"]
        )
    return names


def _special_source(low: str, labels: Mapping[str, str], dir_label: str) -> str | None:
    """The source of an implicit or partition column name, None for any other name."""
    if low in labels:
        return labels[low]
    return partition_source(low, dir_label)


def respec_for_schema(spec: ScanSpec, spark_schema: Any) -> ScanSpec:
    """The spec delivering a schema the user gave with ``.schema(...)`` instead of the
    discovered one: that schema becomes the defined schema files are conformed to."""

    session = dict(spec.options)
    labels = implicit_labels(session)
    dir_label = partition_label(session)
    known = {name.lower(): src for name, src in spec.sources.items()}
    out = TupleSchema()
    sources: dict[str, str] = {}
    for f in spark_schema.fields:
        col = spark_to_column(f.name, f.dataType, True)
        low = f.name.lower()
        source = known.get(low)
        if source is None or source == ColumnSource.MISSING:
            source = _special_source(low, labels, dir_label) or ColumnSource.TABLE
        if source == ColumnSource.TABLE and not col.is_map:
            col = planned_fill(col)  # a file without it gives NULLs, as for any planned column
        out.add(col)
        sources[col.name] = source
    projection = ("*",) if "*" in spec.projection else tuple(out.names())
    # Readers keep producing the files' own (discovered) types; the scan converts them.
    discovered = spec.schema()
    reader_cols = TupleSchema(
        discovered.column(c.name) or c for c in out if sources[c.name] == ColumnSource.TABLE
    )
    return replace(
        spec,
        output_schema=out.to_text(),
        sources=sources,
        projection=projection,
        reader_schema=reader_cols.to_text(),
    )
