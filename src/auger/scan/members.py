"""JSON columns seen only as null have no type yet: the query's use of them decides.

Columns and map members the query names but no file has are typed by the scan schema tracker
and :func:`auger.scan.missing.resolve_missing_types` when the scan is planned
(:func:`auger.scan.plan.plan_scan`); a JSON column that was null in every sampled record is
given the same guess here, before planning, so that ``t.a.b`` or ``t.a[0]`` on it is a NULL
rather than a type error (:func:`type_untyped_columns`).
"""

from __future__ import annotations

from auger.projection import RequestedColumn, RequestedTuple
from auger.scan.missing import guess_type
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["type_untyped_columns"]


def _is_untyped(col: ColumnMetadata) -> bool:
    return col.type is MinorType.INT and col.mode is DataMode.OPTIONAL and not col.children


def type_untyped_columns(
    schema: TupleSchema, wanted: RequestedTuple, keep: frozenset[str] = frozenset()
) -> TupleSchema:
    """``schema`` with each JSON column seen only as null typed as the query uses it.

    JSON gives a column that was null in every (sampled) record Drill's nullable INT: its
    type is not known yet. Drill's reader then lets the query's projection decide, so
    ``t.a.b`` and ``t.a[0]`` on such a column are NULL rather than a type error. The same
    holds for such a member inside a map (``t.m.a.b``). ``keep`` names top-level columns
    whose INT is declared (a provided schema) and so is a real type.
    """

    def retype(col: ColumnMetadata, proj: RequestedColumn | None) -> ColumnMetadata:
        if proj is None or proj.is_simple:
            return col
        if _is_untyped(col):
            return guess_type(col.name, proj)
        if col.type is MinorType.MAP and col.mode is not DataMode.REPEATED and proj.is_map:
            assert proj.members is not None
            kids = [retype(c, proj.members.get(c.name)) for c in col.children or ()]
            if any(a is not b for a, b in zip(kids, col.children or (), strict=True)):
                return col.with_children(kids)
        return col

    out = TupleSchema()
    for col in schema:
        out.add(col if col.name.lower() in keep else retype(col, wanted.get(col.name)))
    return out
