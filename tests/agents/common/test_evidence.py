"""A research question's evidence: graded by its focus weighed in the corpus, the passage that
holds the focus best answers first, even where the ranker puts it below the first few hits."""

from __future__ import annotations

from pathlib import Path

from kforge.agents.common.evidence import Evidence, gather_evidence
from kforge.llm.testing.function import FunctionModel
from kforge.rag import sample_corpus_path
from kforge.rag.ingest import ingest_folder
from kforge.runtime import Runtime
from kforge.store import MemoryStore
from tests.step_context import step_context


def _refuse(*_: object) -> str:
    raise AssertionError("graded by the focus, no model is asked")


async def evidence_for(
    rt: Runtime, corpus: str, question: str, documents: list[str] | None = None
) -> Evidence:
    """The evidence a research run gathers for ``question`` (graded by its focus)."""
    ctx = step_context(FunctionModel(_refuse), [], agent_type="research", services=rt.services)
    args = {"question": question, "corpus": corpus, "k": 3}
    return await gather_evidence(
        ctx, question, args, lexical=True, weighed=True, documents=documents or ()
    )


async def test_the_passage_holding_the_focus_best_answers_first() -> None:
    rt = Runtime(MemoryStore(), model=FunctionModel(_refuse))
    corpus = rt.services.corpus("samples")
    ingest_folder(corpus, sample_corpus_path())
    question = "How do agents keep a human in the loop?"
    ranked = [h.chunk.heading for h in corpus.search(question, 8)]
    best = "Human-in-the-Loop Design > Kinds of interaction"
    assert ranked.index(best) >= 3  # below the three hits a search for the answer would take
    evidence = await evidence_for(rt, "samples", question)
    headings = [p.heading for p in evidence.passages]
    # the page on the question first; a passage sharing "agents" and "loop" with it after
    assert headings[:2] == [best, "Human-in-the-Loop Design"]


BRANCH_PAGE = """# git-branch

## Description

With no arguments, existing branches are listed. The command's second form creates a new
branch head named <branchname> which points to the current HEAD.

## Options

-d, --delete: Delete a branch. The branch must be fully merged in its upstream branch.
{filler}
-m, --move: Move/rename a branch, together with its config and reflog.
"""
FILLER = "--list: List branches, with the patterns given, in the order asked. " * 12


def branch_docs(folder: Path) -> Path:
    """The page on branches, with its options in one long passage, beside ten short pages that
    mention renames and branches in passing (the ranker puts every one of them first)."""
    (folder / "git-branch.md").write_text(BRANCH_PAGE.format(filler=FILLER))
    for n in range(10):
        (folder / f"merge-{n}.md").write_text(
            f"# Merge strategy {n}\n\nRename detection for branch merges, variant {n}.\n"
        )
    return folder


async def test_the_most_relevant_document_is_searched_on_its_own(tmp_path: Path) -> None:
    rt = Runtime(MemoryStore(), model=FunctionModel(_refuse))
    corpus = rt.services.corpus("git")
    ingest_folder(corpus, branch_docs(tmp_path))
    question = "How do I rename a branch?"
    assert "git-branch.md" not in {h.chunk.file for h in corpus.search(question, 8)}
    evidence = await evidence_for(rt, "git", question, ["git-branch.md"])
    assert evidence.passages[0].file == "git-branch.md"
    assert "-m, --move" in evidence.passages[0].text
