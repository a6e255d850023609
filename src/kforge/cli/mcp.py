"""``kforge mcp``: serve kforge's tools over MCP on stdin/stdout."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mcp",
        help="serve kforge tools over MCP (stdio)",
        description="Serve kforge's built-in tools to an MCP client over stdin/stdout.",
    )
    parser.add_argument(
        "--allow-private-network",
        action="store_true",
        help="let fetch_page reach private, loopback and link-local addresses",
    )
    parser.add_argument(
        "--no-python", action="store_true", help="do not offer the sandboxed python tool"
    )
    parser.add_argument(
        "--files-dir",
        type=Path,
        default=None,
        help="folder whose images extract_screenshot_text may read by path",
    )
    parser.add_argument(
        "--search-url", default=None, help="DuckDuckGo-compatible HTML search endpoint"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from kforge.mcp_server import build_mcp_server, serve_stdio
    from kforge.tools.builtin import DUCKDUCKGO_HTML, NetworkPolicy, default_tools

    tools = default_tools(
        network=NetworkPolicy(allow_private=args.allow_private_network),
        search_url=args.search_url or DUCKDUCKGO_HTML,
        files_dir=args.files_dir,
        python=not args.no_python,
    )
    server = build_mcp_server(tools)
    anyio.run(serve_stdio, server)
    return 0
