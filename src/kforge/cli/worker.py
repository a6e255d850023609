"""``kforge worker``: execute the runs queued on a PostgreSQL database (the dbos executor)."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from typing import Any

from kforge.cli._app import add_app_option, app_services

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "worker",
        help="execute runs queued on a PostgreSQL database, alongside other workers",
        description="Take stretches of runs (a start, or a resume after an answer) from the "
        "DBOS queue in the PostgreSQL database given by --db (or KFORGE_DB) and execute them, "
        "at most --concurrency at once. Run as many workers, on as many machines, as you like; "
        "when one dies, another takes over its runs at their last committed step. Stop with "
        "Ctrl-C or SIGTERM.",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=4,
        metavar="N",
        help="stretches this worker executes at once (default 4)",
    )
    p.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first (one that registers your own agents with "
        "kforge.register_agent); repeatable",
    )
    add_app_option(p)
    p.add_argument(
        "--model",
        help="model for every run this worker executes, as provider:model (default: the model "
        "each run was started with)",
    )
    p.add_argument(
        "--no-recover",
        dest="recover",
        action="store_false",
        help="take over nothing: neither the runs a stopped or killed server left unfinished "
        "(queued on start by default) nor the stretches of workers that died",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kforge.cli._common import UsageError
    from kforge.extras import require_extra
    from kforge.runtime.worker import run_worker
    from kforge.store.open import store_target
    from kforge.store.postgres import is_postgres_url

    require_extra("dbos", "kforge worker")
    url = store_target(getattr(args, "db", None))
    if not is_postgres_url(url):
        raise UsageError(
            "kforge worker needs a PostgreSQL database: pass --db postgresql://USER@HOST:PORT/DB "
            "or set KFORGE_DB to such a URL (scripts/postgres start runs a throwaway one)"
        )
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1 (got {args.concurrency})")
    import kforge.agents  # noqa: F401  (registers the built-in agents)

    for module in args.imports:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UsageError(f"--import {module}: {exc}") from None
    services = app_services(args)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if stop.is_set():
            os._exit(128 + signum)
        print("kforge worker: stopping (again to exit at once)", file=sys.stderr, flush=True)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)

    def ready(owner: str) -> None:
        print(f"kforge worker {owner}: taking up to {args.concurrency} runs at once", flush=True)

    run_worker(
        str(url),
        concurrency=args.concurrency,
        model=args.model,
        stop=stop,
        on_ready=ready,
        recover=args.recover,
        services=services,
    )
    return 0
