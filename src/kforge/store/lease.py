"""One live writer per run: the lease a stretch holds while it executes, and how to tell a live
holder from one that is gone (expired, or a process of this host that no longer exists)."""

from __future__ import annotations

import os
import secrets
import socket
import time
from dataclasses import dataclass

__all__ = ["DEFAULT_LEASE_TTL_S", "Lease", "lease_is_live", "new_owner", "owner_alive"]

DEFAULT_LEASE_TTL_S = 30.0
"""How long a lease lasts without a commit or heartbeat; a crashed owner's lease lapses then."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Lease:
    """What a commit claims (or keeps, or gives up) along with its writes."""

    owner: str
    """Who writes: ``host:pid:token``, one per runtime."""
    ttl_s: float = DEFAULT_LEASE_TTL_S
    takeover: str | None = None
    """An owner known to be gone whose lease may be replaced before it expires."""
    release: bool = False
    """Give the lease up with this commit (the stretch ends)."""


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def owner_alive(owner: str) -> bool:
    """False only when ``owner`` is a process of this host that no longer exists."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lease_is_live(owner: str | None, expires_at: float | None, now: float | None = None) -> bool:
    """Whether a run's lease still belongs to a writer that may commit."""
    if owner is None or expires_at is None:
        return False
    if expires_at < (time.time() if now is None else now):
        return False
    return owner_alive(owner)
