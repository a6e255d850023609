"""``kforge serve``: the HTTP API, live run streams and the web UI."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from kforge.cli._app import add_app_option, app_services
from kforge.cli._common import add_mcp_extension_option

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the HTTP API (runs, live SSE streams, answers) and the web UI",
        description="Serve the HTTP API and the web UI. It listens on 127.0.0.1 unless told "
        "otherwise; any other address needs --token, and then every request must send "
        "'Authorization: Bearer TOKEN'. OpenAPI at /openapi.json, the UI at /ui/.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument(
        "--token",
        default=os.environ.get("KFORGE_TOKEN") or None,
        help="API token every request must carry (default: KFORGE_TOKEN); required off loopback",
    )
    p.add_argument(
        "--model", help="model for new runs as provider:model (default: KFORGE_MODEL or local)"
    )
    p.add_argument(
        "--allow-ingest",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder clients may ask to ingest (with its subfolders); repeatable",
    )
    p.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call the API, e.g. https://app.example; repeatable",
    )
    p.add_argument(
        "--max-body",
        type=int,
        default=1_000_000,
        metavar="BYTES",
        help="largest request body accepted (default 1000000)",
    )
    p.add_argument(
        "--executor",
        choices=["local", "dbos"],
        default=os.environ.get("KFORGE_EXECUTOR") or "local",
        help="where runs execute: in this server (local, the default), or queued for `kforge "
        "worker` processes (dbos; needs --db postgresql://...) (default: KFORGE_EXECUTOR)",
    )
    p.add_argument(
        "--no-recover",
        dest="recover",
        action="store_false",
        help="do not resume, on start, the runs a stopped or killed process left unfinished "
        "(by default those whose lease expired, or whose process on this host is gone, continue)",
    )
    add_app_option(p)
    add_mcp_extension_option(p, "/mcp")
    p.add_argument("--no-samples", action="store_true", help="do not index the sample documents")
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="how much the HTTP server logs on stderr (default: info)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kforge.extras import require_extra

    require_extra("server", "kforge serve")
    from kforge.server import ServerSettings, serve
    from kforge.server.run import bind

    settings = ServerSettings(
        host=args.host,
        port=args.port,
        token=args.token,
        cors_origins=tuple(args.cors_origin),
        max_body_bytes=args.max_body,
        ingest_roots=tuple(Path(d) for d in args.allow_ingest),
        recover=args.recover,
    )
    settings.check()
    catalog = None
    if args.mcp_extension:
        from kforge.mcp.catalog import catalog_from_extensions

        catalog = catalog_from_extensions(args.mcp_extension)
    services = app_services(args)  # a module that cannot be loaded is refused before binding
    sock = bind(settings)  # a port in use is refused before anything is announced
    if not args.no_samples:
        _index_samples(args)
    where = f"http://{args.host}:{args.port}"
    print(f"kforge serving on {where}  (UI {where}/ui/, API {where}/openapi.json)", flush=True)
    serve(
        settings,
        sock=sock,
        db=args.db,
        model=args.model,
        log_level=args.log_level,
        executor=args.executor,
        mcp_catalog=catalog,
        services=services,
    )
    return 0


def _index_samples(args: argparse.Namespace) -> None:
    """The shipped sample documents as corpus 'samples', so the UI has something to search."""
    from kforge.rag.corpus import Corpus
    from kforge.rag.ingest import ingest_folder
    from kforge.rag.samples import SAMPLE_CORPUS, sample_corpus_path
    from kforge.store.open import open_store

    store = open_store(args.db)
    try:
        ingest_folder(Corpus.open(store, SAMPLE_CORPUS), sample_corpus_path())
    finally:
        store.close()
