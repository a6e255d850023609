"""ASGI middleware that guards every request: the API token and the request body bound."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from kforge.server.problems import problem_response

__all__ = ["BodyLimitMiddleware", "TokenMiddleware"]

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
