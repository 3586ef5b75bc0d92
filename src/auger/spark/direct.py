"""Plain PySpark reads: ``spark.read.format("auger").option("format", "csv").load(path)``.

Without auger's SQL layer the data source plans the scan itself from the reader options, with
Drill's semantics: a headerless text file is one ``columns`` array, ``dir0``, ``dir1``... and
hive-style ``key=value`` columns follow the table columns, implicit columns (``filename``,
``fqn``...) appear when asked, and columns named in ``columns`` that the files lack are typed
nulls.

Options (keys are case-insensitive, values strings, as Spark passes them):

- ``path`` / ``paths`` (from ``load``): a file, a directory or a glob;
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
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from auger.config import COMPRESSION_SUFFIXES, DEFAULT_FORMATS, FormatConfig
from auger.errors import UserError
from auger.formats.conflicts import check_read
from auger.scan.spec import ColumnSource, FileSplit, ScanSpec
from auger.storage.selection import FileSelection, select_files
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["plan_direct_read", "respec_for_schema"]

_RESERVED = {"path", "paths", "format", "columns", "implicit_columns", "pushdown", "spec"}
_SESSION_PREFIXES = ("store.", "auger.", "drill.", "exec.", "planner.")

_IMPLICIT_DEFAULTS: Mapping[str, tuple[str, str]] = {
    ColumnSource.FQN: ("drill.exec.storage.implicit.fqn.column.label", "fqn"),
    ColumnSource.FILEPATH: ("drill.exec.storage.implicit.filepath.column.label", "filepath"),
    ColumnSource.FILENAME: ("drill.exec.storage.implicit.filename.column.label", "filename"),
    ColumnSource.SUFFIX: ("drill.exec.storage.implicit.suffix.column.label", "suffix"),
    ColumnSource.LMT: ("drill.exec.storage.implicit.last_modified_time.column.label", "lmt"),
}


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


def _select(paths: list[str]) -> FileSelection:
    selections = [select_files(os.path.abspath(os.path.expanduser(p))) for p in paths]
    if len(selections) == 1:
        return selections[0]
    files = tuple(f for s in selections for f in s.files)
    root = os.path.commonpath([s.root for s in selections])
    return FileSelection(root, files, True)


def _format(options: Mapping[str, str], selection: FileSelection) -> FormatConfig:
    name = str(options.get("format") or "").strip().lower()
    if not name:
        probe = selection.files[0].path if selection.files else ""
        ext = probe.rsplit(".", 1)[-1].lower() if "." in os.path.basename(probe) else ""
        for fname, entry in DEFAULT_FORMATS.items():
            if ext in entry["extensions"]:
                name = fname
                break
        else:
            raise UserError.validation(
                f"Cannot tell the format of [{probe or selection.root}]",
                ["Fix: .option('format', 'csv' | 'tsv' | 'psv' | 'csvh' | 'json' | 'parquet')"],
            )
    if name == "text":
        name = "csv"
    raw: dict[str, Any] | None = DEFAULT_FORMATS.get(name)
    if raw is None:
        from auger.formats.registry import known_formats

        if name not in known_formats():
            raise UserError.validation(
                f"Unknown format [{name}]",
                [f"Known formats: {', '.join([*DEFAULT_FORMATS, *known_formats()])}"],
            )
        raw = {"type": name, "extensions": [name]}
    fmt_options = {k: v for k, v in raw.items() if k not in ("type", "extensions")}
    for key, value in options.items():
        if key in _RESERVED or key.startswith(_SESSION_PREFIXES):
            continue
        fmt_options[key] = _value(str(value))
    return FormatConfig(name, raw["type"], tuple(raw["extensions"]), fmt_options)


def _of_format(selection: FileSelection, fmt: FormatConfig) -> FileSelection:
    """Only the files with one of the format's extensions, as Drill reads a directory (all files
    when none has one: the user named the format for files with another extension)."""

    def ext(path: str) -> str:
        name = os.path.basename(path).lower()
        for suffix in COMPRESSION_SUFFIXES:
            name = name.removesuffix(suffix)
        return name.rsplit(".", 1)[-1] if "." in name else ""

    wanted = {e.lower() for e in fmt.extensions}
    files = tuple(f for f in selection.files if ext(f.path) in wanted)
    if not files:
        return selection
    return FileSelection(selection.root, files, selection.is_directory)


def _projection(options: Mapping[str, str]) -> list[str]:
    text = str(options.get("columns") or "").strip()
    if not text or text == "*":
        return ["*"]
    if text.startswith("["):
        return [str(c) for c in json.loads(text)]
    return [c.strip() for c in text.split(",") if c.strip()]


def _session_options(options: Mapping[str, str]) -> dict[str, Any]:
    from auger.options import OPTIONS

    out: dict[str, Any] = {name: d.default for name, d in OPTIONS.items()}
    lowered = {name.lower(): name for name in OPTIONS}
    for key, value in options.items():
        if key.startswith(_SESSION_PREFIXES):
            out[lowered.get(key, key)] = _value(str(value))
    return out


def _labels(options: Mapping[str, Any]) -> dict[str, str]:
    """Implicit column label (lower-cased) → source tag, honouring relabelling options."""
    return {
        str(options.get(opt, default)).lower(): src
        for src, (opt, default) in _IMPLICIT_DEFAULTS.items()
    }


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
    from auger.spark.discovery import discover_schema

    options = {k.lower(): v for k, v in options.items()}
    selection = _select(_paths(options))
    fmt = _format(options, selection)
    selection = _of_format(selection, fmt)
    session = _session_options(options)
    labels = _labels(session)
    dir_label = str(session.get("drill.exec.storage.file.partition.column.label", "dir")).lower()
    hive_all = {k.lower(): k for k in selection.hive_keys()}
    if given_schema is not None and fmt.type == "parquet":
        from auger.types.spark import spark_to_column

        table_schema = TupleSchema(
            spark_to_column(f.name, f.dataType, True)
            for f in given_schema.fields
            if _special_source(f.name.lower(), labels, dir_label, hive_all) is None
        )
    elif selection.files:
        table_schema = discover_schema(selection, fmt, session)
    else:
        table_schema = TupleSchema()
    projection = _projection(options)
    wanted_implicit = _wanted_implicit(options, labels)

    out = TupleSchema()
    sources: dict[str, str] = {}

    def add(col: ColumnMetadata, source: str) -> None:
        if source == ColumnSource.TABLE:
            check_read(col)  # the data source reads whole columns
        if col.name not in out:
            out.add(col)
            sources[col.name] = source

    hive = {k.lower(): k for k in selection.hive_keys() if k not in table_schema}
    for item in projection:
        if item == "*":
            for col in table_schema:
                if col.name.lower() not in labels or col.name.lower() not in wanted_implicit:
                    add(col, ColumnSource.TABLE)
            for level in range(selection.max_depth):
                add(ColumnMetadata(f"{dir_label}{level}", MinorType.VARCHAR), f"dir{level}")
            for key in hive.values():
                add(ColumnMetadata(key, MinorType.VARCHAR), f"key:{key}")
            continue
        name = _root_name(item)
        low = name.lower()
        special = _special_source(low, labels, dir_label, hive)
        if special is not None and (low not in table_schema or low in labels):
            add(ColumnMetadata(name, MinorType.VARCHAR), special)
        elif (found := table_schema.column(low)) is not None:
            add(found, ColumnSource.TABLE)
        else:
            add(ColumnMetadata(name, MinorType.INT, DataMode.OPTIONAL), ColumnSource.MISSING)
    for label in wanted_implicit:
        add(ColumnMetadata(label, MinorType.VARCHAR), labels[label])

    return ScanSpec(
        format_name=fmt.name,
        format_type=fmt.type,
        format_options=dict(fmt.options),
        selection_root=selection.root,
        files=tuple(FileSplit(f.path, f.size, f.mtime) for f in selection.files),
        output_schema=out.to_text(),
        sources=sources,
        projection=tuple(projection),
        options={k: v for k, v in session.items() if k.startswith(("store.json.", "auger.scan."))},
        table=", ".join(_paths(options)),
    )


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


def _special_source(
    low: str, labels: Mapping[str, str], dir_label: str, hive: Mapping[str, str]
) -> str | None:
    if low in labels:
        return labels[low]
    if low.startswith(dir_label) and low[len(dir_label) :].isdigit():
        return f"dir{int(low[len(dir_label) :])}"
    if low in hive:
        return f"key:{hive[low]}"
    return None


def respec_for_schema(spec: ScanSpec, spark_schema: Any) -> ScanSpec:
    """The spec delivering a schema the user gave with ``.schema(...)`` instead of the
    discovered one: that schema becomes the defined schema files are conformed to."""
    from auger.types.spark import spark_to_column

    session = dict(spec.options)
    labels = _labels(session)
    dir_label = str(session.get("drill.exec.storage.file.partition.column.label", "dir")).lower()
    known = {name.lower(): src for name, src in spec.sources.items()}
    out = TupleSchema()
    sources: dict[str, str] = {}
    for f in spark_schema.fields:
        col = spark_to_column(f.name, f.dataType, True)
        low = f.name.lower()
        source = known.get(low)
        if source is None or source == ColumnSource.MISSING:
            source = _special_source(low, labels, dir_label, {}) or ColumnSource.TABLE
        if source == ColumnSource.TABLE and col.mode is DataMode.REQUIRED and not col.is_map:
            col = col.with_mode(DataMode.OPTIONAL)
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
