"""The documentation: the README is a front page of at most 200 lines, every page the MkDocs
site lists exists, every relative link of the README and the pages leads to a file, and the site
builds with ``mkdocs build --strict`` where MkDocs is installed (it is no dependency of kforge)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(page: Path) -> list[str]:
    """The links of ``page`` to files of this repository (no scheme, no bare anchor)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [
        target.split("#")[0]
        for target in LINK.findall(text)
        if "://" not in target and not target.startswith(("#", "mailto:"))
    ]


def test_the_readme_is_a_front_page_of_at_most_two_hundred_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move reference text to docs/"


def test_every_page_of_the_site_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = [next(iter(entry.values())) for entry in config["nav"]]
    assert pages and all((DOCS / page).is_file() for page in pages), pages


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name
)
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    broken = [t for t in relative_links(page) if t and not (page.parent / t).exists()]
    assert broken == [], f"{page.name} links to missing files"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs")
    if mkdocs is None:
        try:
            import mkdocs as _  # noqa: F401
        except ImportError:
            pytest.skip("MkDocs is not installed (pip install mkdocs to build the site)")
        command = [sys.executable, "-m", "mkdocs"]
    else:
        command = [mkdocs]
    done = subprocess.run(
        [*command, "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
