"""Writing a query's Spark DataFrame as a table directory (CTAS and CTTAS).

A table is a directory of files in one format (``store.format``), named the way Drill names its
writer output (``0_0_0.parquet``, ``0_0_1.parquet``...). The write is atomic: Spark writes into a
hidden staging directory beside the target (hidden names are skipped by every reader), the
staging directory is tidied (Spark's ``_SUCCESS`` and ``.crc`` files removed, files renamed,
permissions applied) and only then renamed into place. A failed or interrupted write removes the
staging directory, so nothing is left behind; a process killed outright cannot, so the staging
directory's name records its owner and the next engine to start removes it once that owner is
dead (:func:`auger.storage.table_files.sweep_dead_staging`).

The file side (formats, permissions, staging names, the sweep, removing tables) is
:mod:`auger.storage.table_files`, which needs no Spark; this module runs Spark's writer.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from typing import Any

import pyarrow.parquet as pq

from auger.errors import UserError
from auger.spark.bootstrap import spark_context
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
    staging = staging_path(target)

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
