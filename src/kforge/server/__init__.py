"""``kforge serve``: the HTTP API (runs, frames over SSE, answers, the agent tree) and web UI."""

from __future__ import annotations

from kforge.server.app import create_app
from kforge.server.run import serve
from kforge.server.settings import ServerSettings, is_loopback

__all__ = ["ServerSettings", "create_app", "is_loopback", "serve"]
