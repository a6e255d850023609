"""The ASGI application: routes, error handling, security middleware, the web UI and MCP."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from kforge.errors import ForgeError
from kforge.llm.base import Model
from kforge.mcp.catalog import MCPCatalog
from kforge.mcp.http import MCPEndpoint
from kforge.runtime.runtime import Runtime
from kforge.server.jsonshape import MAX_DEPTH
from kforge.server.problems import (
    Problem,
    handle_forge_error,
    handle_problem,
    problem_response,
)
from kforge.server.security import BodyLimitMiddleware, BrowserGuardMiddleware, TokenMiddleware
from kforge.server.settings import ServerSettings, is_loopback
from kforge.server.state import ServerState
from kforge.server.streams import RunStreams

__all__ = ["create_app"]

log = logging.getLogger("kforge.server")
STATIC = Path(__file__).parent / "static"


def create_app(
    runtime: Runtime,
    settings: ServerSettings | None = None,
    *,
    model: Model | str | None = None,
    close_runtime: bool = False,
    mcp_catalog: MCPCatalog | None = None,
) -> FastAPI:
    """An app serving ``runtime``; with ``close_runtime`` its shutdown closes the runtime.
    ``mcp_catalog`` adds tools, resources and prompts to the MCP server at ``/mcp``."""
    from kforge.server.routes import info, runs, tree, views

    settings = settings or ServerSettings()
    settings.check()
    mcp = (
        MCPEndpoint(
            runtime,
            loopback=is_loopback(settings.host),
            cors_origins=settings.cors_origins,
            max_body_bytes=settings.max_body_bytes,
            catalog=mcp_catalog,
        )
        if settings.mcp
        else None
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # with the dbos executor the workers recover runs (DBOS recovers their stretches)
        if settings.recover and not runtime.queued:
            from kforge.runtime.recovery import recover_runs

            await recover_runs(runtime)
        if mcp is not None:
            async with mcp.lifespan():
                yield
        else:
            yield
        if close_runtime:
            await runtime.aclose()

    app = FastAPI(
        title="Knowledge Forge",
        summary="Durable, explainable, human-steerable agents: runs, their frames live, answers.",
        version=_version(),
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.kforge = ServerState(
        runtime=runtime,
        settings=settings,
        streams=RunStreams(
            runtime,
            buffer=settings.stream_buffer,
            per_client=settings.max_streams_per_client,
            poll_s=settings.stream_poll_s,
        ),
        model_spec=_model_spec(model),
    )
    app.include_router(runs.router)
    app.include_router(tree.router)
    app.include_router(info.router)
    app.include_router(views.router)
    app.add_exception_handler(Problem, handle_problem)
    app.add_exception_handler(ForgeError, handle_forge_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
    if settings.ui:
        app.mount("/ui", StaticFiles(directory=STATIC, html=True), name="ui")

        @app.get("/", include_in_schema=False)
        async def home() -> Response:
            return RedirectResponse("/ui/")

    if mcp is not None:
        app.router.routes.append(Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]))
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_body_bytes)
    app.add_middleware(
        BrowserGuardMiddleware,
        loopback=is_loopback(settings.host),
        origins=settings.cors_origins,
    )
    if settings.token:
        app.add_middleware(TokenMiddleware, token=settings.token)
    return app


def _model_spec(model: Model | str | None) -> str:
    if isinstance(model, str):
        return model
    if model is not None:
        return model.name
    from kforge.llm.config import default_model_spec

    return default_model_spec()


def _where(loc: Any) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    place = str(loc[0]) if loc else ""
    name = ".".join(parts)
    if not name:
        return "the request body" if place == "body" else place
    return f"{place} field '{name}'" if place in ("query", "path", "header") else f"'{name}'"


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    for error in errors:
        if error.get("type") == "json_invalid":
            ctx = error.get("ctx") or {}
            return problem_response(
                400,
                "invalid-json",
                f"the request body is not valid JSON ({ctx.get('error', 'parse error')}); "
                "send a JSON object with Content-Type: application/json",
                instance=request.url.path,
            )
    described = []
    for error in errors:
        if error.get("type") == "missing" and tuple(error.get("loc", ())) == ("body",):
            described.append("a JSON object body is required")
            continue
        msg = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        described.append(f"{_where(error.get('loc', ()))}: {msg}")
    return problem_response(
        422,
        "invalid-request",
        "; ".join(described) + " (GET /openapi.json describes every request)",
        instance=request.url.path,
        errors=[
            {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
            for e in errors
        ],
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return problem_response(
            404,
            "not-found",
            f"no route {request.method} {request.url.path}; GET /openapi.json lists the routes",
            instance=request.url.path,
        )
    if exc.status_code == 405:
        return problem_response(
            405,
            "method-not-allowed",
            f"{request.method} is not allowed on {request.url.path}; GET /openapi.json lists "
            "the methods each route takes",
            instance=request.url.path,
            headers=dict(exc.headers or {}),
        )
    if exc.status_code == 400 and exc.__cause__ is not None:
        # the body could not be parsed at all: nested past the parser's depth, or not UTF-8
        why = (
            f"it is nested too deeply to parse; keep it within {MAX_DEPTH} levels"
            if isinstance(exc.__cause__, RecursionError)
            else f"{type(exc.__cause__).__name__}: {str(exc.__cause__)[:200]}"
        )
        return problem_response(
            400,
            "invalid-json",
            f"the request body is not valid JSON ({why}); send a JSON object with "
            "Content-Type: application/json",
            instance=request.url.path,
        )
    return problem_response(
        exc.status_code, "http-error", str(exc.detail), instance=request.url.path
    )


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem_response(
        500,
        "internal-error",
        "the server failed unexpectedly; nothing it reported was changed on purpose. The "
        "server log has the details; retry, and report it if it happens again",
        instance=request.url.path,
    )


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("knowledge-forge")
    except metadata.PackageNotFoundError:
        return "0"
