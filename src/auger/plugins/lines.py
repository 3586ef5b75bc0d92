"""Reading the text lines of a line-based format (logRegex, ltsv, syslog) a block at a time.

Decoding a megabyte at once and splitting it costs a fraction of reading and decoding each line
by itself, which matters when a reader's whole work per line is a regular expression or a
split. A line is what lies between two line ends (``\\n`` unless a format says otherwise), with
any ``\\r`` before the end removed; the text after the last line end is a line too, and an
end at the very end of the file adds no empty line. Undecodable bytes become U+FFFD.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

__all__ = ["text_lines"]

_BLOCK = 1 << 20


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
