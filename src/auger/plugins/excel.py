"""Drill's ``excel`` format: one sheet of an ``.xlsx`` workbook, read with python-calamine.

A sheet is a table: its header row names the columns and the rows below it are the records.
Options, under Drill's camelCase names or their snake_case forms:

================  =========  ===========================================================
``sheetName``     first      the sheet to read; a name the workbook lacks is an error
                  sheet      listing the sheets it has
``headerRow``     0          the row that holds the column names, counted from 0 (Excel's
                             row 1); empty rows at that place are skipped. ``-1``: no
                             header, the columns are ``field_1``, ``field_2``...
``lastRow``       1048576    the last row read, counted as ``headerRow`` counts
``firstColumn``   0          the first column read, counted from 1 (``A`` is 1); 0: from
                             the header row's first cell with a value
``lastColumn``    0          the column where reading stops, counted from 1 and not read
                             itself (``firstColumn = 2, lastColumn = 5``: B, C and D); 0:
                             to the header row's last cell with a value (without a
                             header: the first and last used columns of the sheet)
``allTextMode``   false      every column VARCHAR, numbers as Excel shows them (``1``,
                             ``2.5``)
================  =========  ===========================================================

Drill's POI tuning options (``maxArraySize``, ``thresholdBytesForTempFiles``,
``useTempFilePackageParts``) are accepted and have no effect.

Column names: the header cells' text, trimmed, with ``.`` replaced by ``_`` and a line break by
``__``; an empty header cell is ``field_<n>`` (its position, from 1); a name met again (in any
case) gets ``_1``, ``_2``... Column types come from the first data row, as in Drill: a number
is DOUBLE, a date or time TIMESTAMP, text (and an empty cell) VARCHAR, a boolean VARCHAR
(``TRUE``/``FALSE``). A later cell that does not fit its column's type (text in a DOUBLE
column) is a DATA_READ error naming the sheet, row and column; any value fits a VARCHAR column,
as its text. Rows with no value in the columns read are skipped.

Columns outside ``*``, only when a query names them: ``_sheets`` (the workbook's sheet names,
an array), and the workbook's document properties ``_category``, ``_content_status``,
``_content_type``, ``_creator``, ``_description``, ``_identifier``, ``_keywords``,
``_last_modified_by_user``, ``_revision``, ``_subject``, ``_title`` (VARCHAR), ``_created``,
``_last_printed`` and ``_modified`` (TIMESTAMP).
"""

from __future__ import annotations

import datetime as dt
import io
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from python_calamine import CalamineWorkbook

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import open_input
from auger.plugins.options import bool_option, int_option, option
from auger.resultset.writers.scalar import ScalarWriter
from auger.scan import FormatReader, ReaderFormatPlugin, SchemaNegotiator
from auger.scan.operator import discover_through_reader
from auger.scan.schema import EXCLUDE_FROM_WILDCARD
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["ExcelFormat", "ExcelOptions", "column_names"]

#: Excel's row limit (rows 1 to 1048576)
MAX_ROWS = 1_048_576
MISSING_NAME = "field_"
SHEETS = "_sheets"

#: document properties (docProps/core.xml): column -> (XML namespace, element)
_DC = "http://purl.org/dc/elements/1.1/"
_DCTERMS = "http://purl.org/dc/terms/"
_CP = "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
TEXT_PROPERTIES: dict[str, tuple[str, str]] = {
    "_category": (_CP, "category"),
    "_content_status": (_CP, "contentStatus"),
    "_content_type": (_CP, "contentType"),
    "_creator": (_DC, "creator"),
    "_description": (_DC, "description"),
    "_identifier": (_DC, "identifier"),
    "_keywords": (_CP, "keywords"),
    "_last_modified_by_user": (_CP, "lastModifiedBy"),
    "_revision": (_CP, "revision"),
    "_subject": (_DC, "subject"),
    "_title": (_DC, "title"),
}
TIME_PROPERTIES: dict[str, tuple[str, str]] = {
    "_created": (_DCTERMS, "created"),
    "_last_printed": (_CP, "lastPrinted"),
    "_modified": (_DCTERMS, "modified"),
}


@dataclass(frozen=True)
class ExcelOptions:
    """An ``excel`` format's options, checked once."""

    sheet_name: str = ""
    header_row: int = 0
    last_row: int = MAX_ROWS
    first_column: int = 0
    last_column: int = 0
    all_text_mode: bool = False

    @classmethod
    def from_config(cls, config: FormatConfig) -> ExcelOptions:
        opts = cls(
            sheet_name=str(option(config, "sheetName", "") or ""),
            header_row=int_option(config, "headerRow", 0),
            last_row=min(int_option(config, "lastRow", MAX_ROWS), MAX_ROWS),
            first_column=int_option(config, "firstColumn", 0),
            last_column=int_option(config, "lastColumn", 0),
            all_text_mode=bool_option(config, "allTextMode", False),
        )
        where = f"Format [{config.name}]"
        if opts.first_column < 0 or opts.last_column < 0:
            raise UserError.validation(
                f"{where}: firstColumn and lastColumn count from 1 (0: all columns), not "
                f"[{opts.first_column}] and [{opts.last_column}]",
                ["Fix: set firstColumn = 1 for column A"],
            )
        if opts.last_column and opts.last_column < opts.first_column:
            raise UserError.validation(
                f"{where}: Invalid column configuration. The first column index "
                f"[{opts.first_column}] is greater than the last column index "
                f"[{opts.last_column}]",
                ["Fix: set lastColumn above firstColumn, or 0 to read to the last column"],
            )
        if opts.header_row < -1:
            raise UserError.validation(
                f"{where}: headerRow [{opts.header_row}] must be -1 (no header) or a row from 0",
                ["Fix: set headerRow = 0 for a header in the first row"],
            )
        if opts.header_row > opts.last_row:
            raise UserError.validation(
                f"{where}: Invalid value for headerRow [{opts.header_row}]. Header row must be "
                f"less than last row [{opts.last_row}]",
                ["Fix: lower headerRow or raise lastRow"],
            )
        return opts


def _header_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def column_names(header: Sequence[Any]) -> list[str]:
    """Drill's column names for a header row's cells (see the module's description)."""
    names: list[str] = []
    taken: set[str] = set()
    for i, cell in enumerate(header):
        name = _header_text(cell).strip()
        name = name.replace(".*", "_$").replace(".", "_").replace("\r\n", "__").replace("\n", "__")
        if not name:
            name = f"{MISSING_NAME}{i + 1}"
        if name.lower() in taken:
            n = 1
            while f"{name}_{n}".lower() in taken:
                n += 1
            name = f"{name}_{n}"
        taken.add(name.lower())
        names.append(name)
    return names


def _is_empty(value: Any) -> bool:
    return value is None or value == ""


def _cell_type(value: Any, all_text: bool) -> MinorType:
    """Drill's type for a column from its first data cell."""
    if all_text or _is_empty(value) or isinstance(value, (str, bool)):
        return MinorType.VARCHAR
    if isinstance(value, (dt.date, dt.time)):
        return MinorType.TIMESTAMP
    if isinstance(value, (int, float)):
        return MinorType.FLOAT8
    return MinorType.VARCHAR


def _text(value: Any) -> str:
    """A cell's value as text, as Excel shows it."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    return str(value)


#: the day Excel's times of day are counted from, as a TIMESTAMP (as Drill reads a time cell)
_EXCEL_DAY_ZERO = dt.date(1899, 12, 31)


def _timestamp(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, dt.time):
        return dt.datetime.combine(_EXCEL_DAY_ZERO, value)
    if isinstance(value, dt.timedelta):
        return dt.datetime.combine(_EXCEL_DAY_ZERO, dt.time()) + value
    raise TypeError(type(value).__name__)


def _double(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(type(value).__name__)
    return float(value)


def _putter(minor: MinorType, writer: ScalarWriter) -> Callable[[Any], None]:
    """How a cell's value is written to a column of the type: the writer's own setter for the
    value calamine gives most often (text for VARCHAR, a float for DOUBLE), converting the
    others; a value that does not convert raises ``TypeError``."""
    if minor is MinorType.VARCHAR:
        set_string = writer.set_string

        def put_text(value: Any) -> None:
            set_string(value if value.__class__ is str else _text(value))

        return put_text
    if minor is MinorType.FLOAT8:
        set_double = writer.set_double

        def put_double(value: Any) -> None:
            set_double(value if value.__class__ is float else _double(value))

        return put_double
    set_value = writer.set

    def put_timestamp(value: Any) -> None:
        set_value(_timestamp(value))

    return put_timestamp


def _properties(data: bytes) -> dict[str, Any]:
    """The workbook's document properties (docProps/core.xml), by column name."""
    out: dict[str, Any] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            root = ET.fromstring(archive.read("docProps/core.xml"))
    except (KeyError, zipfile.BadZipFile, ET.ParseError):
        return out
    for column, (ns, tag) in TEXT_PROPERTIES.items():
        element = root.find(f"{{{ns}}}{tag}")
        if element is not None and element.text:
            out[column] = element.text
    for column, (ns, tag) in TIME_PROPERTIES.items():
        element = root.find(f"{{{ns}}}{tag}")
        if element is not None and element.text:
            try:
                stamp = dt.datetime.fromisoformat(element.text.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            if stamp.tzinfo is not None:
                stamp = stamp.astimezone(dt.UTC).replace(tzinfo=None)
            out[column] = stamp
    return out


def special_columns() -> list[ColumnMetadata]:
    """The columns only a query that names them gets (kept out of ``*``)."""
    special = {EXCLUDE_FROM_WILDCARD: "true"}
    cols = [ColumnMetadata.array(SHEETS, MinorType.VARCHAR)]
    cols += [ColumnMetadata.optional(n, MinorType.VARCHAR) for n in TEXT_PROPERTIES]
    cols += [ColumnMetadata.optional(n, MinorType.TIMESTAMP) for n in TIME_PROPERTIES]
    return [c.with_properties(**special) for c in cols]


class ExcelReader(FormatReader):
    """One sheet of one workbook, one row per non-empty sheet row below the header."""

    def __init__(self, path: str, options: ExcelOptions) -> None:
        self.path = path
        self.options = options

    def _load(self) -> tuple[list[list[Any]], list[str], bytes]:
        """The chosen sheet's cells (rows from the sheet's first row, columns from A), the
        workbook's sheet names and the file's bytes."""
        with open_input(self.path) as fh:
            data = fh.read()
        try:
            book = CalamineWorkbook.from_filelike(io.BytesIO(data))
            names = list(book.sheet_names)
        except Exception as exc:
            raise UserError.data_read(
                f"Cannot read Excel workbook: {type(exc).__name__}: {exc}",
                [f"File: {self.path}", "Fix: check that the file is an .xlsx workbook"],
            ) from exc
        wanted = self.options.sheet_name
        if wanted and wanted not in names:
            raise UserError.validation(
                f"Could not open sheet [{wanted}]: the workbook has sheets [{', '.join(names)}]",
                [f"File: {self.path}", f"Fix: set sheetName to one of {', '.join(names)}"],
            )
        if not names:
            return [], names, data
        try:
            sheet = book.get_sheet_by_name(wanted or names[0])
            cells = sheet.to_python(skip_empty_area=False)
        except Exception as exc:
            raise UserError.data_read(
                f"Cannot read sheet [{wanted or names[0]}]: {type(exc).__name__}: {exc}",
                [f"File: {self.path}"],
            ) from exc
        return cells, names, data

    def open(self, negotiator: SchemaNegotiator) -> bool:
        opts = self.options
        cells, sheet_names, data = self._load()
        self.sheet = opts.sheet_name or (sheet_names[0] if sheet_names else "")
        negotiator.add_context(f"Sheet: {self.sheet}")
        last = min(len(cells) - 1, opts.last_row)
        # the header: the first non-empty row from headerRow on (from the top without one)
        at = max(opts.header_row, 0)
        while at <= last and all(_is_empty(v) for v in cells[at]):
            at += 1
        if at > last:
            return False  # an empty sheet (or region) has no columns: Drill gives no result
        width = max((len(r) for r in cells), default=0)
        # the region's columns: those of the header row (of the whole sheet without one)
        used_first, used_last = _used_columns(
            cells[at : at + 1] if opts.header_row >= 0 else cells[at : last + 1], width
        )
        first = opts.first_column - 1 if opts.first_column else used_first
        stop = opts.last_column - 1 if opts.last_column else used_last + 1
        self.first, self.stop = first, max(first, stop)
        header_cells = _cut(cells[at], self.first, self.stop)
        if opts.header_row >= 0:
            names = column_names(header_cells)
            data_from = at + 1
        else:
            names = [f"{MISSING_NAME}{i + 1}" for i in range(len(header_cells))]
            data_from = at
        sample = next(
            (
                _cut(r, self.first, self.stop)
                for r in cells[data_from : last + 1]
                if not all(_is_empty(v) for v in _cut(r, self.first, self.stop))
            ),
            [None] * len(names),
        )
        types = [
            MinorType.VARCHAR if opts.header_row < 0 else _cell_type(v, opts.all_text_mode)
            for v in sample
        ]
        schema = TupleSchema(
            ColumnMetadata(n, t, DataMode.OPTIONAL) for n, t in zip(names, types, strict=True)
        )
        negotiator.set_table_schema(schema, complete=True)
        self.negotiator = negotiator
        self.rows = rows = negotiator.build().writer()
        projected = negotiator.is_projected
        # Columns nobody asked for are neither converted nor written.
        # Cells right of the sheet's last column are empty: their columns stay null.
        self.writers = [
            (i + self.first, name, _putter(t, rows.scalar(name)))
            for i, (name, t) in enumerate(zip(names, types, strict=True))
            if projected(name) and i + self.first < width
        ]
        self.types = dict(zip(names, types, strict=True))
        self.cells = cells
        self.at = data_from
        self.last = last
        self.specials = self._special_writers(sheet_names, data)
        return True

    def _special_writers(self, sheet_names: list[str], data: bytes) -> list[tuple[Any, Any]]:
        """``(writer, value)`` of each special column the query names."""
        wanted = [c for c in special_columns() if self.negotiator.projection.get(c.name)]
        if not wanted:
            return []
        values: dict[str, Any] = {SHEETS: sheet_names}
        if any(c.name != SHEETS for c in wanted):
            values.update(_properties(data))
        out: list[tuple[Any, Any]] = []
        for col in wanted:
            self.rows.add_column(col)
            if col.name == SHEETS:
                out.append((self.rows.array(SHEETS), sheet_names))
            else:
                out.append((self.rows.scalar(col.name), values.get(col.name)))
        return out

    def next(self) -> bool:
        rows = self.rows
        writers = self.writers
        cells = self.cells
        first, stop = self.first, self.stop
        while self.at <= self.last:
            row = cells[self.at]
            self.at += 1
            region = row[first:stop]
            if all(v is None or v == "" for v in region):
                continue
            rows.start()
            for index, name, put in writers:
                value = row[index]
                if value is None or value == "":
                    continue
                try:
                    put(value)
                except (TypeError, ValueError, OverflowError) as exc:
                    raise self._mismatch(name, value, exc) from None
            for writer, value in self.specials:
                if value is None:
                    continue
                if isinstance(value, list):
                    for v in value:
                        writer.scalar().set_string(v)
                    writer.save()
                else:
                    writer.set(value)
            rows.save()
            if rows.is_full():
                return True
        return False

    def _mismatch(self, name: str, value: Any, exc: Exception) -> UserError:
        kind = self.types[name].value
        return UserError.data_read(
            f"Cell of column [{name}] in row {self.at} holds {type(value).__name__} "
            f"[{_text(value)[:80]}], which does not fit the column's type {kind} "
            "(typed from the first data row)",
            [
                f"Sheet: {self.sheet}",
                f"Row: {self.at}",
                f"Column: {name}",
                "Fix: set allTextMode = true to read every column as VARCHAR, or give the "
                "columns' types in a provided schema",
            ],
        )

    def close(self) -> None:
        self.cells = []


def _cut(row: Sequence[Any], first: int, stop: int) -> list[Any]:
    out = list(row[first:stop])
    if len(out) < stop - first:
        out += [None] * (stop - first - len(out))
    return out


def _used_columns(cells: list[list[Any]], width: int) -> tuple[int, int]:
    """The first and last column (from 0) holding a value."""
    first, last = width, -1
    for row in cells:
        for i, v in enumerate(row):
            if not (v is None or v == ""):
                first = min(first, i)
                last = max(last, i)
                break
        for i in range(len(row) - 1, last, -1):
            if not (row[i] is None or row[i] == ""):
                last = i
                break
    return (first, last) if last >= 0 else (0, width - 1)


class ExcelFormat(ReaderFormatPlugin):
    """Drill's ``excel`` plugin: one sheet of an .xlsx workbook, typed from its first row."""

    type_name = "excel"
    extensions = ("xlsx",)

    def reader(self, file: FileSplit, config: FormatConfig) -> ExcelReader:
        return ExcelReader(file.path, ExcelOptions.from_config(config))

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        # The sheets' columns as the readers find them, and the special columns, which a
        # reader writes only when named, kept out of ``*``.
        schema = discover_through_reader(self, files, config, options).copy()
        for col in special_columns():
            if col.name not in schema:
                schema.add(col)
        return schema
