"""An application module: what a process needs to execute an application's runs (its own tools
and services, its own agents), named on the command line or in ``KFORGE_APP``.

``MODULE[:FUNCTION]``: MODULE is imported (it may register agents with
``kforge.register_agent`` as it loads); FUNCTION (default ``kforge_services``), when the module
has it, is called with no arguments and returns a :class:`kforge.Services` or a list of tools.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kforge.engine.services import Services
from kforge.errors import ConfigurationError
from kforge.tools.base import Tool

__all__ = ["APP_ENV", "DEFAULT_FUNCTION", "app_specs", "load_application"]

APP_ENV = "KFORGE_APP"
"""Application modules, separated by commas, when no ``--app`` is given."""
DEFAULT_FUNCTION = "kforge_services"


def app_specs(given: Sequence[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The application modules named on the command line, else in ``KFORGE_APP``."""
    if given:
        return [s.strip() for s in given if s.strip()]
    text = (os.environ if environ is None else environ).get(APP_ENV, "")
    return [s.strip() for s in text.split(",") if s.strip()]


def load_application(specs: Sequence[str]) -> Services:
    """Import each application module and merge the services they provide (tools by name,
    ``extra`` by key; one name given twice is refused)."""
    tools: dict[str, Tool] = {}
    merged = Services()
    for spec in specs:
        services = _services_of(spec)
        if services is None:
            continue
        for tool in services.tool_list():
            if tool.name in tools:
                raise ConfigurationError(
                    f"application module '{spec}': tool '{tool.name}' is also given by an "
                    "earlier module; rename one of them"
                )
            tools[tool.name] = tool
        fields = {
            name: value
            for name in ("corpora", "memory", "approval", "cache")
            if (value := getattr(services, name)) is not None
        }
        merged = replace(merged, **fields, extra={**merged.extra, **services.extra})
    return replace(merged, tools=tuple(tools.values()))


def _services_of(spec: str) -> Services | None:
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"application module '{spec}': cannot import {module_name} ({exc}); it must be "
            "importable from this process: run from its folder or add that folder to PYTHONPATH"
        ) from exc
    function = getattr(module, attribute or DEFAULT_FUNCTION, None)
    if function is None and not attribute:
        return None  # a module that only registers agents
    if not callable(function):
        raise ConfigurationError(
            f"application module '{spec}': {module_name} has no function "
            f"{attribute or DEFAULT_FUNCTION}() returning kforge.Services or a list of tools"
        )
    value: Any = function()
    if isinstance(value, Services):
        return value
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        items = list(value)
        if all(isinstance(t, Tool) for t in items):
            return Services(tools=items)
    raise ConfigurationError(
        f"application module '{spec}': {module_name}.{attribute or DEFAULT_FUNCTION}() must "
        f"return kforge.Services or a list of tools (got {type(value).__name__})"
    )
