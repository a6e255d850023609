"""``kforge.mcp_catalog``, the catalog's former home: still importable for one release, with a
warning naming ``kforge.mcp.catalog``; the catalog itself imports with no warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip


def test_the_former_module_warns_and_names_the_new_one() -> None:
    result = python("import kforge.mcp_catalog")
    assert result.returncode != 0
    assert (
        "DeprecationWarning: kforge.mcp_catalog is deprecated; import the same names from "
        "kforge.mcp.catalog" in result.stderr
    )
    still = subprocess.run(
        [sys.executable, "-c", "from kforge.mcp_catalog import MCPCatalog; print(MCPCatalog())"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert still.returncode == 0 and "MCPCatalog" in still.stdout


def test_the_catalog_imports_from_its_package_without_a_warning() -> None:
    result = python("from kforge.mcp.catalog import MCPCatalog, MCPResource")
    assert result.returncode == 0, result.stderr
