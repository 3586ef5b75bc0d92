"""Small HTTP helpers shared by the routes: Drill-style JSON, bounded body reads, errors.

Non-query JSON endpoints are pretty-printed the way Drill's Jackson printer does it
(two-space indent, ``"key" : value``); clients don't care, people reading them with curl do.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["HttpError", "json_response", "read_body", "text_response"]


class HttpError(Exception):
    """An error answered with a status and a JSON ``{"errorMessage": ...}`` body."""

    def __init__(
        self,
        status: int,
        message: str,
        key: str = "errorMessage",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.key = key
        self.headers = headers

    def response(self) -> Response:
        return json_response({self.key: self.message}, self.status, self.headers)


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(data, indent=2, separators=(",", " : "), ensure_ascii=False)
    return Response(body, status, headers=headers, media_type="application/json")


def text_response(text: str, status: int = 200) -> Response:
    return Response(text, status, media_type="text/plain")


async def read_body(request: Request, limit: int, timeout: float) -> bytes:
    """The request body, refusing more than ``limit`` bytes (413) or a sender slower than
    ``timeout`` seconds for the whole body (408)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            if int(declared) > limit:
                raise HttpError(413, f"Request body of {declared} bytes exceeds {limit} bytes")
        except ValueError:
            raise HttpError(400, "Invalid Content-Length header") from None

    async def collect() -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HttpError(413, f"Request body exceeds {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    try:
        return await asyncio.wait_for(collect(), timeout)
    except TimeoutError:
        raise HttpError(408, f"The request body did not arrive within {timeout:g} s") from None
