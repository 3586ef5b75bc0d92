"""A regex log-line reader: a complete auger format plugin, reader and all.

Every named group of the pattern becomes a VARCHAR column; lines that do not match are skipped.
The scan framework does the rest: only projected columns are kept, implicit and partition
columns (``filename``, ``dir0``...) are added, missing columns are null-filled, batches respect
the row limit and a ``LIMIT`` stops reading early. Register it in code with
``auger.formats.register_format("regexlog", RegexLogFormat)`` or as an entry point in the
``auger.formats`` group (see docs/plugins.md); a workspace format then uses
``type = "regexlog"`` with an optional ``pattern``.
"""

from __future__ import annotations

import re
from typing import IO

from auger.config import FormatConfig
from auger.formats.base import open_input
from auger.scan import FormatReader, ReaderFormatPlugin, SchemaNegotiator
from auger.scan.spec import FileSplit

DEFAULT_PATTERN = r"(?P<date>\S+) (?P<time>\S+) (?P<level>[A-Z]+) (?P<message>.*)"


class RegexLogReader(FormatReader):
    """Reads one file, one row per matching line."""

    def __init__(self, path: str, pattern: str) -> None:
        self.path = path
        self.regex = re.compile(pattern)
        self.names = list(self.regex.groupindex)
        self.file: IO[bytes] | None = None
        self.unmatched = 0

    def open(self, negotiator: SchemaNegotiator) -> bool:
        # An early schema: the scan knows the columns before the first line is read.
        columns = ", ".join(f"`{name}` VARCHAR" for name in self.names)
        negotiator.set_table_schema(columns, complete=True)
        negotiator.add_context(f"Pattern: {self.regex.pattern}")
        # Groups nobody asked for are not even extracted (their writers drop values anyway).
        self.wanted = [negotiator.is_projected(name) for name in self.names]
        self.rows = negotiator.build().writer()
        self.file = open_input(self.path)
        return True

    def next(self) -> bool:
        assert self.file is not None
        while not self.rows.is_full():  # the row limit and LIMIT, for free
            line = self.file.readline()
            if not line:
                return False
            match = self.regex.match(line.decode("utf-8", "replace").rstrip("\r\n"))
            if match is None:
                self.unmatched += 1
                continue
            groups = zip(self.names, self.wanted, strict=True)
            self.rows.add_row(*(match.group(n) if want else None for n, want in groups))
        return True

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


class RegexLogFormat(ReaderFormatPlugin):
    """The plugin: a type name, default extensions, and a reader per file."""

    type_name = "regexlog"
    extensions = ("log",)

    def reader(self, file: FileSplit, config: FormatConfig) -> RegexLogReader:
        return RegexLogReader(file.path, str(config.option("pattern", DEFAULT_PATTERN)))
