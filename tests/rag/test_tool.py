from __future__ import annotations

from kforge.rag.corpus import Corpus
from kforge.rag.tool import hits_from_result, retrieve_chunks_tool
from kforge.rag.types import SourceDocument
from kforge.store.memory import MemoryStore
from kforge.tools.result import ToolResult


def _corpus() -> Corpus:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(
        [
            SourceDocument("a", "Checkpoints let durable runs resume.", "Durability"),
            SourceDocument("b", "Compost feeds the garden.", "Garden"),
        ]
    )
    return corpus


async def test_tool_is_read_only_and_returns_hits_with_provenance() -> None:
    corpus = _corpus()
    retrieve = retrieve_chunks_tool(corpus)
    assert retrieve.name == "retrieve_chunks"
    assert retrieve.annotations.read_only_hint
    schema = retrieve.input_schema
    assert set(schema["properties"]) == {"query", "k"} and schema["required"] == ["query"]
    result = retrieve.func(query="durable runs resume", k=1)
    assert isinstance(result, ToolResult) and not result.is_error
    assert "a (chars 0-" in result.text
    [hit] = hits_from_result(result)
    assert hit.chunk.file == "a"
    assert hits_from_result(result.to_dict()) == [hit]


def test_bad_arguments_are_errors_the_model_can_fix() -> None:
    retrieve = retrieve_chunks_tool(_corpus(), max_k=3)
    assert "k must be between 1 and 3" in retrieve.func(query="x", k=9).text
    assert retrieve.func(query="  ").is_error
    assert hits_from_result(retrieve.func(query="  ")) == []
