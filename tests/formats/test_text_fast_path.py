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
