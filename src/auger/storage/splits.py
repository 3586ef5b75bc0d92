"""A file split, the unit a scan task reads, and opening a split's bytes.

A :class:`FileSplit` is one file or a byte range of one; :func:`open_split` opens a text
split's bytes aligned to whole lines, so that consecutive splits of a file read every line
exactly once. Readers (``formats``) and the planned scan (``scan.spec``) both use them; they
sit in ``storage`` because they are about files, not about scans.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import IO, Any

from auger.storage import filesystem as fs

__all__ = ["FileSplit", "open_split", "split_line_range"]


@dataclass(frozen=True)
class FileSplit:
    """One file (or a part of one) that a task reads."""

    path: str
    size: int = 0
    mtime: float = 0.0
    start: int = 0
    length: int = -1  # -1: to the end of the file
    row_groups: tuple[int, ...] | None = None

    @property
    def is_range(self) -> bool:
        """True when the split is a byte range of the file rather than all of it."""
        return self.start > 0 or self.length >= 0

    @property
    def file_size(self) -> int | None:
        """The whole file's size as its listing gave it, or None when not known: a part of a
        file (a byte range, some row groups) carries the part's size instead."""
        whole = not self.is_range and self.row_groups is None
        return self.size if whole and self.size > 0 else None


class _RangeReader(io.RawIOBase):
    """The bytes ``[start, end)`` of a file, optionally preceded by the file's first line."""

    def __init__(self, path: str, start: int, end: int, prefix: bytes) -> None:
        super().__init__()
        self._fh = fs.open_input(path)
        self._fh.seek(start)
        self._left = max(0, end - start)
        self._prefix = prefix

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._prefix:
            n = min(len(view), len(self._prefix))
            view[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        if self._left <= 0:
            return 0
        n = self._fh.readinto(view[: min(len(view), self._left)]) or 0
        self._left -= n
        return n

    def close(self) -> None:
        self._fh.close()
        super().close()


def _line_start_at_or_after(fh: IO[bytes], pos: int, size: int) -> int:
    """The first position >= ``pos`` where a line begins (``size`` at the end of the file)."""
    if pos <= 0:
        return 0
    if pos >= size:
        return size
    fh.seek(pos - 1)
    offset = pos - 1
    while True:
        chunk = fh.read(65536)
        if not chunk:
            return size
        nl = chunk.find(b"\n")
        if nl >= 0:
            return offset + nl + 1
        offset += len(chunk)


def split_line_range(path: str, start: int, length: int) -> tuple[int, int]:
    """The line-aligned byte range a text split owns.

    A line belongs to the split in which it *starts*: a split beginning mid-line skips to the
    next line, and the last line that starts inside the split is read to its end even when that
    crosses into the next split. So consecutive splits cover every line exactly once (a quoted
    field holding a newline is the one case this cannot see, as in any line-split reader).
    """
    info = fs.file_info(path)
    if info is None:
        raise FileNotFoundError(path)
    size = info.size
    end = size if length < 0 else min(size, start + length)
    with fs.open_input(path) as fh:
        first = _line_start_at_or_after(fh, start, size)
        last = _line_start_at_or_after(fh, end, size) if end < size else size
    return first, max(first, last)


def open_split(split: FileSplit, keep_first_line: bool = False) -> IO[bytes]:
    """Open the bytes of a text split, line-aligned, as a binary stream.

    Args:
        split: the split; a whole file when it has no byte range.
        keep_first_line: for a split that does not start the file, emit the file's first line
            before the range, so a reader that expects a header (``extract_header``) or skips a
            first line (``skip_first_line``) handles every split the same way. The first split
            already has it.
    """
    if not split.is_range:
        return fs.open_input(split.path)
    first, last = split_line_range(split.path, split.start, split.length)
    prefix = b""
    if keep_first_line and first > 0:
        with fs.open_input(split.path) as fh:
            prefix = fh.readline()
        if not prefix.endswith(b"\n"):
            prefix += b"\n"
    return io.BufferedReader(_RangeReader(split.path, first, last, prefix))
