"""The public surface: ``kforge.__all__`` is sorted, every name imports, and importing the
package stays light."""

from __future__ import annotations

import subprocess
import sys

import kforge


def test_all_is_sorted_and_every_name_imports() -> None:
    assert kforge.__all__ == sorted(kforge.__all__)
    for name in kforge.__all__:
        assert getattr(kforge, name) is not None, name


def test_unknown_attribute_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = kforge.nope  # type: ignore[attr-defined]


def test_import_kforge_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, kforge; from kforge import Runtime, ForgeAgent, tool; "
        "heavy = [m for m in ('openai', 'llama_cpp', 'mcp', 'pydantic', 'httpx', 'jsonschema') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_built_in_agents_are_available_without_importing_them() -> None:
    code = "from kforge.runtime import default_registry; print(','.join(default_registry.names()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert {"research", "react", "router"} <= set(out.stdout.strip().split(","))


def test_the_ask_agent_loads_no_other_provider_test_model_or_agent() -> None:
    """``kforge ask`` runs the router on the local model: it loads neither the OpenAI-compatible
    client, nor the test models, nor the ReAct agent; ``kforge.llm``'s names still resolve."""
    code = (
        "import sys, kforge.llm.types, kforge.agents.router, kforge.cli.ask; "
        "loaded = [m for m in ('kforge.llm.openai.compat', 'kforge.llm.testing.function', "
        "'kforge.llm.testing.scripted', 'kforge.agents.react', 'kforge.agents.loop') "
        "if m in sys.modules]; print(','.join(loaded)); "
        "from kforge.llm import ScriptedModel, get_model; print(ScriptedModel.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["", "ScriptedModel"]
