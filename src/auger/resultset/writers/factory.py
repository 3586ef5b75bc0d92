"""Which writer a column gets: one table-like function from column shape to writer class."""

from __future__ import annotations

from auger.resultset.projection import ProjectionSet
from auger.resultset.writers.array import ArrayWriter, DictWriter
from auger.resultset.writers.base import ColumnWriter, Index, LoaderHooks
from auger.resultset.writers.dummy import dummy_writer
from auger.resultset.writers.scalar import scalar_writer
from auger.resultset.writers.tuple import TupleWriter
from auger.types import ColumnMetadata, DataMode, MinorType

__all__ = ["make_writer"]


def make_writer(
    meta: ColumnMetadata,
    idx: Index,
    hooks: LoaderHooks,
    proj: ProjectionSet,
    projected: bool = True,
) -> ColumnWriter:
    """The writer for ``meta`` positioned on ``idx``; a dummy when not ``projected``."""
    if not projected:
        return dummy_writer(meta, idx, hooks)
    repeated = meta.mode is DataMode.REPEATED
    if meta.type is MinorType.MAP:
        if not repeated:
            return TupleWriter(meta, idx, hooks, proj)
        entry = meta.with_mode(DataMode.REQUIRED)
        return ArrayWriter(
            meta, idx, hooks, lambda owner: TupleWriter(entry, owner._eidx, hooks, proj)
        )
    if meta.type is MinorType.DICT:
        if repeated:
            one = meta.with_mode(DataMode.REQUIRED)
            return ArrayWriter(
                meta, idx, hooks, lambda owner: _dict_writer(one, owner._eidx, hooks)
            )
        return _dict_writer(meta, idx, hooks)
    if meta.type is MinorType.LIST:
        child = (meta.children or (ColumnMetadata(meta.name, MinorType.VARCHAR),))[0]
        return ArrayWriter(meta, idx, hooks, lambda owner: _element(child, owner, hooks, proj))
    if repeated:
        element = meta.with_mode(DataMode.REQUIRED)
        return ArrayWriter(
            meta, idx, hooks, lambda owner: scalar_writer(element, owner._eidx, hooks, owner)
        )
    return scalar_writer(meta, idx, hooks)


def _dict_writer(meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> DictWriter:
    kids = meta.children or (
        ColumnMetadata("key", MinorType.VARCHAR, DataMode.REQUIRED),
        ColumnMetadata("value", MinorType.VARCHAR, DataMode.OPTIONAL),
    )
    key = kids[0].with_mode(DataMode.REQUIRED)
    entry = ColumnMetadata(meta.name, MinorType.MAP, DataMode.REQUIRED, (key, kids[1]))
    return DictWriter(
        meta,
        idx,
        hooks,
        lambda owner: TupleWriter(entry, owner._eidx, hooks, ProjectionSet.all(), entries=True),
    )


def _element(
    child: ColumnMetadata, owner: ArrayWriter, hooks: LoaderHooks, proj: ProjectionSet
) -> ColumnWriter:
    """The element writer of a LIST: arrays and maps are positional, scalars append."""
    if child.mode is DataMode.REPEATED or child.type in (MinorType.LIST, MinorType.DICT):
        return make_writer(child, owner._eidx, hooks, proj)
    if child.type is MinorType.MAP:
        return TupleWriter(child, owner._eidx, hooks, proj)
    return scalar_writer(child, owner._eidx, hooks, owner)
