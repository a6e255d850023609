"""Corpora through the real command line: one corpus per folder, ``--corpus`` read as it is,
the samples only when nothing is named, and ``kforge corpora list|show|remove``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge.cli import main
from kforge.cli.ingest import progress_line
from kforge.rag.corpus import Corpus, list_corpora
from kforge.rag.ingest import IngestProgress
from kforge.store.sqlite import SQLiteStore


@pytest.fixture(autouse=True)
def default_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The bundled model's extractive answers: no model is loaded, no network is used."""
    monkeypatch.delenv("KFORGE_MODEL", raising=False)
    (tmp_path / "empty.toml").write_text("")
    monkeypatch.setenv("KFORGE_CONFIG", str(tmp_path / "empty.toml"))
    monkeypatch.chdir(tmp_path)


def folder(root: Path, name: str, files: dict[str, str]) -> Path:
    path = root / name
    path.mkdir(parents=True)
    for file, text in files.items():
        (path / file).write_text(text)
    return path


def corpora(db: Path) -> dict[str, list[str]]:
    store = SQLiteStore(db)
    try:
        return {
            str(c["name"]): sorted(s.file for s in Corpus.open(store, str(c["name"])).sources())
            for c in list_corpora(store)
        }
    finally:
        store.close()


def out_of_runs_list(db: Path) -> str:
    store = SQLiteStore(db)
    try:
        return " ".join(r.id for r in store.list_runs())
    finally:
        store.close()


def test_two_folders_named_docs_are_two_corpora(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    mine = folder(tmp_path / "my", "docs", {"alpha.md": "# Alpha\n\nAlpha keeps checkpoints.\n"})
    other = folder(tmp_path / "other", "docs", {"beta.md": "# Beta\n\nBeta copies logs.\n"})
    assert main(["--db", str(db), "ingest", str(mine)]) == 0
    assert main(["ingest", str(other), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "corpus 'docs' from" in out and "corpus 'docs-2' from" in out
    assert corpora(db) == {"docs": ["alpha.md"], "docs-2": ["beta.md"]}

    # asking about a folder again finds its own corpus; nothing else is added to it
    assert main(["--db", str(db), "ask", "What do beta servers copy?", "--docs", str(other)]) == 0
    out, err = capsys.readouterr()
    assert "corpus 'docs-2'" in err and "alpha.md" not in out
    assert corpora(db) == {"docs": ["alpha.md"], "docs-2": ["beta.md"]}

    assert main(["--db", str(db), "corpora", "list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "NAME",
        "SOURCES",
        "CHUNKS",
        "UPDATED",
        "(UTC)",
        "FOLDER",
    ]
    assert str(mine.resolve()) in out and str(other.resolve()) in out
    assert main(["--db", str(db), "corpora", "show", "docs-2"]) == 0
    out = capsys.readouterr().out
    assert f"folder     {other.resolve()}" in out and "beta.md  (markdown, 1 chunks)  Beta" in out
    assert main(["--db", str(db), "corpora", "remove", "docs"]) == 0
    assert "removed corpus 'docs'" in capsys.readouterr().out
    assert corpora(db) == {"docs-2": ["beta.md"]}
    assert main(["--db", str(db), "corpora", "remove", "docs"]) == 1
    assert capsys.readouterr().err == (
        "kforge: error: no corpus named 'docs', so nothing was removed (corpora: docs-2)\n"
    )


def test_corpus_alone_is_read_as_it_is_and_samples_only_when_nothing_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    notes = folder(tmp_path, "notes", {"react.md": "# ReAct\n\nReAct mixes reasoning and acts.\n"})
    assert main(["--db", str(db), "ingest", str(notes), "--corpus", "mine"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "ask", "What is ReAct?", "--corpus", "mine"]) == 0
    out, err = capsys.readouterr()
    assert "react.md" in out and "samples" not in err
    assert corpora(db) == {"mine": ["react.md"]}  # no sample file was added

    assert main(["--db", str(db), "ask", "What is ReAct?", "--corpus", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kforge: error: no corpus named 'nope' (corpora: mine)")
    assert list(corpora(db)) == ["mine"]

    assert main(["--db", str(db), "ask", "What is the ReAct pattern?"]) == 0
    out, err = capsys.readouterr()
    assert "corpus 'samples'" in err and "react-pattern.md" in out
    [run_line] = [line for line in err.splitlines() if line.startswith("run ")]
    assert run_line.split()[1] in out_of_runs_list(db)  # ask says which run answered
    assert sorted(corpora(db)) == ["mine", "samples"]
    assert corpora(db)["mine"] == ["react.md"]


def test_an_empty_folder_is_an_error_and_leaves_no_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    empty = folder(tmp_path, "empty", {"notes.docx": "not read"})
    assert main(["--db", str(db), "ingest", str(empty)]) == 1
    out, err = capsys.readouterr()
    assert "kforge: error: no readable documents in" in err and "nothing was indexed" in err
    assert out == ""  # no summary line that reads as a success
    assert main(["--db", str(db), "ask", "q", "--docs", str(empty)]) == 1
    assert "no readable documents" in capsys.readouterr().err
    assert corpora(db) == {}


def test_removing_an_unknown_corpus_does_not_suggest_indexing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    assert main(["--db", str(db), "corpora", "remove", "nope"]) == 1
    assert capsys.readouterr().err == (
        "kforge: error: no corpus named 'nope', so nothing was removed (corpora: none yet)\n"
    )


def test_ingest_off_a_terminal_prints_only_its_summary_and_dense_names_the_cli_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    docs = folder(tmp_path, "docs", {f"n{i}.md": f"# Note {i}\n\nText {i}." for i in range(60)})
    assert main(["--db", str(db), "ingest", str(docs)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("corpus 'docs' from")
    try:
        import torch  # noqa: F401
    except ImportError:
        assert main(["--db", str(db), "ingest", str(docs), "--dense"]) == 1
        err = capsys.readouterr().err
        assert "or ingest without --dense" in err and "mode=" not in err


def test_the_terminal_progress_bar() -> None:
    assert progress_line(IngestProgress(3, 12, "a.md", "added"), width=8) == (
        "[##......]  3/12 added     a.md"
    )
    assert progress_line(IngestProgress(0, 0, "", "skipped"), width=4).startswith("[....] 0/0")


def test_cp1252_text_is_ingested_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "k.db"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "menu.txt").write_bytes(
        "Caf\xe9 cr\xe8me costs \u20ac4 \u2013 na\xefve.\n".encode("cp1252")
    )
    assert main(["--db", str(db), "ingest", str(notes)]) == 0
    out = capsys.readouterr().out
    assert "1 added" in out and "warning: menu.txt: not UTF-8; read as" in out
    store = SQLiteStore(db)
    try:
        [hit] = Corpus.open(store, "notes").search("café crème", k=1)
    finally:
        store.close()
    assert hit.chunk.text.startswith("Caf\xe9 cr\xe8me costs \u20ac4 \u2013 na\xefve.")


def test_samples_found_elsewhere_are_dropped_when_the_package_moved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kforge.rag.types import SourceDocument

    db = tmp_path / "k.db"
    store = SQLiteStore(db)
    old = Corpus.open(store, "samples")
    old.add_documents([SourceDocument(id="old-install.md", text="Stale text.", title="Old")])
    store.close()
    assert main(["--db", str(db), "ask", "What is the ReAct pattern?"]) == 0
    files = corpora(db)["samples"]
    assert "react-pattern.md" in files and "old-install.md" not in files
