"""Helpers shared by the result set loader tests."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from auger.resultset import LoaderOptions, ResultSetLoader


def make_loader(schema: str | None = None, **options: Any) -> ResultSetLoader:
    """A loader with its first batch started."""
    loader = ResultSetLoader(LoaderOptions(schema=schema, **options))
    loader.start_batch()
    return loader


def rows_of(batch: pa.RecordBatch) -> list[tuple[Any, ...]]:
    """The batch as a list of tuples, maps as tuples of their member values."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return tuple(plain(v) for v in value.values())
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    names = batch.schema.names
    return [tuple(plain(row[n]) for n in names) for row in batch.to_pylist()]
