from __future__ import annotations

import json
from pathlib import Path

import pytest

from kforge.cli import main
from kforge.rag.corpus import Corpus
from kforge.store.sqlite import SQLiteStore


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nCheckpoints make runs durable.\n")
    (docs / "b.bin.pdf").write_bytes(b"not a pdf")
    return docs


def test_ingest_prints_a_summary_and_persists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, db = _docs(tmp_path), tmp_path / "k.db"
    assert main(["--db", str(db), "ingest", str(docs), "--corpus", "notes"]) == 0
    out = capsys.readouterr()
    assert "corpus 'notes'" in out.out and "1 added" in out.out and "1 skipped" in out.out
    assert "b.bin.pdf" in out.out and "broken PDF" in out.out
    assert "ingest: 2/2 files" in out.err
    store = SQLiteStore(db)
    try:
        assert Corpus.open(store, "notes").search("durable")[0].chunk.file == "a.md"
    finally:
        store.close()
    assert main(["--db", str(db), "ingest", str(docs), "--corpus", "notes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["unchanged"] == ["a.md"] and report["added"] == []


def test_missing_folder_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "k.db"), "ingest", str(tmp_path / "nope")]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_bad_chunk_size_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["--db", str(tmp_path / "k.db"), "ingest", str(_docs(tmp_path)), "--max-chars", "5"]
    )
    assert code == 2 and "at least 100" in capsys.readouterr().err


def test_ingest_names_the_page_it_did_not_index_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures = Path(__file__).parent / "data" / "docs"
    docs = tmp_path / "manual"
    docs.mkdir()
    for name in ("git-init.txt", "git-init.html"):
        (docs / name).write_bytes((fixtures / name).read_bytes())
    assert main(["--db", str(tmp_path / "k.db"), "ingest", str(docs)]) == 0
    out = capsys.readouterr().out
    assert "1 added" in out and "1 duplicates" in out
    assert "not indexed twice: git-init.html" in out
    assert main(["--db", str(tmp_path / "k.db"), "ingest", str(docs), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["duplicates"] == [
        {"path": "git-init.html", "reason": "the same document as git-init.txt"}
    ]


def test_corpora_show_says_when_documents_need_extracting_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import kforge.rag.records as records_module

    docs, db = _docs(tmp_path), str(tmp_path / "k.db")
    monkeypatch.setattr(records_module, "EXTRACTION_VERSION", "extract-v0")
    assert main(["--db", db, "ingest", str(docs), "--corpus", "notes"]) == 0
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["--db", db, "corpora", "show", "notes"]) == 0
    shown = capsys.readouterr().out
    assert "older version of kforge" in shown
    assert f"kforge ingest {docs.resolve()} --corpus notes" in shown
    assert main(["--db", db, "ingest", str(docs), "--corpus", "notes"]) == 0
    assert "1 updated" in capsys.readouterr().out
    assert main(["--db", db, "corpora", "show", "notes"]) == 0
    assert "older version" not in capsys.readouterr().out
