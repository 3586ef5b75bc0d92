"""The fast text path: pyarrow's streaming C++ CSV reader, every field a string.

pyarrow cannot skip comment lines, fill ragged rows or say on which line a file goes wrong.
Rather than approximate, this path gives up (:class:`NeedsFallback`) the moment it meets any
of those, before yielding a batch that could be wrong; the caller then re-reads the file with
the Python parser, skipping the rows already delivered, so both paths give identical output.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from auger.formats.text.options import MAX_FIELDS, TextOptions

__all__ = ["BLOCK_SIZE", "NeedsFallback", "arrow_possible", "arrow_tables"]

#: pyarrow block size of a full scan (a batch is about one block)
BLOCK_SIZE = 4 << 20


class NeedsFallback(Exception):
    """The Arrow path cannot read this file (further) exactly as Drill would."""


def arrow_possible(o: TextOptions) -> bool:
    """Options pyarrow's parser implements (comments are detected on the fly instead)."""
    if not o.standard_lines:
        return False
    if o.quote and o.escape != o.quote and o.escape == o.delimiter:
        return False
    return o.delimiter not in ("\n", "\r") and o.quote not in ("\n", "\r")


class _Watch:
    """A file-like wrapper between the file and pyarrow: drops comment lines, counts quotes.

    A line starting with the comment character is dropped when the quotes before it are
    balanced (it is not inside a quoted field), so pyarrow never sees it. When that cannot be
    judged (an escape character other than the quote, CR-only line ends) the file is marked
    ``suspect`` and read by the Python parser instead: slower, never a wrong row.
    """

    def __init__(self, raw: Any, o: TextOptions) -> None:
        self._raw = raw
        self._quote = o.quote.encode()
        self.quotes = 0  # parity of quote characters: odd at the end may mean an open quote
        comment = o.comment.encode()
        self._comment = comment
        # quote parity tells "inside a quoted field" only when the quote escapes itself
        self._strip = bool(comment) and (not o.quote or o.escape == o.quote)
        self._keep_first = o.skip_first_line  # Drill skips the first line, comment or not
        self._at_start = True
        self._line_start = True  # the next byte read starts a line
        self._in_comment = False  # inside a comment line that began in an earlier chunk
        self.suspect = False
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        while True:
            data = self._raw.read(n) if n is not None and n >= 0 else self._raw.read()
            if not data or not self._comment or self.suspect:
                self._count(data)
                return data
            out = self._drop_comments(data)
            if out:
                return out
            # the whole chunk was comment: read on (an empty answer would mean end of file)

    def _count(self, data: bytes) -> None:
        if self._quote and data:
            arr = np.frombuffer(data, dtype=np.uint8)
            self.quotes += int(np.count_nonzero(arr == self._quote[0]))

    def _drop_comments(self, data: bytes) -> bytes:
        """The chunk without its comment lines (a comment line may continue from the previous
        chunk or into the next). Vectorised with numpy: ``bytes.find``/``count`` on a busy byte
        are several times slower."""
        first = self._at_start
        self._at_start = False
        if not self._in_comment and self._comment not in data:
            # no line of this chunk can be a comment (a memchr, against the numpy passes below)
            self._line_start = data.endswith(b"\n")
            self._count(data)
            return data
        start = 0
        if self._in_comment:  # the rest of a comment line begun in the previous chunk
            nl = data.find(b"\n")
            if nl < 0:
                return b""
            start = nl + 1
            self._in_comment = False
            self._line_start = True
        arr = np.frombuffer(data, dtype=np.uint8)
        c = self._comment[0]
        if b"\r" in data:
            crs = np.flatnonzero(arr[:-1] == 13)
            if crs.size and np.any(arr[crs + 1] == c):
                self.suspect = True  # CR-only line ends: let the Python parser judge
                self._count(data[start:])
                return data[start:]
        starts = np.flatnonzero(arr[start:-1] == 10) + (start + 1)
        cands = starts[arr[starts] == c]
        if (
            start < len(data)
            and self._line_start
            and arr[start] == c
            and not (first and self._keep_first)
        ):
            cands = np.concatenate(([start], cands))
        self._line_start = data.endswith(b"\n")
        if cands.size and not self._strip:
            self.suspect = True
        if not cands.size or self.suspect:
            self._count(data[start:] if start else data)
            return data[start:] if start else data
        qpos = np.flatnonzero(arr == self._quote[0]) if self._quote else np.empty(0, np.int64)
        ends = np.flatnonzero(arr == 10)
        pieces: list[bytes] = []
        kept_from, removed_q = start, int(np.searchsorted(qpos, start))
        for pos in cands.tolist():
            if pos < kept_from:
                continue
            before = int(np.searchsorted(qpos, pos)) - removed_q
            if (self.quotes + before) % 2:
                continue  # inside a quoted field: data, not a comment
            i = int(np.searchsorted(ends, pos))
            if i < ends.size:
                end = int(ends[i]) + 1
            else:
                end = len(data)
                self._in_comment = True  # the comment line goes on in the next chunk
            pieces.append(data[kept_from:pos])
            removed_q += int(np.searchsorted(qpos, end) - np.searchsorted(qpos, pos))
            kept_from = end
        self.quotes += int(qpos.size) - removed_q
        pieces.append(data[kept_from:])
        return b"".join(pieces)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._raw.close()


def arrow_tables(
    path: str,
    o: TextOptions,
    skip_rows: int,
    include: Sequence[int] | None,
    opener: Callable[[], Any] | None = None,
    block_size: int = BLOCK_SIZE,
) -> Generator[pa.RecordBatch, None, None]:
    """Batches of string columns ``f<i>`` (file field i), after ``skip_rows`` leading rows.

    Args:
        include: the field positions to convert (``None``: all of them).
        opener: opens the bytes to read (a byte range of the file); default the whole file.
        block_size: bytes per pyarrow block; a smaller one (a LIMIT) also turns off
            read-ahead threads, so that little more than the rows needed is parsed.

    Raises:
        NeedsFallback: on anything the Python parser must handle or report.
    """
    try:
        raw = opener() if opener is not None else pa.input_stream(path, compression="detect")
    except (OSError, pa.ArrowException) as exc:
        raise NeedsFallback(str(exc)) from exc
    watch = _Watch(raw, o)
    reader: pacsv.CSVStreamingReader | None = None
    try:
        read = pacsv.ReadOptions(
            autogenerate_column_names=True,
            skip_rows=skip_rows,
            block_size=block_size,
            use_threads=block_size >= BLOCK_SIZE,
        )
        parse = pacsv.ParseOptions(
            delimiter=o.delimiter,
            quote_char=o.quote or False,
            double_quote=bool(o.quote) and o.escape == o.quote,
            escape_char=(o.escape if o.quote and o.escape != o.quote else False),
            newlines_in_values=True,
            ignore_empty_lines=True,
        )
        convert = pacsv.ConvertOptions(
            default_column_type=pa.string(),
            include_columns=None if include is None else [f"f{i}" for i in include],
            # a position beyond the file's width reads as a null-typed column
            include_missing_columns=include is not None,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=True,
        )
        try:
            reader = pacsv.open_csv(watch, read, parse, convert)
        except (pa.ArrowInvalid, pa.ArrowKeyError, KeyError, OSError, EOFError) as exc:
            raise NeedsFallback(str(exc)) from exc
        if watch.suspect:
            raise NeedsFallback("comment line")
        # pyarrow accepts a quote left open at the end of the file (the field runs to EOF);
        # the last batch is held back until the quote count says the file closed them all.
        pending: pa.RecordBatch | None = None
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                if watch.quotes % 2:
                    raise NeedsFallback("odd number of quotes") from None
                if pending is not None:
                    yield pending
                return
            except (pa.ArrowInvalid, pa.ArrowKeyError, KeyError, OSError, EOFError) as exc:
                raise NeedsFallback(str(exc)) from exc
            if watch.suspect:
                raise NeedsFallback("comment line")
            if batch.num_columns > MAX_FIELDS:
                raise NeedsFallback("too many fields")
            _check_sizes(batch, o)
            if pending is not None:
                yield pending
            pending = batch
    finally:
        # stop pyarrow's read-ahead before the Python stream it reads from goes away
        close = getattr(reader, "close", None) if reader is not None else None
        if close is not None:
            close()
        watch.close()


def _check_sizes(batch: pa.RecordBatch, o: TextOptions) -> None:
    """Oversized fields: the Python parser finds the line and column for the error."""
    if batch.num_rows == 0:
        return
    limit = o.max_field_bytes
    # a column whose whole data buffer fits the limit cannot hold an oversized value
    for col in batch.columns:
        if col.nbytes <= limit:
            continue
        biggest = pc.max(pc.binary_length(col)).as_py()
        if biggest is not None and biggest > limit:
            raise NeedsFallback("field too long")
