"""What every route reaches through ``request.app.state.kforge``."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from kforge.runtime.runtime import Runtime
from kforge.server.settings import ServerSettings
from kforge.server.streams import RunStreams

__all__ = ["ServerState", "server_state"]


@dataclass(slots=True)
class ServerState:
    runtime: Runtime
    settings: ServerSettings
    streams: RunStreams
    model_spec: str
    """The model new runs are started with (``provider:model``)."""


def server_state(request: Request) -> ServerState:
    state: ServerState = request.app.state.kforge
    return state
