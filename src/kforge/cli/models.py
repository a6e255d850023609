"""``kforge models``: list the configured models and check that each one answers."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from kforge import jsoncodec

__all__ = ["ModelStatus", "check_model", "register", "run"]

_PROBE = "Reply with the single word OK."


@dataclass(frozen=True, slots=True)
class ModelStatus:
    model: str
    provider: str
    endpoint: str
    default: bool
    status: str
    """``ok``, ``not checked``, or what went wrong: ``auth error``, ``unknown model``,
    ``unreachable``, ``bad response``, ``misconfigured``, ``error``."""
    detail: str = ""
    seconds: float | None = None


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "models",
        help="list configured models and check that each answers",
        description=(
            "List the default model (KFORGE_MODEL or the config file), the config file's models "
            "and the bundled local model, and send each a tiny request to check that it answers."
        ),
    )
    parser.add_argument(
        "specs", nargs="*", metavar="MODEL", help="provider:model names to check instead"
    )
    parser.add_argument("--no-check", action="store_true", help="only list, do not call the models")
    parser.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="per model (default 60)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def _endpoint(spec: str) -> tuple[str, str]:
    from kforge.errors import ForgeError
    from kforge.llm.config import provider_settings, split_spec

    try:
        provider, model_id = split_spec(spec)
        settings = provider_settings(provider)
    except ForgeError as exc:
        return spec.partition(":")[0], f"({exc})"
    if settings.kind == "local":
        if model_id == "smollm2":
            from kforge.llm.local.runtime import bundled_model_path

            try:
                return provider, f"bundled {bundled_model_path().name}"
            except ForgeError as exc:
                return provider, f"({exc})"
        return provider, model_id
    if settings.kind == "test":
        return provider, "in-process fake"
    return provider, settings.base_url or "(no base URL)"


def _classify(exc: Exception) -> str:
    from kforge.errors import (
        ConfigurationError,
        ModelAuthError,
        ModelNotFoundError,
        ModelResponseError,
        ModelUnavailableError,
    )

    for kind, label in (
        (ModelAuthError, "auth error"),
        (ModelNotFoundError, "unknown model"),
        (ModelUnavailableError, "unreachable"),
        (ModelResponseError, "bad response"),
        (ConfigurationError, "misconfigured"),
    ):
        if isinstance(exc, kind):
            return label
    return "error"


async def check_model(spec: str, *, timeout: float, default: bool = False) -> ModelStatus:
    """Send ``spec`` one tiny request and say how it went."""
    from kforge.errors import ForgeError
    from kforge.llm import get_model
    from kforge.llm.retry import RetryPolicy
    from kforge.llm.types import Message, ModelSettings

    provider, endpoint = _endpoint(spec)
    started = time.perf_counter()
    try:
        model = get_model(spec, retry=RetryPolicy(max_attempts=1))
        response = await asyncio.wait_for(
            model.complete(
                [Message.user(_PROBE)],
                ModelSettings(max_tokens=8, temperature=0, timeout_s=timeout),
            ),
            timeout,
        )
    except TimeoutError:
        return ModelStatus(
            spec, provider, endpoint, default, "unreachable", f"no answer within {timeout:g} s"
        )
    except ForgeError as exc:
        return ModelStatus(spec, provider, endpoint, default, _classify(exc), str(exc))
    elapsed = time.perf_counter() - started
    reply = " ".join(response.text.split())
    # a reply that ignores the one-word probe (small models chat: "I'm sorry for your loss")
    # is not quoted: it would read as the model's verdict on something
    if re.fullmatch(r"\W*ok\W*", reply, re.IGNORECASE):
        detail = f"replied {reply[:40]!r}"
    else:
        tokens = response.usage.output_tokens
        detail = f"answered ({tokens} tokens; it does not follow one-word instructions)"
    return ModelStatus(spec, provider, endpoint, default, "ok", detail, round(elapsed, 2))


def _render(rows: list[ModelStatus]) -> str:
    header = ("", "MODEL", "PROVIDER", "ENDPOINT", "STATUS")
    table = [header] + [
        (
            "*" if r.default else "",
            r.model,
            r.provider,
            r.endpoint,
            r.status
            + (f" · {r.seconds:.2f} s" if r.seconds is not None else "")
            + (f" · {r.detail}" if r.detail else ""),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(widths[i]) if i < 4 else cell for i, cell in enumerate(row))
        for row in table
    ]
    if any(r.default for r in rows):
        lines.append(
            "* default model (KFORGE_MODEL, else the config file's model, else local:smollm2)"
        )
    return "\n".join(line.rstrip() for line in lines)


def run(args: argparse.Namespace) -> int:
    from kforge.llm.config import configured_model_specs, default_model_spec, load_config

    config = load_config()
    default = default_model_spec(config)
    specs = list(args.specs) or configured_model_specs(config)
    if args.no_check:
        rows = [ModelStatus(s, *_endpoint(s), s == default, "not checked") for s in specs]
    else:
        rows = [
            asyncio.run(check_model(s, timeout=args.timeout, default=s == default)) for s in specs
        ]
    if args.json:
        print(jsoncodec.dumps([asdict(r) for r in rows], indent=True))
    else:
        print(_render(rows))
    failed = [r for r in rows if r.status not in ("ok", "not checked")]
    if failed:
        print(
            f"kforge: error: {len(failed)} of {len(rows)} models did not answer (see the table)",
            file=sys.stderr,
        )
        return 1
    return 0
