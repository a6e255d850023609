"""Outbound HTTP for built-in tools: an SSRF guard and a size- and time-limited fetch."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from kforge.errors import ToolError

if TYPE_CHECKING:
    import httpx

__all__ = ["BlockedAddressError", "FetchedPage", "NetworkPolicy", "check_url", "fetch"]


class BlockedAddressError(ToolError):
    """The URL points at an address the network policy refuses."""


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    allow_private: bool = False
    """Allow private, loopback, link-local and other non-public addresses."""
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    """Host names or IP addresses always allowed, whatever they resolve to."""
    max_bytes: int = 2_000_000
    timeout_s: float = 15.0
    max_redirects: int = 5
    user_agent: str = "kforge/0.1 (+https://github.com/knowledge-forge)"


@dataclass(frozen=True, slots=True)
class FetchedPage:
    url: str
    """The final URL, after redirects."""
    status: int
    content_type: str
    text: str
    truncated: bool


def _refusal(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return _refusal(ip.ipv4_mapped)
    for label, flag in (
        ("a loopback", ip.is_loopback),
        ("a link-local", ip.is_link_local),
        ("a private", ip.is_private),
        ("a multicast", ip.is_multicast),
        ("a reserved", ip.is_reserved),
        ("an unspecified", ip.is_unspecified),
    ):
        if flag:
            return label
    return None


async def check_url(url: str, policy: NetworkPolicy) -> None:
    """Raise ``BlockedAddressError`` unless ``url`` is http(s) to an allowed public address."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise BlockedAddressError(f"only http and https URLs can be fetched (got {url!r})")
    host = parts.hostname
    if not host:
        raise BlockedAddressError(f"URL {url!r} has no host")
    if policy.allow_private or host in policy.allowed_hosts:
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ToolError(f"cannot resolve host {host!r}: {exc.strerror}") from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        kind = _refusal(address)
        if kind is not None:
            raise BlockedAddressError(
                f"refusing to fetch {url}: {host} resolves to {address}, {kind} address; "
                "private, loopback and link-local addresses are blocked to prevent server-side "
                "request forgery (configure allow_private or allowed_hosts to permit it)"
            )


async def fetch(
    url: str, policy: NetworkPolicy, *, client: httpx.AsyncClient | None = None
) -> FetchedPage:
    """GET ``url`` following redirects (each hop checked), keeping at most ``max_bytes``."""
    import httpx

    own = client is None
    http = client or httpx.AsyncClient(timeout=policy.timeout_s)
    try:
        for _ in range(policy.max_redirects + 1):
            await check_url(url, policy)
            request = http.build_request("GET", url, headers={"User-Agent": policy.user_agent})
            response = await http.send(request, stream=True)
            try:
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                body, truncated = await _read_limited(response, policy.max_bytes)
                charset = response.charset_encoding or "utf-8"
                return FetchedPage(
                    url=url,
                    status=response.status_code,
                    content_type=response.headers.get("content-type", "").split(";")[0].strip(),
                    text=body.decode(charset, errors="replace"),
                    truncated=truncated,
                )
            finally:
                await response.aclose()
        raise ToolError(f"too many redirects (more than {policy.max_redirects}) from {url}")
    except httpx.TimeoutException as exc:
        raise ToolError(f"fetching {url} timed out after {policy.timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise ToolError(f"could not fetch {url}: {type(exc).__name__}: {exc}") from exc
    finally:
        if own:
            await http.aclose()


async def _read_limited(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > limit:
            return bytes(data[:limit]), True
    return bytes(data), False
