from __future__ import annotations

import gzip
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


def test_files_of_formats_not_read_are_grouped_and_the_formats_read_listed_once(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    (docs / "_static").mkdir(parents=True)
    (docs / "index.html").write_text("<p>Steps are written in Python.</p>")
    for name in ("a.css", "b.css", "c.js", "d.png"):
        (docs / "_static" / name).write_text("x")
    (docs / "_static" / "e.woff.gz").write_bytes(gzip.compress(b"font"))
    lines = Corpus.open(MemoryStore(), "t").ingest(docs).summary().splitlines()
    assert "  skipped _static/a.css, _static/b.css: unsupported format '.css'" in lines
    assert "  skipped _static/e.woff.gz: unsupported format '.woff' in a gzip file" in lines
    listed = [line for line in lines if ".html" in line and ".md" in line]
    assert len(listed) == 1 and listed[0].startswith("  (kforge reads "), lines


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


FIXTURES = Path(__file__).parent / "data" / "docs"


def _manual_pair(root: Path) -> Path:
    docs = root / "manual"
    docs.mkdir()
    for name in ("git-init.txt", "git-init.html", "ToolsForGit.txt"):
        (docs / name).write_bytes((FIXTURES / name).read_bytes())
    return docs


def test_a_page_in_two_formats_is_indexed_once_from_its_source(tmp_path: Path) -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    events: list[IngestProgress] = []
    report = corpus.ingest(_manual_pair(tmp_path), progress=events.append)
    assert sorted(report.added) == ["ToolsForGit.txt", "git-init.txt"]
    assert [d.path for d in report.duplicates] == ["git-init.html"]
    assert "the same document as git-init.txt" in report.duplicates[0].reason
    assert "1 duplicates" in report.summary() and "git-init.html" in report.summary()
    assert {e.path: e.status for e in events}["git-init.html"] == "duplicate"
    assert sorted(s.file for s in corpus.sources()) == ["ToolsForGit.txt", "git-init.txt"]
    again = corpus.ingest(tmp_path / "manual")
    assert sorted(again.unchanged) == ["ToolsForGit.txt", "git-init.txt"]
    assert [d.path for d in again.duplicates] == ["git-init.html"] and not again.removed


def test_a_sphinx_builds_copies_of_its_sources_are_not_indexed_beside_its_pages(
    tmp_path: Path,
) -> None:
    html = tmp_path / "html"
    (html / "command").mkdir(parents=True)
    (html / "_sources" / "command").mkdir(parents=True)
    (html / "command" / "add_library.html").write_text(
        "<html><head><title>add_library</title></head><body><h1>add_library</h1>"
        "<p>Add a library to the project using the specified source files.</p></body></html>"
    )
    # the source as typed: directives, roles and link targets the page renders away
    (html / "_sources" / "command" / "add_library.rst.txt").write_text(
        "add_library\n-----------\n\n.. only:: html\n\n   .. contents::\n\n"
        "Add a library to the project using the specified source files.\n\n"
        ".. signature:: add_library(<name> [STATIC | SHARED | MODULE])\n   :target: normal\n\n"
        "See :prop_tgt:`POSITION_INDEPENDENT_CODE` and :variable:`BUILD_SHARED_LIBS`.\n"
    )
    (html / "_sources" / "index.rst.txt").write_text("Welcome\n=======\n\nNo page of its own.\n")
    corpus = Corpus.open(MemoryStore(), "t")
    report = corpus.ingest(html)
    assert sorted(report.added) == ["_sources/index.rst.txt", "command/add_library.html"]
    assert [d.path for d in report.duplicates] == ["_sources/command/add_library.rst.txt"]
    assert not any(".. signature::" in c.text for c in corpus.chunks())


def test_a_sphinx_builds_index_and_search_pages_are_reported_not_indexed(tmp_path: Path) -> None:
    html = tmp_path / "html"
    html.mkdir()
    (html / "options.html").write_text(
        "<html><head><title>Options</title></head><body><h1>Options</h1>"
        "<dl><dt>--color</dt><dd><p>Use colours in the report.</p></dd></dl></body></html>"
    )
    (html / "genindex.html").write_text(
        "<html><body><h1 id='index'>Index</h1><table class=\"indextable genindextable\">"
        "<tr><td><ul><li>--color command line option</li><li>--capture command line option"
        "</li></ul></td></tr></table></body></html>"
    )
    (html / "search.html").write_text(
        "<html><head><script src='searchindex.js'></script></head><body><h1>Search</h1>"
        "<p>Searching for multiple words only shows matches that contain all words.</p>"
        "</body></html>"
    )
    corpus = Corpus.open(MemoryStore(), "t")
    report = corpus.ingest(html)
    assert report.added == ["options.html"]
    assert {s.path: s.reason for s in report.skipped} == {
        "genindex.html": "a Sphinx build's generated index or search page, not documentation",
        "search.html": "a Sphinx build's generated index or search page, not documentation",
    }
    assert [hit.chunk.file for hit in corpus.search("--color command line option")] == [
        "options.html"
    ]
    # a page of one of those names a project wrote itself is read
    (html / "search.html").write_text("<h1>Search</h1><p>The search box finds pages.</p>")
    assert corpus.ingest(html).added == ["search.html"]


def test_a_sphinx_builds_highlighted_module_sources_are_reported_not_indexed(
    tmp_path: Path,
) -> None:
    html = tmp_path / "html"
    (html / "_modules" / "tornado").mkdir(parents=True)
    (html / "web.html").write_text(
        "<html><head><title>tornado.web</title></head><body><h1>tornado.web</h1>"
        "<p>Finishes this response, ending the HTTP request.</p></body></html>"
    )
    (html / "_modules" / "tornado" / "web.html").write_text(
        "<html><body><h1>Source code for tornado.web</h1><div class='highlight'><pre>"
        "<div class='viewcode-block' id='RequestHandler.finish'>def finish(self):\n"
        '    """Finishes this response, ending the HTTP request.\n\n'
        '    :arg chunk: the last chunk\n    """</div></pre></div></body></html>'
    )
    (html / "_modules" / "index.html").write_text(
        "<html><body><h1>All modules for which code is available</h1>"
        "<ul><li><a href='tornado/web.html'>tornado.web</a></li></ul></body></html>"
    )
    # a folder of the project's own named _modules, without Sphinx's marks, stays
    (html / "_modules" / "notes.html").write_text(
        "<html><body><h1>Modules</h1><p>How the modules are laid out.</p></body></html>"
    )
    corpus = Corpus.open(MemoryStore(), "t")
    report = corpus.ingest(html)
    assert sorted(report.added) == ["_modules/notes.html", "web.html"]
    assert sorted(s.path for s in report.skipped) == [
        "_modules/index.html",
        "_modules/tornado/web.html",
    ]
    assert "highlighted copy of a module's source code" in report.summary()
    assert not any(":arg chunk:" in c.text for c in corpus.chunks())


def test_a_debian_doc_folder_is_read_compressed_files_and_manual_pages_included(
    tmp_path: Path,
) -> None:
    # /usr/share/doc/PACKAGE compresses its larger files; the API's pages are manual pages
    docs = tmp_path / "libwidget"
    (docs / "man3").mkdir(parents=True)
    (docs / "FAQ.gz").write_bytes(gzip.compress(b"Is it thread safe?\n\nYes, per handle.\n"))
    (docs / "HSTS.md.gz").write_bytes(gzip.compress(b"# HSTS\n\nHosts are kept a year.\n"))
    (docs / "README").write_text("Widgets are built from parts.\n")
    (docs / "changelog.gz").write_bytes(gzip.compress(b"1.0: first release\n"))
    (docs / "broken.md.gz").write_bytes(b"not gzip at all")
    (docs / "man3" / "widget_new.3.gz").write_bytes(
        gzip.compress(
            b".TH widget_new 3\n.SH NAME\nwidget_new \\- make a widget\n"
            b".SH DEFAULT\nThe default size is 12 units.\n"
        )
    )
    (docs / "man3" / "widget_make.3.gz").write_bytes(gzip.compress(b".so man3/widget_new.3\n"))
    corpus = Corpus.open(MemoryStore(), "t")
    report = corpus.ingest(docs)
    assert sorted(report.added) == ["FAQ.gz", "HSTS.md.gz", "README", "man3/widget_new.3.gz"]
    skipped = {s.path: s.reason for s in report.skipped}
    assert sorted(skipped) == ["broken.md.gz", "changelog.gz", "man3/widget_make.3.gz"]
    assert "not a readable gzip file" in skipped["broken.md.gz"]
    assert "only includes man3/widget_new.3" in skipped["man3/widget_make.3.gz"]
    assert skipped["changelog.gz"] == "unsupported format '(none)' in a gzip file"
    assert "manual pages (.1 to .9)" in report.summary()
    hit = corpus.search("default size of a widget")[0]
    assert hit.chunk.file == "man3/widget_new.3.gz" and "12 units" in hit.chunk.text
    titles = {s.file: s.title for s in corpus.sources()}
    assert titles["HSTS.md.gz"] == "HSTS" and titles["man3/widget_new.3.gz"] == "widget_new"


def test_files_of_one_stem_that_differ_are_both_indexed(tmp_path: Path) -> None:
    docs = tmp_path / "d"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nCheckpoints make long agent runs durable.\n")
    (docs / "notes.html").write_text("<h1>Recipes</h1><p>Bake the bread for forty minutes.</p>")
    report = Corpus.open(MemoryStore(), "t").ingest(docs)
    assert sorted(report.added) == ["notes.html", "notes.md"] and not report.duplicates


def test_documents_extracted_by_an_older_version_are_extracted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import kforge.rag.corpus as corpus_module
    import kforge.rag.ingest as ingest_module
    import kforge.rag.records as records_module

    store = MemoryStore()
    docs = _folder(tmp_path)
    for module in (records_module, ingest_module, corpus_module):
        monkeypatch.setattr(module, "EXTRACTION_VERSION", "extract-v0")
    Corpus.open(store, "t").ingest(docs)
    monkeypatch.undo()
    with caplog.at_level("WARNING", logger="kforge.rag.corpus"):
        corpus = Corpus.open(store, "t")
        corpus.search("agent")
        corpus.search("memory")
        Corpus.open(store, "t").search("agent")
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1  # said once
    assert f"kforge ingest {docs.resolve()} --corpus t" in warnings[0]
    assert "older version" in warnings[0] and warnings[0] == corpus.stale_warning()
    assert {s.file for s in corpus.stale_extraction()} >= {"guide.md", "notes.txt"}
    report = corpus.ingest(docs)
    assert "guide.md" in report.updated and not report.unchanged
    assert not Corpus.open(store, "t").stale_extraction()
    assert Corpus.open(store, "t").stale_warning() == ""


def test_an_ingest_before_the_first_search_upgrades_without_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import kforge.rag.records as records_module

    store = MemoryStore()
    docs = tmp_path / "fresh"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE)
    monkeypatch.setattr(records_module, "EXTRACTION_VERSION", "extract-v0")
    Corpus.open(store, "u").ingest(docs)
    monkeypatch.undo()
    with caplog.at_level("WARNING", logger="kforge.rag.corpus"):
        corpus = Corpus.open(store, "u")
        assert corpus.ingest(docs).updated == ["guide.md"]
        assert corpus.search("agent")
    assert not caplog.records
