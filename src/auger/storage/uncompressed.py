"""What a file's bytes come to once decompressed, estimated before reading it.

The server reads a scan itself only when its files are small once decompressed (see
:mod:`auger.storage.read_budget`, which then enforces the bound while it reads). Apart from
``read_budget`` because this opens files, and the file-system module charges its streams to the
budget.
"""

from __future__ import annotations

import struct
import zipfile

from auger.storage import filesystem as fs
from auger.storage.read_budget import is_compressed

__all__ = ["COMPRESSED_RATIO", "uncompressed_estimate"]

#: What a compressed file whose size is recorded nowhere is assumed to expand to, per byte:
#: more than text usually compresses by, so the estimate errs towards Spark's tasks.
COMPRESSED_RATIO = 20


def uncompressed_estimate(path: str, size: int) -> int:
    """What the file's bytes come to once decompressed (``size`` for a plain file).

    gzip records the last member's size modulo 4 GiB, and a zip entry its size: the larger of
    that and the ratio estimate is taken, since a member or a wrapped size may hide more. Other
    codecs get the ratio estimate.
    """
    if not is_compressed(path):
        return size
    guess = size * COMPRESSED_RATIO
    lower = path.lower()
    try:
        if lower.endswith(".gz") and size >= 18:
            with fs.open_input(path) as fh:
                fh.seek(size - 4)
                (recorded,) = struct.unpack("<I", fh.read(4))
            return max(guess, int(recorded))
        if lower.endswith(".zip"):
            with fs.open_input(path) as fh, zipfile.ZipFile(fh) as archive:
                infos = archive.infolist()
                recorded = max((i.file_size for i in infos), default=0)
            return max(guess, int(recorded))
    except (OSError, ValueError, struct.error, zipfile.BadZipFile):
        pass  # a truncated or odd file: the reader will say what is wrong with it
    return guess
