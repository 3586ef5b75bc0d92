"""Deletion vectors committed to a Delta table, for tests.

deltalake reads deletion vectors but its deletes rewrite files, so this commits one the way
writers that use them do: the deleted positions as a serialized roaring bitmap array in a
deletion-vector file, and a commit that swaps the file's add action for one that points at it.
"""

from __future__ import annotations

import json
import struct
import time
import zlib
from pathlib import Path

from pyroaring import BitMap

#: the magic number that opens a serialized deletion vector
_MAGIC = 1681511377


def _serialized(positions: list[int]) -> bytes:
    """The roaring bitmap array of ``positions`` (each below 2**32: one bitmap, key 0)."""
    bitmap = BitMap(positions).serialize()
    return struct.pack("<i", _MAGIC) + struct.pack("<q", 1) + struct.pack("<i", 0) + bitmap


def delete_positions(table_dir: Path, version: int, data_file: str, positions: list[int]) -> None:
    """Commit ``version`` of the Delta table at ``table_dir``: the rows of ``data_file`` (its
    path as the log names it) at ``positions`` deleted by a deletion vector."""
    log = table_dir / "_delta_log"
    add = None
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action and action["add"]["path"] == data_file:
                add = action["add"]
    assert add is not None, data_file
    data = _serialized(positions)
    vector = table_dir / f"deletion_vector_{version}.bin"
    size = struct.pack(">i", len(data))
    vector.write_bytes(b"\x01" + size + data + struct.pack(">I", zlib.crc32(data)))
    now = int(time.time() * 1000)
    descriptor = {
        "storageType": "p",
        "pathOrInlineDv": vector.as_uri(),
        "offset": 1,
        "sizeInBytes": len(data),
        "cardinality": len(positions),
    }
    remove = {
        "path": data_file,
        "deletionTimestamp": now,
        "dataChange": True,
        "extendedFileMetadata": True,
        "partitionValues": add["partitionValues"],
        "size": add["size"],
    }
    actions = [
        {"commitInfo": {"timestamp": now, "operation": "DELETE"}},
        {"remove": remove},
        {"add": {**add, "dataChange": True, "deletionVector": descriptor}},
    ]
    text = "".join(json.dumps(a) + "\n" for a in actions)
    (log / f"{version:020d}.json").write_text(text)
