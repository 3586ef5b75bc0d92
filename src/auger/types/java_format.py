"""Java date-time patterns (``yyyy-MM-dd HH:mm:ss``), as Drill's schemas and formats write them,
turned into Python ``strptime`` patterns.

Drill takes these patterns from Java's ``DateTimeFormatter``; auger parses with ``strptime``, so
the common letters are translated (the longest first) and quoted literals (``'T'``) kept.
"""

from __future__ import annotations

__all__ = ["strptime_pattern"]

# Java pattern letters -> strptime directives (longest first).
_JAVA_PATTERN = [
    ("yyyy", "%Y"),
    ("yy", "%y"),
    ("MMMM", "%B"),
    ("MMM", "%b"),
    ("MM", "%m"),
    ("dd", "%d"),
    ("HH", "%H"),
    ("hh", "%I"),
    ("mm", "%M"),
    ("ss", "%S"),
    ("SSS", "%f"),
    ("a", "%p"),
]


def strptime_pattern(java: str) -> str:
    """``yyyy-MM-dd'T'HH:mm`` -> ``%Y-%m-%dT%H:%M``."""
    out: list[str] = []
    i = 0
    while i < len(java):
        if java[i] == "'":
            j = java.find("'", i + 1)
            j = len(java) if j < 0 else j
            out.append(java[i + 1 : j].replace("%", "%%") or "'")
            i = j + 1
            continue
        for token, directive in _JAVA_PATTERN:
            if java.startswith(token, i):
                out.append(directive)
                i += len(token)
                break
        else:
            out.append("%%" if java[i] == "%" else java[i])
            i += 1
    return "".join(out)
