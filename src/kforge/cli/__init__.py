"""The ``kforge`` command line.

Each module in this package that defines ``register(subparsers)`` adds one top-level command;
handlers are set with ``parser.set_defaults(func=...)`` and return an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sqlite3
import sys
from collections.abc import Sequence

from kforge.errors import ForgeError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kforge",
        description="Knowledge Forge: durable, explainable, human-steerable agents.",
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="SQLite database file (default: KFORGE_DB or kforge.db in the user data directory)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        code = func(args)
    except ForgeError as exc:
        print(f"kforge: error: {exc}", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as exc:  # a damaged file read past the store's own checks
        print(
            f"kforge: error: the database is damaged ({exc}); copy out what is readable with "
            "`sqlite3 DB .recover > recovered.sql`, then restore a backup",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print("kforge: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)
