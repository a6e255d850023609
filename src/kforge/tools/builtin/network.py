"""Outbound HTTP for built-in tools: an SSRF guard and a size- and time-limited fetch."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import httpcore

from kforge.errors import ToolError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BlockedAddressError",
    "FetchedPage",
    "NetworkPolicy",
    "allowed_addresses",
    "check_url",
    "fetch",
    "guarded_client",
    "resolve",
]


class BlockedAddressError(ToolError):
    """The URL points at an address the network policy refuses."""


@dataclass(frozen=True, slots=True)
class NetworkPolicy:
    allow_private: bool = False
    """Allow private, loopback, link-local and other non-public addresses."""
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    """Host names or IP addresses always allowed: a listed name whatever it resolves to, a
    listed address whatever name leads to it."""
    max_bytes: int = 2_000_000
    timeout_s: float = 15.0
    max_redirects: int = 5
    user_agent: str = "kforge/0.1 (+https://github.com/knowledge-forge)"
    permit_hint: str = "NetworkPolicy(allow_private=True) or allowed_hosts"
    """How the person who set this policy lets a blocked address through (the CLI names its
    flag), said in the refusal."""


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
    port = parts.port or (443 if parts.scheme == "https" else 80)
    await allowed_addresses(host, port, policy)


async def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, in the resolver's order (an IP resolves to itself)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ToolError(f"cannot resolve host {host!r}: {exc.strerror}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def allowed_addresses(host: str, port: int, policy: NetworkPolicy) -> list[str] | None:
    """The addresses of ``host`` that may be connected to, or None when the policy allows the
    host by name (``allow_private``, or the name is in ``allowed_hosts``) and any will do.

    Raises ``BlockedAddressError`` if any address is refused: a name that resolves to a
    private address among public ones is not fetched either.
    """
    if policy.allow_private or host in policy.allowed_hosts:
        return None
    addresses = await resolve(host, port)
    for address in addresses:
        if address in policy.allowed_hosts:
            continue
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # no IPv6 zone
        kind = _refusal(ip)
        if kind is not None:
            raise BlockedAddressError(
                f"refusing to fetch from {host}: it resolves to {address}, {kind} address; "
                "private, loopback and link-local addresses are blocked to prevent server-side "
                f"request forgery (to permit it: {policy.permit_hint})"
            )
    return addresses


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Opens connections only to addresses the policy allows, checked as the connection is
    made: the address connected to is the one checked, so a host name whose DNS answer changes
    between the check and the connection (DNS rebinding) cannot reach a private address. TLS
    still verifies the certificate against the host name."""

    def __init__(self, policy: NetworkPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await allowed_addresses(host, port, self._policy)
        failure: Exception | None = None
        for address in addresses or [host]:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # try the next address, as a resolver-order client would
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddressError("fetching through a unix socket is not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _environment_proxies() -> bool:
    return any(os.environ.get(name) for name in _PROXY_VARIABLES)


_PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def guarded_client(policy: NetworkPolicy) -> httpx.AsyncClient:
    """An HTTP client whose every connection goes through the policy's address check.

    With a proxy configured in the environment the proxy resolves names, so pinning is not
    possible; the client then uses the proxy and each URL is still checked before it is
    requested (``check_url``).
    """
    import httpx

    if _environment_proxies():
        return httpx.AsyncClient(timeout=policy.timeout_s)
    transport = httpx.AsyncHTTPTransport()
    # httpx takes no network backend of its own; its transport is a thin wrapper around an
    # httpcore pool, which does.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        network_backend=_PinnedBackend(policy),
    )
    return httpx.AsyncClient(timeout=policy.timeout_s, transport=transport, trust_env=False)


async def fetch(
    url: str, policy: NetworkPolicy, *, client: httpx.AsyncClient | None = None
) -> FetchedPage:
    """GET ``url`` following redirects (each hop checked), keeping at most ``max_bytes``."""
    import httpx

    own = client is None
    http = client or guarded_client(policy)
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
