"""Dummy writers for unprojected columns: every call is accepted, nothing is kept.

A reader writes every column it finds; the ones the query does not want cost a method call and
nothing else, and never count towards the batch limits (only projected vectors can overflow).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from auger.resultset.projection import ProjectionSet
from auger.resultset.writers.base import ColumnWriter, Index, LoaderHooks
from auger.resultset.writers.tuple import TupleWriter
from auger.types import ColumnMetadata, DataMode, MinorType

__all__ = ["DummyArrayWriter", "DummyScalarWriter", "DummyTupleWriter", "dummy_writer"]


def _drop(self: Any, *_args: Any, **_kwargs: Any) -> None:
    """Accept and discard."""


class _Unprojected:
    """Lifecycle of a writer that holds nothing."""

    __slots__ = ()

    def is_projected(self, name: str | None = None) -> bool:
        return False

    def _truncate(self, pos: int) -> None:
        pass

    def _split(self, pos: int) -> None:
        pass

    def _harvest(self, n: int, held: bool) -> pa.Array:
        raise AssertionError("an unprojected column is never harvested")

    def _nbytes(self) -> int:
        return 0

    def _bulk_room(self, arr: pa.Array) -> int:
        return len(arr)

    def _bulk_append(self, arr: pa.Array) -> None:
        pass


class DummyScalarWriter(_Unprojected, ColumnWriter):
    """Stands in for a scalar column (or scalar array elements) nobody asked for."""

    __slots__ = ()

    set = _drop
    set_null = _drop
    set_int = _drop
    set_long = _drop
    set_double = _drop
    set_float = _drop
    set_string = _drop
    set_bytes = _drop
    set_bool = _drop
    set_date = _drop
    set_time = _drop
    set_timestamp = _drop
    set_decimal = _drop
    set_interval = _drop


class DummyTupleWriter(_Unprojected, TupleWriter):
    """An unprojected map: members can be added and written, all of them dummies."""

    __slots__ = ()

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        super().__init__(meta, idx, hooks, ProjectionSet({}))

    set = _drop
    set_null = _drop


class DummyArrayWriter(_Unprojected, ColumnWriter):
    """An unprojected array, list or dict; its element writer is a dummy too."""

    __slots__ = ("_element",)

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        super().__init__(meta, idx, hooks)
        self._element = dummy_writer(_element_meta(meta), idx, hooks)

    @property
    def element(self) -> ColumnWriter:
        return self._element

    def scalar(self) -> Any:
        return self._element

    def tuple(self) -> Any:
        return self._element

    def array(self) -> Any:
        return self._element

    def dict(self) -> Any:
        return self._element

    def key(self) -> Any:
        return DummyScalarWriter(ColumnMetadata("key", MinorType.VARCHAR), self._idx, self._hooks)

    def value(self) -> Any:
        return DummyScalarWriter(ColumnMetadata("value", MinorType.VARCHAR), self._idx, self._hooks)

    def size(self) -> int:
        return 0

    save = _drop
    set = _drop
    set_null = _drop


def _element_meta(meta: ColumnMetadata) -> ColumnMetadata:
    """The column that describes one element of an array-like column."""
    if meta.type is MinorType.LIST and meta.children:
        return meta.children[0]
    if meta.type is MinorType.DICT:
        return ColumnMetadata(meta.name, MinorType.MAP, DataMode.REQUIRED, meta.children or ())
    if meta.type is MinorType.DICT or meta.mode is DataMode.REPEATED:
        return meta.with_mode(DataMode.REQUIRED)
    return meta


def dummy_writer(meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> ColumnWriter:
    """The dummy writer matching the shape of ``meta``."""
    if meta.type in (MinorType.LIST, MinorType.DICT) or meta.mode is DataMode.REPEATED:
        return DummyArrayWriter(meta, idx, hooks)
    if meta.type is MinorType.MAP:
        return DummyTupleWriter(meta, idx, hooks)
    return DummyScalarWriter(meta, idx, hooks)
