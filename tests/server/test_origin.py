"""The cross-site rule on its own (no Spark): which requests are refused and why."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.datastructures import Headers

from auger.errors import UserError
from auger.server.origin import SameOriginGuard, normalise_origin, refusal
from auger.server.settings import ServerSettings

HOST = "127.0.0.1:8047"


def scope(method: str = "POST", path: str = "/query.json", scheme: str = "http") -> dict:
    return {"type": "http", "method": method, "path": path, "scheme": scheme}


def headers(**values: str) -> Headers:
    return Headers({k.replace("_", "-"): v for k, v in {"host": HOST, **values}.items()})


def test_normalise_origin_writes_the_port() -> None:
    assert normalise_origin("http://Example.COM") == "http://example.com:80"
    assert normalise_origin("https://example.com/a/b?c") == "https://example.com:443"
    assert normalise_origin("http://127.0.0.1:8047") == "http://127.0.0.1:8047"
    assert normalise_origin("null") is None
    assert normalise_origin("http://x:notaport") is None


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_foreign_origin_is_refused_for_every_unsafe_method(method: str) -> None:
    why = refusal(scope(method, "/anything"), headers(origin="http://evil.example"))
    assert why is not None and "[http://evil.example]" in why


def test_same_origin_and_no_origin_pass() -> None:
    assert refusal(scope(), headers(origin="http://127.0.0.1:8047")) is None
    assert refusal(scope(), headers(referer="http://127.0.0.1:8047/query")) is None
    assert refusal(scope(), headers()) is None  # curl, requests, pydrill, sqlalchemy-drill


def test_other_port_or_scheme_is_another_origin() -> None:
    assert refusal(scope(), headers(origin="http://127.0.0.1:9999")) is not None
    assert refusal(scope(), headers(origin="https://127.0.0.1:8047")) is not None
    assert refusal(scope(), headers(origin="null")) is not None  # sandboxed frames, file://


def test_referer_speaks_when_origin_is_missing() -> None:
    why = refusal(scope(), headers(referer="http://evil.example/page.html"))
    assert why is not None and why.startswith("Cross-site request refused: Referer")
    # Origin wins over Referer
    assert refusal(scope(), headers(origin=f"http://{HOST}", referer="http://evil/")) is None


def test_sec_fetch_site_alone_refuses_cross_site() -> None:
    assert refusal(scope(), headers(sec_fetch_site="cross-site")) is not None
    assert refusal(scope(), headers(sec_fetch_site="same-origin")) is None


def test_safe_requests_pass_except_state_changing_gets() -> None:
    foreign = headers(referer="http://evil.example/")
    assert refusal(scope("GET", "/profiles.json"), foreign) is None
    assert refusal(scope("HEAD", "/"), foreign) is None
    for path in ("/logout", "/profiles/cancel/abc", "/storage/dfs/enable/false"):
        assert refusal(scope("GET", path), foreign) is not None, path


def test_allowed_origins_from_settings() -> None:
    settings = ServerSettings.from_config({"allowed_origins": ["https://notebook.example"]})
    guard = SameOriginGuard(_app, settings.allowed_origins)
    assert refusal(scope(), headers(origin="https://notebook.example:443"), guard.allowed) is None
    assert refusal(scope(), headers(origin="https://other.example"), guard.allowed) is not None
    with pytest.raises(UserError):
        ServerSettings.from_config({"allowed_origins": 5})


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ran"})


def _call(guard: SameOriginGuard, origin: str) -> list[dict]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    request = {
        **scope(),
        "headers": [(b"host", HOST.encode()), (b"origin", origin.encode())],
        "query_string": b"",
    }
    asyncio.run(guard(request, receive, send))
    return sent


def test_guard_answers_403_json_and_never_calls_the_app() -> None:
    guard = SameOriginGuard(_app)
    refused = _call(guard, "http://evil.example")
    assert refused[0]["status"] == 403
    assert b'"errorMessage" : "Cross-site request refused' in refused[1]["body"]
    assert _call(guard, f"http://{HOST}")[1]["body"] == b"ran"
