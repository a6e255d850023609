"""benchmarks/docsets.py: which files of an unpacked documentation package make up a doc set."""

from __future__ import annotations

import gzip
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.benchmarks.test_answer_quality import DOC_SETS

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def docsets() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docsets", BENCHMARKS / "docsets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docsets"] = module
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_set_keeps_its_pages_and_leaves_out_indexes_scripts_and_sources(
    docsets: ModuleType, tmp_path: Path
) -> None:
    src = tmp_path / "html"
    for name in (
        "index.html",
        "genindex.html",
        "search.html",
        "patterns/sqlite3.html",
        "_static/doctools.js",
        "_sources/index.rst.txt",
        "searchindex.js",
    ):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(f"<p>{name}</p>")
    (src / "api.md.gz").write_bytes(gzip.compress(b"# api\n"))
    docset = docsets.Docset(
        "t", "t-doc", "html", ("**/*.html", "*.md.gz"), "MIT", skip=("genindex.html", "search.html")
    )
    target = tmp_path / "set"
    docsets.copy_set(docset, src, target)
    assert _files(target) == ["api.md", "index.html", "patterns/sqlite3.html"]
    assert (target / "api.md").read_text() == "# api\n"


def test_every_set_names_a_package_a_folder_and_what_to_keep(docsets: ModuleType) -> None:
    for name, docset in docsets.DOCSETS.items():
        # a `*-doc` package, or one versioned like Debian's postgresql-doc-15
        assert docset.name == name and re.fullmatch(r".+-doc(-[0-9.]+)?", docset.package)
        assert docset.root.startswith("usr/share/doc/") and docset.keep
    assert set(DOC_SETS) <= set(docsets.DOCSETS)  # every question set: its package
    for name in (
        "flask",
        "click",
        "jinja",
        "pytest",
        "scrapy",
        "sphinx",
        "borgbackup",
        "mypy",
        "aiohttp",
        "hypothesis",
        "attrs",
        "requests",
        "werkzeug",
        "cmd2",
        "doit",
        "factoryboy",
    ):
        assert "genindex.html" in docsets.DOCSETS[name].skip
