"""Drill's ``xml`` format: the elements at one nesting level of an XML file are its rows.

``dataLevel`` (default 1, the document's root element) says at which depth the rows sit: with
``<books><book>...</book><book>...</book></books>`` and ``dataLevel = 2`` each ``<book>`` is a
row and its child elements are the columns. Below the row, an element holding text is a
VARCHAR column; an element holding elements is a map of its children, to any depth. Every
value is text, as in Drill with its default ``allTextMode = true`` (``false`` is refused): a
provided schema (``.drill.schema``, or a table function's
``schema => 'inline=(year INT)'``) types the columns, and the scan converts.

Repeated elements: an element met twice in the same row (or the same map) stays one column,
the texts joined in document order and the maps merged, as Drill's reader writes them. An
element without text or children (``<note/>``) has no value. Text beside child elements, and
comments, are ignored.

Attributes go to one map column, ``attributes``, that every row has (even when the file has
none): the row element's own as ``<row element>_<attribute>``, a field's as the names from the
row's child down to the element, joined by ``_``, then ``_<attribute>`` (``title_binding``,
``address_city_zip``). Namespace prefixes are dropped from element and attribute names.

The file is read as a stream (the standard library's ``iterparse``): one row's elements are
held at a time, so memory stays bounded on large files. XML that is not well-formed fails the
query with a DATA_READ error naming the file, line and column where the parser stopped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import IO, Any

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import open_input
from auger.plugins.options import bool_option, int_option
from auger.resultset.writers.scalar import ScalarWriter
from auger.resultset.writers.tuple import TupleWriter
from auger.scan import FormatReader, ReaderFormatPlugin, SchemaNegotiator
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["XmlFormat", "XmlOptions", "element_values"]

ATTRIBUTES = "attributes"
DEFAULT_DATA_LEVEL = 1
#: expat's error code for a document without a single element
_NO_ELEMENTS = 3

#: A row's (or a map's) values: text, or a nested mapping for an element with children.
Values = dict[str, Any]


def _local(name: str) -> str:
    """``{namespace}name`` (how ElementTree spells a namespaced name) → ``name``."""
    return name.rsplit("}", 1)[1] if name[:1] == "{" else name


def _merge(values: Values, keys: dict[str, str], name: str, value: Any) -> None:
    """Put one element's value into ``values``; a name met again (in any case, as column
    names are case-insensitive) joins texts and merges maps."""
    key = keys.setdefault(name.lower(), name)
    old = values.get(key)
    if old is None:
        values[key] = value
    elif isinstance(old, str) and isinstance(value, str):
        values[key] = old + value
    elif isinstance(old, dict) and isinstance(value, dict):
        sub_keys = {k.lower(): k for k in old}
        for k, v in value.items():
            _merge(old, sub_keys, k, v)
    elif isinstance(value, dict):
        values[key] = value  # an element with children wins over a text of the same name


def element_values(row: ET.Element, attributes: dict[str, str]) -> Values:
    """A row element's children as values, its attributes and its fields' into
    ``attributes`` (the keys as in the ``attributes`` column)."""
    tag = _local(row.tag)
    for name, value in row.attrib.items():
        attributes[f"{tag}_{_local(name)}"] = value
    return _children(row, "", attributes)


def _children(element: ET.Element, prefix: str, attributes: dict[str, str]) -> Values:
    values: Values = {}
    keys: dict[str, str] = {}
    for child in element:
        if not isinstance(child.tag, str):
            continue  # a comment or processing instruction
        name = _local(child.tag)
        path = f"{prefix}_{name}" if prefix else name
        for attr, value in child.attrib.items():
            attributes[f"{path}_{_local(attr)}"] = value
        if len(child):
            _merge(values, keys, name, _children(child, path, attributes))
        else:
            text = (child.text or "").strip()
            if text:
                _merge(values, keys, name, text)
    return values


class XmlOptions:
    """An ``xml`` format's options, checked once."""

    def __init__(self, data_level: int = DEFAULT_DATA_LEVEL) -> None:
        self.data_level = data_level

    @classmethod
    def from_config(cls, config: FormatConfig) -> XmlOptions:
        if not bool_option(config, "allTextMode", True):
            raise UserError.validation(
                f"Format [{config.name}]: allTextMode = false (values typed by guessing) is "
                "not supported; every XML value is read as text",
                [
                    "Fix: leave allTextMode out (or true) and type the columns with a provided "
                    "schema, such as schema => 'inline=(`year` INT)' in a table function"
                ],
            )
        level = int_option(config, "dataLevel", DEFAULT_DATA_LEVEL)
        # Drill reads a level below 1 as 1 (the root element).
        return cls(max(level, 1))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, XmlOptions) and other.data_level == self.data_level

    def __hash__(self) -> int:
        return hash(self.data_level)

    def __repr__(self) -> str:
        return f"XmlOptions(data_level={self.data_level})"


class XmlReader(FormatReader):
    """One file, one row per element at the data level."""

    def __init__(self, path: str, options: XmlOptions) -> None:
        self.path = path
        self.level = options.data_level
        self.file: IO[bytes] | None = None
        self.rows_read = 0

    def open(self, negotiator: SchemaNegotiator) -> bool:
        # `attributes` is in every file's schema; the fields are added as rows bring them.
        schema = TupleSchema([ColumnMetadata.map(ATTRIBUTES, (), DataMode.OPTIONAL)])
        negotiator.set_table_schema(schema, complete=False)
        negotiator.add_context(f"dataLevel: {self.level}")
        self.rows = negotiator.build().writer()
        self.want_attributes = negotiator.is_projected(ATTRIBUTES)
        self.attribute_writer = self.rows.tuple(ATTRIBUTES) if self.want_attributes else None
        # a member's writer by its path of lower-case names, None when nobody projects it
        self.writers: dict[tuple[str, ...], Any] = {}
        self.file = open_input(self.path)
        self.events = self._row_elements(self.file)
        return True

    def _row_elements(self, file: IO[bytes]) -> Iterator[ET.Element]:
        """The elements at the data level, each complete, dropped from the tree once used."""
        level = self.level
        depth = 0
        open_elements: list[ET.Element] = []
        for event, element in ET.iterparse(file, events=("start", "end")):
            if event == "start":
                depth += 1
                if depth <= level:
                    open_elements.append(element)
                continue
            depth -= 1
            if depth >= level:
                continue  # inside a row: kept until the row ends
            open_elements.pop()
            if depth == level - 1:
                yield element
            # a row, or an element above the rows whose rows are all read: not needed again
            element.clear()
            if open_elements:
                open_elements[-1].remove(element)

    def next(self) -> bool:
        rows = self.rows
        try:
            for element in self.events:
                self.rows_read += 1
                attributes: dict[str, str] = {}
                values = element_values(element, attributes)
                rows.start()
                self._write(rows, (), values)
                if self.attribute_writer is not None:
                    self._write(self.attribute_writer, ("\0attributes",), attributes)
                rows.save()
                if rows.is_full():
                    return True
        except ET.ParseError as exc:
            if exc.code == _NO_ELEMENTS and self.rows_read == 0 and self._blank():
                return False  # an empty file: no rows, as an empty file of any format
            line, column = exc.position
            what = str(exc).split(":", 1)[0]
            raise UserError.data_read(
                f"The XML file is not well-formed: {what} at line {line}, column {column + 1}",
                [
                    f"Line: {line}",
                    f"Column: {column + 1}",
                    f"Rows read before the error: {self.rows_read}",
                    "Fix: correct the XML (an unclosed or mismatched tag, an unescaped & or <)",
                ],
            ) from None
        return False

    def _blank(self) -> bool:
        """Whether the file holds nothing but white space (expat's "no element found" is also
        its error for a document cut off inside its prolog)."""
        with open_input(self.path) as file:
            while chunk := file.read(1 << 16):
                if chunk.strip():
                    return False
        return True

    def _write(self, writer: TupleWriter, path: tuple[str, ...], values: Values) -> None:
        for name, value in values.items():
            key = (*path, name.lower())
            member = (
                self.writers[key] if key in self.writers else self._member(writer, key, name, value)
            )
            if member is None:
                continue
            if isinstance(value, dict):
                if not isinstance(member, TupleWriter):
                    raise self._conflict(key, "holds elements here but text in an earlier row")
                self._write(member, key, value)
            else:
                if not isinstance(member, ScalarWriter):
                    raise self._conflict(key, "holds text here but elements in an earlier row")
                member.set_string(value)

    def _member(
        self, writer: TupleWriter, key: tuple[str, ...], name: str, value: Any
    ) -> TupleWriter | ScalarWriter | None:
        """The writer of a member met for the first time: added unless nobody projects it."""
        member: TupleWriter | ScalarWriter | None = None
        if writer.index(name) < 0:
            if writer.is_projected(name):
                column = (
                    ColumnMetadata.map(name, (), DataMode.OPTIONAL)
                    if isinstance(value, dict)
                    else ColumnMetadata.optional(name, MinorType.VARCHAR)
                )
                writer.add_column(column)
                member = writer.column(name)
        else:
            column_writer = writer.column(name)
            if column_writer.is_projected():
                member = column_writer
        self.writers[key] = member
        return member

    def _conflict(self, key: tuple[str, ...], what: str) -> UserError:
        return UserError.data_read(
            f"XML element <{key[-1]}> (column {'.'.join(key)}) {what}; a column is either "
            "text or a map",
            [
                f"Row: {self.rows_read}",
                "Fix: set dataLevel so that rows are elements of one shape, or query the "
                "files of each shape apart",
            ],
        )

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class XmlFormat(ReaderFormatPlugin):
    """Drill's ``xml`` plugin: rows at ``dataLevel``, nested elements as maps, text values."""

    type_name = "xml"
    extensions = ("xml",)

    def reader(self, file: FileSplit, config: FormatConfig) -> XmlReader:
        return XmlReader(file.path, XmlOptions.from_config(config))
