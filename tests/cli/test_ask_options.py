"""``kforge ask`` refuses what it cannot use before doing any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.cli import main


def test_a_model_that_cannot_be_used_is_named_before_any_document_is_indexed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    missing = tmp_path / "nope.gguf"
    assert (
        main(["--db", str(db), "ask", "What is a checkpoint?", "--model", f"local:{missing}"]) == 1
    )
    err = capsys.readouterr().err
    assert err.startswith(f"kforge: error: local model file {missing} does not exist")
    assert "corpus 'samples'" not in err  # nothing was indexed first


def test_research_o_to_a_device_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/dev/full").is_char_device():
        pytest.skip("this system has no /dev/full")
    db = tmp_path / "k.db"
    code = main(
        ["--db", str(db), "research", "What is a checkpoint?", "--model", "test", "-o", "/dev/full"]
    )
    assert code == 1
    assert capsys.readouterr().err == (
        "kforge: error: cannot write /dev/full: it is a device, not a file; give a file name "
        "(or /dev/stdout)\n"
    )
    assert not db.exists()  # nothing ran
