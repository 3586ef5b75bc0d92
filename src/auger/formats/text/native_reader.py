"""The projecting text path: auger's own tokenizer (``auger._textscan``), used for narrow reads.

pyarrow's parser must split and convert every field of every line, so a query that needs 2
fields of 20 costs nearly as much as one needing all 20, and the ``columns`` array of a
headerless file has to be rebuilt row-major from pyarrow's columns. The tokenizer keeps only
the needed fields, skips the rest of each line once the last one is read, and writes the
``columns`` array row-major directly, as Drill's text reader does.

It understands the common options only (see :func:`native_possible`) and stops with a reason
at anything it does not read exactly as Drill would; :class:`NeedsFallback` then hands over
to the Python parser after the rows delivered, exactly as the Arrow path does.
"""

from __future__ import annotations

import codecs
import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from types import ModuleType
from typing import IO

import numpy as np
import pyarrow as pa

from auger.formats.base import valid_utf8
from auger.formats.text.arrow_reader import BLOCK_SIZE, NeedsFallback
from auger.formats.text.text_options import MAX_FIELDS, TextOptions

_textscan: ModuleType | None
try:
    from auger import _textscan
except ImportError:  # built without a C compiler: pyarrow and the Python parser read text
    _textscan = None

__all__ = ["native_available", "native_batches", "native_possible"]


def native_available() -> bool:
    """Whether the compiled tokenizer was built with this installation."""
    return _textscan is not None


def native_possible(o: TextOptions) -> bool:
    """Options the tokenizer reads exactly as Drill: one-byte delimiter, quote and comment,
    a quote that escapes itself, lines ending in ``\\n`` (``\\r\\n`` taken as one)."""
    if _textscan is None or o.line_delimiter not in ("\n", "\r\n"):
        return False
    if o.quote and o.escape != o.quote:
        return False
    chars = [o.delimiter, o.quote, o.comment]
    if any(len(c.encode()) > 1 for c in chars if c):
        return False
    if o.delimiter in ("\n", "\r") or o.quote in ("\n", "\r", o.delimiter):
        return False
    return o.comment not in ("\n", "\r")


def native_batches(
    opener: Callable[[], IO[bytes]],
    o: TextOptions,
    skip: int,
    fields: Sequence[int] | None,
    width: int | None,
    block_size: int = BLOCK_SIZE,
    nulls_past_end: bool = False,
) -> Iterator[pa.RecordBatch]:
    """Batches of one block each, after ``skip`` leading records.

    Args:
        fields: the field positions to keep, ``None`` for all of them.
        width: ``None`` for named columns ``f<i>`` (one per kept position, "" where a row is
            short); else the ``columns`` array, each row cut to ``width`` fields (all when
            negative), positions not kept being "".
        nulls_past_end: named columns are NULL, not "", where a row is shorter.

    Raises:
        NeedsFallback: at anything the Python parser must read or report (nothing of the
            block it is met in has been yielded).
    """
    assert _textscan is not None
    row_major = width is not None
    if fields is None:
        keep = None
    else:
        top = max(fields, default=-1) + 1
        mapping = np.full(top, -1, dtype=np.int32)
        for k, pos in enumerate(fields):
            mapping[pos] = 1 if row_major else k
        keep = mapping.tobytes()
    if not row_major and keep is None:
        raise ValueError("named columns need their positions")
    delimiter = ord(o.delimiter)
    quote = ord(o.quote) if o.quote else -1
    comment = ord(o.comment) if o.comment else -1
    limit = -1 if width is None or width < 0 else width
    # Drill's skipFirstLine drops the first line as bytes (a quote in it opens nothing); it
    # is one of the ``skip`` rows the caller counts
    raw_line = o.skip_first_line
    if raw_line:
        skip = max(0, skip - 1)
    try:
        fh = opener()
    except (OSError, EOFError) as exc:
        raise NeedsFallback(str(exc)) from exc
    with fh, contextlib.closing(_Blocks(fh, block_size)) as blocks:
        while True:
            data, final = blocks.next()
            if not data and final:
                return
            reason, consumed, rows, skip, payload, counts, ascii = _textscan.scan(
                data,
                final,
                delimiter=delimiter,
                quote=quote,
                comment=comment,
                keep=keep,
                row_major=row_major,
                limit=limit,
                skip=skip,
                skip_line=raw_line,
                max_field=o.max_field_bytes,
                max_fields=MAX_FIELDS,
            )
            if consumed:
                raw_line = False
                # (ASCII seen by the tokenizer needs no check)
                if not ascii and not valid_utf8(data, consumed):  # the Python parser says where
                    raise NeedsFallback("invalid UTF-8")
            data.release()
            if rows:
                yield _batch(rows, payload, fields, row_major, counts if nulls_past_end else None)
            if reason:
                raise NeedsFallback(reason)
            if final:
                return
            blocks.consumed(consumed)


# room before a block for the unparsed tail of the one before (a record it cut); grown for a
# longer tail
_ROOM = 64 << 10
# what a buffer holds before the input shows it needs a whole block
_FIRST_READ = 64 << 10


class _Blocks:
    """The input a block at a time, the unparsed tail of a block (a record it cut) moved in
    front of the next, in two buffers used in turn: while the tokenizer parses a block in one
    (it releases the GIL), a thread reads the next one into the other, after room for that
    tail, so that reading the file (a copy out of the page cache, or inflating it) overlaps the
    parse instead of adding to it. The buffers are reused: a fresh 4 MiB allocation per block
    would cost page faults worth a good part of the parse. A file of one block starts no
    thread."""

    def __init__(self, fh: IO[bytes], block_size: int) -> None:
        self._fh = fh
        self._size = block_size
        self._room = _ROOM
        self._bufs: list[bytearray] = []  # made by the first read into each
        self._cur = 0  # the buffer holding the last block answered
        self._start = self._end = 0  # that block's bytes in it
        self._used = 0  # how many of them were parsed
        self._started = False
        self._pool: ThreadPoolExecutor | None = None
        self._ahead: Future[int] | None = None  # the read of the next block, under way

    def next(self) -> tuple[memoryview, bool]:
        """The carried bytes and the next block read after them; True when the input ended."""
        if not self._started:
            self._started = True
            got = self._fill(0, self._size)
            buf = self._bufs[0]
            self._start, self._end = self._room, self._room + got
            if buf[self._start : self._start + 3] == codecs.BOM_UTF8:  # a byte order mark
                self._start += 3  # is not data (nor the end when the block holds it alone)
            if got == self._size:
                self._read_ahead()
            return memoryview(buf)[self._start : self._end], got == 0
        rest = self._end - self._start - self._used
        old, other = self._cur, 1 - self._cur
        if self._ahead is not None:
            ahead, self._ahead = self._ahead, None
            got = ahead.result()
        else:
            got = self._fill(other, self._size)
        full = got == self._size
        if rest > self._room:  # a tail longer than the room: more room, in this buffer now
            room = max(rest, 2 * self._room)
            grown = bytearray(room + max(got, self._size))
            grown[room : room + got] = self._bufs[other][self._room : self._room + got]
            self._bufs[other] = grown
            self._room = room
        buf = self._bufs[other]
        buf[self._room - rest : self._room] = self._bufs[old][self._end - rest : self._end]
        self._cur = other
        self._start, self._end, self._used = self._room - rest, self._room + got, 0
        if full:
            self._read_ahead()
        return memoryview(buf)[self._start : self._end], got == 0

    def consumed(self, n: int) -> None:
        """``n`` bytes of the last answer were parsed; the rest leads the next one."""
        self._used = n
        if n == 0 and self._end - self._start >= self._size:
            self._size *= 2  # a record longer than a block: read more at once

    def close(self) -> None:
        """Wait for a read under way (the file closes next) and end the thread."""
        if self._ahead is not None:
            wait([self._ahead])
            self._ahead = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _read_ahead(self) -> None:
        """Start reading the next block into the buffer not holding the last one."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="auger-text-read")
        self._ahead = self._pool.submit(self._fill, 1 - self._cur, self._size)

    def _fill(self, which: int, size: int) -> int:
        """Read up to ``size`` bytes after the room of buffer ``which``; fewer only at the end
        of the input.

        A buffer is made small (:data:`_FIRST_READ`) and doubled, up to the block's size, as
        the input fills it: a file of a few hundred bytes, one of thousands in a directory,
        would otherwise cost two zeroed blocks of megabytes (page faults worth more than its
        parse)."""
        if which == len(self._bufs):
            self._bufs.append(bytearray(self._room + min(size, _FIRST_READ)))
        buf = self._bufs[which]
        at, got = self._room, 0
        try:
            while got < size:
                if len(buf) <= at + got:  # full before the block is: twice as large
                    held = max(len(buf) - at, 0)  # (less than the room when the room grew)
                    want = at + min(size, max(2 * held, _FIRST_READ))
                    buf.extend(bytes(want - len(buf)))
                view = memoryview(buf)
                try:
                    n = self._fh.readinto(  # type: ignore[attr-defined]
                        view[at + got : min(len(buf), at + size)]
                    )
                finally:
                    view.release()
                if not n:
                    break
                got += n
        except (OSError, EOFError) as exc:  # a corrupt or truncated compressed file
            raise NeedsFallback(str(exc)) from exc
        return got


def _batch(
    rows: int,
    payload: list[tuple[bytes, ...]],
    fields: Sequence[int] | None,
    row_major: bool,
    counts: bytes | None,
) -> pa.RecordBatch:
    if row_major:
        lists, offsets, data = payload[0]
        # (UTF-8 was checked on the input block)
        values = pa.StringArray.from_buffers(
            len(offsets) // 4 - 1, pa.py_buffer(offsets), pa.py_buffer(data)
        )
        arr = pa.Array.from_buffers(
            pa.list_(pa.string()), rows, [None, pa.py_buffer(lists)], children=[values]
        )
        return pa.RecordBatch.from_arrays([arr], names=["columns"])
    assert fields is not None
    seen = None if counts is None else np.frombuffer(counts, dtype=np.int32)
    arrays = []
    for pos, (off, data) in zip(fields, payload, strict=True):
        valid = None
        if seen is not None:
            present = seen > pos
            if not present.all():  # rows too short for this position: NULL
                valid = pa.py_buffer(np.packbits(present, bitorder="little"))
        arrays.append(
            pa.StringArray.from_buffers(rows, pa.py_buffer(off), pa.py_buffer(data), valid)
        )
    return pa.RecordBatch.from_arrays(arrays, names=[f"f{i}" for i in fields])
