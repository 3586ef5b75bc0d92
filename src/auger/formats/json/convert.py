"""Parsed JSON records → one Arrow batch of the table's column types, never silently wrong.

Each column is built by pyarrow's own inference (fast, C) and then cast to the expected type
with ``safe=True`` after a type check, so ``1.5`` never becomes ``1`` in a BIGINT column and
``"1"`` never becomes a number. A value that does not fit is located (row, column) for the
error, or, with ``store.json.reader.skip_invalid_records``, its record is dropped and counted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from auger.errors import UserError
from auger.formats.vectors import unnull_structs
from auger.types.arrow import arrow_to_column

__all__ = ["RowsConverter", "drill_type_name", "has_struct", "late_member", "unnull_structs"]


def drill_type_name(t: pa.DataType) -> str:
    """How a type is named in errors: Drill's name (``BIGINT``, ``ARRAY<VARCHAR>``, ``MAP``)."""
    if pa.types.is_null(t):
        return "NULL"
    try:
        return arrow_to_column("x", t).type_string()
    except TypeError:
        return str(t)


def _compatible(src: pa.DataType, dst: pa.DataType, text: bool = False) -> bool:
    """May a value inferred as ``src`` be stored as ``dst`` (the cast then checks range)?

    ``text``: all-text mode, where JSON booleans become the strings ``true``/``false``."""
    t = pa.types
    if t.is_null(src) or src.equals(dst):
        return True
    if t.is_integer(src) or t.is_floating(src):
        return t.is_integer(dst) or t.is_floating(dst) or t.is_decimal(dst)
    if t.is_boolean(src):
        # 1.0 and 0.0 in a DOUBLE column, as the row-by-row reader stores them
        return t.is_boolean(dst) or t.is_floating(dst) or (text and t.is_string(dst))
    if t.is_string(src) or t.is_large_string(src):
        return t.is_string(dst) or t.is_large_string(dst) or t.is_temporal(dst)
    if t.is_struct(src):
        if not t.is_struct(dst):
            return False
        want = {f.name: f.type for f in dst}
        return all(_compatible(f.type, want[f.name], text) for f in src if f.name in want)
    if t.is_list(src) or t.is_large_list(src):
        return (t.is_list(dst) or t.is_large_list(dst)) and _compatible(
            src.value_type, dst.value_type, text
        )
    return False


def _texts(value: Any) -> Any:
    """All-text mode: booleans as ``true``/``false`` (numbers already keep their text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return {k: _texts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_texts(v) for v in value]
    return value


_LONG_RANGE = "(-9223372036854775808 - 9223372036854775807)"


def has_struct(t: pa.DataType) -> bool:
    while pa.types.is_list(t) or pa.types.is_large_list(t):
        t = t.value_type
    return pa.types.is_struct(t)


def _odd_members(rows: list[dict[str, Any]], maps: pa.StructType) -> bool:
    """Whether any map member in the rows is spelled otherwise than the table's (``K`` for
    ``k``): only the inferred type of the rows' map columns is compared, not every value."""
    sample = [{f.name: r.get(f.name) for f in maps} for r in rows]
    try:
        seen = pa.array(sample).type
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        return True  # mixed types: respell anyway, the type check then locates them
    return _odd_names(seen, maps)


def _odd_names(seen: pa.DataType, want: pa.DataType) -> bool:
    while (pa.types.is_list(seen) or pa.types.is_large_list(seen)) and (
        pa.types.is_list(want) or pa.types.is_large_list(want)
    ):
        seen, want = seen.value_type, want.value_type
    if not (pa.types.is_struct(seen) and pa.types.is_struct(want)):
        return False
    exact = {f.name: f.type for f in want}
    lower = {f.name.lower(): f.type for f in want}
    for f in seen:
        if f.name in exact:
            if _odd_names(f.type, exact[f.name]):
                return True
        elif f.name.lower() in lower:
            return True
    return False


def late_member(seen: pa.DataType, want: pa.DataType, path: str = "") -> str | None:
    """The dotted path of a map member the values have (``seen``, their inferred type) but
    type ``want`` lacks, where it holds a value (a member only ever null infers as null)."""
    while (pa.types.is_list(seen) or pa.types.is_large_list(seen)) and (
        pa.types.is_list(want) or pa.types.is_large_list(want)
    ):
        seen, want = seen.value_type, want.value_type
    if not (pa.types.is_struct(seen) and pa.types.is_struct(want)):
        return None
    lower = {f.name.lower(): f.type for f in want}
    for f in seen:
        inner = f"{path}.{f.name}" if path else f.name
        t = lower.get(f.name.lower())
        if t is None:
            if not pa.types.is_null(f.type):
                return inner
            continue
        found = late_member(f.type, t, inner)
        if found is not None:
            return found
    return None


def _respelled(value: Any, t: pa.DataType) -> Any:
    """``value`` with its map members named as in type ``t`` (Drill matches names
    regardless of case; of two spellings in one object the last value wins)."""
    if isinstance(value, dict) and pa.types.is_struct(t):
        fields = {f.name.lower(): f for f in t}
        out: dict[str, Any] = {}
        for k, v in value.items():
            f = fields.get(k.lower())
            if f is None:
                out[k] = v
            else:
                out.pop(f.name, None)
                out[f.name] = _respelled(v, f.type)
        return out
    if isinstance(value, list) and (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return [_respelled(v, t.value_type) for v in value]
    return value


class _NotConvertible(ValueError):
    def __init__(self, token: str, text: str, target: pa.DataType) -> None:
        super().__init__(text)
        self.token, self.text, self.target = token, text, target


def _has_scalar_list(t: pa.DataType) -> bool:
    """Whether ``t`` holds, at any depth, an array of scalars."""
    if pa.types.is_struct(t):
        return any(_has_scalar_list(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        v = t.value_type
        return _has_scalar_list(v) or not (
            pa.types.is_struct(v) or pa.types.is_list(v) or pa.types.is_large_list(v)
        )
    return False


def _token(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "value"


def java_double_text(x: float) -> str:
    """A double as Java's ``Double.toString`` writes it (``1.5``, ``100.0``, ``1.0E7``,
    ``1.0E-4``): how Drill turns a JSON number into text."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        text = repr(x)
        return text if "e" not in text else f"{x:f}"
    for digits in range(17):
        mantissa, exp = f"{x:.{digits}e}".split("e")
        if float(f"{mantissa}e{exp}") == x:
            break
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}E{int(exp)}"


_LONG_TEXT = re.compile(r"[+-]?[0-9]+")


def array_scalar(value: Any, t: pa.DataType) -> Any:
    """One scalar of a JSON array converted to the array's element type ``t`` as Drill's
    readers do: to text (``true``, ``1``, ``1.5``), to BIGINT (booleans 1/0, a string
    holding a whole number; a fraction is refused, where Drill rounds it: the array's type
    came from a sample, which would have widened it to DOUBLE), to DOUBLE (booleans 1/0, a string
    holding a number), to BOOLEAN (a number other than 0, the string ``true`` in any case).

    Raises:
        _NotConvertible: a string that holds no such number, or a number beyond BIGINT.
    """
    if value is None:
        return None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return java_double_text(value)
        return str(value)
    if pa.types.is_integer(t):
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, str) and _LONG_TEXT.fullmatch(value):
            number = int(value)
            if -(2**63) <= number < 2**63:
                return number
        raise _NotConvertible(_token(value), repr(value), t)
    if pa.types.is_floating(t):
        if isinstance(value, (bool, int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise _NotConvertible(_token(value), repr(value), t)
    if pa.types.is_boolean(t):
        if isinstance(value, (bool, int, float)):
            return value != 0
        if isinstance(value, str):
            return value.lower() == "true"
    return value


def _convert_in_arrays(value: Any, t: pa.DataType, in_array: bool) -> Any:
    """``value`` with every scalar directly inside an array converted by
    :func:`array_scalar` to that array's element type."""
    if isinstance(value, dict) and pa.types.is_struct(t):
        fields = {f.name: f.type for f in t}
        return {
            k: _convert_in_arrays(v, fields[k], False) if k in fields else v
            for k, v in value.items()
        }
    if isinstance(value, list) and (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return [_convert_in_arrays(v, t.value_type, True) for v in value]
    if in_array and not isinstance(value, (dict, list)):
        return array_scalar(value, t)
    return value


class _BadValue(Exception):
    def __init__(
        self,
        row: int,
        column: str,
        found: str,
        expected: str,
        reason: str,
        message: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.row, self.column, self.found, self.expected = row, column, found, expected
        self.message = message


def _huge_int(value: Any) -> int | None:
    """The first whole number in ``value`` (at any depth) that BIGINT cannot hold, if any."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            todo.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            todo.extend(reversed(v))
        elif isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63:
            return v
    return None


def _late_error(path: str, line: int, column: str) -> UserError:
    return UserError.data_read(
        f"Column [{column}] first holds a value past the rows sampled to find the table's schema",
        [
            f"File: {path}",
            f"Line: {line}",
            f"Column: {column}",
            f"Fix: ALTER SESSION SET `auger.scan.json_sample_rows` = {line} (or -1 to sample "
            "every row, or give the column in a provided schema)",
        ],
    )


class RowsConverter:
    """Converts batches of records of one file to the expected Arrow schema."""

    def __init__(
        self,
        schema: pa.Schema,
        path: str,
        all_text: bool,
        skip_invalid: bool,
        late: frozenset[str] | None = frozenset(),
        whole_maps: frozenset[str] = frozenset(),
    ) -> None:
        self.schema = schema
        #: members not in ``schema`` whose values count (lower case; None: every one)
        self.late = late
        #: the map columns the query reads whole (lower case): a member they lack counts
        self._whole_maps = pa.struct(
            [f for f in schema if f.name.lower() in whole_maps and has_struct(f.type)]
        )
        self.path = path
        self.all_text = all_text
        self.skip_invalid = skip_invalid
        self.skipped = 0
        self.skipped_lines: list[int] = []
        self._exact = set(schema.names)
        self._lower = {n.lower(): n for n in schema.names}
        # the columns holding maps (at any depth), whose members' spellings must be checked
        self._maps = pa.struct([f for f in schema if has_struct(f.type)])

    def convert(self, rows: list[dict[str, Any]], lines: Sequence[int]) -> pa.RecordBatch:
        """One batch; bad records raise (with file, line, column) or are skipped and counted."""
        lines = list(lines)
        rows = self._normalise(rows, lines)
        while True:
            try:
                return self._build(rows)
            except _BadValue as bad:
                if not self.skip_invalid:
                    raise UserError.data_read(
                        bad.message
                        or f"JSON value of type {bad.found} in column [{bad.column}] where "
                        f"{bad.expected} was expected",
                        [
                            f"File: {self.path}",
                            f"Line: {lines[bad.row]}",
                            f"Column: {bad.column}",
                            f"Expected type: {bad.expected}",
                            f"Found type: {bad.found}",
                            # the schema came from a sample of rows: one past it may hold
                            # a type the sample never showed
                            f"Fix: ALTER SESSION SET `auger.scan.json_sample_rows` = "
                            f"{lines[bad.row]} (the schema sees this row; -1 for every row), "
                            "or read every value as text: ALTER SESSION SET "
                            "`store.json.all_text_mode` = true",
                        ],
                    ) from None
                self.skipped_lines.append(lines[bad.row])
                del rows[bad.row]
                del lines[bad.row]
                self.skipped += 1

    def _normalise(self, rows: list[dict[str, Any]], lines: list[int]) -> list[dict[str, Any]]:
        keys: set[str] = set()
        for r in rows:
            keys.update(r)
        unknown = keys - self._exact
        if unknown and (self.late is None or self.late):
            self._check_late(rows, lines, unknown)
        odd = {k for k in unknown if k.lower() in self._lower}
        if odd:  # a key spelled in another case than the table's: same column (Drill)
            lower = self._lower
            rows = [
                {lower.get(k.lower(), k): v for k, v in r.items()} if odd.intersection(r) else r
                for r in rows
            ]
        if self._maps and _odd_members(rows, self._maps):
            rows = [_respelled(r, self._maps) for r in rows]
        if self._whole_maps:
            self._check_late_members(rows, lines)
        return rows

    def _check_late_members(self, rows: list[dict[str, Any]], lines: list[int]) -> None:
        """A value in a map member the table schema lacks, in a map the query reads whole."""
        maps = self._whole_maps

        def seen(part: list[dict[str, Any]]) -> pa.DataType | None:
            try:
                return pa.array([{f.name: r.get(f.name) for f in maps} for r in part]).type
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
                return None  # mixed types: the type check locates them

        whole = seen(rows)
        if whole is None or late_member(whole, maps) is None:
            return
        for r, line in zip(rows, lines, strict=True):
            one = seen([r])
            path = None if one is None else late_member(one, maps)
            if path is not None:
                raise _late_error(self.path, line, path)

    def _check_late(self, rows: list[dict[str, Any]], lines: list[int], unknown: set[str]) -> None:
        """A value in a member the table schema lacks, where the query needs it: an error
        that says where and how to widen the sample, instead of a NULL."""
        late = self.late
        names = [
            k
            for k in unknown
            if k.lower() not in self._lower and (late is None or k.lower() in late)
        ]
        if not names:
            return
        for r, line in zip(rows, lines, strict=True):
            for k in names:
                if r.get(k) is not None:
                    raise _late_error(self.path, line, k)

    def _build(self, rows: list[dict[str, Any]]) -> pa.RecordBatch:
        n = len(rows)
        if not len(self.schema):
            return pa.RecordBatch.from_arrays([pa.nulls(n)], names=["__rows__"])
        whole = self._whole(rows)
        arrays: list[pa.Array] = []
        for f in self.schema:
            arr = whole(f) if whole is not None else None
            if arr is None:
                arr = self._column([r.get(f.name) for r in rows], f)
            arrays.append(unnull_structs(arr))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _whole(self, rows: list[dict[str, Any]]) -> Any:
        """Columns cut from one struct array pyarrow infers for all rows at once (in C), or
        None when the rows mix types; a column that does not fit returns None (checked
        column by column then, which locates the bad value)."""
        try:
            struct = pa.array(rows)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
            return None
        if not pa.types.is_struct(struct.type):
            return None

        def cut(f: pa.Field) -> pa.Array | None:
            i = struct.type.get_field_index(f.name)
            if i < 0:
                return pa.nulls(len(struct), f.type)
            arr = struct.field(i)
            if arr.type.equals(f.type):
                return arr
            if not _compatible(arr.type, f.type, self.all_text):
                return None
            try:
                return arr.cast(f.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                return None

        return cut

    def _column(self, values: list[Any], f: pa.Field) -> pa.Array:
        if self.all_text:
            values = [_texts(v) for v in values]
        try:
            inferred = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            inferred = None
        if inferred is None or not _compatible(inferred.type, f.type):
            # perhaps arrays of mixed scalars, whose elements convert to the array's type
            converted = self._array_scalars(values, f)
            if converted is None:
                raise self._locate(values, f)
            values = converted
            try:
                inferred = pa.array(values, f.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                raise self._locate(values, f) from None
        if inferred.type.equals(f.type):
            return inferred
        try:
            return inferred.cast(f.type, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            raise self._locate(values, f) from None

    def _array_scalars(self, values: list[Any], f: pa.Field) -> list[Any] | None:
        """``values`` with the scalars inside arrays converted to the arrays' element type
        by Drill's rules (:func:`array_scalar`); None when there is no such array to convert
        (the mix is elsewhere). A scalar that does not convert is a located error."""
        if not _has_scalar_list(f.type):
            return None
        out = []
        for i, v in enumerate(values):
            try:
                out.append(_convert_in_arrays(v, f.type, False))
            except _NotConvertible as exc:
                if exc.token == "float":
                    return None  # a fraction past the sample: the type check says so
                expected = drill_type_name(exc.target)
                raise _BadValue(
                    i,
                    f.name,
                    exc.token,
                    expected,
                    "not convertible",
                    "Type of JSON token is not compatible with its column: "
                    f"{exc.token} {exc.text} in an array of {expected}",
                ) from None
        return out

    def _locate(self, values: list[Any], f: pa.Field) -> _BadValue:
        """The first value that cannot be stored in the field (row by row: errors only)."""
        if self.all_text:
            values = [_texts(v) for v in values]
        expected = drill_type_name(f.type)
        seen: pa.DataType | None = None
        for i, v in enumerate(values):
            if v is None:
                continue
            huge = None if self.all_text else _huge_int(v)
            if huge is not None:
                # beyond BIGINT, also inside a map or an array: Drill's parser refuses to read
                # it as a long, and no Drill type holds it as a whole number
                return _BadValue(
                    i,
                    f.name,
                    "an integer beyond BIGINT's range",
                    expected,
                    str(huge),
                    f"Error parsing JSON - Numeric value ({huge}) out of range of long "
                    f"{_LONG_RANGE}: an integer beyond BIGINT's range",
                )
            try:
                one = pa.array([v])
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
                return _BadValue(i, f.name, "a mixed-type array", expected, str(exc))
            found = drill_type_name(one.type)
            if not _compatible(one.type, f.type):
                return _BadValue(i, f.name, found, expected, "incompatible")
            try:
                one.cast(f.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                return _BadValue(i, f.name, found, expected, str(exc))
            if (
                seen is not None
                and not _compatible(one.type, seen)
                and not _compatible(seen, one.type)
            ):
                return _BadValue(i, f.name, found, drill_type_name(seen), "mixed")
            seen = one.type
        return _BadValue(0, f.name, "an unknown type", expected, "unlocated")
