"""The file side of writing a table (CTAS and CTTAS): formats, permissions, staging, removal.

A table is a directory of files in one format (``store.format``): :func:`writer_format` says
how that format is written, :class:`StorageStrategy` which permissions new folders and files
get, :func:`staging_path` the hidden directory a write goes into before it is renamed into
place. Running the write itself is Spark's part, :mod:`auger.spark.writer`. A process killed
during a write leaves its staging directory behind; its name records its owner, and the next
engine to start removes it once that owner is dead (:func:`sweep_dead_staging`). Dropping a
table hides it first, then removes it (:func:`remove_tree_atomically`).

Permissions follow Drill's storage strategies: persistent tables take the session's
``exec.persistent_table.umask`` (default ``002``: folders 775, files 664), temporary tables
umask ``077`` (folders 700, files 600).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.storage.processes import host_key, process_alive, process_start

__all__ = [
    "DEFAULT_UMASK",
    "PERSISTENT",
    "TEMPORARY",
    "StorageStrategy",
    "WriteResult",
    "WriterFormat",
    "remove_empty_folders",
    "remove_tree_atomically",
    "staging_path",
    "sweep_dead_staging",
    "writer_format",
]

_log = logging.getLogger(__name__)

DEFAULT_UMASK = "002"
TEMPORARY_UMASK = "077"


def _valid_umask(umask: object) -> bool:
    return isinstance(umask, str) and 1 <= len(umask) <= 4 and all(ch in "01234567" for ch in umask)


@dataclass(frozen=True)
class StorageStrategy:
    """How the folders and files of a new table are protected.

    Args:
        umask: octal digits removed from 777 (folders) and 666 (files); anything that is not an
            octal umask (``"ABC"``, ``"999"``, None) falls back to :data:`DEFAULT_UMASK`, as Drill
            does, so a typo in the option never leaves tables world-writable.
        delete_on_exit: whether the created paths belong to a session (temporary tables).
    """

    umask: str = DEFAULT_UMASK
    delete_on_exit: bool = False

    def __post_init__(self) -> None:
        if not _valid_umask(self.umask):
            object.__setattr__(self, "umask", DEFAULT_UMASK)

    @property
    def folder_mode(self) -> int:
        return 0o777 & ~int(self.umask, 8)

    @property
    def file_mode(self) -> int:
        return 0o666 & ~int(self.umask, 8)

    def create_path(self, path: str) -> str | None:
        """Create ``path`` and any missing ancestors, giving each new folder the folder mode.

        Returns:
            The top-most folder that was created, or None when ``path`` already existed (then
            no permission is changed).
        """
        missing: list[str] = []
        current = os.path.abspath(path)
        while not os.path.exists(current):
            missing.append(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        made: list[str] = []
        try:
            for folder in reversed(missing):
                try:
                    os.mkdir(folder)
                    made.append(folder)
                except FileExistsError:
                    pass
                os.chmod(folder, self.folder_mode)
        except BaseException:  # a read-only or full file system: leave no empty folders
            remove_empty_folders(made[-1] if made else None, made[0] if made else None)
            raise
        return missing[-1] if missing else None

    def apply_tree(self, root: str) -> None:
        """Give ``root`` and everything below it this strategy's folder and file modes."""
        if os.path.isfile(root):
            os.chmod(root, self.file_mode)
            return
        os.chmod(root, self.folder_mode)
        for dirpath, dirnames, filenames in os.walk(root):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), self.folder_mode)
            for f in filenames:
                os.chmod(os.path.join(dirpath, f), self.file_mode)


PERSISTENT = StorageStrategy(DEFAULT_UMASK, False)
TEMPORARY = StorageStrategy(TEMPORARY_UMASK, True)


@dataclass(frozen=True)
class WriterFormat:
    """What ``store.format`` means for the writer: Spark source, file extension, options."""

    name: str  # the store.format value, e.g. "csvh"
    kind: str  # "parquet" | "json" | "text"
    extension: str
    options: Mapping[str, str] = field(default_factory=dict)
    #: JSON only: NaN and ±Infinity as bare tokens, as Drill's JSON writer writes them
    #: (``store.json.writer.allow_nan_inf``); Spark's writer quotes them as strings
    bare_non_numbers: bool = False

    @property
    def supports_partitioning(self) -> bool:
        return self.kind == "parquet"


def writer_format(
    store_format: str,
    formats: Mapping[str, FormatConfig],
    options: Mapping[str, Any] | None = None,
) -> WriterFormat:
    """The writer for ``store.format`` in a plugin whose formats are ``formats``.

    The extension and delimiter come from the plugin's format of that name, so that whatever is
    written reads back through the same plugin.

    Raises:
        UserError: VALIDATION, when the plugin has no such format or it cannot be written.
    """
    options = options or {}
    name = store_format.strip().lower()
    fmt = formats.get(name) or next((f for n, f in formats.items() if n.lower() == name), None)
    if fmt is None:
        raise UserError.validation(
            f"Unsupported store.format [{store_format}]: no format plugin of that name",
            [
                f"Known formats: {', '.join(sorted(formats))}",
                "Fix: ALTER SESSION SET `store.format` = 'parquet' (or json, csv, tsv, psv, csvh)",
            ],
        )
    ext = fmt.extensions[0] if fmt.extensions else name
    if fmt.type == "parquet":
        codec = str(options.get("store.parquet.compression", "snappy")).lower()
        return WriterFormat(name, "parquet", ext, {"compression": codec})
    if fmt.type == "json":
        bare = options.get("store.json.writer.allow_nan_inf", True)
        return WriterFormat(name, "json", ext, {}, bare_non_numbers=bool(bare))
    if fmt.type == "text":
        delimiter = str(fmt.option("delimiter", fmt.option("field_delimiter", ",")))
        quote = str(fmt.option("quote", '"'))
        escape = str(fmt.option("escape", '"'))
        header = bool(fmt.option("extract_header", False))
        return WriterFormat(
            name,
            "text",
            ext,
            {
                "sep": delimiter,
                "quote": quote,
                "escape": escape,
                "header": "true" if header else "false",
            },
        )
    raise UserError.validation(
        f"Unsupported store.format [{store_format}]: format type [{fmt.type}] has no writer"
    )


@dataclass(frozen=True)
class WriteResult:
    """What a table write produced: its files and the number of records written."""

    path: str
    files: tuple[str, ...]
    records: int

    def to_arrow(self) -> pa.Table:
        """Drill's CTAS answer: ``Fragment | Number of records written``."""
        return pa.table(
            {
                "Fragment": pa.array(["0_0"], pa.string()),
                "Number of records written": pa.array([self.records], pa.int64()),
            }
        )


#: ``.<table>.auger-staging-<host>-<pid>-<pid start>-<random>``: the owner is in the name,
#: because Spark must create the directory itself (it refuses one that exists), so no marker
#: file can be put in it first.
_STAGING = re.compile(
    r"^\..*\.auger-staging-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-(?P<start>\d+)-[0-9a-f]{32}$"
)

#: How many directory levels below a workspace the sweep looks for staging directories (a CTAS
#: into ``a/b/t`` stages in ``a/b``): enough for nested table names, bounded for big trees.
STAGING_SWEEP_DEPTH = 3


def staging_path(target: str) -> str:
    """A hidden directory beside ``target`` to write the table into, named after its owner
    (this process) so that a later sweep can tell when it was abandoned."""
    parent, base = os.path.split(target.rstrip("/"))
    pid = os.getpid()
    owner = f"{host_key()}-{pid}-{process_start(pid) or 0}"
    return os.path.join(parent, f".{base or 'table'}.auger-staging-{owner}-{uuid.uuid4().hex}")


def _staging_owner_dead(name: str) -> int | None:
    """The pid of the dead writer of a staging directory named ``name``, else None.

    None also for names that are no staging directory of this host (another host's processes
    cannot be seen), and for this very process (its writers may be running now).
    """
    m = _STAGING.match(name)
    if m is None or m["host"] != host_key():
        return None
    pid = int(m["pid"])
    if pid == os.getpid() or process_alive(pid, None if m["start"] == "0" else m["start"]):
        return None
    return pid


def sweep_dead_staging(root: str, depth: int = STAGING_SWEEP_DEPTH) -> list[str]:
    """Remove CTAS staging directories under ``root`` whose writing process is dead.

    A ``kill -9`` during a CTAS leaves its staging directory behind (hidden, so never read).
    Only directories named as :func:`staging_path` names them are looked at, down to ``depth``
    levels; hidden directories and links are not entered. Each removal is logged as a warning.

    Returns:
        The removed directories.
    """
    removed: list[str] = []
    pending = [(root, 0)]
    while pending:
        directory, level = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name.startswith((".", "_")):
                pid = _staging_owner_dead(entry.name)
                if pid is None:
                    continue
                try:
                    _remove_abandoned(entry.path)
                except OSError as exc:
                    _log.warning("Could not remove staging directory [%s]: %s", entry.path, exc)
                    continue
                # a warning: something crashed, and the CLI shows warnings without any set-up
                _log.warning(
                    "Removed staging directory [%s] left by a table write whose process "
                    "(pid %d) no longer runs",
                    entry.path,
                    pid,
                )
                removed.append(entry.path)
            elif level + 1 < depth:
                pending.append((entry.path, level + 1))
    return removed


def _remove_abandoned(path: str, attempts: int = 20) -> None:
    """Remove a dead writer's staging directory, though its last files may still be moving.

    The Python process named in the directory may be gone while the Spark JVM it started is
    still winding down its task (a ``kill -9`` does not reach the JVM at once), committing or
    deleting files under the directory as it goes. An entry that vanishes while the tree is
    being removed is what was to happen anyway, and one that appears is removed on the next
    pass; only an error that persists past the last pass is raised.
    """
    for attempt in range(attempts):
        try:
            _make_removable(path)
            shutil.rmtree(path, onerror=_ignore_vanished)
        except OSError:
            if attempt == attempts - 1:
                raise
        if not os.path.lexists(path):
            return
        time.sleep(0.25)
    raise OSError(f"entries keep appearing under {path}")


def _ignore_vanished(function: Any, path: str, exc_info: Any) -> None:
    if not isinstance(exc_info[1], FileNotFoundError):
        raise exc_info[1]


def remove_empty_folders(deepest: str | None, top: str | None) -> None:
    """Remove ``deepest`` and its ancestors up to ``top`` (the folders a failed write made),
    stopping at the first that is not empty (another statement wrote there meanwhile)."""
    if deepest is None or top is None:
        return
    current = os.path.abspath(deepest)
    top = os.path.abspath(top)
    while current == top or current.startswith(top.rstrip("/") + "/"):
        try:
            os.rmdir(current)
        except OSError:
            return
        current = os.path.dirname(current)


def remove_tree_atomically(path: str) -> None:
    """Delete a table: hide it first under a ``_``-prefixed name, then remove the hidden copy.

    Readers never see a half-deleted table: the rename is atomic and hidden names are skipped.
    """
    parent, base = os.path.split(path.rstrip("/"))
    hidden = os.path.join(parent, f"_{base}_{uuid.uuid4().hex}")
    os.rename(path, hidden)
    if os.path.isdir(hidden) and not os.path.islink(hidden):
        _make_removable(hidden)
        shutil.rmtree(hidden)
    else:
        os.remove(hidden)


def _make_removable(root: str) -> None:
    """Folders with restrictive modes (an umask of 777) must be owner-rwx to be emptied."""

    def fix(folder: str) -> None:
        with contextlib.suppress(OSError):
            mode = os.stat(folder).st_mode
            if mode & stat.S_IRWXU != stat.S_IRWXU:
                os.chmod(folder, mode | stat.S_IRWXU)

    fix(root)
    for dirpath, dirnames, _filenames in os.walk(root):
        for d in dirnames:  # fixed before os.walk descends into it
            fix(os.path.join(dirpath, d))
