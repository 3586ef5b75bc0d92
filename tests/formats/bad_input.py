"""The bad-input corpus: malformed and odd files of every format and compression auger reads,
each with the answer it must give, computed from how the file was made.

A :class:`Case` is one table (a file, a link or a directory) and either the rows ``SELECT *``
returns (in any order; ``COUNT(*)`` is their number) or the error kind the query must fail
with, its message or context naming the table's file. :func:`cases` lists them all;
:func:`write_corpus` writes them under a directory. Nothing here is random: "binary garbage" is
a fixed byte pattern, so a failure names the same file every run.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from auger.errors import ErrorKind
from auger.formats.json.infer import MAX_DEPTH
from auger.formats.text.text_options import MAX_FIELDS

Row = tuple[Any, ...]

DATA_READ = ErrorKind.DATA_READ


@dataclass(frozen=True)
class Case:
    """One table of the corpus and what querying it must give.

    Attributes:
        name: the test id.
        table: the table's path under the corpus root, as the query names it.
        rows: the rows of ``SELECT *`` (None when the query must fail).
        error: the kind of the error the query must fail with (None when it must succeed).
        files: paths under the root and their bytes.
        links: symbolic links to make: path under the root -> target (as ``ln -s`` takes it).
        dirs: empty directories to make.
        named: what the error must name (default: the table's last path component).
    """

    name: str
    table: str
    rows: list[Row] | None = None
    error: ErrorKind | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    dirs: tuple[str, ...] = ()
    named: str = ""

    def __post_init__(self) -> None:
        assert (self.rows is None) != (self.error is None), self.name

    @property
    def must_name(self) -> str:
        return self.named or os.path.basename(self.table.rstrip("/"))


# ----------------------------------------------------------------------------------- text
#: rows with every kind of field the text rules treat specially: a delimiter, a doubled quote
#: and a line break inside quotes, an empty field, non-ASCII text
TEXT_ROWS: list[list[str]] = [
    ["1", "plain", "x"],
    ["2", "with, comma", 'say "hi"'],
    ["3", "", "two\nlines"],
    ["4", "café ☕", "tab\there"],
]

#: format name -> (extension, delimiter, header)
TEXT_FORMATS: dict[str, tuple[str, str, bool]] = {
    "csv": ("csv", ",", False),
    "tsv": ("tsv", "\t", False),
    "psv": ("psv", "|", False),
    "csvh": ("csvh", ",", True),
}
HEADER = ["id", "name", "note"]


def _field(value: str, delimiter: str) -> str:
    if any(c in value for c in (delimiter, '"', "\n", "\r")) or value != value.strip():
        return '"' + value.replace('"', '""') + '"'
    return value


def text_bytes(rows: Sequence[Sequence[str]], delimiter: str, newline: str = "\n") -> bytes:
    """Rows written by Drill's quoting rules (a field with a delimiter, quote or line break is
    quoted, quotes doubled)."""
    return "".join(delimiter.join(_field(v, delimiter) for v in r) + newline for r in rows).encode()


def text_rows(fmt: str, rows: Sequence[Sequence[str]]) -> list[Row]:
    """What ``SELECT *`` returns for these data rows: named columns with a header, else the
    ``columns`` array."""
    if TEXT_FORMATS[fmt][2]:
        return [tuple(r) for r in rows]
    return [(list(r),) for r in rows]


def _text_file(fmt: str, rows: Sequence[Sequence[str]], newline: str = "\n") -> bytes:
    _, delimiter, header = TEXT_FORMATS[fmt]
    return text_bytes([HEADER, *rows] if header else rows, delimiter, newline)


def _text_cases() -> Iterator[Case]:
    for fmt, (ext, delimiter, header) in TEXT_FORMATS.items():
        good = _text_file(fmt, TEXT_ROWS)
        yield Case(
            f"{fmt}-plain",
            f"{fmt}/plain.{ext}",
            text_rows(fmt, TEXT_ROWS),
            files={f"{fmt}/plain.{ext}": good},
        )
        yield Case(
            f"{fmt}-bom",
            f"{fmt}/bom.{ext}",
            text_rows(fmt, TEXT_ROWS),
            files={f"{fmt}/bom.{ext}": b"\xef\xbb\xbf" + good},
        )
        yield Case(
            f"{fmt}-crlf",
            f"{fmt}/crlf.{ext}",
            text_rows(fmt, TEXT_ROWS),
            files={f"{fmt}/crlf.{ext}": _text_file(fmt, TEXT_ROWS, "\r\n")},
        )
        yield Case(
            f"{fmt}-no-final-newline",
            f"{fmt}/open.{ext}",
            text_rows(fmt, TEXT_ROWS),
            files={f"{fmt}/open.{ext}": good[:-1]},
        )
        # blank lines between records are not records
        spaced = good.replace(b"x\n", b"x\n\n\n", 1)
        yield Case(
            f"{fmt}-blank-lines",
            f"{fmt}/blank.{ext}",
            text_rows(fmt, TEXT_ROWS),
            files={f"{fmt}/blank.{ext}": spaced},
        )
        # a field of 1 MiB (under the 16 MiB field limit)
        huge = [["1", "h" * (1 << 20), "x"]]
        yield Case(
            f"{fmt}-huge-field",
            f"{fmt}/huge.{ext}",
            text_rows(fmt, huge),
            files={f"{fmt}/huge.{ext}": _text_file(fmt, huge)},
        )
        # truncated inside a quoted field: the quote never closes
        cut = good[: good.index(b"two") + 2]
        yield Case(
            f"{fmt}-cut-mid-quote",
            f"{fmt}/midquote.{ext}",
            error=DATA_READ,
            files={f"{fmt}/midquote.{ext}": cut},
        )
        # truncated between the two quotes of a doubled quote (an escape): the first one, at
        # the end of the input, closes the field
        cut = good[: good.index(b'""hi') + 1]
        yield Case(
            f"{fmt}-cut-mid-escape",
            f"{fmt}/midescape.{ext}",
            text_rows(fmt, [TEXT_ROWS[0], ["2", "with, comma", "say "]]),
            files={f"{fmt}/midescape.{ext}": cut},
        )
        # truncated inside a UTF-8 sequence (the first byte of "☕" alone)
        cut = good[: good.index("☕".encode()) + 1]
        yield Case(
            f"{fmt}-cut-mid-utf8",
            f"{fmt}/midutf8.{ext}",
            error=DATA_READ,
            files={f"{fmt}/midutf8.{ext}": cut},
        )
        yield Case(
            f"{fmt}-invalid-utf8",
            f"{fmt}/latin1.{ext}",
            error=DATA_READ,
            files={f"{fmt}/latin1.{ext}": good + "1,Zoë,x\n".encode("latin-1")},
        )
        yield Case(
            f"{fmt}-binary",
            f"{fmt}/binary.{ext}",
            error=DATA_READ,
            files={f"{fmt}/binary.{ext}": GARBAGE},
        )
        wide = delimiter.join(["w"] * (MAX_FIELDS + 1))
        yield Case(
            f"{fmt}-too-many-fields",
            f"{fmt}/wide.{ext}",
            error=ErrorKind.UNSUPPORTED_OPERATION,
            files={f"{fmt}/wide.{ext}": good + wide.encode() + b"\n"},
        )
        if header:
            # no header line at all: no columns, no rows (a blank header line is an error)
            yield Case(f"{fmt}-empty", f"{fmt}/empty.{ext}", [], files={f"{fmt}/empty.{ext}": b""})
            yield Case(
                f"{fmt}-blank-header",
                f"{fmt}/blankheader.{ext}",
                error=DATA_READ,
                files={f"{fmt}/blankheader.{ext}": b"\n1,2\n"},
            )
            yield Case(
                f"{fmt}-header-only",
                f"{fmt}/header.{ext}",
                [],
                files={f"{fmt}/header.{ext}": _text_file(fmt, [])},
            )
        else:
            yield Case(f"{fmt}-empty", f"{fmt}/empty.{ext}", [], files={f"{fmt}/empty.{ext}": b""})
            # blanks and tabs are data: each line with one is a record of one field
            blanks = [["  "], " \t ".split(delimiter)]
            yield Case(
                f"{fmt}-whitespace-only",
                f"{fmt}/blanks.{ext}",
                text_rows(fmt, blanks),
                files={f"{fmt}/blanks.{ext}": b"  \n\n \t \n"},
            )


#: a fixed run of every byte value, ASCII control and invalid UTF-8 included
GARBAGE = bytes(range(256)) * 4 + bytes(range(255, -1, -1)) * 4


# ----------------------------------------------------------------------------------- JSON
JSON_DOC = '{"a": 1, "b": [2.5e3, -0.5], "c": {"d": "x\\u00e9y"}, "e": "caf\u00e9"}\n'
JSON_ROW: Row = (1, [2500.0, -0.5], {"d": "xéy"}, "café")


def _json_cases() -> Iterator[Case]:
    doc = JSON_DOC.encode()
    row2 = doc.replace(b'"a": 1', b'"a": 2')
    good = doc + row2
    rows = [JSON_ROW, (2, *JSON_ROW[1:])]
    yield Case("json-plain", "json/plain.json", rows, files={"json/plain.json": good})
    yield Case("json-bom", "json/bom.json", rows, files={"json/bom.json": b"\xef\xbb\xbf" + good})
    yield Case(
        "json-array",
        "json/array.json",
        rows,
        files={"json/array.json": b"[" + doc.strip() + b",\n" + row2.strip() + b"]\n"},
    )
    yield Case(
        "json-one-line",
        "json/oneline.json",
        rows,
        files={"json/oneline.json": doc.strip() + b" " + row2.strip()},
    )
    yield Case("json-empty", "json/empty.json", [], files={"json/empty.json": b""})
    yield Case(
        "json-whitespace-only", "json/blank.json", [], files={"json/blank.json": b" \n\t\r\n  \n"}
    )
    yield Case(
        "json-empty-array", "json/emptyarray.json", [], files={"json/emptyarray.json": b"[]\n"}
    )
    big = "v" * (1 << 20)
    yield Case(
        "json-huge-string",
        "json/huge.json",
        [(big,)],
        files={"json/huge.json": f'{{"s": "{big}"}}\n'.encode()},
    )
    deep_ok = MAX_DEPTH - 1
    nested = '{"n": ' * deep_ok + "1" + "}" * deep_ok
    expected: Any = 1
    for _ in range(deep_ok - 1):
        expected = {"n": expected}
    yield Case(
        "json-deep-within-limit",
        "json/deep.json",
        [(expected,)],
        files={"json/deep.json": nested.encode() + b"\n"},
    )
    for depth in (MAX_DEPTH + 1, 100_000):
        yield Case(
            f"json-deeper-than-limit-{depth}",
            f"json/deep{depth}.json",
            error=DATA_READ,
            files={f"json/deep{depth}.json": b'{"a": ' + b"[" * depth + b"]" * depth + b"}\n"},
        )
    yield Case(
        "json-pair-and-escaped-backslash",
        "json/pair.json",
        [("\U0001f600", "\\ud800")],
        files={"json/pair.json": b'{"p": "\\ud83d\\ude00", "q": "\\\\ud800"}\n'},
    )
    yield Case(
        "json-lone-surrogate",
        "json/surrogate.json",
        error=DATA_READ,
        files={"json/surrogate.json": doc + b'{"a": 3, "e": "\\ud800"}\n'},
    )
    yield Case(
        "json-invalid-utf8",
        "json/latin1.json",
        error=DATA_READ,
        files={"json/latin1.json": doc + '{"a": 3, "e": "Zoë"}\n'.encode("latin-1")},
    )
    yield Case(
        "json-binary", "json/binary.json", error=DATA_READ, files={"json/binary.json": GARBAGE}
    )
    yield Case(
        "json-scalar", "json/scalar.json", error=DATA_READ, files={"json/scalar.json": b"42\n"}
    )
    # cut at each structural boundary of the second record: after it opened, after a key,
    # after a colon, inside a number, an array, a string, an escape, a UTF-8 sequence, a map
    cuts = {
        "mid-object": row2.index(b'"a"'),
        "after-key": row2.index(b'"a"') + 3,
        "after-colon": row2.index(b":") + 1,
        "mid-number": row2.index(b"2.5e") + 4,
        "mid-array": row2.index(b"-0.5"),
        "mid-string": row2.index(b'"x') + 2,
        "mid-escape": row2.index(b"\\u00") + 4,
        "mid-utf8": row2.index("é".encode()) + 1,
        "mid-inner-object": row2.index(b"}"),
    }
    for what, at in cuts.items():
        yield Case(
            f"json-cut-{what}",
            f"json/cut-{what}.json",
            error=DATA_READ,
            files={f"json/cut-{what}.json": doc + row2[:at]},
        )
    yield Case(
        "json-cut-mid-top-array",
        "json/cut-array.json",
        error=DATA_READ,
        files={"json/cut-array.json": b"[" + doc.strip() + b",\n" + row2.strip()},
    )


# -------------------------------------------------------------------------------- Parquet
PARQUET_TABLE = pa.table({"i": [1, 2, 3], "s": ["x", "é", None]})
PARQUET_ROWS: list[Row] = [(1, "x"), (2, "é"), (3, None)]


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="snappy")
    return buf.getvalue()


def _parquet_cases() -> Iterator[Case]:
    good = _parquet(PARQUET_TABLE)
    footer = int.from_bytes(good[-8:-4], "little")
    yield Case(
        "parquet-plain",
        "parquet/plain.parquet",
        PARQUET_ROWS,
        files={"parquet/plain.parquet": good},
    )
    yield Case(
        "parquet-no-rows",
        "parquet/norows.parquet",
        [],
        files={"parquet/norows.parquet": _parquet(PARQUET_TABLE.slice(0, 0))},
    )
    bad = {
        "empty": b"",
        "magic-only": b"PAR1",
        "head-magic-only": good[:4] + b"\x00" * 8,
        "cut-end-magic": good[:-2],
        "cut-footer-length": good[:-6],
        "cut-mid-footer": good[: len(good) - 8 - footer // 2],
        "cut-mid-page": good[: len(good) // 3],
        "footer-length-too-big": good[:-8] + (len(good) * 4).to_bytes(4, "little") + b"PAR1",
        "binary": GARBAGE,
    }
    # only the footer's magic number is read (as parquet-mr does): a wrong first one is no harm
    yield Case(
        "parquet-wrong-head-magic",
        "parquet/wronghead.parquet",
        PARQUET_ROWS,
        files={"parquet/wronghead.parquet": b"PAR2" + good[4:]},
    )
    for what, data in bad.items():
        yield Case(
            f"parquet-{what}",
            f"parquet/{what}.parquet",
            error=DATA_READ,
            files={f"parquet/{what}.parquet": data},
        )


# ---------------------------------------------------------------------------- compression
def _hadoop_blocks(codec: str, payload: bytes, block: int = 64) -> bytes:
    """Hadoop's block framing (what its Snappy and LZ4 codecs write): the raw length, the
    compressed length and the compressed block, for each block."""
    c = pa.Codec(codec)
    out = b""
    for i in range(0, len(payload), block):
        piece = payload[i : i + block]
        comp = c.compress(piece, asbytes=True)
        out += len(piece).to_bytes(4, "big") + len(comp).to_bytes(4, "big") + comp
    return out


def _zip(payload: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("first", payload)
    return buf.getvalue()


CODECS: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "zst": lambda b: zstandard.ZstdCompressor().compress(b),
    "deflate": zlib.compress,
    "snappy": lambda b: _hadoop_blocks("snappy", b),
    "lz4": lambda b: _hadoop_blocks("lz4_raw", b),
    "zip": _zip,
}


def _compressed_cases() -> Iterator[Case]:
    csv = _text_file("csvh", TEXT_ROWS)
    json = (JSON_DOC + JSON_DOC.replace('"a": 1', '"a": 2')).encode()
    sources = {
        "csvh": (csv, text_rows("csvh", TEXT_ROWS)),
        "json": (json, [JSON_ROW, (2, *JSON_ROW[1:])]),
    }
    for suffix, compress in CODECS.items():
        for fmt, (raw, rows) in sources.items():
            packed = compress(raw)
            base = f"{fmt}-compressed/{suffix}"
            yield Case(
                f"{fmt}.{suffix}",
                f"{base}.{fmt}.{suffix}",
                rows,
                files={f"{base}.{fmt}.{suffix}": packed},
            )
            yield Case(
                f"{fmt}.{suffix}-truncated",
                f"{base}-cut.{fmt}.{suffix}",
                error=DATA_READ,
                files={f"{base}-cut.{fmt}.{suffix}": packed[: len(packed) * 2 // 3]},
            )
            yield Case(
                f"{fmt}.{suffix}-not-compressed",
                f"{base}-raw.{fmt}.{suffix}",
                error=DATA_READ,
                files={f"{base}-raw.{fmt}.{suffix}": GARBAGE},
            )


# ------------------------------------------------------------------------ names and links
#: odd but legal file names; each holds the plain CSV
ODD_NAMES = {
    "space": "with space.csv",
    "unicode": "naïve 数据.csv",
    "leading-dash": "-dash.csv",
    "hash": "hash#1.csv",
    "percent": "100%.csv",
    "percent-escape": "a%20b.csv",
    "question-mark": "what?.csv",
    "brackets": "[x]{y}.csv",
}


def _name_cases() -> Iterator[Case]:
    good = _text_file("csv", TEXT_ROWS)
    rows = text_rows("csv", TEXT_ROWS)
    for what, name in ODD_NAMES.items():
        yield Case(f"name-{what}", f"names/{name}", rows, files={f"names/{name}": good})
    # a hidden file named directly is read (only a directory's listing skips it)
    yield Case("name-leading-dot", "names/.hidden.csv", rows, files={"names/.hidden.csv": good})
    # the whole directory: the odd names are read, the hidden file is not
    listed = {f"names-dir/{n}": good for n in ODD_NAMES.values()}
    yield Case(
        "name-directory",
        "names-dir",
        rows * len(ODD_NAMES),
        files={**listed, "names-dir/.hidden.csv": good, "names-dir/_skipped.csv": good},
    )
    yield Case(
        "link-to-file",
        "links/link.csv",
        rows,
        files={"links/target.csv.txt": good},
        links={"links/link.csv": "target.csv.txt"},
    )
    yield Case(
        "link-dangling",
        "links/dangling.csv",
        error=ErrorKind.VALIDATION,
        links={"links/dangling.csv": "no-such-file.csv"},
    )
    yield Case(
        "link-loop",
        "links/loop.csv",
        error=ErrorKind.VALIDATION,
        links={"links/loop.csv": "loop2.csv", "links/loop2.csv": "loop.csv"},
    )
    yield Case(
        "link-to-directory",
        "links/dirlink",
        rows,
        files={"links/realdir/a.csv": good},
        links={"links/dirlink": "realdir"},
    )
    yield Case(
        "link-loop-in-directory",
        "looped",
        rows,
        files={"looped/a.csv": good},
        links={"looped/self": "."},
    )
    yield Case(
        "directory-with-extension", "dirs/table.csv", rows, files={"dirs/table.csv/part.csv": good}
    )
    # an empty directory is an empty table
    yield Case("empty-directory-with-extension", "dirs/none.json", [], dirs=("dirs/none.json",))
    yield Case(
        "directory-of-empty-files",
        "dirs/blank",
        [],
        files={"dirs/blank/a.csv": b"", "dirs/blank/b.csv": b""},
    )


def cases() -> list[Case]:
    """Every case of the corpus.

    A file that must read is moved into an ``ok`` directory beside it and one that must fail
    into ``bad``, so that an ``ok`` directory is a table too: its files can be counted in one
    query (see :func:`counted_together`)."""
    out = []
    for case in (
        *_text_cases(),
        *_json_cases(),
        *_parquet_cases(),
        *_compressed_cases(),
        *_name_cases(),
    ):
        if list(case.files) == [case.table] and not case.links and not _hidden(case.table):
            head, _, name = case.table.rpartition("/")
            moved = f"{head}/{'ok' if case.rows is not None else 'bad'}/{name}"
            case = replace(case, table=moved, files={moved: case.files[case.table]})
        out.append(case)
    return out


def _hidden(path: str) -> bool:
    return os.path.basename(path).startswith((".", "_"))


def counted_together(all_cases: Sequence[Case]) -> dict[str, list[Case]]:
    """The ``ok`` directories and the cases whose single file each holds."""
    groups: dict[str, list[Case]] = {}
    for case in all_cases:
        head, _, _ = case.table.rpartition("/")
        if head.endswith("/ok"):
            groups.setdefault(head, []).append(case)
    return groups


def write_corpus(root: Path, all_cases: Sequence[Case]) -> None:
    """Write every case's files, links and directories under ``root``."""
    for case in all_cases:
        for rel, data in case.files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        for rel in case.dirs:
            (root / rel).mkdir(parents=True, exist_ok=True)
        for rel, target in case.links.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, path)
