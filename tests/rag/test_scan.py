from __future__ import annotations

import os
from pathlib import Path

import pytest

from kforge.errors import ConfigurationError
from kforge.rag.scan import scan_folder


def _tree(root: Path) -> None:
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# A\n\ntext")
    (root / "docs" / "deep" / "b.html").write_text("<p>b</p>")
    (root / "docs" / "c.png").write_bytes(b"\x89PNG")
    (root / "docs" / ".hidden.md").write_text("secret")
    (root / "docs" / ".git").mkdir()
    (root / "docs" / ".git" / "x.md").write_text("git internals")
    (root / "outside.md").write_text("outside the folder")


def test_finds_supported_files_and_reports_others(tmp_path: Path) -> None:
    _tree(tmp_path)
    scan = scan_folder(tmp_path / "docs")
    assert [f.relative for f in scan.files] == ["a.md", "deep/b.html"]
    assert [(s.path, s.reason.split(" (")[0]) for s in scan.skipped] == [
        ("c.png", "unsupported format '.png'")
    ]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlinks_cannot_escape_the_folder(tmp_path: Path) -> None:
    _tree(tmp_path)
    docs = tmp_path / "docs"
    (docs / "escape.md").symlink_to(tmp_path / "outside.md")
    (docs / "inside.md").symlink_to(docs / "a.md")
    (docs / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    (docs / "dangling.md").symlink_to(tmp_path / "missing.md")
    scan = scan_folder(docs)
    assert "escape.md" not in [f.relative for f in scan.files]
    assert "inside.md" in [f.relative for f in scan.files]
    reasons = {s.path: s.reason for s in scan.skipped}
    assert "outside the folder" in reasons["escape.md"]
    assert "not followed" in reasons["dirlink"]
    assert "broken symbolic link" in reasons["dangling.md"]
    assert all(f.path.is_relative_to(docs.resolve()) for f in scan.files)


def test_missing_folder_and_file_are_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such folder"):
        scan_folder(tmp_path / "nope")
    (tmp_path / "f.md").write_text("x")
    with pytest.raises(ConfigurationError, match="not a folder"):
        scan_folder(tmp_path / "f.md")
