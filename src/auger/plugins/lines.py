"""What the line-based formats (logRegex, ltsv, syslog, httpd) share: reading a file's lines, and
their special columns.

Reading. :func:`text_lines` reads the text lines a block at a time: decoding a megabyte at once
and splitting it costs a fraction of reading and decoding each line by itself, which matters
when a reader's whole work per line is a regular expression or a split. A line is what lies
between two line ends (``\\n`` unless a format says otherwise), with any ``\\r`` before the end
removed; the text after the last line end is a line too, and an end at the very end of the file
adds no empty line. Undecodable bytes become U+FFFD.

:class:`LineReader` is the reader these formats are written on. It declares the format's table
schema, opens the file (decompressing by suffix), numbers its lines from 1 and closes it; a
format writes only what it does with a line.

Special columns. A format's special columns (``_raw``, the whole line; ``_unmatched_rows``,
``_matched``) are there only when a query names them, never in ``*``: the schema the planner
discovers (:class:`LineFormatPlugin`) has them last, marked to stay out of wildcard expansion,
and a reader declares (and writes) only those the query names, with the same types.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import IO, Any, ClassVar

from auger.config import FormatConfig
from auger.formats.base import open_input
from auger.scan import FormatReader, ReaderFormatPlugin, SchemaNegotiator
from auger.scan.operator import discover_through_reader
from auger.scan.schema import EXCLUDE_FROM_WILDCARD
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["LineFormatPlugin", "LineReader", "text_lines", "with_special_columns"]

_BLOCK = 1 << 20

#: A special column: its name and type.
Special = tuple[str, MinorType]


def text_lines(file: IO[bytes], ending: str = "\n", block: int = _BLOCK) -> Iterator[str]:
    """The file's lines as text, without their line ends."""
    mark = ending.encode("utf-8")
    tail = b""
    while chunk := file.read(block):
        cut = chunk.rfind(mark)
        if cut < 0:
            tail += chunk
            continue
        data = tail + chunk[:cut] if tail else chunk[:cut]
        tail = chunk[cut + len(mark) :]
        yield from _split(data.decode("utf-8", "replace"), ending)
    if tail:
        yield from _split(tail.decode("utf-8", "replace"), ending)


def _split(text: str, ending: str) -> list[str]:
    lines = text.split(ending)
    if "\r" in text:
        return [line.rstrip("\r") for line in lines]
    return lines


def with_special_columns(
    columns: Iterable[ColumnMetadata], specials: Sequence[Special]
) -> TupleSchema:
    """``columns`` without any of the special ones, then each special column (nullable),
    marked to stay out of ``*``."""
    names = {name.lower() for name, _ in specials}
    schema = TupleSchema(c for c in columns if c.name.lower() not in names)
    special = {EXCLUDE_FROM_WILDCARD: "true"}
    for name, minor in specials:
        schema.add(ColumnMetadata.optional(name, minor).with_properties(**special))
    return schema


class LineReader(FormatReader):
    """One file of a line-based format, one row (at most) per line.

    :meth:`open` declares :meth:`table_schema` and those of the format's
    :attr:`special_columns` the query names (:meth:`is_named` says which), calls :meth:`start`
    (where a format builds its writers), then opens the file; :meth:`close` closes it. A format
    iterates :attr:`numbered`, ``(line number from 1, line)`` pairs, and keeps
    :attr:`line_number` at the last line it read (error messages name it).

    A special column the query does not name is not declared at all: ``*`` never has it, and a
    scan whose wildcard schema is fixed would otherwise report it as a column it dropped.
    """

    #: the format's special columns, in output order
    special_columns: ClassVar[tuple[Special, ...]] = ()
    #: whether :meth:`table_schema` is every column a file has (no reader adds any)
    schema_complete: ClassVar[bool] = False
    #: what ends a line (one character)
    line_ending: str = "\n"

    def __init__(self, path: str) -> None:
        self.path = path
        self.file: IO[bytes] | None = None
        self.line_number = 0
        self.numbered: Iterator[tuple[int, str]] = iter(())
        self.named_specials: frozenset[str] = frozenset()

    def table_schema(self) -> TupleSchema:
        """The columns known before reading, from the format's options (none by default)."""
        return TupleSchema()

    def is_named(self, special: str) -> bool:
        """Does the query name the special column ``special`` (so that it is written)?"""
        return special.lower() in self.named_specials

    @abstractmethod
    def start(self, negotiator: SchemaNegotiator) -> None:
        """Prepare the format's writers; the schema is declared, the file not opened yet."""

    def open(self, negotiator: SchemaNegotiator) -> bool:
        named = [s for s in self.special_columns if negotiator.projection.get(s[0]) is not None]
        self.named_specials = frozenset(name.lower() for name, _ in named)
        schema = with_special_columns(self.table_schema(), named)
        if schema.size() or self.schema_complete:  # nothing known: the schema stays late
            negotiator.set_table_schema(schema, complete=self.schema_complete)
        self.start(negotiator)
        self.file = open_input(self.path)
        lines = text_lines(self.file, self.line_ending)
        if self.line_ending != "\n":
            # a record ends at its configured character; line ends around it are not part of it
            lines = (line.rstrip("\r\n") for line in lines)
        self.numbered = enumerate(lines, 1)
        return True

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class LineFormatPlugin(ReaderFormatPlugin):
    """A line-based format: its readers are :class:`LineReader` s, and the schema the planner
    discovers is theirs.

    That is the readers' declared columns alone when they are complete (no file is opened);
    otherwise what the readers of the first files find, with any declared column they did not
    reach; and in both cases the special columns last, kept out of ``*``.
    """

    #: A column or map member a query names that no sampled line has is nullable VARCHAR, as
    #: Drill's log formats type it (not its usual nullable INT): their values are text, so a
    #: member first met past the planner's sample reads as the text the reader writes.
    null_type = ColumnMetadata("null", MinorType.VARCHAR, DataMode.OPTIONAL)

    @abstractmethod
    def reader(self, file: FileSplit, config: FormatConfig) -> LineReader:
        """A new reader for one file."""

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        # a reader not opened: its options say what is declared
        declaring = self.reader(FileSplit(files[0] if files else ""), config)
        declared = declaring.table_schema()
        if declaring.schema_complete:
            found = declared
        else:
            found = discover_through_reader(self, files, config, options)
            missing = [c for c in declared.columns() if c.name not in found]
            if missing:
                found = found.copy()
                for column in missing:
                    found.add(column)
        return with_special_columns(found, declaring.special_columns)
