"""Writing a query's Spark DataFrame as a table directory (CTAS and CTTAS).

A table is a directory of files in one format (``store.format``), named the way Drill names its
writer output (``0_0_0.parquet``, ``0_0_1.parquet``...). The write is atomic: Spark writes into a
hidden staging directory beside the target (hidden names are skipped by every reader), the
staging directory is tidied (Spark's ``_SUCCESS`` and ``.crc`` files removed, files renamed,
permissions applied) and only then renamed into place. A failed or interrupted write removes the
staging directory, so nothing is left behind; a process killed outright cannot, so the staging
directory's name records its owner and the next engine to start removes it once that owner is
dead (:func:`auger.storage.table_files.sweep_dead_staging`).

An object store has no rename: there the same writer takes another branch. Spark tasks upload
their rows through pyarrow's file system under the table's prefix while a pending marker hides
the table, and deleting the marker commits it (:mod:`auger.storage.object_tables`, and
docs/storage.md).

The file side (formats, permissions, staging names, the sweep, removing tables) is
:mod:`auger.storage.table_files`, which needs no Spark; this module runs Spark's writer.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auger.errors import UserError
from auger.spark.handles import spark_context
from auger.storage import filesystem as fs
from auger.storage import object_tables
from auger.storage.table_files import (
    StorageStrategy,
    WriteResult,
    WriterFormat,
    remove_empty_folders,
    staging_path,
)

__all__ = ["write_table"]

_log = logging.getLogger(__name__)

#: The hidden column whose values group rows of one partition-value combination into files.
_PARTITION_KEY = "__auger_partition_key"


def _spark_write(df: Any, fmt: WriterFormat, staging: str, partition_by: Sequence[str]) -> Any:
    """Run the Spark write into ``staging``; returns the Observation that counts rows."""
    # deferred: loads pyspark (heavy)
    from pyspark.sql import Observation

    # deferred: loads pyspark (heavy)
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
    # deferred: loads pyspark (heavy)
    from pyspark.sql import functions as F

    # deferred: loads pyspark (heavy)
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


def _unquote_line(line: str, schema: Any) -> str:
    """One JSON record of Spark's with the non-numbers of DOUBLE and FLOAT columns unquoted
    (``line`` is returned as it is when it holds no such quoted token)."""
    if not any(token in line for token in _QUOTED_NON_NUMBERS):
        return line
    end = "\n" if line.endswith("\n") else ""
    record = json.loads(line, parse_float=_Number, parse_int=_Number)
    return _json_text(record, schema) + end


def _unquote_non_numbers(path: str, schema: Any) -> None:
    """Rewrite a JSON file of Spark's so that NaN and Infinity of DOUBLE and FLOAT columns are
    bare tokens; only the lines holding such a quoted token are parsed."""
    tmp = path + ".nan"
    changed = False
    with open(path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as out:
        for line in src:
            fixed = _unquote_line(line, schema)
            changed = changed or fixed != line
            out.write(fixed)
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
    owner: str = "unknown",
) -> WriteResult:
    """Write ``df`` as a new table directory at ``target``, atomically.

    A local target is written into a staging directory and renamed into place; an object-store
    target (a URI) is written in place under a pending marker and committed by removing the
    marker (:mod:`auger.storage.object_tables`).

    Args:
        df: the Spark DataFrame of the query, with the table's final column names.
        target: absolute path or URI of the table directory; it must not exist.
        fmt: the writer format (see :func:`writer_format`).
        strategy: permissions of new folders and files (local disk only).
        partition_by: column names (Parquet only) whose value combinations get their own files.
        owner: the writing server's engine id, recorded in an object-store pending marker so
            that the start-up sweep of another server can tell when the writer died.

    Raises:
        FileExistsError: when the target appeared while the table was being written.
        UserError: UNSUPPORTED_OPERATION for partitioning a format that cannot do it; Spark's
            own errors (unwrapped by the caller) for failures of the query itself.
    """
    if partition_by and not fmt.supports_partitioning:
        raise UserError.unsupported(
            f"{fmt.name.capitalize()} format does not support auto-partitioning."
        )
    if fs.is_uri(target):
        return _write_objects(df, target, fmt, partition_by, owner)
    parent = os.path.dirname(target.rstrip("/"))
    created = strategy.create_path(parent)
    staging = staging_path(target)
    try:
        with _spark_jobs(df):
            if df.schema.fields:
                observation = _spark_write(df, fmt, staging, partition_by)
                records = int(observation.get.get("n", 0))
            else:
                # No columns (an empty JSON file's query): Spark writes no such data set, Drill
                # writes none and succeeds; the table is an empty directory, which reads back
                # as the empty table it came from.
                records = df.count()
                os.mkdir(staging)
        files = _tidy(staging, fmt, df) if df.schema.fields else ()
        strategy.apply_tree(staging)
        if os.path.lexists(target):
            # another statement created it meanwhile; the caller words the error
            raise FileExistsError(target)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        remove_empty_folders(parent, created)
        raise
    _log.debug("wrote %d records in %d files to %s", records, len(files), target)
    return WriteResult(target, files, records)


@contextlib.contextmanager
def _spark_jobs(df: Any) -> Iterator[None]:
    """Run the write's Spark jobs in a job group that is cancelled (and waited for) on failure,
    so that no task is still writing when the caller removes what was written."""
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
            yield
        finally:
            if own_group is not None:
                sc.setLocalProperty("spark.jobGroup.id", None)
                sc.setLocalProperty("spark.job.interruptOnCancel", None)
    except BaseException:
        if own_group is not None:
            with contextlib.suppress(Exception):
                sc.cancelJobGroup(own_group)
        # Cancelled tasks may still be writing for a moment: wait for the group's jobs to end
        # before removing, so no stray file appears afterwards.
        _wait_for_jobs(sc, own_group or group)
        raise


# --- object stores -----------------------------------------------------------------------------


def _write_objects(
    df: Any, target: str, fmt: WriterFormat, partition_by: Sequence[str], owner: str
) -> WriteResult:
    """The object-store branch of :func:`write_table`: Spark tasks upload the files through
    pyarrow's file system (no Hadoop S3A classes needed) under a pending marker, and the
    driver commits by removing the marker."""
    if fs.exists(target):
        raise FileExistsError(target)
    object_tables.begin(target, owner, "CREATE TABLE")
    try:
        with _spark_jobs(df):
            if df.schema.fields:
                written = _spark_write_objects(df, fmt, target, partition_by)
                records = sum(n for _, n in written)
            else:
                records = df.count()
                written = []
        names = sorted(name for name, _ in written)
        if not names and df.schema.fields:
            # an empty result: one empty file, with the schema for Parquet, as on local disk
            names = [f"0_0_0.{fmt.extension}"]
            with fs.open_output(fs.join(target, names[0])) as out:
                if fmt.kind == "parquet":
                    pq.write_table(df.limit(0).toArrow(), out)
        elif not names:
            fs.makedirs(target)  # no columns: an empty directory, as on local disk
        object_tables.commit(target)
    except BaseException:
        try:
            object_tables.abort(target)
        except Exception:  # the write's own error is the one to report
            _log.exception("removing the objects of the failed write to %s failed", target)
        raise
    _log.debug("wrote %d records in %d objects to %s", records, len(names), target)
    return WriteResult(target, tuple(names), records)


def _spark_write_objects(
    df: Any, fmt: WriterFormat, target: str, partition_by: Sequence[str]
) -> list[tuple[str, int]]:
    """Run one Spark job whose tasks each upload their rows; returns (file name, rows) pairs.

    Rows are encoded by Spark's own generators where Spark's writer would use them (``to_json``
    and ``to_csv`` with the format's options), so the objects hold what the local writer's
    files hold; Parquet goes through pyarrow's writer.
    """
    # deferred: loads pyspark (heavy)
    from pyspark.sql import functions as F

    if fmt.kind == "text":
        df = _complex_as_json(df)
    names = list(df.columns)
    cols = [F.col(f"`{c}`") for c in names]
    header = ""
    unquote_schema: Any = None
    if fmt.kind == "parquet":
        out = df
        if partition_by:
            keys = [F.col(f"`{c}`") for c in partition_by]
            flags = [k.isNull() for k in keys]
            out = out.withColumn(_PARTITION_KEY, F.xxhash64(*flags, *keys))
            out = out.repartition(F.col(_PARTITION_KEY)).sortWithinPartitions(*keys)
    elif fmt.kind == "json":
        out = df.select(F.to_json(F.struct(*cols)).alias("line"))
        if fmt.bare_non_numbers and _has_floating(df.schema.jsonValue()):
            unquote_schema = df.schema.jsonValue()
    else:
        options = {k: v for k, v in fmt.options.items() if k in ("sep", "quote", "escape")}
        out = df.select(F.to_csv(F.struct(*cols), options).alias("line"))
        if fmt.options.get("header") == "true":
            header = _csv_line(names, fmt.options)
    task = functools.partial(
        _write_partition,
        target=target,
        kind=fmt.kind,
        extension=fmt.extension,
        compression=str(fmt.options.get("compression", "snappy")),
        header=header,
        unquote_schema=unquote_schema,
        shipped=fs.shipped_for([target]),
    )
    rows = out.mapInArrow(task, "file string, records long").collect()
    return [(str(r["file"]), int(r["records"])) for r in rows]


def _csv_line(values: Sequence[str], options: Mapping[str, str]) -> str:
    """A header line: names quoted as Spark's CSV writer quotes values that need it."""
    sep, quote, escape = options.get("sep", ","), options.get("quote", '"'), options.get("escape")
    out = []
    for v in values:
        if sep in v or quote in v or "\n" in v or "\r" in v:
            v = quote + v.replace(quote, (escape or quote) + quote) + quote
        out.append(v)
    return sep.join(out)


def _write_partition(
    batches: Iterator[Any],
    target: str,
    kind: str,
    extension: str,
    compression: str,
    header: str,
    unquote_schema: Any,
    shipped: list[dict[str, Any]],
) -> Iterator[Any]:
    """A Spark task (``mapInArrow``): upload this partition's rows as objects named as Drill
    names a fragment's files, ``0_<task>_<n>.<ext>``; yield one (file, rows) row per object.

    The table is hidden by its pending marker meanwhile; a retried task writes the same names
    again, and a failed write is removed whole by the driver.
    """
    # deferred: loads pyspark (heavy)
    from pyspark import TaskContext  # executor side: the task's partition number

    fs.install(shipped)
    ctx = TaskContext.get()
    part = ctx.partitionId() if ctx is not None else 0
    count = 0

    def name() -> str:
        return f"0_{part}_{count}.{extension}"

    def done(file: str, rows: int) -> Any:
        return pa.RecordBatch.from_pydict(
            {"file": [file], "records": [rows]},
            schema=pa.schema([("file", pa.string()), ("records", pa.int64())]),
        )

    if kind != "parquet":
        stream = None
        rows = 0
        file = name()
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                if stream is None:
                    stream = fs.open_output(fs.join(target, file))
                    if header:
                        stream.write((header + "\n").encode("utf-8"))
                lines = batch.column(0).to_pylist()
                if unquote_schema is not None:
                    lines = [_unquote_line(line, unquote_schema) for line in lines]
                stream.write(("\n".join(lines) + "\n").encode("utf-8"))
                rows += batch.num_rows
        finally:
            if stream is not None:
                stream.close()
        if rows:
            yield done(file, rows)
        return

    writer: Any = None
    out: Any = None
    rows = 0
    current: Any = None
    try:
        for batch in batches:
            for piece, key in _runs(batch):
                if writer is not None and key != current:
                    writer.close()
                    out.close()
                    yield done(name(), rows)
                    writer, rows = None, 0
                    count += 1
                if writer is None:
                    out = fs.open_output(fs.join(target, name()))
                    # timestamps as INT96, as Spark's own Parquet writer (the local branch)
                    # writes them, so both branches write the same column types
                    writer = pq.ParquetWriter(
                        out,
                        piece.schema,
                        compression=compression,
                        use_deprecated_int96_timestamps=True,
                    )
                    current = key
                writer.write_batch(piece)
                rows += piece.num_rows
        if writer is not None:
            writer.close()
            out.close()
            writer = None
            yield done(name(), rows)
    finally:
        if writer is not None:  # a failure: a retry rewrites the name, or the driver's abort
            out.close()  # removes every object under the pending table


def _runs(batch: Any) -> Iterator[tuple[Any, Any]]:
    """Pieces of a batch with one partition key each (rows arrive sorted by the key), without
    the key column; the whole batch (key None) when the table is not partitioned."""

    if batch.num_rows == 0:
        return
    index = batch.schema.get_field_index(_PARTITION_KEY)
    if index < 0:
        yield batch, None
        return
    keys = batch.column(index)
    data = batch.drop_columns([_PARTITION_KEY])
    starts = [0]
    if batch.num_rows > 1:
        changed = pc.not_equal(keys.slice(1), keys.slice(0, batch.num_rows - 1))
        starts += [i + 1 for i in pc.indices_nonzero(changed).to_pylist()]
    starts.append(batch.num_rows)
    for a, b in itertools.pairwise(starts):
        yield data.slice(a, b - a), keys[a].as_py()


def _wait_for_jobs(sc: Any, group: str | None, timeout: float = 10.0) -> None:
    """Wait (bounded) until no job of ``group`` is running any more."""
    if not group or sc is None:
        return
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
