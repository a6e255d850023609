"""``kforge mcp``: serve kforge's tools over MCP on stdin/stdout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kforge.cli._common import add_mcp_extension_option, add_model_options

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mcp",
        help="serve kforge tools over MCP (stdio)",
        description="Serve kforge's built-in tools to an MCP client over stdin/stdout: web "
        "fetch and search, explain_text_with_context and summarize_page (with the configured "
        "model), OCR, a sandboxed python, search_documents over a corpus, and run_agent / "
        "answer_run for kforge's agents.",
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
    add_model_options(
        parser,
        model_help="model for run_agent and the tools that need one (default: KFORGE_MODEL, "
        "else the config file's model, else local:smollm2)",
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
    parser.add_argument(
        "--yes",
        action="store_true",
        help="approve agents' checkpoints without asking (default: run_agent returns each "
        "checkpoint to the client as a question, answered with the answer_run tool)",
    )
    add_mcp_extension_option(parser, "the server")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from kforge.cli._common import command_hint, find_run, open_runtime
    from kforge.cli.corpora import choose_corpus
    from kforge.errors import ConfigurationError
    from kforge.mcp.catalog import catalog_from_extensions
    from kforge.mcp.server import answer_run_tool, build_mcp_server, run_agent_tool, serve_stdio
    from kforge.rag.tool import retrieve_chunks_tool
    from kforge.runtime.answers import answer_and_continue, run_to_answer
    from kforge.tools.builtin import DUCKDUCKGO_HTML, NetworkPolicy, default_tools

    catalog = catalog_from_extensions(args.mcp_extension)
    runtime = open_runtime(args, own_model=True)
    model = runtime.model_for(runtime._model_spec())
    agents = [a.strip() for a in args.agents.split(",") if a.strip() and a.strip() != "none"]
    unknown = [a for a in agents if a not in runtime.registry]
    if unknown:
        raise ConfigurationError(
            f"--agents: unknown {', '.join(unknown)}; known: {', '.join(runtime.registry.names())}"
        )
    corpus = choose_corpus(runtime, args, sys.stderr)
    tools = default_tools(
        model=model,
        network=NetworkPolicy(
            allow_private=args.allow_private_network,
            permit_hint="restart kforge mcp with --allow-private-network",
        ),
        search_url=args.search_url or DUCKDUCKGO_HTML,
        files_dir=args.files_dir,
        python=not args.no_python,
    )
    tools.append(retrieve_chunks_tool(runtime.services.corpus(corpus), name="search_documents"))
    run_agent = None
    if agents:

        def hint(command: str) -> str:
            return command_hint(args, command)

        async def runner(agent_type: str, prompt: str) -> str:
            return await run_to_answer(
                runtime,
                agent_type,
                prompt,
                corpus=corpus,
                approve_checkpoints=args.yes,
                hint=hint,
            )

        async def answerer(run_ref: str, answer: Any) -> str:
            run_id = find_run(runtime.store, run_ref).id
            return await answer_and_continue(
                runtime, run_id, answer, approve_checkpoints=args.yes, hint=hint
            )

        run_agent = run_agent_tool(runner, agents)
        tools.append(answer_run_tool(answerer))
    print(f"kforge mcp: serving over stdio; documents from corpus '{corpus}'", file=sys.stderr)
    server = build_mcp_server(tools, run_agent=run_agent, catalog=catalog)
    anyio.run(serve_stdio, server)
    return 0
