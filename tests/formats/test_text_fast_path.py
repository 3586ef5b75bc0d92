"""The tokenizer's 64-bytes-at-a-time fast path against its record-by-record parser.

``_textscan.scan`` first reads records from bit masks of delimiters, line ends and quotes
(stage 1, in as many variants as the CPU runs: portable, AVX2, AVX-512) and hands any record
it is not sure of to ``parse_record``. Both must give the same buffers for any input, and
the fast path must really read ordinary input itself: otherwise the agreement below would
hold by never running it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auger.formats.text.native_reader import native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="built without a C compiler")

if native_available():
    from auger import _textscan
    from auger._textscan import scan, stage1_variants, use_stage1

    VARIANTS = stage1_variants()
else:  # pragma: no cover - the skip above reports it
    VARIANTS = []


@pytest.fixture(autouse=True)
def _restore_stage1() -> object:
    yield
    if VARIANTS:
        use_stage1(VARIANTS[-1])


def _keep(positions: list[int], row_major: bool) -> bytes:
    mapping = np.full(max(positions, default=-1) + 1, -1, dtype=np.int32)
    for k, pos in enumerate(positions):
        mapping[pos] = 1 if row_major else k
    return mapping.tobytes()


def _scan(data: bytes, structural: bool, **kw: object) -> tuple[object, ...]:
    args: dict[str, object] = {
        "final": True,
        "delimiter": ord(","),
        "quote": ord('"'),
        "comment": -1,
        "keep": _keep([0, 2], False),
        "row_major": False,
        "limit": -1,
        "skip": 0,
        "skip_line": False,
        "max_field": 1 << 20,
        "max_fields": 1 << 16,
    }
    args.update(kw)
    return scan(data, structural=structural, **args)  # type: ignore[arg-type]


def _comparable(result: tuple[object, ...], keep: bytes | None, row_major: bool) -> object:
    """The result without the ASCII flag; a columnar count past the last kept position only
    promises "at least" (both parsers stop counting there, at different places)."""
    if row_major or keep is None:
        return result[:6]
    mapping = np.frombuffer(keep, dtype=np.int32)
    last = max((i for i, c in enumerate(mapping) if c >= 0), default=-1)
    counts = np.minimum(np.frombuffer(result[5], dtype=np.int32), last + 1)  # type: ignore[call-overload]
    return (*result[:5], counts.tobytes())


def test_the_fast_path_runs_on_this_machine() -> None:
    assert VARIANTS[0] == "portable"
    with pytest.raises(ValueError, match="no stage 1 variant"):
        use_stage1("sse9")


@pytest.mark.parametrize("variant", VARIANTS)
def test_plain_records_are_all_read_by_the_fast_path(variant: str) -> None:
    """The ASCII flag is only set when the fast path consumed every byte itself."""
    use_stage1(variant)
    row = b'7,"quoted, with comma","a ""doubled"" quote",\r\n,"line\nbreak",x\n\n'
    data = row * 50
    result = _scan(data, True)
    assert result[0] == "" and result[1] == len(data) and result[2] == 100
    assert result[6] is True
    slow = _scan(data, False)
    assert slow[6] is False  # the record parser alone never claims it
    assert result[:6] == slow[:6]
    (first, _), (third, _) = result[4]  # type: ignore[misc]
    assert len(first) == 4 * 101 and len(third) == 4 * 101


@pytest.mark.parametrize("variant", VARIANTS)
def test_non_ascii_input_is_left_to_the_utf8_check(variant: str) -> None:
    use_stage1(variant)
    data = "café,1,2\n".encode() * 30
    result = _scan(data, True)
    assert result[2] == 30 and result[6] is False


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"a,b,c\n" * 40 + b'a,b"x,c\n', "quote Drill reads otherwise"),
        (b"a,b,c\n" * 40 + b'a,"b"x,c\n', "quote Drill reads otherwise"),
        (b"a,b,c\n" * 40 + b"a,b\rc\n", "lone carriage return"),
        (b"a,b,c\n" * 40 + b'a,"open\n', "quote left open at end of input"),
    ],
)
@pytest.mark.parametrize("variant", VARIANTS)
def test_broken_records_stop_where_the_record_parser_stops(
    variant: str, data: bytes, reason: str
) -> None:
    use_stage1(variant)
    fast, slow = _scan(data, True), _scan(data, False)
    assert fast[0] == reason
    assert fast[:6] == slow[:6]
    assert fast[2] == 40  # the good records before it are delivered


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(
    "record",
    [
        b'"' + b"x" * 70 + b'""' + b"y" * 70 + b'",b\n',  # doubled quote chunks before the end
        b'"x""' + b"y" * 150 + b'",b\r\n',
        b'"' + b"," * 90 + b"\n" + b"q" * 40 + b'",b\n',  # delimiters and a line end inside
        b'a,"",' + b"z" * 61 + b"\r\n",
    ],
)
def test_state_carried_across_chunk_boundaries(variant: str, record: bytes) -> None:
    """Every record placed at every offset from a 64-byte boundary: the quote parity, the
    quote and \\r rules at a chunk's last byte and the last doubled quote cross it."""
    use_stage1(variant)
    for pad in range(130):
        data = b"p" * pad + b"\n" + record * 3
        fast, slow = _scan(data, True), _scan(data, False)
        assert fast[:6] == slow[:6], pad
        assert fast[6] is True and fast[2] == 3 + (pad > 0), pad  # all read by the fast path


@pytest.mark.parametrize("variant", VARIANTS)
def test_fields_of_every_length_are_copied_whole(variant: str) -> None:
    """Short fields are copied 16 bytes at a time; each length up to past that is exact."""
    use_stage1(variant)
    rows = [f'{"v" * n},"{"q" * n}",{n}\n' for n in range(40)]
    data = "".join(rows).encode()
    fast = _scan(data, True, keep=_keep([0, 1, 2], False))
    assert fast[6] is True
    (_, plain), (_, quoted), _ = fast[4]  # type: ignore[misc]
    assert plain == b"".join(b"v" * n for n in range(40))
    assert quoted == b"".join(b"q" * n for n in range(40))


_VALUE = st.text(alphabet='ab,"\n\ré ', max_size=6)
_NOISE = st.sampled_from(['"', '""', "\r", "#", "x", ",", "\n"])


@st.composite
def _text(draw: st.DrawFn) -> str:
    """Records as a CSV writer quotes them (a quote doubled inside quotes), line ends of
    both kinds, blank and comment lines, and now and then a piece of noise."""
    out = []
    for _ in range(draw(st.integers(0, 12))):
        fields = []
        for value in draw(st.lists(_VALUE, max_size=7)):
            quoted = draw(st.booleans()) or any(c in value for c in ',"\n\r')
            fields.append('"' + value.replace('"', '""') + '"' if quoted else value)
        line = ",".join(fields)
        if draw(st.integers(0, 15)) == 0:
            line = "#" + line
        if draw(st.integers(0, 10)) == 0:
            at = draw(st.integers(0, len(line)))
            line = line[:at] + draw(_NOISE) + line[at:]
        out.append(line + draw(st.sampled_from(["\n", "\n", "\r\n", "\n\n", ""])))
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(
    text=_text(),
    repeat=st.integers(1, 6),
    final=st.booleans(),
    variant=st.sampled_from(VARIANTS or ["portable"]),
    positions=st.lists(st.integers(0, 7), max_size=4, unique=True),
    row_major=st.booleans(),
    limit=st.sampled_from([-1, 0, 1, 3]),
    comment=st.sampled_from([-1, ord("#")]),
    quote=st.sampled_from([ord('"'), -1]),
    skip=st.sampled_from([0, 0, 1]),
    max_field=st.sampled_from([3, 1 << 20]),
    max_fields=st.sampled_from([4, 1 << 16]),
)
def test_fast_path_agrees_with_the_record_parser(
    text: str,
    repeat: int,
    final: bool,
    variant: str,
    positions: list[int],
    row_major: bool,
    limit: int,
    comment: int,
    quote: int,
    skip: int,
    max_field: int,
    max_fields: int,
) -> None:
    use_stage1(variant)
    data = text.encode() * repeat  # repeated: records cross 64-byte chunks
    keep = _keep(sorted(positions), row_major) if positions or not row_major else None
    kw = {
        "final": final,
        "keep": keep,
        "row_major": row_major,
        "limit": limit if row_major else -1,
        "comment": comment,
        "quote": quote,
        "skip": skip,
        "max_field": max_field,
        "max_fields": max_fields,
    }
    fast, slow = _scan(data, True, **kw), _scan(data, False, **kw)
    assert _comparable(fast, keep, row_major) == _comparable(slow, keep, row_major)
    if fast[6]:
        assert data[: fast[1]].isascii()  # type: ignore[misc]


def test_module_names_its_variants() -> None:
    assert set(VARIANTS) <= {"portable", "avx2", "avx512"}
    assert _textscan.stage1_variants() == VARIANTS


def _record(values: list[str]) -> str:
    """One line as a CSV writer quotes it."""
    out = []
    for v in values:
        out.append('"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n\r') else v)
    return ",".join(out)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(
    "positions", [[0], [3, 11], [5, 150], [199], [0, 1, 198, 199], [250], list(range(0, 200, 7))]
)
def test_wide_records_with_kept_fields_far_apart(variant: str, positions: list[int]) -> None:
    """Fields are found by their place in the separator list: many fields passed between two
    kept ones, across 64-byte chunks and 4 KiB stage-1 batches, the last kept one at or past
    the line end (a short row)."""
    use_stage1(variant)
    lines = []
    for r in range(60):
        width = 200 if r % 7 else 120 + r  # now and then a short row
        values = [f"v{r}_{i}" if (i + r) % 5 else f'q "{i}",\n{r}' for i in range(width)]
        lines.append(_record(values) + ("\r\n" if r % 3 == 0 else "\n"))
    data = "".join(lines).encode()
    keep = _keep(positions, False)
    fast, slow = _scan(data, True, keep=keep), _scan(data, False, keep=keep)
    assert _comparable(fast, keep, False) == _comparable(slow, keep, False)
    assert fast[6] is True and fast[2] == 60  # all read by the fast path


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("fields", [4095, 4096, 4097, 9000])
def test_records_of_many_fields_across_batches(variant: str, fields: int) -> None:
    """A record with more separators than a stage-1 batch holds carries them over; one with
    more fields than allowed goes to the record parser (which may still take it: it counts
    the fields after the last kept one only on a line long enough to hold too many)."""
    use_stage1(variant)
    data = (
        "\n".join(",".join(str(i % 10) for i in range(fields)) for _ in range(3)) + "\n"
    ).encode()
    keep = _keep([1, fields // 2], False)
    for max_fields in (fields - 1, fields, 1 << 16):
        fast = _scan(data, True, keep=keep, max_fields=max_fields)
        slow = _scan(data, False, keep=keep, max_fields=max_fields)
        assert _comparable(fast, keep, False) == _comparable(slow, keep, False), max_fields
        assert fast[6] is (max_fields >= fields)  # over the limit: the record parser judges


@pytest.mark.parametrize("variant", VARIANTS)
def test_kept_quoted_fields_of_every_length_near_the_input_end(variant: str) -> None:
    """Quoted kept fields, doubled quotes at every place, the last ones ending within a few
    bytes of the end of the input (no 16-byte load may pass it)."""
    use_stage1(variant)
    for n in range(0, 70, 3):
        for at in (0, n // 2, n - 1):
            value = "y" * n
            if n:
                value = value[:at] + '"' + value[at:]
            row = f'a,{_record([value])},"{n}"\n'
            data = (row * 3).encode()
            for tail in (b"", b"x,y\n"):
                keep = _keep([1, 2], False)
                fast = _scan(data + tail, True, keep=keep)
                slow = _scan(data + tail, False, keep=keep)
                assert fast[:6] == slow[:6], (n, at, tail)
                assert fast[6] is True


@settings(max_examples=300, deadline=None)
@given(
    widths=st.lists(st.integers(0, 120), min_size=1, max_size=12),
    values=st.lists(st.text(alphabet='ab",\n\r ', max_size=40), min_size=1, max_size=30),
    positions=st.lists(st.integers(0, 130), min_size=1, max_size=5, unique=True),
    crlf=st.booleans(),
    variant=st.sampled_from(VARIANTS or ["portable"]),
    max_field=st.sampled_from([5, 1 << 20]),
    max_fields=st.sampled_from([30, 1 << 16]),
)
def test_wide_clean_records_agree_with_the_record_parser(
    widths: list[int],
    values: list[str],
    positions: list[int],
    crlf: bool,
    variant: str,
    max_field: int,
    max_fields: int,
) -> None:
    """Well-formed records of up to 120 fields (quoted line breaks, doubled quotes, empty
    lines where a width is 0): the fast path must read them all, as the record parser does."""
    use_stage1(variant)
    eol = "\r\n" if crlf else "\n"
    lines = [
        _record([values[(r + i) % len(values)] for i in range(w)]) for r, w in enumerate(widths)
    ]
    data = (eol.join(lines) + eol).encode() * 3
    keep = _keep(sorted(positions), False)
    kw = {"keep": keep, "max_field": max_field, "max_fields": max_fields}
    fast, slow = _scan(data, True, **kw), _scan(data, False, **kw)
    assert _comparable(fast, keep, False) == _comparable(slow, keep, False)
