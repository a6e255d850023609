"""Acronyms a question writes and its documents spell out: searched as the phrase the corpus
uses, so the documents answer rather than say they do not."""

from __future__ import annotations

from pathlib import Path

from kforge.llm.testing.scripted import ScriptedModel
from kforge.rag.acronyms import expand_acronyms, spelled_out
from kforge.store.base import RunStatus
from tests.agents.helpers import runtime
from tests.rag.test_focus import node_corpus

LICENCE = (
    "# License\n\nNode.js is free software; you can redistribute it and/or modify it under the "
    "terms of the GNU General Public License as published by the Free Software Foundation.\n\n"
    "Documents produced by the node tools are derivative works derived from the input used in "
    "their production; they are not affected by this license.\n"
)
QUESTION = "Node is GPL. Does that mean the documentation it generates for us is GPL too?"


def test_an_acronym_is_spelled_out_by_the_initials_of_capitalized_words() -> None:
    text = "under the terms of the GNU General Public License as published by the FSF"
    assert spelled_out("GPL", text) == "General Public License"
    assert spelled_out("BLS", "the Bureau of Labor Statistics said") == "Bureau of Labor Statistics"
    assert spelled_out("GPL", "a general public license") is None  # not written as a name
    assert (
        spelled_out("GPL", "General Purpose Lisp, Great Public Library") == "General Purpose Lisp"
    )
    assert spelled_out("TLS", "The Lazy Sloth") == "The Lazy Sloth"  # initials alone decide
    assert spelled_out("PL", "Public License") == "Public License"
    assert spelled_out("GPL", "General Public") is None


def test_an_acronym_the_corpus_never_names_is_searched_as_its_phrase(tmp_path: Path) -> None:
    corpus = node_corpus(tmp_path, "path.md", "os.md")
    assert expand_acronyms(corpus, QUESTION) == QUESTION  # nowhere spelled out
    (tmp_path / "node" / "LICENSE.md").write_text(LICENCE, encoding="utf-8")
    corpus.ingest(tmp_path / "node")
    assert expand_acronyms(corpus, QUESTION) == (
        "Node is General Public License. Does that mean the documentation it generates for us "
        "is General Public License too?"
    )
    # an acronym the corpus names stays as written ("EOL" names os.EOL)
    assert expand_acronyms(corpus, "What is the EOL marker on POSIX?").startswith("What is the EOL")


async def test_a_question_naming_a_licence_by_its_acronym_is_answered(tmp_path: Path) -> None:
    corpus = node_corpus(tmp_path, "path.md", "os.md")
    (tmp_path / "node" / "LICENSE.md").write_text(LICENCE, encoding="utf-8")
    corpus.ingest(tmp_path / "node")
    rt = runtime(ScriptedModel([]), store=corpus.store)  # type: ignore[arg-type]
    args = {"question": QUESTION, "corpus": "node", "answer": "extractive"}
    run = await rt.run("router", args)
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert not result["refused"], result["answer"]
    assert "they are not affected by this license" in result["answer"]
    assert next(c["file"] for c in result["citations"]) == "LICENSE.md"
