"""Run the server with uvicorn: open the store and runtime, serve until interrupted."""

from __future__ import annotations

import errno
import os
import socket
from typing import TYPE_CHECKING, Any, Literal

from kforge.errors import ConfigurationError
from kforge.server.settings import ServerSettings

if TYPE_CHECKING:
    from kforge.engine.services import Services
    from kforge.mcp.catalog import MCPCatalog

__all__ = ["bind", "serve"]


def bind(settings: ServerSettings) -> socket.socket:
    """A listening socket on the settings' host and port, or a ConfigurationError that says
    what to do (a port in use, a host that names no address of this machine)."""
    try:
        infos = socket.getaddrinfo(
            settings.host, settings.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ConfigurationError(
            f"cannot listen on host {settings.host!r} ({exc.strerror}); choose another with --host"
        ) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        # as uvicorn does: a restarted server may reuse the port of one that just stopped
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigurationError(
                f"port {settings.port} is in use; choose another with --port"
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise ConfigurationError(
                f"not allowed to listen on port {settings.port}; choose one above 1023 with --port"
            ) from None
        raise ConfigurationError(
            f"cannot listen on {settings.host}:{settings.port} ({exc.strerror or exc})"
        ) from None
    sock.set_inheritable(True)
    return sock


def serve(
    settings: ServerSettings,
    *,
    sock: socket.socket | None = None,
    db: str | os.PathLike[str] | None = None,
    model: str | None = None,
    log_level: str = "info",
    executor: Literal["local", "dbos"] = "local",
    mcp_catalog: MCPCatalog | None = None,
    services: Services | None = None,
) -> None:
    """Serve a runtime over the store ``db`` names (a SQLite file or a PostgreSQL URL) until
    interrupted. With ``executor="dbos"`` (a PostgreSQL URL) runs are queued for
    ``kforge worker`` processes instead of executing in the server. ``mcp_catalog`` adds
    tools, resources and prompts to the MCP server at ``/mcp``; ``services`` (an application's
    tools, from ``--app``) are given to every run. ``sock`` is a socket from
    ``bind`` (bound before anything is announced); without it one is bound here."""
    import uvicorn

    import kforge.agents  # noqa: F401  (registers the built-in agents)
    from kforge.runtime.runtime import Runtime
    from kforge.server.app import create_app
    from kforge.store.open import open_store

    settings.check()
    listening = sock if sock is not None else bind(settings)
    runtime = Runtime(open_store(db), model=model, executor=executor, services=services)
    app = create_app(runtime, settings, model=model, close_runtime=True, mcp_catalog=mcp_catalog)
    config: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": log_level,
        "proxy_headers": False,
        "server_header": False,
        "timeout_graceful_shutdown": 5,
    }
    server = uvicorn.Server(uvicorn.Config(app, **config))
    try:
        server.run(sockets=[listening])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the Ctrl-C it shut down on; the server has stopped cleanly
