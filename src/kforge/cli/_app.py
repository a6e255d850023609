"""``--app MODULE[:FUNCTION]``: the application module a command loads to execute an
application's runs (its tools, its agents), and the check that a run to continue finds here
everything it was started with."""

from __future__ import annotations

import argparse
from typing import Any

from kforge.engine.services import Services
from kforge.errors import ConfigurationError
from kforge.runtime.application import APP_ENV, DEFAULT_FUNCTION, app_specs, load_application
from kforge.store.base import TERMINAL_STATUSES, RunRecord

__all__ = [
    "APP_HINT",
    "add_app_option",
    "app_services",
    "check_run_needs",
    "check_tools",
    "missing_tools",
    "tool_names",
]

APP_HINT = f"pass --app MODULE (the application module that provides it) or set {APP_ENV}"


def add_app_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--app",
        action="append",
        default=[],
        metavar="MODULE[:FUNCTION]",
        help="the application module whose tools and agents the runs use: MODULE is imported "
        f"(registering its agents) and FUNCTION (default {DEFAULT_FUNCTION}) returns "
        f"kforge.Services or a list of tools; repeatable (default: {APP_ENV}, separated by "
        "commas)",
    )


def app_services(args: argparse.Namespace) -> Services | None:
    """The services of the application modules the command was given (None: none given)."""
    specs = app_specs(getattr(args, "app", None) or [])
    if not specs:
        return None
    import kforge.agents  # noqa: F401  (the built-in agents first: a module may add to them)

    return load_application(specs)


def missing_tools(runtime: Any, names: list[str]) -> list[str]:
    """Those of ``names`` that are neither the runtime's tools nor built-in ones."""
    from kforge.agents.react import builtin_tools

    known = {t.name for t in runtime.services.tool_list()}
    if any(n not in known for n in names):
        known |= {t.name for t in builtin_tools()}
    return [n for n in names if n not in known]


def check_tools(runtime: Any, names: list[str], which: str, *, refused: str = "started") -> None:
    """Refuse tools this process was not given, before anything runs (``refused``: what was
    not done)."""
    missing = missing_tools(runtime, names)
    if missing:
        listed = ", ".join(f"'{n}'" for n in missing)
        what = "tool" if len(missing) == 1 else "tools"
        raise ConfigurationError(
            f"{which} uses {what} {listed}, which this process was not given; {APP_HINT}; "
            f"nothing was {refused}"
        )


def check_run_needs(runtime: Any, run: RunRecord) -> None:
    """Refuse, before anything is resumed, a run (or an unfinished run below it) whose agent
    type or tools this process does not have: continuing it would fail it for good."""
    from kforge.runtime.interventions import descendants

    if run.status in TERMINAL_STATUSES:
        return  # nothing to continue: the resume says so
    below = descendants(runtime.store, run.id)
    for each in [run, *(r for r in below if r.status not in TERMINAL_STATUSES)]:
        which = f"run {each.id} ({each.agent_type} agent)"
        if each.agent_type not in runtime.registry:
            raise ConfigurationError(
                f"{which}: agent type '{each.agent_type}' is not registered in this process; "
                f"{APP_HINT}; nothing was resumed"
            )
        names = tool_names((each.input.get("args") or {}).get("tools"))
        check_tools(runtime, names, which, refused="resumed")


def tool_names(value: Any) -> list[str]:
    """The tool names of an agent's ``tools`` argument (a list, or names separated by commas)."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str) and v]
    return []
