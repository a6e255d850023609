"""Shared pieces of the command line: exit codes, opening the store, the model and the runtime,
and commands that Ctrl-C stops cleanly (following a run is ``kforge.cli._follow``)."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import sys
import weakref
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TextIO, TypeVar

from kforge.errors import ForgeError
from kforge.llm.base import Model
from kforge.runtime.runtime import Runtime
from kforge.store.base import RunLog, RunRecord
from kforge.store.combined import Store

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_LIMIT",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_WAITING",
    "NoDatabaseError",
    "UsageError",
    "add_document_options",
    "add_model_options",
    "check_writable",
    "command_hint",
    "find_run",
    "open_runtime",
    "open_store",
    "read_input_line",
    "resolve_model",
    "run_interruptible",
]

T = TypeVar("T")

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_WAITING = 3
"""The run waits for a person's answer (``kforge runs resume ID --answer ...``)."""
EXIT_LIMIT = 4
"""The run paused at a limit (steps, visits, time, tokens); ``runs resume`` continues it."""
EXIT_INTERRUPTED = 130


class UsageError(ForgeError):
    """A command line that cannot work as typed (exit code 2, like argparse's own errors)."""


def command_hint(args: argparse.Namespace, command: str) -> str:
    """``kforge COMMAND`` as a person can paste it: with ``--db`` when one was given."""
    db = getattr(args, "db", None)
    prefix = f"kforge --db {shlex.quote(str(db))}" if db else "kforge"
    return f"{prefix} {command}"


_WRITABLE_DEVICES = frozenset(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"])


def check_writable(path: Path, *, make_parents: bool = False) -> None:
    """Refuse, before any work, an output file that could not be written."""
    from kforge.errors import ConfigurationError

    if path.is_dir():
        raise ConfigurationError(f"cannot write {path}: it is a folder; give a file name")
    if (path.is_char_device() or path.is_block_device()) and str(path) not in _WRITABLE_DEVICES:
        # /dev/full, a disk, ...: found out only when the finished work is written
        raise ConfigurationError(
            f"cannot write {path}: it is a device, not a file; give a file name (or /dev/stdout)"
        )
    folder = path.parent
    if not make_parents and not folder.is_dir():
        raise ConfigurationError(
            f"cannot write {path}: folder {folder} does not exist; create it or choose another"
        )
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigurationError(f"cannot write {path}: {existing} is not a folder")
    target = path if path.exists() else existing
    if not os.access(target, os.W_OK):
        raise ConfigurationError(f"cannot write {path}: permission denied on {target}")


def find_run(store: RunLog, ref: str) -> RunRecord:
    """The run whose id is ``ref`` or starts with it; an error listing the candidates when the
    prefix fits several."""
    from kforge.errors import RunNotFoundError, ValidationError

    ref = ref.strip()
    try:
        return store.get_run(ref)
    except RunNotFoundError:
        if not ref:
            raise
    ids = store.run_ids_with_prefix(ref, limit=11)
    if not ids:
        raise RunNotFoundError(ref)
    if len(ids) > 1:
        shown = ", ".join(ids[:10]) + (" …" if len(ids) > 10 else "")
        raise ValidationError(
            f"run id prefix '{ref}' fits {'more than 10' if len(ids) > 10 else len(ids)} runs "
            f"({shown}); type more of the id"
        )
    return store.get_run(ids[0])


class NoDatabaseError(ForgeError):
    """A command that only reads was pointed at a SQLite file that does not exist."""


def open_store(args: argparse.Namespace, *, read_only: bool = False) -> Store:
    """The store ``--db`` names: a SQLite file, or a ``postgresql://`` URL. A command that only
    reads (``read_only``) creates no file or folder: a missing SQLite file is a
    NoDatabaseError."""
    from kforge.store.open import open_store as open_named
    from kforge.store.open import store_target
    from kforge.store.postgres import is_postgres_url
    from kforge.store.sqlite import default_db_path

    target = store_target(getattr(args, "db", None))
    if read_only and not is_postgres_url(target):
        path = Path(target) if target is not None else default_db_path()
        if str(path) != ":memory:" and not path.exists():
            raise NoDatabaseError(
                f"no database at {path}: nothing has been recorded there yet; check --db "
                "(or KFORGE_DB)"
            )
    return open_named(target, long_lived=False)  # serve and worker open their own


_OPEN_RUNTIMES: weakref.WeakSet[Runtime] = weakref.WeakSet()
"""Runtimes this command opened: what a Ctrl-C pauses."""


def run_interruptible(main: Coroutine[Any, Any, T], args: argparse.Namespace) -> T:
    """``asyncio.run(main)``, but SIGINT and SIGTERM pause the runs executing here (resumable
    from their last committed step), print how to resume them and exit 130 or 143; a second
    signal exits at once (the runs still resume, from their last committed step)."""
    return asyncio.run(_interruptible(main, args))


async def _interruptible(main: Coroutine[Any, Any, T], args: argparse.Namespace) -> T:
    loop = asyncio.get_running_loop()
    task = loop.create_task(main)
    received: list[int] = []
    paused: list[str] = []

    async def pause() -> None:
        name = signal.Signals(received[0]).name
        for runtime in list(_OPEN_RUNTIMES):
            paused.extend(await runtime.interrupt(f"interrupted by {name}"))
        task.cancel()

    pausing: list[asyncio.Task[None]] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        again = "press Ctrl-C again" if signum == signal.SIGINT else "send the signal again"
        _say(f"\nkforge: pausing the run ({again} to exit at once)")
        pausing.append(loop.create_task(pause()))

    def handler(signum: int, frame: Any) -> None:
        if received:
            _say("\nkforge: exiting now")
            os._exit(128 + signum)
        if _reading_input:  # at a prompt no run executes: stop reading, and the command
            raise KeyboardInterrupt if signum == signal.SIGINT else SystemExit(128 + signum)
        global _signalled
        _signalled = signum  # a prompt reached before the pause runs stops at once
        loop.call_soon_threadsafe(on_signal, signum)

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, handler) for signum in signals}
    try:
        try:
            result = await task
        except asyncio.CancelledError:
            if not received:
                raise
        except BrokenPipeError:
            # the reader went away (`kforge research … | head`): pause, as for Ctrl-C
            for runtime in list(_OPEN_RUNTIMES):
                await runtime.interrupt("its output was closed (broken pipe)")
            raise
        if not received:
            return result
        await pausing[0]
    finally:
        for signum, earlier in previous.items():
            signal.signal(signum, earlier)
    for run_id in paused:
        _say(f"\nrun {run_id} paused; resume with: {command_hint(args, f'runs resume {run_id}')}")
    raise SystemExit(128 + received[0])


def _say(message: str) -> None:
    """A line on stderr that is lost, not raised, when nobody reads stderr any more (Ctrl-C
    with `2>&1 | tail` ends the reader too)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def add_model_options(p: argparse.ArgumentParser, *, model_help: str | None = None) -> None:
    """``--model``, ``--timeout`` and ``--retries``."""
    p.add_argument(
        "--model",
        help=model_help
        or "model as provider:model (default: KFORGE_MODEL, else the config file's model, "
        "else local:smollm2)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="give up on one model call after this long (default: the provider's, 60 s for "
        "remote endpoints; the config file's timeout_s)",
    )
    p.add_argument(
        "--retries",
        type=int,
        metavar="N",
        help="retries of a model call that failed for a passing reason (default 3; the config "
        "file's max_attempts counts the first call too)",
    )


def resolve_model(args: argparse.Namespace, *, instance: bool = False) -> Model | str | None:
    """The model a command runs with, checked before any run exists: its provider is known and
    has its API key. A spec string, or a built model when ``--timeout``/``--retries`` (or
    ``instance``) ask for one."""
    from kforge.errors import ConfigurationError
    from kforge.llm import get_model
    from kforge.llm.config import default_model_spec, load_config, provider_settings, split_spec

    if not hasattr(args, "model"):
        return None
    timeout, retries = getattr(args, "timeout", None), getattr(args, "retries", None)
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds (got {timeout:g})")
    if retries is not None and retries < 0:
        raise UsageError(f"--retries must be 0 or more (got {retries})")
    config = load_config()
    spec = str(args.model or default_model_spec(config))
    provider, _ = split_spec(spec)
    settings = provider_settings(provider, config)
    if settings.kind == "openai" and settings.needs_api_key and not settings.api_key:
        names = " or ".join(("KFORGE_API_KEY", *settings.api_key_env))
        raise ConfigurationError(
            f"no API key for {spec}: set {names} (nothing was started); or choose another "
            "model with --model (kforge models lists them)"
        )
    if timeout is None and retries is None and not instance:
        return spec
    return get_model(spec, timeout_s=timeout, max_attempts=None if retries is None else retries + 1)


def open_runtime(args: argparse.Namespace, *, own_model: bool = False, **kwargs: Any) -> Runtime:
    """The runtime over ``--db`` with the command's model; ``own_model`` makes that model
    override the one a resumed run was started with. The application modules of ``--app`` (or
    ``KFORGE_APP``) give it their tools and agents. A Ctrl-C pauses the runs it executes."""
    if "services" not in kwargs:
        from kforge.cli._app import app_services

        services = app_services(args)
        if services is not None:
            kwargs["services"] = services
    runtime = Runtime(open_store(args), model=resolve_model(args, instance=own_model), **kwargs)
    _OPEN_RUNTIMES.add(runtime)
    return runtime


_reading_input = False
"""True while the command waits for a line at the terminal (a signal then interrupts it)."""


_signalled = 0
"""The signal that arrived while no prompt was waiting (0: none): the next prompt obeys it."""


def read_input_line(stdin: TextIO) -> str:
    """``stdin.readline()`` that Ctrl-C interrupts even while run_interruptible handles it."""
    global _reading_input
    _reading_input = True
    try:
        if _signalled:  # the signal came just before the prompt: read nothing; the pause it
            return ""  # started ends the command with the signal's exit code
        return stdin.readline()
    finally:
        _reading_input = False


def add_document_options(p: argparse.ArgumentParser) -> None:
    """``--docs``, ``--corpus``, ``--model`` and ``--answer``: what an agent reads, which model
    it uses and how it writes its answers."""
    p.add_argument(
        "--docs",
        metavar="DIR",
        help="folder of documents, indexed first as kforge ingest does (Markdown, text, HTML, "
        "PDF, manual pages, GNU Info manuals; see kforge ingest --help)",
    )
    p.add_argument(
        "--corpus",
        help="name of the corpus to index the documents in (default: derived from the folder "
        "name; 'samples' for the shipped documents)",
    )
    add_model_options(p)
    p.add_argument(
        "--answer",
        choices=("extractive", "generative"),
        help="how answers are written: 'extractive' quotes the documents' own sentences, "
        "'generative' lets the model write (every sentence checked against its sources); "
        "default: what the model's provider says (extractive for the bundled small model)",
    )


def add_mcp_extension_option(parser: argparse.ArgumentParser, where: str) -> None:
    parser.add_argument(
        "--mcp-extension",
        action="append",
        default=[],
        metavar="MODULE[:FUNCTION]",
        help=f"add an application's tools, resources and prompts to {where}: FUNCTION (default "
        "register_mcp) of the importable MODULE is called with the server's MCPCatalog; "
        "repeatable",
    )
