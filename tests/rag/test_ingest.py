from __future__ import annotations

import os
from pathlib import Path

import pytest

from kforge.rag.corpus import Corpus
from kforge.rag.ingest import IngestProgress
from kforge.store.memory import MemoryStore
from kforge.store.sqlite import SQLiteStore
from tests.rag.helpers import make_pdf

GUIDE = "# Agents\n\nAn agent plans and acts.\n\n## Memory\n\nEpisodic memory keeps reflections.\n"


def _folder(root: Path) -> Path:
    docs = root / "docs"
    (docs / "web").mkdir(parents=True)
    (docs / "guide.md").write_text(GUIDE)
    (docs / "notes.txt").write_text("Checkpoints make long runs durable.\n")
    (docs / "web" / "page.html").write_text(
        "<html><head><title>Oversight</title></head><body><h1>Approval</h1>"
        "<p>A person approves destructive tools.</p></body></html>"
    )
    (docs / "paper.pdf").write_bytes(
        make_pdf([["Retrieval augmented generation."], ["Grading filters passages."]])
    )
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (docs / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    return docs


def test_every_format_is_ingested_and_broken_files_are_reported(tmp_path: Path) -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    events: list[IngestProgress] = []
    report = corpus.ingest(_folder(tmp_path), progress=events.append)
    assert sorted(report.added) == [
        "guide.md",
        "latin1.md",
        "notes.txt",
        "paper.pdf",
        "web/page.html",
    ]
    skipped = {s.path: s.reason for s in report.skipped}
    assert "broken PDF" in skipped["broken.pdf"]
    assert [(w.path, w.reason[:25]) for w in report.warnings] == [
        ("latin1.md", "not UTF-8; read as cp1252")
    ]
    assert [e.done for e in events] == list(range(1, 7))
    assert all(e.total == 6 for e in events)
    assert {e.path: e.status for e in events}["broken.pdf"] == "skipped"
    assert report.chunks == len(corpus)
    assert "5 added" in report.summary() and "broken.pdf" in report.summary()
    assert "warning: latin1.md: not UTF-8; read as cp1252" in report.summary()


def test_provenance_offsets_point_into_the_file(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.ingest(docs)
    md_chunks = [c for c in corpus.chunks() if c.file == "guide.md"]
    assert [c.heading for c in md_chunks] == ["Agents", "Agents > Memory"]
    for chunk in md_chunks:
        assert GUIDE[chunk.start : chunk.end] == chunk.text
        assert chunk.title == "Agents" and chunk.page is None
    pdf = [c for c in corpus.chunks() if c.file == "paper.pdf"]
    assert [(c.page, c.text) for c in pdf] == [
        (1, "Retrieval augmented generation."),
        (2, "Grading filters passages."),
    ]
    html = next(c for c in corpus.chunks() if c.file == "web/page.html")
    assert html.title == "Oversight" and html.heading == "Approval"


def test_reingest_reads_only_changed_files_and_drops_deleted_ones(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.ingest(docs)
    before = {c.id for c in corpus.chunks() if c.file == "notes.txt"}
    (docs / "guide.md").write_text(GUIDE + "\n## Tools\n\nTools have schemas.\n")
    (docs / "web" / "page.html").unlink()
    (docs / "new.md").write_text("# New\n\nFresh text.\n")
    report = corpus.ingest(docs)
    assert report.added == ["new.md"]
    assert report.updated == ["guide.md"]
    assert sorted(report.unchanged) == ["latin1.md", "notes.txt", "paper.pdf"]
    assert report.removed == ["web/page.html"]
    assert {c.id for c in corpus.chunks() if c.file == "notes.txt"} == before
    assert not corpus.search("destructive approves")
    assert corpus.search("tools schemas")[0].chunk.heading == "Agents > Tools"


def test_a_file_that_breaks_loses_its_old_chunks(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.ingest(docs)
    (docs / "notes.txt").write_bytes(b"\xff\xfe\x00broken")
    report = corpus.ingest(docs)
    reason = {s.path: s.reason for s in report.skipped}["notes.txt"]
    assert "earlier version was dropped" in reason
    assert not [c for c in corpus.chunks() if c.file == "notes.txt"]


def test_ingest_survives_a_reopen_of_the_database(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    db = tmp_path / "k.db"
    store = SQLiteStore(db)
    first = Corpus.open(store, "docs")
    first.ingest(docs)
    expected = [(h.chunk.id, h.score) for h in first.search("episodic memory reflections")]
    store.close()
    store = SQLiteStore(db)
    again = Corpus.open(store, "docs")
    assert [(h.chunk.id, h.score) for h in again.search("episodic memory reflections")] == expected
    report = again.ingest(docs)
    assert report.added == [] and len(report.unchanged) == 5
    store.close()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlink_escape_is_refused_during_ingest(tmp_path: Path) -> None:
    docs = _folder(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\npassword hunter2\n")
    (docs / "leak.md").symlink_to(secret)
    corpus = Corpus.open(MemoryStore(), "t")
    report = corpus.ingest(docs)
    assert "leak.md" in {s.path for s in report.skipped}
    assert not corpus.search("password hunter2")


def test_two_folders_share_a_corpus_without_removing_each_other(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x.md").write_text("alpha text")
    (b / "y.md").write_text("beta text")
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.ingest(a)
    report = corpus.ingest(b)
    assert report.removed == []
    assert {s.file for s in corpus.sources()} == {"x.md", "y.md"}
