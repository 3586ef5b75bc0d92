"""Helpers for the format reader tests: write a file, read it through one plugin."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.formats import get_format
from auger.scan.spec import FileSplit

Reader = Callable[..., list[dict[str, Any]]]


def read_file(
    path: Path,
    fmt_type: str,
    config: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    columns: Sequence[str] | None = None,
    batch_rows: int = 4096,
) -> list[pa.RecordBatch]:
    cfg = FormatConfig(fmt_type, fmt_type, (), dict(config or {}))
    split = FileSplit(str(path))
    return list(
        get_format(fmt_type).read_arrow(split, cfg, dict(options or {}), columns, batch_rows)
    )


def rows_of(batches: list[pa.RecordBatch]) -> list[dict[str, Any]]:
    return [row for b in batches for row in b.to_pylist()]
