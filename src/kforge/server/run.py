"""Run the server with uvicorn: open the store and runtime, serve until interrupted."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from kforge.server.settings import ServerSettings

if TYPE_CHECKING:
    from kforge.mcp_catalog import MCPCatalog

__all__ = ["serve"]


def serve(
    settings: ServerSettings,
    *,
    db: str | os.PathLike[str] | None = None,
    model: str | None = None,
    log_level: str = "info",
    executor: Literal["local", "dbos"] = "local",
    mcp_catalog: MCPCatalog | None = None,
) -> None:
    """Serve a runtime over the store ``db`` names (a SQLite file or a PostgreSQL URL) until
    interrupted. With ``executor="dbos"`` (a PostgreSQL URL) runs are queued for
    ``kforge worker`` processes instead of executing in the server. ``mcp_catalog`` adds
    tools, resources and prompts to the MCP server at ``/mcp``."""
    import uvicorn

    import kforge.agents  # noqa: F401  (registers the built-in agents)
    from kforge.runtime.runtime import Runtime
    from kforge.server.app import create_app
    from kforge.store.open import open_store

    settings.check()
    runtime = Runtime(open_store(db), model=model, executor=executor)
    app = create_app(runtime, settings, model=model, close_runtime=True, mcp_catalog=mcp_catalog)
    config: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": log_level,
        "proxy_headers": False,
        "server_header": False,
        "timeout_graceful_shutdown": 5,
    }
    uvicorn.run(app, **config)
