"""``kforge mcp``: serve kforge's tools over MCP on stdin/stdout."""

from __future__ import annotations

import argparse
import sys
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
    parser.add_argument(
        "--agents",
        default="router,research,react",
        help="agents the run_agent tool offers, comma-separated (default: router,research,react;"
        " 'none' to leave the tool out)",
    )
    parser.add_argument(
        "--model", help="model for run_agent (default: KFORGE_MODEL or local:smollm2)"
    )
    parser.add_argument(
        "--docs", metavar="DIR", help="folder of documents to index and search (its own corpus)"
    )
    parser.add_argument(
        "--corpus",
        metavar="NAME",
        help="corpus the agents and search_documents read, as it is (default: the --docs "
        "folder's corpus, else the shipped samples)",
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
    agents = [a.strip() for a in args.agents.split(",") if a.strip() and a.strip() != "none"]
    run_agent = None
    if agents:
        from kforge.cli._common import open_runtime
        from kforge.mcp_server import run_agent_tool
        from kforge.runtime.answers import run_to_answer

        runtime = open_runtime(args)
        unknown = [a for a in agents if a not in runtime.registry]
        if unknown:
            from kforge.errors import ConfigurationError

            raise ConfigurationError(
                f"--agents: unknown {', '.join(unknown)}; known: {', '.join(runtime.registry.names())}"
            )
        from kforge.cli.corpora import choose_corpus

        corpus = choose_corpus(runtime, args, sys.stderr)

        async def runner(agent_type: str, prompt: str) -> str:
            return await run_to_answer(runtime, agent_type, prompt, corpus=corpus)

        run_agent = run_agent_tool(runner, agents)
    server = build_mcp_server(tools, run_agent=run_agent)
    anyio.run(serve_stdio, server)
    return 0
