"""Drill's header clean-up for text files with ``extract_header``.

Header names become SQL-friendly identifiers: trimmed; blank (or a lone symbol) becomes
``column_<1-based position>``; a leading character that is not a letter becomes the prefix
``col_`` (a leading digit is kept after it); any other character that is not a letter, digit or
underscore becomes ``_``; a name equal (ignoring case) to an earlier one gets ``_2``, ``_3``...
"""

from __future__ import annotations

from collections.abc import Sequence

from auger.errors import UserError

__all__ = ["clean_header", "clean_name"]


def clean_name(raw: str) -> str:
    """One header name cleaned up; "" when it should be anonymous (``column_<n>``)."""
    name = raw.strip()
    if not name:
        return ""
    if len(name) == 1 and not name.isalnum():
        return ""
    out: list[str] = []
    first = name[0]
    if first.isalpha():
        out.append(first)
    elif first.isdigit():
        out.append("col_" + first)
    else:
        out.append("col_")
    for ch in name[1:]:
        out.append(ch if ch.isalnum() or ch == "_" else "_")
    return "".join(out)


def clean_header(names: Sequence[str], path: str = "") -> list[str]:
    """The column names of a header line, cleaned and made unique as Drill does.

    Raises:
        UserError: DATA_READ when the header defines no column at all.
    """
    if not names or list(names) == [""]:
        raise UserError.data_read(
            "The file must define at least one header.", [f"File Path: {path}"] if path else []
        )
    out: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(names):
        base = clean_name(raw) or f"column_{i + 1}"
        candidate, n = base, 1
        while candidate.lower() in seen:
            n += 1
            candidate = f"{base}_{n}"
        seen.add(candidate.lower())
        out.append(candidate)
    return out
