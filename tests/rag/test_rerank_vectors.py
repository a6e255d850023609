"""Passages reranked with a corpus's vectors: BM25's pool, reordered by what the question means
as well as the words it shares; and an extractive answer's room for a fifth unit."""

from __future__ import annotations

from collections.abc import Sequence

from kforge.rag.corpus import Corpus
from kforge.rag.grounded import ANSWER_SENTENCES, write_answer
from kforge.rag.rerank import search_units
from kforge.rag.types import SourceDocument
from kforge.store.memory import MemoryStore
from tests.rag.helpers import page_chunk

QUESTION = "Why won't mypy let me assign a list of B to a variable holding a list of A?"
PAGES = [
    SourceDocument(
        "literal_types",
        "Declaring literal variables: you must explicitly add an annotation to a variable to "
        "declare that it has a literal type. A variable holding a literal lets mypy check what "
        "you assign to it.",
        "Literal types",
    ),
    SourceDocument(
        "common_issues",
        "Invariance vs covariance: most mutable generic collections are invariant, and mypy "
        "considers all user-defined generic classes invariant by default.",
        "Common issues",
    ),
    SourceDocument(
        "generics",
        "Generic types are invariant by default; declare a type parameter covariant so that "
        "a container of a subtype stands for a container of its base.",
        "Generics",
    ),
]


class MeaningEmbedder:
    """Vectors by topic: a text about lists of subclasses and one about invariance are near
    each other, whatever words they share."""

    name = "meaning-2"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        def vector(text: str) -> list[float]:
            text = text.lower()
            if "invariant" in text or "list of b" in text:
                return [1.0, 0.0]
            return [0.0, 1.0]

        return [vector(t) for t in texts]


def corpus(embedder: MeaningEmbedder | None) -> Corpus:
    found = Corpus.open(MemoryStore(), "mypy", embedder=embedder)
    found.add_documents(PAGES)
    return found


def test_vectors_rerank_the_passages_words_alone_rank_first() -> None:
    lexical = [h.chunk.file for h in search_units(corpus(None), QUESTION, 3)]
    assert lexical[0] == "literal_types"  # it shares "variable", "holding", "let", "assign"
    reranked = [h.chunk.file for h in search_units(corpus(MeaningEmbedder()), QUESTION, 3)]
    assert reranked[0] == "common_issues", reranked


def test_vectors_reorder_the_word_search_and_add_no_passage_of_their_own() -> None:
    # "generics" shares no focus word with the question ("Generic types are invariant ...")
    # and is the vectors' nearest passage beside "common_issues": a fused ranking would
    # bring it in; the reranked pool holds only what the words found
    near = corpus(MeaningEmbedder())
    assert "generics" in [h.chunk.file for h in near.search(QUESTION, 3, mode="dense")]
    assert "generics" not in [h.chunk.file for h in search_units(near, QUESTION, 3)]


async def test_an_extractive_answer_quotes_up_to_five_units() -> None:
    page = page_chunk(
        0,
        "Use --cache-size to choose how large the cache may grow. A timeout after which entries "
        "expire is given with --timeout. Files are stored in the location named by --cache-dir. "
        "When full, the eviction policy named by --evict decides what goes. Entries are "
        "compressed with the codec named by --codec.",
        "Caching",
        "Options",
    )
    question = (
        "How do I set the cache size, timeout, location, eviction policy and compression codec?"
    )
    answer = await write_answer(question, [page], None)
    assert len(answer.segments) == ANSWER_SENTENCES == 5, answer.segments
    assert "--evict" in answer.text and "--codec" in answer.text


class NearTheIntroduction:
    """Vectors that put every question nearest the introduction."""

    name = "near-intro-2"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.0, 1.0] if "conftest" in t and "?" not in t else [1.0, 0.0] for t in texts]


def test_vectors_never_leave_out_the_passage_that_holds_what_is_asked() -> None:
    pages = [
        SourceDocument(
            "intro",
            "Tests are plain functions whose names start with test, collected from the files "
            "that pytest discovers in the folders it is given.",
            "Getting started",
        ),
        SourceDocument(
            "fixtures",
            "Fixtures that many test files share live in a conftest.py file: pytest finds "
            "them there without an import.",
            "Sharing fixtures",
        ),
    ]
    near = Corpus.open(MemoryStore(), "pytest", embedder=NearTheIntroduction())
    near.add_documents(pages)
    question = "What goes in a conftest.py file?"
    read = [h.chunk.file for h in search_units(near, question, 1)]
    # the vectors put the introduction first; it never names conftest.py, so the passage the
    # words rank first is read as well
    assert read == ["intro", "fixtures"], read
    words = Corpus.open(MemoryStore(), "pytest")
    words.add_documents(pages)
    assert [h.chunk.file for h in search_units(words, question, 1)] == ["fixtures"]
