"""Errors as RFC 9457 problem details: a code, a title, and a detail that says what to do."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from kforge.errors import (
    ConfigurationError,
    ForgeError,
    InvalidRunStateError,
    RunNotFoundError,
    ValidationError,
)

__all__ = [
    "Problem",
    "handle_forge_error",
    "handle_problem",
    "problem_for_error",
    "problem_response",
]

PROBLEM_JSON = "application/problem+json"

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Invalid request",
    429: "Too many requests",
    500: "Internal server error",
}


class Problem(Exception):
    """Raised by a route to answer with a problem document."""

    def __init__(self, status: int, code: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra


def problem_response(
    status: int,
    code: str,
    detail: str,
    *,
    instance: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"https://kforge.dev/problems/{code}",
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "code": code,
        "detail": detail,
    }
    if instance:
        body["instance"] = instance
    body.update(extra)
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def problem_for_error(exc: ForgeError) -> tuple[int, str]:
    """The HTTP status and problem code for an error the runtime raised on purpose."""
    if isinstance(exc, RunNotFoundError):
        return 404, "run-not-found"
    if isinstance(exc, InvalidRunStateError):
        return 409, "invalid-run-state"
    if isinstance(exc, ValidationError):
        return 422, "invalid-input"
    if isinstance(exc, ConfigurationError):
        return 422, "invalid-configuration"
    return 500, "runtime-error"


async def handle_problem(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Problem)
    return problem_response(
        exc.status, exc.code, exc.detail, instance=request.url.path, **exc.extra
    )


async def handle_forge_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ForgeError)
    status, code = problem_for_error(exc)
    detail = str(exc)
    if isinstance(exc, RunNotFoundError):
        detail = _run_not_found(request, exc.run_id)
    return problem_response(status, code, detail, instance=request.url.path)


def _run_not_found(request: Request, ref: str) -> str:
    """A URL names one run for good, so the API takes whole ids (the CLI's prefixes are for
    typing); a prefix that fits one run gets its id back to use instead."""
    detail = f"no run with id '{ref}'"
    fits = request.app.state.kforge.runtime.store.run_ids_with_prefix(ref, limit=2) if ref else []
    if len(fits) == 1:
        return f"{detail}; the API takes whole run ids, not prefixes: did you mean '{fits[0]}'?"
    return f"{detail} (GET /runs lists them; the API takes whole run ids, not prefixes)"
