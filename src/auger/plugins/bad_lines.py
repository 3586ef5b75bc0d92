"""Bad lines counted against a log format's ``maxErrors``, and the error when there are too many.

Drill's line-oriented log formats (``logRegex``, ``syslog``, ``httpd``) tolerate up to
``maxErrors`` lines they cannot read, skipping them or keeping them as flagged rows, and fail
the query at the next one. The count and the error's context (the line's number and text, the
limit, what to change) are the same for each; only the headline is the format's own, as Drill
words it.
"""

from __future__ import annotations

from dataclasses import dataclass

from auger.errors import UserError

__all__ = ["BadLines"]

#: How much of an offending line an error shows: enough to recognise it, never a whole 1 MB line.
SHOWN_CHARS = 200


@dataclass
class BadLines:
    """The bad lines one reader has met, against the format's ``maxErrors``.

    ``limit`` below zero means no limit when ``negative_is_unlimited`` (Drill's httpd keeps
    every line then); otherwise the first bad line is already one too many.
    """

    limit: int
    handled: str  # what happens to a tolerated line: "skipped" or "kept"
    fix: str
    negative_is_unlimited: bool = False
    seen: int = 0

    def count(self, headline: str, number: int, line: str) -> None:
        """Count one bad line; raise DATA_READ with ``headline`` when it is one too many."""
        self.seen += 1
        if self.limit < 0 and self.negative_is_unlimited:
            return
        if self.seen > self.limit:
            raise UserError.data_read(
                headline,
                [
                    f"Line: {number}",
                    f"Text: {line[:SHOWN_CHARS]}",
                    f"maxErrors: {self.limit} "
                    f"(lines {self.handled} before this one: {self.seen - 1})",
                    f"Fix: {self.fix}",
                ],
            )
