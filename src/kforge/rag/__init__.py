"""Retrieval over local documents: ingest with provenance, BM25 and dense search, agentic RAG.

The ``retrieve_chunks`` tool lives in ``kforge.rag.tool`` (it loads the tools layer).
"""

from __future__ import annotations

from kforge.rag.agentic import (
    RAGAttempt,
    RAGConfig,
    RAGResult,
    SearchFn,
    StatusCallback,
    agentic_search,
)
from kforge.rag.bm25 import BM25Index, BM25Params
from kforge.rag.chunking import ChunkingOptions
from kforge.rag.complete import CompleteFn
from kforge.rag.corpus import (
    DEFAULT_CORPUS,
    Corpus,
    SearchMode,
    SourceInfo,
    drop_corpus,
    list_corpora,
)
from kforge.rag.dense import Embedder, MiniLMEmbedder, dense_available
from kforge.rag.fusion import reciprocal_rank_fusion
from kforge.rag.grading import GradedResult, grade_results
from kforge.rag.ingest import IngestProgress, IngestReport
from kforge.rag.rewrite import rewrite_query
from kforge.rag.samples import SAMPLE_CORPUS, sample_corpus_path
from kforge.rag.scan import SkippedFile
from kforge.rag.types import Chunk, Citation, SearchHit, SourceDocument

__all__ = [
    "DEFAULT_CORPUS",
    "SAMPLE_CORPUS",
    "BM25Index",
    "BM25Params",
    "Chunk",
    "ChunkingOptions",
    "Citation",
    "CompleteFn",
    "Corpus",
    "Embedder",
    "GradedResult",
    "IngestProgress",
    "IngestReport",
    "MiniLMEmbedder",
    "RAGAttempt",
    "RAGConfig",
    "RAGResult",
    "SearchFn",
    "SearchHit",
    "SearchMode",
    "SkippedFile",
    "SourceDocument",
    "SourceInfo",
    "StatusCallback",
    "agentic_search",
    "dense_available",
    "drop_corpus",
    "grade_results",
    "list_corpora",
    "reciprocal_rank_fusion",
    "rewrite_query",
    "sample_corpus_path",
]
