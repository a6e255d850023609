"""A research question's evidence: graded by its focus weighed in the corpus, the passage that
holds the focus best answers first, even where the ranker puts it below the first few hits."""

from __future__ import annotations

from kforge.agents.research.evidence import gather_evidence
from kforge.llm.function import FunctionModel
from kforge.rag import sample_corpus_path
from kforge.rag.ingest import ingest_folder
from kforge.runtime import Runtime
from kforge.store import MemoryStore
from tests.step_context import step_context


def _refuse(*_: object) -> str:
    raise AssertionError("graded by the focus, no model is asked")


async def test_the_passage_holding_the_focus_best_answers_first() -> None:
    rt = Runtime(MemoryStore(), model=FunctionModel(_refuse))
    corpus = rt.services.corpus("samples")
    ingest_folder(corpus, sample_corpus_path())
    question = "How do agents keep a human in the loop?"
    ranked = [h.chunk.heading for h in corpus.search(question, 8)]
    best = "Human-in-the-Loop Design > Kinds of interaction"
    assert ranked.index(best) >= 3  # below the three hits a search for the answer would take
    ctx = step_context(FunctionModel(_refuse), [], agent_type="research", services=rt.services)
    evidence = await gather_evidence(
        ctx,
        question,
        {"question": question, "corpus": "samples", "k": 3},
        lexical=True,
        weighed=True,
    )
    headings = [p.heading for p in evidence.passages]
    # the page on the question first; a passage sharing "agents" and "loop" with it after
    assert headings[:2] == [best, "Human-in-the-Loop Design"]
