"""A file-like view of a JSON file holding only the top-level members a query needs.

pyarrow's JSON reader parses and converts every member of every object, whatever the explicit
schema says; reading 2 members of 20 costs nearly what reading all 20 does. The compiled
projector (``auger._jsonscan``) walks each object once and copies out only the wanted members
(key and raw value), so pyarrow parses a document a fraction of the size, with its type rules
unchanged. Where the walk meets something it does not accept (see the C file: an object over
several lines, a wanted key cased otherwise, a malformed token, invalid UTF-8), or the block
holds a lone surrogate escape, the stream ends after the last whole object and says why in
:attr:`ProjectedStream.fallback`; the JSON reader then hands the rest of the file to its Python
path, after the rows already delivered.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from auger.formats.base import valid_utf8
from auger.formats.json.stream import lone_surrogate

_jsonscan: ModuleType | None
try:
    from auger import _jsonscan
except ImportError:  # built without a C compiler: pyarrow reads every member
    _jsonscan = None

__all__ = ["ProjectedStream", "projector_available"]

_BLOCK = 4 << 20


def projector_available() -> bool:
    return _jsonscan is not None


class ProjectedStream:
    """Readable stream of the source's objects cut to ``names`` (top-level members)."""

    def __init__(self, raw: Any, names: Sequence[str], block_size: int = _BLOCK) -> None:
        assert _jsonscan is not None
        self._raw = raw
        self._keys = tuple(n.encode() for n in names)
        self._block = block_size
        self._carry = b""
        self._out = b""
        self._at = 0
        self._eof = False
        self._first = True
        #: why the projection stopped early (None: it read the whole source)
        self.fallback: str | None = None
        #: never set: a problem ends the stream instead (see ``fallback``)
        self.suspect = False
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        while self._at >= len(self._out) and not self._eof:
            self._project_next()
        if n is None or n < 0:
            n = len(self._out) - self._at
        piece = self._out[self._at : self._at + n]
        self._at += len(piece)
        return piece

    def _project_next(self) -> None:
        assert _jsonscan is not None
        chunk = self._raw.read(self._block)
        if self._first:
            self._first = False
            chunk = chunk.removeprefix(codecs.BOM_UTF8)  # a byte order mark is not data
        final = not chunk
        data = self._carry + chunk if self._carry else chunk
        reason, consumed, _, cut = _jsonscan.project(data, final, self._keys)
        if consumed and not valid_utf8(data, consumed):
            reason, cut = "invalid UTF-8", b""
        elif consumed and lone_surrogate(data, 0, consumed) is not None:
            # in a member cut away too: the Python path refuses the record whatever is read
            reason, cut = "a lone surrogate escape", b""
        self._out, self._at = cut, 0
        if reason:
            self.fallback = reason
            self._eof = True
        elif final:
            self._eof = True
        else:
            self._carry = data[consumed:]
            if not consumed and len(self._carry) >= self._block:
                self._block *= 2  # an object longer than a block

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._raw.close()
