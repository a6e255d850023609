"""The ``kforge`` command line.

Each module in this package that defines ``register(subparsers)`` adds one top-level command;
handlers are set with ``parser.set_defaults(func=...)`` and return an exit code.

Conventions (as git, docker and gh do it): global options such as ``--db`` go before or after
the command; results go to stdout and progress, prompts and errors to stderr; every error is one
``kforge: error: ...`` line; the exit codes are listed in ``EXIT_CODES``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sqlite3
import sys
from collections.abc import Sequence
from typing import Any

from kforge.errors import ForgeError, RunNotFoundError

__all__ = ["EXIT_CODES", "build_parser", "main"]

EXIT_CODES = """\
exit codes:
  0    done
  1    error (the message says what to do)
  2    usage: the command line is wrong, or no command was given
  3    the run is waiting for a person (answer with: kforge runs resume RUN --answer ...)
  4    the run paused at a limit (continue with: kforge runs resume RUN)
  130  interrupted (Ctrl-C)
  141  the output pipe was closed early (e.g. | head), as git does"""

_DB_HELP = (
    "SQLite database file, or a PostgreSQL URL (postgresql://user@host:port/db) (default: "
    "KFORGE_DB, else kforge.db in the user data directory)"
)


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("knowledge-forge")
    except metadata.PackageNotFoundError:
        from kforge import __version__

        return __version__


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    """``--db`` on every subcommand too, so it may follow the command (``kforge ask --db x q``);
    SUPPRESS keeps a subcommand from overwriting a value given before it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.add_argument(
                    "--db", metavar="PATH|URL", default=argparse.SUPPRESS, help=_DB_HELP
                )
                _add_global_options(sub)


_GLOBAL_VALUES = frozenset({"--db", "--model"})
"""Global options that take a value (the token after them is not a command)."""


def _command_in(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is neither an option nor a global
    option's value), or None (also for ``kforge --help ...``, which lists every command)."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in _GLOBAL_VALUES:
            skip = True
        elif token in ("--", "-h", "--help"):
            return None
        elif not token.startswith("-"):
            return token
    return None


def _register(subparsers: Any, modules: Sequence[str]) -> None:
    for name in modules:
        module = importlib.import_module(f"{__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (the package metadata
    reader costs a command that does not print it)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"kforge {_version()}", flush=True)
        parser.exit()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; given the command line ``argv``, only the module of the
    command it names is imported when that module registers it (a command starts faster)."""
    parser = argparse.ArgumentParser(
        prog="kforge",
        description="Knowledge Forge: durable, explainable, human-steerable agents.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--db", metavar="PATH|URL", help=_DB_HELP)
    parser.add_argument(
        "--model",
        dest="global_model",
        metavar="PROVIDER:MODEL",
        help="model for a command that runs one (the same as the command's own --model)",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", help="what to do (kforge COMMAND --help for more)"
    )
    modules = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    command = _command_in(argv) if argv is not None else None
    if command in modules:
        _register(subparsers, [command])
    if command not in subparsers.choices:  # help, a mistake, or a command of another module
        _register(subparsers, [m for m in modules if m != command])
    _add_global_options(parser)
    return parser


def _error(message: str) -> None:
    print(f"kforge: error: {message}", file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null so the exit flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _apply_global_model(args: argparse.Namespace) -> None:
    """``kforge --model X COMMAND``: the command's own ``--model``, when it has one."""
    from kforge.cli._common import UsageError

    spec = getattr(args, "global_model", None)
    if spec is None:
        return
    if not hasattr(args, "model"):
        raise UsageError(f"--model does not apply to 'kforge {args.command}': it runs no model")
    if args.model is None:
        args.model = spec


def _chosen_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the (sub)command the command line chose, e.g. ``kforge runs list``'s."""
    while True:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, actions[0].dest, None) if actions else None
        if not actions or name not in actions[0].choices:
            return parser
        parser = actions[0].choices[name]


_DAMAGED = re.compile(
    r"malformed|not a database|disk image|corrupt|could not decode", re.IGNORECASE
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (else the process's own arguments); returns the exit code."""
    return _main(sys.argv[1:] if argv is None else list(argv))


def _main(argv: list[str]) -> int:
    from kforge.cli._common import (
        EXIT_ERROR,
        EXIT_INTERRUPTED,
        EXIT_USAGE,
        UsageError,
        command_hint,
    )

    parser = build_parser(argv)
    args, extras = parser.parse_known_args(argv)
    if extras:  # named by the command they were given to, with that command's usage
        _chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
    func = getattr(args, "func", None)
    if func is None:
        # A usage mistake, as for git; the help goes to stderr so stdout stays for results.
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        _apply_global_model(args)
        code = func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except RunNotFoundError as exc:
        _error(f"no run with id '{exc.run_id}'; list runs with: {command_hint(args, 'runs list')}")
        return EXIT_ERROR
    except ForgeError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("kforge: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except sqlite3.Error as exc:
        from kforge.store.sqlite import damage_text

        db = getattr(args, "db", None) or "kforge.db"
        if _DAMAGED.search(str(exc)):  # a damaged file read past the store's own checks
            _error(
                f"database {db} is damaged ({damage_text(exc)}); copy out what is readable "
                f"with the sqlite3 tool (`sqlite3 {db} .recover > recovered.sql`), then "
                "restore a backup"
            )
        else:
            _error(f"database {db}: {damage_text(exc)}")
        return EXIT_ERROR
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        _error(f"cannot use{where}: {exc.strerror or exc}")
        return EXIT_ERROR
    return int(code or 0)
