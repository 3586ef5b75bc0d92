"""Counting the records of a text file without parsing it, for scans that need no field.

``SELECT COUNT(*)`` (or a query naming only implicit columns) needs each file's record count,
not its values. When a stretch of the file holds no quote character, records are plain lines,
so a vectorised newline count gives the same number the parsers would, at a fraction of the
cost of building string columns.

The count is only trusted where it provably matches the full parse; anything the parsers treat
specially makes :meth:`LineCounter.feed` give up (return False) and the caller parse instead:

- a quote character (a quoted field may hold line breaks), except in the header or skipped first
  line when that line closes all its quotes; an escape character other than the quote,
- a line starting with the comment character (comments drop lines, and with a header they move
  it), a NUL byte, a byte-order mark at the start,
- a CR not followed by LF (CR-only line ends), invalid UTF-8 (the parsers report it),
- a line too long to be sure it holds no oversized field and not too many fields.

What it does count exactly: lines ended by LF or CRLF and a last line without a line end; empty
lines (``\\n`` or ``\\r\\n`` alone) are skipped as both parsers skip them. The caller removes the
header / skipped first line.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from typing import IO

import numpy as np

from auger.formats.text.python_reader import in_open_quote as _in_open_quote
from auger.formats.text.text_options import MAX_FIELDS, TextOptions

__all__ = ["LineCounter", "block_counts"]

_LF, _CR = 10, 13


class LineCounter:
    """Counts non-empty lines of a byte stream fed block by block, while they are plain."""

    def __init__(self, o: TextOptions) -> None:
        self._o = o
        self._quote = o.quote.encode() if o.quote else b""
        # an escape other than the quote may also escape a line end outside quotes
        self._escape = o.escape.encode() if o.quote and o.escape != o.quote else b""
        # the header / skipped first line may quote its fields: only its end must be sure
        self._first: bytearray | None = (
            bytearray() if o.extract_header or o.skip_first_line else None
        )
        self._comment = b"\n" + o.comment.encode() if o.comment else b""
        # a line no longer than this holds neither an oversized field nor too many fields
        self._longest = min(o.max_field_bytes, MAX_FIELDS - 1)
        # the stream starts as if after an empty line, so a leading empty line is seen as one
        self._tail = b"\n\n"
        self._partial = 0  # bytes of the current (unended) line
        self._head = b""  # the stream's first bytes, for the byte-order mark
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._utf8_pending = False
        self.seen = 0  # bytes fed

    def feed(self, data: bytes) -> int | None:
        """The number of non-empty lines this block ends; None when the stream is not plain."""
        if not data:
            return 0
        if self._longest < 2:
            return None  # a limit this small: let the parsers check every field
        if len(self._head) < 3:
            self._head += data[: 3 - len(self._head)]
            if self._head[:1] == codecs.BOM_UTF8[:1] and codecs.BOM_UTF8.startswith(self._head):
                return None  # a byte-order mark (or its start): leave it to the parsers
        self.seen += len(data)
        rest = data
        if self._first is not None:
            after = self._first_line(data)
            if after is None:
                return None
            rest = after
        if (self._quote and self._quote in rest) or (self._escape and self._escape in rest):
            return None
        if b"\x00" in data:
            return None
        if not data.isascii() or self._utf8_pending:
            try:
                self._decoder.decode(data)
            except UnicodeDecodeError:
                return None
            self._utf8_pending = bool(self._decoder.getstate()[0])
        joined = self._tail + data
        if self._comment and self._comment[1:] in data and self._comment in joined:
            return None
        arr = np.frombuffer(joined, dtype=np.uint8)
        lf = arr == _LF
        ends = lf[2:]  # the line ends of this block
        count = int(np.count_nonzero(ends))
        # a line is empty when its end follows another end, or a CR that follows one
        empty = int(np.count_nonzero(ends & lf[1:-1]))
        if b"\r" in data or self._tail.endswith(b"\r"):  # a CR may end the last block
            cr = arr == _CR
            if np.any(cr[1:-1] & ~lf[2:]):
                return None  # a CR-only line end
            empty += int(np.count_nonzero(ends & cr[1:-1] & lf[:-2]))
        if not self._lengths_ok(data, ends):
            return None
        self._tail = joined[-2:]
        return count - empty

    def _first_line(self, data: bytes) -> bytes | None:
        """The block after the first line, once that line is known to end the first record
        (no quote left open at its end); b"" while it goes on; None when it does not end it."""
        assert self._first is not None
        nl = data.find(b"\n")
        self._first += data if nl < 0 else data[: nl + 1]
        if len(self._first) > self._longest:
            return None
        if nl < 0:
            return b""
        try:
            line = self._first.decode("utf-8")
        except UnicodeDecodeError:
            return None
        self._first = None
        if self._quote and self._o.quote in line and _in_open_quote(line, self._o):
            return None
        if self._escape and self._o.escape in line:
            return None
        return data[nl + 1 :]

    def _lengths_ok(self, data: bytes, ends: np.ndarray) -> bool:
        """No line longer than ``_longest`` bytes, without locating every line end: when each
        aligned window of ``w`` bytes holds a line end, no line exceeds ``2w - 2`` bytes."""
        first = data.find(b"\n")
        if first < 0:
            self._partial += len(data)
            return self._partial <= self._longest
        last = data.rfind(b"\n")
        if self._partial + first > self._longest:
            return False
        self._partial = len(data) - last - 1
        if self._partial > self._longest:
            return False
        w = (self._longest + 2) // 2
        inner = ends[first : last + 1]
        whole = inner.size // w * w
        return bool(whole == 0 or inner[:whole].reshape(-1, w).any(axis=1).all())

    def finish(self) -> int | None:
        """Lines counted at the end of the stream: the last one when it has no line end."""
        try:
            self._decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return None
        if self.seen == 0:
            return 0
        # the whole stream is its first line: it ends the first record unless a quote is left
        # open (or an escape may hide the end)
        if self._first is not None and self._first and self._first_line(b"\n") is None:
            return None
        last = self._tail[-1]
        if last == _CR:
            return None  # a CR-only end at the very end
        return 0 if last == _LF else 1


def block_counts(
    opener: Callable[[], IO[bytes]], o: TextOptions, block_size: int
) -> Iterator[int | None]:
    """Record counts (lines, before the header is removed) block by block; a None means the
    rest of the stream cannot be counted this way (and ends the iteration)."""
    counter = LineCounter(o)
    with opener() as fh:
        while True:
            data = fh.read(block_size)
            if not data:
                break
            got = counter.feed(data)
            yield got
            if got is None:
                return
    yield counter.finish()
