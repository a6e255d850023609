"""What an operator decides about a server: where it listens, who may call it, what it accepts."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from kforge.errors import ConfigurationError

__all__ = ["ServerSettings", "is_loopback"]


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    """Bearer token every request must carry; required when ``host`` is not a loopback address."""
    cors_origins: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser; none unless configured."""
    max_body_bytes: int = 1_000_000
    """Largest request body accepted; larger ones get 413 before they are read."""
    ingest_roots: tuple[Path, ...] = ()
    """Server-side folders a client may ask to ingest (and their subfolders); none by default."""
    stream_buffer: int = 1000
    """Live events held for one SSE client; past that it catches up from the store instead."""
    stream_send_timeout_s: float = 30.0
    """An SSE client that does not take an event for this long is disconnected (it can resume)."""
    stream_ping_s: float = 15.0
    stream_poll_s: float = 2.0
    """How often a quiet stream looks in the store for frames another process committed."""
    max_streams_per_client: int = 32
    """Concurrent SSE streams one client address may hold."""
    recover: bool = True
    """On start, resume the runs a process that is gone left unfinished (``--no-recover``)."""
    ui: bool = True
    """Serve the web UI at ``/ui/``."""
    mcp: bool = True
    """Serve kforge's MCP server (a ``run_agent`` tool) at ``/mcp`` over streamable HTTP."""

    def check(self) -> None:
        """Refuse settings that would expose the runs to the network without a token."""
        if not is_loopback(self.host) and not self.token:
            raise ConfigurationError(
                f"refusing to listen on {self.host} without an API token: anyone who can reach "
                "it could read and steer every run; pass --token TOKEN (or set KFORGE_TOKEN), "
                "or listen on 127.0.0.1"
            )
        if self.token is not None and len(self.token) < 16:
            raise ConfigurationError(
                "the API token is too short to be safe; use at least 16 characters, e.g. "
                "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        if self.max_body_bytes < 1024:
            raise ConfigurationError("max_body_bytes must be at least 1024")
        for root in self.ingest_roots:
            if not root.is_dir():
                raise ConfigurationError(f"allowed ingest folder {root} is not a folder")
