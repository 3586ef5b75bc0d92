"""Drill's vector rules for Arrow arrays: maps and arrays are never null.

Drill's value vectors hold a map as its members (a "null" map is one whose members are all
null) and an array as a repeated vector (nothing to mark null: an empty array). Readers that
get Arrow arrays from pyarrow, where both may be null, pass their complex columns through
:func:`unnull_structs` so that ``SELECT *`` shows ``{}``-like maps and ``[]`` where Drill does.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from auger.types.arrow_values import integer_scalar, text_scalar

__all__ = ["unnull_structs"]


def _element_default(t: pa.DataType) -> pa.Scalar | None:
    """What Drill's JSON reader stores for a null inside an array of ``t``: its vectors hold
    no nulls in arrays, so false, 0 or the empty string (None: leave the nulls). Made from
    bytes, not from Python values: a scan's worker never imports pandas."""
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t):
        return integer_scalar(0, pa.int64()).cast(t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return text_scalar("", t)
    return None


def _has_nested(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t)


def unnull_structs(arr: pa.Array, zero_elements: bool = True) -> pa.Array:
    """The column as Drill's vectors hold it, at any depth: a null map is a map of null
    members (maps are never null themselves), a null array is an empty one, and (with
    ``zero_elements``) a null element of an array of scalars is the type's zero value
    (``[1, null]`` reads ``[1, 0]``, ``["x", null]`` ``["x", ""]``), as Drill's JSON reader
    stores them."""
    t = arr.type
    if pa.types.is_struct(t):
        kids = arr.flatten() if arr.null_count else [arr.field(i) for i in range(t.num_fields)]
        fixed = [unnull_structs(k, zero_elements) for k in kids]
        if not arr.null_count and all(a is b for a, b in zip(fixed, kids, strict=True)):
            return arr
        return pa.StructArray.from_arrays(fixed, fields=list(t))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = arr.values
        fixed = values
        if zero_elements and values.null_count and not _has_nested(values.type):
            default = _element_default(values.type)
            if default is not None:
                fixed = pc.fill_null(values, default)
        elif _has_nested(values.type):
            fixed = unnull_structs(values, zero_elements)
        if not arr.null_count and fixed is values:
            return arr
        # offsets without validity: a null array becomes the (empty) range it spans
        offsets = arr.offsets
        if arr.null_count:
            spans = pc.subtract(offsets.slice(1), offsets.slice(0, len(arr)))
            # the spans of the nulls, summed: no Python value is converted (pyarrow would
            # import pandas for it, in a task's fresh worker)
            if pc.sum(pc.filter(spans, pc.is_null(arr))).as_py():
                # a null over a non-empty range (never from pyarrow's JSON reader): rebuild
                rebuilt = pa.array([v or [] for v in arr.to_pylist()], t)
                return unnull_structs(rebuilt, zero_elements)
        cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return cls.from_arrays(offsets, fixed, type=t)
    return arr
