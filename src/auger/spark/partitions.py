"""Turning a scan's files into Spark tasks of about ``auger.scan.target_split_bytes`` each.

Big files are cut where that is safe: Parquet at row-group boundaries (each piece lists its row
groups), uncompressed text by byte range when its format plugin reads ranges (the plugin opens
them with :func:`auger.scan.spec.open_split`, which aligns them to lines). Small files are packed
together, each costing a nominal open cost, the way Spark packs its own file scans. The size of a
task is ``min(target, max(open_cost, total / parallelism))`` so that a modest table still keeps
every core busy.

Runs in Spark's planner worker on the driver machine: no SparkSession here.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from auger.config import COMPRESSION_SUFFIXES
from auger.scan.spec import FileSplit, ScanSpec
from auger.storage.filesystem import is_uri, parallel_map, read_parquet_footer
from auger.storage.parquet_footers import footer_from_bytes, kept_footer_bytes

__all__ = ["expand_splits", "group_splits", "plan_partitions", "split_size"]

#: What a file costs before its first byte (Spark's ``spark.sql.files.openCostInBytes``).
OPEN_COST = 4 * 1024 * 1024
_COMPRESSED = (*COMPRESSION_SUFFIXES, ".xz")

#: Decides whether a Parquet row group may hold matching rows (pushed filters); None: keep all.
RowGroupFilter = Callable[[str, object], list[int] | None]


def split_size(total_bytes: int, target_bytes: int, parallelism: int) -> int:
    """Bytes per task: at most the target, but small enough to give every core work."""
    per_core = total_bytes // max(parallelism, 1)
    return max(1, min(target_bytes, max(OPEN_COST, per_core)))


def _footer(split: FileSplit, shipped: Mapping[str, str]) -> Any:
    """The split's footer: the one planning read (the spec carries it, or this process kept
    it), else from the file."""
    text = shipped.get(split.path)
    raw = (
        base64.b64decode(text)
        if text is not None
        else kept_footer_bytes(split.path, split.mtime, split.file_size)
    )
    if raw is not None:
        return footer_from_bytes(raw)[0]
    return read_parquet_footer(split.path, split.file_size)[0]


def _parquet_pieces(
    split: FileSplit,
    max_bytes: int,
    row_group_filter: RowGroupFilter | None,
    shipped: Mapping[str, str],
) -> list[FileSplit]:
    try:
        meta = _footer(split, shipped)
    except Exception:
        return [split]  # unreadable: let the reader raise its DATA_READ error with context
    groups = list(range(meta.num_row_groups))
    if row_group_filter is not None:
        kept = row_group_filter(split.path, meta)
        if kept is not None:
            groups = kept
    if not groups:
        return []
    if len(groups) == meta.num_row_groups and split.size <= max_bytes:
        return [split]
    pieces: list[FileSplit] = []
    current: list[int] = []
    size = 0
    for g in groups:
        g_size = meta.row_group(g).total_byte_size
        if current and size + g_size > max_bytes:
            pieces.append(replace(split, size=size, row_groups=tuple(current)))
            current, size = [], 0
        current.append(g)
        size += g_size
    if current:
        pieces.append(replace(split, size=size, row_groups=tuple(current)))
    # Sizes are uncompressed; rescale so that packing works in file bytes.
    total = sum(p.size for p in pieces) or 1
    scale = split.size / total
    return [replace(p, size=max(1, int(p.size * scale))) for p in pieces]


def _text_pieces(split: FileSplit, max_bytes: int) -> list[FileSplit]:
    if split.size <= max_bytes or split.path.lower().endswith(_COMPRESSED):
        return [split]
    pieces = []
    start = 0
    while start < split.size:
        length = min(max_bytes, split.size - start)
        last = start + length >= split.size
        pieces.append(replace(split, start=start, length=-1 if last else length, size=length))
        start += length
    return pieces


def expand_splits(
    spec: ScanSpec,
    max_bytes: int,
    row_group_filter: RowGroupFilter | None = None,
    text_ranges: bool = False,
) -> list[FileSplit]:
    """Cut the spec's files into pieces of at most ``max_bytes`` where the format allows (the
    Parquet footers this needs are the ones the spec carries, and the others are read by
    several threads at once when they are objects)."""

    def footer_needed(split: FileSplit) -> bool:
        return (
            spec.format_type == "parquet"
            and not (split.is_range or split.row_groups is not None)
            and (split.size > max_bytes or row_group_filter is not None)
        )

    cut = [s for s in spec.files if footer_needed(s)]
    pieces = parallel_map(
        lambda s: _parquet_pieces(s, max_bytes, row_group_filter, spec.footers),
        cut,
        force=bool(cut) and is_uri(cut[0].path),
    )
    out: list[FileSplit] = []
    for split in spec.files:
        if footer_needed(split):
            out.extend(next(pieces))
        elif split.is_range or split.row_groups is not None:
            out.append(split)
        elif text_ranges:
            out.extend(_text_pieces(split, max_bytes))
        else:
            out.append(split)
    return out


def group_splits(splits: Sequence[FileSplit], max_bytes: int) -> list[list[FileSplit]]:
    """Pack splits, in order, into groups of about ``max_bytes`` (each costs its open cost)."""
    groups: list[list[FileSplit]] = []
    size = 0
    for s in splits:
        cost = max(s.size, 0) + min(OPEN_COST, max_bytes)
        if not groups or (groups[-1] and size + cost > max_bytes):
            groups.append([])
            size = 0
        groups[-1].append(s)
        size += cost
    return groups


def plan_partitions(
    spec: ScanSpec,
    row_group_filter: RowGroupFilter | None = None,
    text_ranges: bool = False,
) -> list[list[FileSplit]]:
    """The scan's tasks: each a list of splits read one after another.

    A scan with a pushed-down LIMIT is one task reading files in order until it has enough rows:
    a few files are opened, not the whole directory.
    """
    if spec.limit is not None:
        return [list(spec.files)]
    options = spec.options
    target = int(options.get("auger.scan.target_split_bytes", 128 * 1024 * 1024))
    parallelism = int(options.get("auger.scan.parallelism", 0) or os.cpu_count() or 2)
    total = sum(max(f.size, 0) for f in spec.files)
    max_bytes = split_size(total, target, parallelism)
    splits = expand_splits(spec, max_bytes, row_group_filter, text_ranges)
    return group_splits(splits, max_bytes)
