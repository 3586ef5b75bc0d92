"""What a format plugin implements: abstract base classes, so a plugin missing a method fails
when it is instantiated, not when the method is first needed.

A plugin answers two questions: what columns do these files have (``discover_schema``, on the
driver, cheap: headers, footers, a sample) and what is in this file (``read_arrow``, on an
executor, as Arrow batches of the file's own columns). The scan adds implicit, partition and
missing columns and conforms types; the plugin only reads.
"""

from __future__ import annotations

import bz2
import gzip
import io
import zlib
from abc import ABC
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.storage import filesystem as fs
from auger.storage import read_budget
from auger.storage.splits import FileSplit
from auger.types import ColumnMetadata, TupleSchema

if TYPE_CHECKING:
    from auger.scan.lifecycle import FormatReader

__all__ = [
    "FormatPlugin",
    "derive_discovery_with",
    "open_input",
    "uses_reader",
    "valid_utf8",
]


class FormatPlugin(ABC):  # noqa: B024 - every method has a default; a plugin picks its own
    """A file format: its reader type name, default extensions, schema discovery and reading.

    A plugin either implements :meth:`reader` (one :class:`FormatReader` per file, writing rows
    through the result set loader, run by the scan operator) and gets ``discover_schema``
    derived from it, or it reads Arrow itself and overrides ``discover_schema`` and
    ``read_arrow`` (the built-in readers do, for speed). ``name`` and ``type_name`` are the
    same thing: the reader type of a workspace format entry (``type = "regexlog"``).
    """

    #: reader type, as in ``type = "text"`` of a workspace format entry
    type_name: str = ""
    #: the same, under the name the plugin API documents (``docs/plugins.md``)
    name: str = ""
    #: default extensions when a config names none
    extensions: tuple[str, ...] = ()
    #: how many files the derived ``discover_schema`` opens to learn the columns
    discovery_sample: int = 8
    #: the type of a column (or map member) a query names that no file the planner sampled
    #: has; None is Drill's nullable INT
    null_type: ColumnMetadata | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name and not cls.type_name:
            cls.type_name = cls.name
        elif cls.type_name and not cls.name:
            cls.name = cls.type_name

    def error_context(self, config: FormatConfig) -> list[str]:
        """The context lines naming this format in an error about one of its files, as
        Drill's file scans print them (``Format plugin type: text``, ``Plugin config name:
        csv``); the scan adds them to every error of its readers, beside file, line and
        column."""
        return [f"Format plugin type: {self.type_name}", f"Plugin config name: {config.name}"]

    def reader(self, file: FileSplit, config: FormatConfig) -> FormatReader:
        """A new reader for one file (its negotiator brings projection, options, schemas)."""
        raise NotImplementedError(
            f"format plugin {type(self).__name__} implements neither reader() nor read_arrow()"
        )

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        """The table columns of these files, as far as can be known cheaply on the driver.

        Derived from :meth:`reader`: the union of the first files' schemas (each reader's early
        schema, else its first batch's). Running a reader is the scan layer's work, so the
        derivation is the one :mod:`auger.scan` installs (:func:`derive_discovery_with`) when
        it is imported, which a plugin's ``FormatReader`` (from ``auger.scan``) already did."""
        if _reader_discovery is None:
            raise NotImplementedError(
                f"format plugin {type(self).__name__}: discover_schema() derives the schema "
                "from reader(); import auger.scan (where FormatReader lives) before discovering"
            )
        return _reader_discovery(self, files, config, options)

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        """Batches of the file's own columns; ``columns`` (lower-cased names) may be read only.

        Batches may be of any size (a whole parsed block, say): the scan cuts them into slices
        within its row and byte limits. ``batch_rows`` is a hint for readers that build their
        batches row by row.

        Only Arrow-native plugins implement it: a plugin with :meth:`reader` is run by the scan
        operator itself, rows through the result set loader."""
        raise NotImplementedError(
            f"format plugin {type(self).__name__} reads through reader(), not read_arrow()"
        )


#: How :meth:`FormatPlugin.discover_schema` runs a plugin's readers to learn its columns: set
#: by the scan layer, which holds the reader framework (``formats`` sits below ``scan``).
ReaderDiscovery = Callable[
    [FormatPlugin, Sequence[str], FormatConfig, Mapping[str, Any]], TupleSchema
]
_reader_discovery: ReaderDiscovery | None = None


def derive_discovery_with(discover: ReaderDiscovery) -> None:
    """Install how reader-based plugins derive ``discover_schema`` (``auger.scan`` calls it)."""
    global _reader_discovery
    _reader_discovery = discover


def uses_reader(plugin: FormatPlugin) -> bool:
    """Whether the plugin reads through :meth:`FormatPlugin.reader` (not Arrow-native)."""
    return type(plugin).reader is not FormatPlugin.reader


def open_input(path: str) -> IO[bytes]:
    """Open a file for reading, decompressing by suffix as Drill's Hadoop codecs do.

    ``.gz``, ``.bz2``, ``.zst``/``.zstd``, ``.deflate`` (a zlib stream, Hadoop's DefaultCodec),
    ``.snappy`` and ``.lz4`` (Hadoop's block framing around raw Snappy/LZ4 blocks) and ``.zip``
    (its first entry, as Drill's ZipCodec). Bytes the codec cannot decode (a truncated or
    corrupt file, a file that is not of that codec at all) raise a DATA_READ error naming the
    file rather than the codec's own exception.
    """
    lower = path.lower()
    raw: IO[bytes] | io.RawIOBase
    if lower.endswith(".gz"):
        raw = gzip.open(_source(path), "rb")  # type: ignore[assignment]  # noqa: SIM115
    elif lower.endswith(".bz2"):
        raw = bz2.open(_source(path), "rb")  # noqa: SIM115 - handed to the caller
    elif lower.endswith((".zst", ".zstd")):
        raw = _ZstdReader(fs.open_input(path))
    elif lower.endswith(".deflate"):
        raw = _ZlibReader(fs.open_input(path))
    elif lower.endswith((".snappy", ".lz4")):
        codec = "snappy" if lower.endswith(".snappy") else "lz4_raw"
        raw = _HadoopBlockReader(fs.open_input(path), codec)
    elif lower.endswith(".zip"):
        raw = _first_zip_entry(path)
    else:
        return fs.open_input(path)
    return io.BufferedReader(_Checked(raw, path))


def _source(path: str) -> Any:
    """What gzip, bz2 and zipfile open: the name of a local file (so they close it), an open
    object otherwise (closed when it is collected)."""
    return fs.open_input(path) if fs.is_uri(path) else path


class _Checked(io.RawIOBase):
    """A decompressing stream whose decoding errors become DATA_READ errors naming the file.

    gzip, bz2, zlib, zstandard and pyarrow's codecs each raise their own exception types
    (``EOFError``, ``OSError``, ``zlib.error``, ``ZstdError``, ``ArrowInvalid``...) from a read,
    long after the file was opened: without this a corrupt file surfaces as a SYSTEM ERROR.
    """

    def __init__(self, inner: IO[bytes] | io.RawIOBase, path: str) -> None:
        super().__init__()
        self._inner = inner
        self._path = path

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._inner.read(len(buffer)) or b""
        except EOFError as exc:
            raise UserError.data_read(
                f"Truncated compressed file: {exc}", [f"File: {self._path}"]
            ) from exc
        except Exception as exc:
            if isinstance(exc, UserError):
                raise
            raise UserError.data_read(
                f"Cannot read compressed file: {exc}", [f"File: {self._path}"]
            ) from exc
        n = len(data)
        read_budget.charge(n)  # the server's own read of a small scan stops past its bound
        buffer[:n] = data
        return n

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            super().close()


class _DecodedReader(io.RawIOBase):
    """A stream of decoded pieces (``_more``), read by size without re-copying what is left."""

    def __init__(self, fh: IO[bytes]) -> None:
        super().__init__()
        self._fh = fh
        self._pending = b""
        self._at = 0  # bytes of ``_pending`` already read

    def readable(self) -> bool:
        return True

    def _more(self) -> bytes | None:
        """The next decoded piece; None at the end of the stream."""
        raise NotImplementedError

    def read(self, size: int = -1) -> bytes:
        want = size if size >= 0 else 1 << 62
        while len(self._pending) - self._at < want:
            piece = self._more()
            if piece is None:
                break
            self._pending = self._pending[self._at :] + piece
            self._at = 0
        out = self._pending[self._at : self._at + want]
        self._at += len(out)
        return out

    def close(self) -> None:
        self._fh.close()
        super().close()


class _ZlibReader(_DecodedReader):
    """A zlib stream (RFC 1950, what Hadoop's ``.deflate`` codec writes), decoded as read."""

    def __init__(self, fh: IO[bytes]) -> None:
        super().__init__(fh)
        self._z = zlib.decompressobj()

    def _more(self) -> bytes | None:
        if self._z.eof:
            return None
        chunk = self._fh.read(1 << 16)
        if not chunk:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        return self._z.decompress(chunk)


class _ZstdReader(_DecodedReader):
    """Zstandard frames, one after another, decoded as read.

    zstandard's ``stream_reader`` ends quietly where a truncated file ends, so a cut file
    read as fewer rows; here input that ends inside a frame is an ``EOFError``, as gzip's and
    bz2's readers raise."""

    def __init__(self, fh: IO[bytes]) -> None:
        # deferred: loads zstandard (heavy)
        import zstandard  # optional: only .zst input needs it

        super().__init__(fh)
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._z = self._new()
        self._in_frame = False  # bytes of the current frame were fed, its end not yet seen

    def _more(self) -> bytes | None:
        chunk = self._fh.read(1 << 16)
        if not chunk:
            if self._in_frame:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            return None
        out = []
        while chunk:
            self._in_frame = True
            out.append(self._z.decompress(chunk))
            if not self._z.eof:
                break
            self._in_frame = False
            chunk = self._z.unused_data  # the next frame starts in this chunk
            self._z = self._new()
        return b"".join(out)


class _HadoopBlockReader(_DecodedReader):
    """Hadoop's block framing (``BlockCompressorStream``, used by its Snappy and LZ4 codecs).

    Each block is its uncompressed length (4 bytes, big-endian) followed by chunks of a
    compressed length and that many bytes of a raw Snappy/LZ4 block, until the chunks have
    given the block's length. pyarrow's codecs decode the chunks.
    """

    def __init__(self, fh: IO[bytes], codec: str) -> None:
        super().__init__(fh)
        self._codec = pa.Codec(codec)

    def _int(self, what: str) -> int | None:
        head = self._fh.read(4)
        if not head and what == "block":
            return None
        if len(head) < 4:
            raise EOFError(f"Compressed file ended inside a {what} header")
        return int.from_bytes(head, "big")

    def _more(self) -> bytes | None:
        size = self._int("block")
        if size is None:
            return None
        parts: list[bytes] = []
        got = 0
        while got < size:
            n = self._int("chunk")
            assert n is not None
            data = self._fh.read(n)
            if len(data) < n:
                raise EOFError("Compressed file ended inside a compressed chunk")
            piece = self._codec.decompress(data, decompressed_size=size - got, asbytes=True)
            if not piece:
                raise ValueError("empty compressed chunk")
            parts.append(piece)
            got += len(piece)
        if got != size:
            raise ValueError(f"a block decompressed to {got} bytes, its header says {size}")
        return b"".join(parts)


def _first_zip_entry(path: str) -> io.RawIOBase:
    """The first entry of a zip archive (Drill's ZipCodec ignores the others)."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import zipfile

    try:
        archive = zipfile.ZipFile(_source(path))
        names = archive.namelist()
        entry: IO[bytes] = archive.open(names[0]) if names else io.BytesIO(b"")
    except (zipfile.BadZipFile, OSError) as exc:
        raise UserError.data_read(f"Cannot read compressed file: {exc}", [f"File: {path}"]) from exc
    return _ZipEntry(archive, entry)


class _ZipEntry(io.RawIOBase):
    """An archive's entry that closes the archive with it."""

    def __init__(self, archive: Any, entry: IO[bytes]) -> None:
        super().__init__()
        self._archive = archive
        self._entry = entry

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        return self._entry.read(size)

    def close(self) -> None:
        try:
            self._entry.close()
            self._archive.close()
        finally:
            super().close()


def valid_utf8(data: bytes | memoryview, size: int) -> bool:
    """Whether the first ``size`` bytes are valid UTF-8, checked by Arrow's vectorised
    validator (the input of the compiled readers, before any value cut from it is trusted:
    their delimiters are ASCII, which never occurs inside a multi-byte character)."""

    whole = pa.StringArray.from_buffers(
        1, pa.py_buffer(np.array([0, size], dtype=np.int32)), pa.py_buffer(data)
    )
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True
