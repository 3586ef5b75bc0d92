"""Writing a query's Spark DataFrame as a table directory (CTAS and CTTAS).

A table is a directory of files in one format (``store.format``), named the way Drill names its
writer output (``0_0_0.parquet``, ``0_0_1.parquet``...). The write is atomic: Spark writes into a
hidden staging directory beside the target (hidden names are skipped by every reader), the
staging directory is tidied (Spark's ``_SUCCESS`` and ``.crc`` files removed, files renamed,
permissions applied) and only then renamed into place. A failed or interrupted write removes the
staging directory, so nothing is left behind; a process killed outright cannot, so the staging
directory's name records its owner and the next engine to start removes it once that owner is
dead (:func:`sweep_dead_staging`).

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
from collections.abc import Mapping, Sequence
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
    "sweep_dead_staging",
    "write_table",
    "writer_format",
]

_log = logging.getLogger(__name__)

DEFAULT_UMASK = "002"
TEMPORARY_UMASK = "077"

#: The hidden column whose values group rows of one partition-value combination into files.
_PARTITION_KEY = "__auger_partition_key"


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


def _staging_path(target: str) -> str:
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
    Only directories named as :func:`_staging_path` names them are looked at, down to ``depth``
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


def _spark_write(df: Any, fmt: WriterFormat, staging: str, partition_by: Sequence[str]) -> Any:
    """Run the Spark write into ``staging``; returns the Observation that counts rows."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observation = Observation(f"auger_write_{uuid.uuid4().hex}")
    if fmt.kind == "text":
        df = _complex_as_json(df)
    out = df.observe(observation, F.count(F.lit(1)).alias("n"))
    writer_cols: list[str] = []
    if partition_by:
        # One file per combination of partition values, all in the table directory (Drill's
        # layout), keeping every column with its own type: rows are grouped by a hash of the
        # values (null flags included, so (a, null) and (null, a) differ) in a hidden column.
        keys = [F.col(f"`{c}`") for c in partition_by]
        flags = [k.isNull() for k in keys]
        out = out.withColumn(_PARTITION_KEY, F.xxhash64(*flags, *keys))
        out = out.repartition(F.col(_PARTITION_KEY)).sortWithinPartitions(*keys)
        writer_cols = [_PARTITION_KEY]
    writer = out.write.mode("error")  # "errorifexists" is not a mode the Connect client knows
    if writer_cols:
        writer = writer.partitionBy(*writer_cols)
    for key, value in fmt.options.items():
        writer = writer.option(key, value)
    if fmt.kind == "parquet":
        writer.parquet(staging)
    elif fmt.kind == "json":
        writer.json(staging)
    else:
        writer.csv(staging)
    return observation


def _complex_as_json(df: Any) -> Any:
    """Text files hold scalars only: maps, structs and arrays are written as JSON text."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, MapType, StructType

    complex_types = (ArrayType, MapType, StructType)
    if not any(isinstance(f.dataType, complex_types) for f in df.schema.fields):
        return df
    cols = [
        F.to_json(F.col(f"`{f.name}`")).alias(f.name)
        if isinstance(f.dataType, complex_types)
        else F.col(f"`{f.name}`")
        for f in df.schema.fields
    ]
    return df.select(*cols)


def _data_files(staging: str) -> list[str]:
    """Spark's output files below ``staging`` in a stable order (partition dir, part number)."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(staging):
        dirnames.sort()
        for name in sorted(filenames):
            if name.startswith((".", "_")):
                continue
            found.append(os.path.join(dirpath, name))
    return found


#: How Spark's JSON writer quotes the values of a DOUBLE or FLOAT that are no numbers.
_QUOTED_NON_NUMBERS = ('"NaN"', '"Infinity"', '"-Infinity"')
_NON_NUMBERS = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity"}


class _Number(str):
    """A JSON number kept as its text, so that rewriting a record changes no other value."""


def _has_floating(t: Any) -> bool:
    """Whether a Spark type (in its JSON form) holds a DOUBLE or FLOAT at any depth."""
    if isinstance(t, str):
        return t in ("double", "float")
    kind = t.get("type")
    if kind == "struct":
        return any(_has_floating(f["type"]) for f in t["fields"])
    if kind == "array":
        return _has_floating(t["elementType"])
    if kind == "map":
        return _has_floating(t["valueType"])
    return False


def _json_text(value: Any, t: Any) -> str:
    """One JSON value written back, with the non-numbers of floating columns unquoted."""
    import json

    if isinstance(value, _Number):
        return str(value)
    if isinstance(value, str):
        if t in ("double", "float") and value in _NON_NUMBERS:
            return _NON_NUMBERS[value]
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        kind = t.get("type") if isinstance(t, dict) else None
        if kind == "struct":
            members = {f["name"]: f["type"] for f in t["fields"]}
        else:
            item = t.get("valueType") if kind == "map" else None
            members = dict.fromkeys(value, item)
        parts = (
            f"{json.dumps(k, ensure_ascii=False)}:{_json_text(v, members.get(k))}"
            for k, v in value.items()
        )
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list):
        element = t.get("elementType") if isinstance(t, dict) else None
        return "[" + ",".join(_json_text(v, element) for v in value) + "]"
    return json.dumps(value)


def _unquote_non_numbers(path: str, schema: Any) -> None:
    """Rewrite a JSON file of Spark's so that NaN and Infinity of DOUBLE and FLOAT columns are
    bare tokens; only the lines holding such a quoted token are parsed."""
    import json

    tmp = path + ".nan"
    changed = False
    with open(path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as out:
        for line in src:
            if any(token in line for token in _QUOTED_NON_NUMBERS):
                record = json.loads(line, parse_float=_Number, parse_int=_Number)
                fixed = _json_text(record, schema) + "\n"
                changed = changed or fixed != line
                line = fixed
            out.write(line)
    if changed:
        os.replace(tmp, path)
    else:
        os.remove(tmp)


def _tidy(staging: str, fmt: WriterFormat, df: Any) -> tuple[str, ...]:
    """Rename Spark's files to Drill's names at the staging root; drop everything else."""
    files = _data_files(staging)
    if fmt.kind == "json" and fmt.bare_non_numbers:
        schema = df.schema.jsonValue()
        if _has_floating(schema):
            for path in files:
                _unquote_non_numbers(path, schema)
    names: list[str] = []
    for index, src in enumerate(files):
        name = f"0_0_{index}.{fmt.extension}"
        os.replace(src, os.path.join(staging, f".{name}.tmp"))
        names.append(name)
    for entry in os.listdir(staging):
        full = os.path.join(staging, entry)
        if entry.endswith(".tmp") and entry.startswith(".0_0_"):
            continue
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)
        else:
            os.remove(full)
    for name in names:
        os.replace(os.path.join(staging, f".{name}.tmp"), os.path.join(staging, name))
    if not names:
        # Spark normally writes one (empty) file for an empty result; make sure the table still
        # carries its schema (Parquet) or at least exists as a readable empty file.
        name = f"0_0_0.{fmt.extension}"
        target = os.path.join(staging, name)
        if fmt.kind == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(df.limit(0).toArrow(), target)
        else:
            with open(target, "wb"):
                pass
        names.append(name)
    return tuple(names)


def write_table(
    df: Any,
    target: str,
    fmt: WriterFormat,
    strategy: StorageStrategy,
    partition_by: Sequence[str] = (),
) -> WriteResult:
    """Write ``df`` as a new table directory at ``target``, atomically.

    Args:
        df: the Spark DataFrame of the query, with the table's final column names.
        target: absolute path of the table directory; it must not exist.
        fmt: the writer format (see :func:`writer_format`).
        strategy: permissions of new folders and files.
        partition_by: column names (Parquet only) whose value combinations get their own files.

    Raises:
        FileExistsError: when the target appeared while the table was being written.
        UserError: UNSUPPORTED_OPERATION for partitioning a format that cannot do it; Spark's
            own errors (unwrapped by the caller) for failures of the query itself.
    """
    if partition_by and not fmt.supports_partitioning:
        raise UserError.unsupported(
            f"{fmt.name.capitalize()} format does not support auto-partitioning."
        )
    parent = os.path.dirname(target.rstrip("/"))
    created = strategy.create_path(parent)
    staging = _staging_path(target)
    from auger.spark.bootstrap import spark_context

    # None under Spark Connect: there the caller's operation tag (if any) covers the write.
    sc = spark_context(df.sparkSession)
    # A caller (a DB-API cursor) may already run this statement in a job group it can cancel;
    # keep that one. Otherwise use a group of our own so an interrupted write stops its jobs.
    group = sc.getLocalProperty("spark.jobGroup.id") if sc is not None else None
    own_group = None
    if not group and sc is not None:
        own_group = f"auger-write-{uuid.uuid4().hex}"
        sc.setLocalProperty("spark.jobGroup.id", own_group)
        sc.setLocalProperty("spark.job.interruptOnCancel", "true")
    try:
        try:
            if df.schema.fields:
                observation = _spark_write(df, fmt, staging, partition_by)
                records = int(observation.get.get("n", 0))
            else:
                # No columns (an empty JSON file's query): Spark writes no such data set, Drill
                # writes none and succeeds; the table is an empty directory, which reads back
                # as the empty table it came from.
                records = df.count()
                os.mkdir(staging)
        finally:
            if own_group is not None:
                sc.setLocalProperty("spark.jobGroup.id", None)
                sc.setLocalProperty("spark.job.interruptOnCancel", None)
        files = _tidy(staging, fmt, df) if df.schema.fields else ()
        strategy.apply_tree(staging)
        if os.path.lexists(target):
            # another statement created it meanwhile; the caller words the error
            raise FileExistsError(target)
        os.rename(staging, target)
    except BaseException:
        if own_group is not None:
            with contextlib.suppress(Exception):
                sc.cancelJobGroup(own_group)
        # Cancelled tasks may still be writing for a moment: wait for the group's jobs to end
        # before removing, so no stray file recreates the staging folder afterwards.
        _wait_for_jobs(sc, own_group or group)
        shutil.rmtree(staging, ignore_errors=True)
        remove_empty_folders(parent, created)
        raise
    _log.debug("wrote %d records in %d files to %s", records, len(files), target)
    return WriteResult(target, files, records)


def _wait_for_jobs(sc: Any, group: str | None, timeout: float = 10.0) -> None:
    """Wait (bounded) until no job of ``group`` is running any more."""
    if not group or sc is None:
        return
    import time

    deadline = time.monotonic() + timeout
    with contextlib.suppress(Exception):
        tracker = sc.statusTracker()
        while time.monotonic() < deadline:
            running = [
                j
                for j in tracker.getJobIdsForGroup(group)
                if (info := tracker.getJobInfo(j)) is not None and info.status == "RUNNING"
            ]
            if not running:
                return
            time.sleep(0.1)


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
