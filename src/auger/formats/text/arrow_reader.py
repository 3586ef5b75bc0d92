"""The fast text path: pyarrow's streaming C++ CSV reader, every field a string.

pyarrow cannot skip comment lines, fill ragged rows or say on which line a file goes wrong, and
reads some quotes otherwise than Drill (text after a closing quote: see :class:`_QuoteCheck`).
Rather than approximate, this path gives up (:class:`NeedsFallback`) the moment it meets any
of those, before yielding a batch that could be wrong; the caller then re-reads the file with
the Python parser, skipping the rows already delivered, so both paths give identical output.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from auger.formats.text.text_options import MAX_FIELDS, TextOptions
from auger.storage.filesystem import arrow_input_stream, arrow_owned_reads

__all__ = ["BLOCK_SIZE", "NeedsFallback", "arrow_possible", "arrow_tables"]

#: pyarrow block size of a full scan (a batch is about one block)
BLOCK_SIZE = 4 << 20
#: blocks from this size on are checked for quotes on a thread (see ``_Watch.read``)
_ASYNC_CHECK = 1 << 20


class NeedsFallback(Exception):
    """The Arrow path cannot read this file (further) exactly as Drill would."""


def arrow_possible(o: TextOptions) -> bool:
    """Options pyarrow's parser implements (comments are detected on the fly instead)."""
    if not o.standard_lines:
        return False
    if o.quote and o.escape != o.quote and o.escape == o.delimiter:
        return False
    return o.delimiter not in ("\n", "\r") and o.quote not in ("\n", "\r")


class _QuoteCheck:
    """Vectorised test that pyarrow reads every quote of a stream as Drill does.

    The two agree while each run of quote characters is an opener, a closer or escaped quotes:
    outside quotes a run must follow a field end (delimiter or line end) and, when its length
    is even (an empty quoted field), be followed by one; inside quotes an odd run (a closing
    quote) must be followed by a field end. Inside or outside is the parity of the quotes
    before the run, exact while every run so far obeyed these rules. Anything else (a quote
    inside an unquoted field, text or white space after a closing quote) makes :meth:`feed`
    answer False, and the Python parser, which follows Drill's rules, reads the rest. With an
    escape other than the quote, any escape character and any run of two quotes answer False
    too (pyarrow unescapes ``~x`` and ``~~``; Drill keeps them).

    The rules come down to two conditions on bits: a run's first quote that makes the quote
    count odd must follow a field end; a run's last quote that makes it even must be followed
    by one. They are checked 64 bytes at a time on words of one bit a byte: a few passes over
    the block whatever the number of quotes.
    """

    def __init__(self, o: TextOptions) -> None:
        self._q = ord(o.quote)
        self._d = ord(o.delimiter)
        self._ends = {self._d, 10, 13}  # bytes that end a field
        self._escape = o.escape.encode() if o.escape != o.quote else b""
        self._before = b"\n"  # the byte before the held bytes (the start is a line start)
        self._held = b""  # a run of quotes at the end of the last block, its follower unknown
        self._parity = 0  # quotes before the held run, mod 2
        self._bytes = np.empty((2, 0), dtype=bool)
        self._words = np.zeros((6, 0), dtype=np.uint64)

    @property
    def odd(self) -> bool:
        """An odd number of quotes in all the bytes fed so far."""
        return bool((self._parity + len(self._held)) & 1)

    def feed(self, data: bytes) -> bool:
        """Check the next block; at the end of the stream pass b"" once. False: a quote pyarrow
        may read otherwise than Drill (the stream from there on is no longer checked)."""
        if self._escape and self._escape in data:
            return False
        context, window = self._before, self._held + data if self._held else data
        if not data:
            # the end of the stream ends the last line, as a line end would
            self._held = b""
            return not window or self._check(window + b"\n", context[0])
        if self._q not in window:
            self._held, self._before = b"", window[-1:]
            return True
        # a run of quotes ending the block is decided with the next block, which tells what
        # follows it
        end = len(window)
        while end and window[end - 1] == self._q:
            end -= 1
        if end == 0:
            self._held = window
            return True
        self._held, self._before = window[end:], window[end - 1 : end]
        return self._check(window[:end] if end < len(window) else window, context[0])

    def _scratch(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reusable buffers for a block of ``n`` bytes: two of one boolean a byte, and rows of
        64-bit words of one bit a byte (fresh arrays this big cost page faults, block after
        block)."""
        words = -(-n // 64)
        if self._bytes.shape[1] < n:
            self._bytes = np.empty((2, n), dtype=bool)
        if self._words.shape[1] < words:
            self._words = np.zeros((6, words), dtype=np.uint64)
        w = self._words[:, :words]
        w[:, -1] = 0  # bits past the block's end (packbits leaves them)
        return self._bytes[0, :n], self._bytes[1, :n], w

    def _check(self, window: bytes, context: int) -> bool:
        """The rules on one block that does not end with a quote; ``context`` is the byte
        before it. Updates the parity."""
        arr = np.frombuffer(window, dtype=np.uint8)
        n = arr.size
        a, b, w = self._scratch(n)
        q, e, par, t1, t2, t3 = w
        one, top = np.uint64(1), np.uint64(63)
        _pack(np.equal(arr, self._q, out=a), q)
        ends = np.equal(arr, self._d, out=a)
        for line_end in (10, 13):
            if line_end != self._d and bytes([line_end]) in window:
                np.logical_or(ends, np.equal(arr, line_end, out=b), out=ends)
        _pack(ends, e)
        # t1: whether the byte before each byte is a quote (the one before the block is not)
        np.left_shift(q, one, out=t1)
        t1[1:] |= q[:-1] >> top
        if self._escape and bool(np.bitwise_and(t1, q, out=t2).any()):
            return False  # two quotes side by side, with an escape other than the quote
        # par: the parity of the quotes up to each byte, a prefix XOR within each word, then
        # the carry of the words before
        np.copyto(par, q)
        for k in (1, 2, 4, 8, 16, 32):
            np.left_shift(par, np.uint64(k), out=t2)
            np.bitwise_xor(par, t2, out=par)
        odd_words = (par >> top).astype(np.int64)
        carry = np.cumsum(odd_words)
        carry -= odd_words
        carry += self._parity
        carry &= 1
        np.negative(carry.view(np.uint64), out=t2)  # all ones where the carry is odd
        np.bitwise_xor(par, t2, out=par)
        self._parity = int((par[-1] >> np.uint64((n - 1) % 64)) & one)
        # t2: the first quote of a run, making the count odd, not after a field end
        np.left_shift(e, one, out=t2)
        t2[1:] |= e[:-1] >> top
        t2[0] |= np.uint64(context in self._ends)
        np.bitwise_or(t2, t1, out=t2)  # after a field end, or not the run's first quote
        np.invert(t2, out=t2)
        np.bitwise_and(t2, q, out=t2)
        np.bitwise_and(t2, par, out=t2)
        if t2.any():
            return False
        # t3: the last quote of a run, making the count even, not before a field end (the
        # block never ends with a quote, so nothing comes from the next block)
        np.right_shift(q, one, out=t1)
        t1[:-1] |= q[1:] << top
        np.right_shift(e, one, out=t3)
        t3[:-1] |= e[1:] << top
        np.bitwise_or(t3, t1, out=t3)  # before a field end, or not the run's last quote
        np.invert(t3, out=t3)
        np.bitwise_and(t3, q, out=t3)
        np.invert(par, out=par)
        np.bitwise_and(t3, par, out=t3)
        return not bool(t3.any())


def _pack(mask: np.ndarray, out: np.ndarray) -> None:
    """A boolean array as bits into 64-bit words (bit ``i % 64`` of word ``i // 64``; the
    words are read little-endian, as on the platforms pyarrow supports)."""
    packed = np.packbits(mask, bitorder="little")
    out.view(np.uint8)[: packed.size] = packed


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
        #: quotes pyarrow would read other than Drill (see :class:`_QuoteCheck`)
        self.messy = False
        self._check = _QuoteCheck(o) if o.quote else None
        self._pool: ThreadPoolExecutor | None = None
        self._last: Future[None] | None = None
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        data = self._read(n)
        if self._check is not None and not self.messy:
            if self._pool is None and len(data) < _ASYNC_CHECK:
                self._check_block(data)  # a small file: not worth a thread
            else:
                # checked on a thread of its own, while pyarrow parses: numpy releases the
                # GIL, so the check costs little time on a machine with a spare core
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(1, thread_name_prefix="auger-quote-check")
                self._last = self._pool.submit(self._check_block, data)
        return data

    def _check_block(self, data: bytes) -> None:
        try:
            if not self.messy and self._check is not None and not self._check.feed(data):
                self.messy = True
        except Exception:  # never a wrong row: the Python parser reads the rest
            self.messy = True

    def checked(self) -> bool:
        """True when every quote read so far is read alike by pyarrow and by Drill (waits for
        the checks under way)."""
        if self._last is not None:
            self._last.result()
        return not self.messy

    def _read(self, n: int) -> bytes:
        while True:
            data = self._raw.read(n) if n is not None and n >= 0 else self._raw.read()
            if not data or not self._comment or self.suspect:
                self._count(data)
                return data
            out = self._drop_comments(data)
            if out:
                return out
            # the whole chunk was comment: read on (an empty answer would mean end of file)

    def odd_quotes(self) -> bool:
        """An odd number of quotes in the bytes returned so far (a quote left open, maybe)."""
        if self._check is not None and self.checked():
            return self._check.odd  # the check counts them (``_count`` leaves them to it)
        return bool(self.quotes % 2)

    def _count(self, data: bytes) -> None:
        if self._check is not None and not self.messy:
            return  # counted by the quote check, off this thread
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
        if self._check is not None and self.checked():
            self.quotes = int(self._check.odd)  # the quotes before this block
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
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
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
        raw = opener() if opener is not None else arrow_input_stream(path)
    except (OSError, pa.ArrowException) as exc:
        raise NeedsFallback(str(exc)) from exc
    watch = _Watch(raw, o)
    owned = arrow_owned_reads(watch)
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
            reader = pacsv.open_csv(owned, read, parse, convert)
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
                if not watch.checked():
                    raise NeedsFallback("quotes read otherwise by Drill") from None
                if watch.odd_quotes():
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
                if not watch.checked():
                    raise NeedsFallback("quotes read otherwise by Drill")
                yield pending
            pending = batch
    finally:
        # stop pyarrow's read-ahead before the Python stream it reads from goes away
        close = getattr(reader, "close", None) if reader is not None else None
        if close is not None:
            close()
        owned.close()  # closes the watch, and pyarrow's threads no longer refer to it


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
