"""Array writers: scalar arrays, repeated maps, lists of lists and DICTs.

An array column is an int32 offsets vector over one *element* writer. The offsets are positional
in the parent's index (rows, or the elements of an enclosing array); the element writer is
positional in this array's own element index, ``_eidx``, which counts committed elements.

The offsets are maintained lazily: position ``_n`` is the *open* row, whose elements run from
``offsets[_n]`` to ``_eidx.pos``. When the parent moves on, ``_sync`` closes the open row and
any rows skipped since (they get no elements: Drill's empty-array back-fill).

Scalar elements commit themselves on every write. Tuple and array elements are committed by
``save()``, so a reader writes the members of one repeated-map entry and then saves it; values
written for an entry that is never saved are dropped, like a row that is never saved.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.resultset import vectors
from auger.resultset.bulk import align, list_parts, null_positions, rebased, rows_within
from auger.resultset.exceptions import ConversionError
from auger.resultset.writers.base import ColumnWriter, Index, LoaderHooks, fits_accessor
from auger.types import ColumnMetadata, DataMode, MinorType

if TYPE_CHECKING:
    from auger.resultset.writers.scalar import ScalarWriter
    from auger.resultset.writers.tuple import TupleWriter

__all__ = ["ArrayWriter", "DictWriter"]


class ArrayWriter(ColumnWriter):
    """Writer of a REPEATED column (or a LIST or DICT): offsets plus one element writer."""

    __slots__ = ("_eidx", "_element", "_held", "_n", "_nullable", "_nulls", "_offsets", "_scalar")

    def __init__(
        self,
        meta: ColumnMetadata,
        idx: Index,
        hooks: LoaderHooks,
        make_element: Callable[[ArrayWriter], ColumnWriter],
    ) -> None:
        super().__init__(meta, idx, hooks)
        self._nullable = meta.mode is DataMode.OPTIONAL
        self._eidx = Index(0)
        self._offsets = array("i", [0])
        self._nulls: list[int] = []
        self._n = 0
        self._held: tuple[Any, ...] | None = None
        self._element = make_element(self)
        self._scalar = self._element.accessor == "scalar"

    # ----- public
    @property
    def metadata(self) -> ColumnMetadata:
        element_meta = self._element.metadata
        if self._meta.type is MinorType.MAP:
            return self._meta.with_children(element_meta.children or ())
        if self._meta.type is MinorType.DICT:
            return self._meta.with_children(element_meta.children or ())
        if self._meta.type is MinorType.LIST:
            return self._meta.with_children([element_meta])
        return self._meta

    @property
    def element(self) -> ColumnWriter:
        """The writer of the elements (scalar, tuple, array or dict)."""
        return self._element

    def scalar(self) -> ScalarWriter:
        return self._expect("scalar")  # type: ignore[return-value]

    def tuple(self) -> TupleWriter:
        return self._expect("tuple")  # type: ignore[return-value]

    def array(self) -> ArrayWriter:
        return self._expect("array")  # type: ignore[return-value]

    def dict(self) -> DictWriter:
        return self._expect("dict")  # type: ignore[return-value]

    def _expect(self, what: str) -> ColumnWriter:
        element = self._element
        if fits_accessor(element, what) or not element.is_projected():
            return element
        raise TypeError(
            f"Elements of `{self._meta.name}` ({self._meta.type_string()}) are not a {what}: "
            f"use {element.accessor}()"
        )

    def save(self) -> None:
        """Commit the element just written (tuples, arrays); a no-op for scalar elements."""
        if self._scalar:
            return
        if self._n != self._idx.pos:
            self._sync()
        self._eidx.pos += 1

    def size(self) -> int:
        """Elements written so far for the current row."""
        if self._n != self._idx.pos:
            self._sync()
        return self._eidx.pos - self._offsets[self._n]

    def set(self, value: Any) -> None:
        """Append every element of ``value`` (a list, or a mapping for a DICT); None is NULL."""
        if value is None:
            self.set_null()
            return
        if self._n != self._idx.pos:
            self._sync()
        element = self._element
        if self._scalar:
            put = element.set
            for item in value:
                put(item)
            return
        for item in value:
            element.set(item)
            self.save()

    def set_null(self) -> None:
        """Mark the current row's array NULL (nullable LIST and DICT columns only)."""
        if not self._nullable:
            raise ConversionError(
                f"Column `{self._meta.name}` is {self._meta.type_string()} and cannot be set "
                "to NULL; write no elements for an empty array",
                [f"Column: {self._meta.name}"],
            )
        if self._n != self._idx.pos:
            self._sync()
        if not self._nulls or self._nulls[-1] != self._n:
            self._nulls.append(self._n)

    # ----- offsets
    def _sync(self) -> None:
        """Bring the open row up to the parent's position, closing the rows in between."""
        pos = self._idx.pos
        n = self._n
        if n < pos:
            end = self._eidx.pos
            if pos - n == 1:
                self._offsets.append(end)
            else:
                self._offsets.extend(array("i", [end]) * (pos - n))
            self._n = pos
        elif n > pos:
            self._truncate(pos)

    def _close_to(self, pos: int) -> None:
        n = self._n
        if n < pos:
            self._offsets.extend(array("i", [self._eidx.pos]) * (pos - n))
            self._n = pos

    # ----- lifecycle
    def _truncate(self, pos: int) -> None:
        if self._n >= pos:
            del self._offsets[pos + 1 :]
            self._n = pos
            self._eidx.pos = self._offsets[pos]
        nulls = self._nulls
        if nulls and nulls[-1] >= pos:
            del nulls[bisect_left(nulls, pos) :]
        self._element._truncate(self._eidx.pos)

    def _split(self, pos: int) -> None:
        self._close_to(pos)
        offsets = self._offsets
        start = offsets[pos]
        tail = array("i", [o - start for o in offsets[pos:]])
        del offsets[pos + 1 :]
        nulls = self._nulls
        cut = bisect_left(nulls, pos)
        tail_nulls = [p - pos for p in nulls[cut:]]
        del nulls[cut:]
        self._held = (offsets, nulls, pos, start)
        self._offsets = tail
        self._nulls = tail_nulls
        self._n -= pos
        self._eidx.pos -= start
        self._element._split(start)

    def _harvest(self, n: int, held: bool) -> pa.Array:
        current: tuple[Any, ...] | None = None
        if held:
            current = (self._offsets, self._nulls, self._n, self._eidx.pos)
            assert self._held is not None, "overflow state missing"
            self._offsets, self._nulls, self._n, self._eidx.pos = self._held
            self._held = None
        if self._n < n:
            self._close_to(n)
        elif self._n > n:
            self._truncate(n)
        count = self._offsets[n]
        child = self._element._harvest(count, held)
        nulls = self._nulls
        arr = vectors.list_array(self._arrow_type(child.type), n, self._offsets, child, nulls)
        if current is not None:
            self._offsets, self._nulls, self._n, self._eidx.pos = current
        else:
            self._offsets = array("i", [0])
            self._nulls = []
            self._n = 0
            self._eidx.pos = 0
        return arr

    def _arrow_type(self, child: pa.DataType) -> pa.DataType:
        kind = self._meta.type
        if kind is MinorType.LIST:
            return pa.list_(child)
        if kind is MinorType.DICT:
            return pa.map_(child.field(0), child.field(1))
        return pa.list_(pa.field("element", child, nullable=kind is MinorType.MAP))

    def _nbytes(self) -> int:
        return 4 * len(self._offsets) + self._element._nbytes()

    def _late_writers(self) -> list[ColumnWriter]:
        return [self, *self._element._late_writers()]

    # ----- bulk
    def _bulk_room(self, arr: pa.Array) -> int:

        offsets, values = list_parts(arr)
        return rows_within(offsets, self._element_room(values))

    def _element_room(self, values: pa.Array) -> int:
        return self._element._bulk_room(values)  # type: ignore[attr-defined, no-any-return]

    def _bulk_append(self, arr: pa.Array) -> None:

        if self._n != self._idx.pos:
            self._sync()
        if arr.null_count:
            if not self._nullable:
                raise ConversionError(
                    f"Column `{self._meta.name}` cannot hold NULL arrays",
                    [f"Column: {self._meta.name}"],
                )
            self._nulls.extend(null_positions(arr, self._n))
        offsets, values = list_parts(arr)
        element = self._element
        align(element)
        element._bulk_append(values)  # type: ignore[attr-defined]
        del self._offsets[-1]
        self._offsets.frombytes(rebased(offsets, self._eidx.pos))
        self._n += len(arr)
        self._eidx.pos += len(values)


class DictWriter(ArrayWriter):
    """A DICT column: an array of key/value entries (an Arrow map)."""

    __slots__ = ()
    accessor = "dict"

    def key(self) -> ScalarWriter:
        return self.tuple().scalar(0)

    def value(self) -> Any:
        return self.tuple().column(1)

    def set(self, value: Any) -> None:
        """Append the entries of a mapping (or of an iterable of key/value pairs)."""
        if value is None:
            self.set_null()
            return
        if self._n != self._idx.pos:
            self._sync()
        items: Iterable[Any] = value.items() if isinstance(value, Mapping) else value
        entry = self.tuple()
        for key, item in items:
            entry.column(0).set(key)
            entry.column(1).set(item)
            self.save()
