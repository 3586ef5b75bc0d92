"""What every column writer shares: its position index, its hooks into the loader, its lifecycle.

Writers are positional. Each one writes the value for one position of an *index*: the row index
for top-level columns and members of (non-repeated) maps, an array's element index for the
members of a repeated map or the inner arrays of a list. A writer remembers how many positions it
holds (``_n``); when asked to write at a later position it first fills the gap (nulls, zeros,
blanks or empty arrays), and when asked to write at an earlier one it drops what lies beyond
(a rejected row being rewritten). Filling lazily like this keeps ``save()`` independent of the
number of columns and makes back-filling a column added mid-batch free.

Lifecycle methods (underscore names) are called by the loader, never by readers:

* ``_truncate(pos)``: forget every position ``>= pos`` (row rejection).
* ``_split(pos)``: overflow. Set aside positions ``< pos`` as the batch to harvest and keep the
  rest, shifted down to 0, as the start of the look-ahead batch.
* ``_harvest(n, held)``: fill up to ``n`` positions and build the Arrow array, from the set-aside
  buffers when ``held`` (the batch before the overflow row) or from the current ones.
* ``_nbytes()``: bytes in the current buffers, for the whole-batch budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

    from auger.resultset.projection import ProjectionSet
    from auger.types import ColumnMetadata

__all__ = ["ColumnWriter", "Index", "LoaderHooks", "fits_accessor"]


class Index:
    """A mutable position shared by the writers of one level of the value tree."""

    __slots__ = ("pos",)

    def __init__(self, pos: int = 0) -> None:
        self.pos = pos

    def __repr__(self) -> str:
        return f"Index({self.pos})"


class LoaderHooks(Protocol):
    """The few services of the loader that writers call back into."""

    vector_limit: int

    def overflow(self, writer: ColumnWriter) -> None:
        """A write by ``writer`` does not fit: move the row in progress to a look-ahead batch."""

    def column_added(self, writer: ColumnWriter) -> None:
        """A column (or map member) was added: bump the schema version, note late columns."""

    def rows_in_batch(self) -> int:
        """Rows already in the batch being written (for the rules on adding columns)."""

    def make_writer(
        self, meta: ColumnMetadata, idx: Index, proj: ProjectionSet, projected: bool
    ) -> ColumnWriter:
        """The writer of a map member added at run time (the loader's writer factory: the map
        writer is one of the writers the factory makes, so it cannot import it)."""


class ColumnWriter:
    """Base of all column writers; holds the column's metadata and its index."""

    __slots__ = ("_hooks", "_idx", "_late", "_meta")

    #: The typed accessor of a map or array that returns this writer (``scalar()``,
    #: ``tuple()``, ``array()``, ``dict()``), named in the error for the wrong one.
    accessor: ClassVar[str] = "array"

    def __init__(self, meta: ColumnMetadata, idx: Index, hooks: LoaderHooks) -> None:
        self._meta = meta
        self._idx = idx
        self._hooks = hooks
        self._late = False

    # ----- public
    @property
    def metadata(self) -> ColumnMetadata:
        """The column's metadata (for maps, with the members added so far)."""
        return self._meta

    @property
    def name(self) -> str:
        return self._meta.name

    def is_projected(self) -> bool:
        """False for the dummy writers of columns the query does not want."""
        return True

    def set(self, value: Any) -> None:  # pragma: no cover - every writer overrides
        raise NotImplementedError

    # ----- lifecycle (loader only)
    def _truncate(self, pos: int) -> None:
        raise NotImplementedError

    def _split(self, pos: int) -> None:
        raise NotImplementedError

    def _harvest(self, n: int, held: bool) -> pa.Array:
        raise NotImplementedError

    def _nbytes(self) -> int:
        return 0

    def _late_writers(self) -> list[ColumnWriter]:
        """This writer and its descendants (for clearing the late mark after a harvest)."""
        return [self]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._meta})"


def fits_accessor(writer: ColumnWriter, what: str) -> bool:
    """Whether ``writer`` is what the typed accessor ``what`` returns (a dict is an array too)."""
    return writer.accessor == what or (what == "array" and writer.accessor == "dict")
