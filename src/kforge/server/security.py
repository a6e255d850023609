"""ASGI middleware that guards every request: the API token and the request body bound."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from kforge.server.problems import problem_response

__all__ = ["BodyLimitMiddleware", "BrowserGuardMiddleware", "TokenMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PUBLIC_PREFIXES = ("/ui/",)
"""The web UI's static files hold no data; the page asks for the token and sends it itself."""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class TokenMiddleware:
    """Every request but the UI's static files carries ``Authorization: Bearer TOKEN``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._public(scope):
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"authorization") or ""
        scheme, _, credential = given.partition(" ")
        if scheme.lower() != "bearer" or not credential:
            detail = (
                "this server needs an API token: send the header "
                "'Authorization: Bearer TOKEN' with the token it was started with (--token)"
            )
            code = "missing-token"
        elif hmac.compare_digest(credential.strip().encode(), self._token):
            await self.app(scope, receive, send)
            return
        else:
            detail = "the API token is not the one this server was started with; check --token"
            code = "invalid-token"
        response = problem_response(
            401, code, detail, instance=scope.get("path"), headers={"WWW-Authenticate": "Bearer"}
        )
        await response(scope, receive, send)

    @staticmethod
    def _public(scope: Scope) -> bool:
        if scope.get("method") == "OPTIONS" and _header(scope, b"access-control-request-method"):
            return True  # a CORS preflight never carries credentials; it changes nothing
        path = str(scope.get("path", ""))
        return scope.get("method") in ("GET", "HEAD") and (
            path in ("/", "/ui") or path.startswith(PUBLIC_PREFIXES)
        )


class BodyLimitMiddleware:
    """Refuse request bodies over ``limit`` bytes with 413, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        # Read the body before the app sees it, so an oversized one changes nothing.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem_response(
            413,
            "body-too-large",
            f"the request body is larger than this server accepts ({self.limit} bytes); "
            "send less (for example fewer or shorter arguments)",
            instance=scope.get("path"),
        )
        await response(scope, receive, send)


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class BrowserGuardMiddleware:
    """What a web page elsewhere could make a browser do to this server, refused.

    On loopback (no token needed) the ``Host`` must be a loopback name, so a page cannot reach
    the server through a rebound DNS name; and a request that changes something from a page of
    another origin than the server's own (or one ``--cors-origin`` allows) is refused, so no
    page can start, answer, cancel or delete runs through a visitor's browser.
    """

    def __init__(self, app: ASGIApp, *, loopback: bool, origins: tuple[str, ...]) -> None:
        self.app = app
        self.loopback = loopback
        self.origins = frozenset(o.rstrip("/") for o in origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host") or ""
        if self.loopback and not _is_loopback_host(_host_name(host)):
            response = problem_response(
                403,
                "host-not-allowed",
                f"this server listens on loopback and answers only to 127.0.0.1 or localhost "
                f"(got Host {host[:80]!r}); to serve other names, listen on another address "
                "with --token",
                instance=scope.get("path"),
            )
            await response(scope, receive, send)
            return
        origin = (_header(scope, b"origin") or "").rstrip("/")
        changes = scope.get("method") not in ("GET", "HEAD", "OPTIONS")
        if changes and origin and origin not in self.origins and not _same_origin(origin, host):
            response = problem_response(
                403,
                "origin-not-allowed",
                f"a page at {origin[:100]} may not change anything here; allow it with "
                "--cors-origin ORIGIN if it should",
                instance=scope.get("path"),
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _is_loopback_host(name: str) -> bool:
    from kforge.server.settings import is_loopback

    return name in _LOOPBACK_NAMES or is_loopback(name)


def _same_origin(origin: str, host: str) -> bool:
    return origin in (f"http://{host}", f"https://{host}")
