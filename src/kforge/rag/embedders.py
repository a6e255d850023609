"""The embedders a corpus can be ingested with, by name, and the one whose vectors it holds.

``minilm`` (the ``dense`` extra) runs all-MiniLM-L6-v2 on PyTorch; ``minilm-onnx`` (the
``dense-onnx`` extra) runs the same model with int8 weights on ONNX Runtime, its weights
shipped inside a wheel: no PyTorch, nothing downloaded; ``wordllama`` (the ``dense-light`` extra)
averages WordLlama's static token embeddings, also shipped inside its wheel, about a millisecond
a query.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kforge.errors import ConfigurationError, MissingExtraError
from kforge.extras import require_extra
from kforge.rag.dense import Embedder, MiniLMEmbedder
from kforge.rag.minilm_onnx import OnnxMiniLMEmbedder

if TYPE_CHECKING:
    from kforge.store.documents import DocumentStore

__all__ = [
    "EMBEDDERS",
    "EmbedderChoice",
    "WordLlamaEmbedder",
    "make_embedder",
    "recorded_embedder",
]

_log = logging.getLogger(__name__)


class WordLlamaEmbedder:
    """WordLlama ``l2_supercat`` (256 dimensions): the mean of a text's static token embeddings.

    The weights and tokenizer ship in the ``wordllama`` wheel and are read from there (nothing
    is downloaded). They are read directly rather than through ``wordllama.WordLlama``, whose
    import configures the root logger and takes longer than a whole ``kforge ask``; a test
    checks the vectors equal its own ``embed(norm=True)``.
    """

    MODEL = "wordllama-l2-supercat-256"

    def __init__(self, *, batch_size: int = 256) -> None:
        require_extra("dense-light", "WordLlama embeddings", otherwise="ingest without --dense")
        self.batch_size = batch_size
        self._tokenizer: Any = None
        self._table: Any = None

    @property
    def name(self) -> str:
        return self.MODEL

    def _load(self) -> tuple[Any, Any]:
        if self._table is None:
            import importlib.util

            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

            spec = importlib.util.find_spec("wordllama")  # locates the package, runs none of it
            assert spec is not None and spec.origin is not None
            root = Path(spec.origin).parent
            table = load_file(str(root / "weights" / "l2_supercat_256.safetensors"))
            tokenizer = Tokenizer.from_file(
                str(root / "tokenizers" / "l2_supercat_tokenizer_config.json")
            )
            tokenizer.no_truncation()
            self._tokenizer = tokenizer
            self._table = table["embedding.weight"]  # float16; rows widen as they are read
        return self._tokenizer, self._table

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        import numpy as np

        tokenizer, table = self._load()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            for encoding in tokenizer.encode_batch(batch, add_special_tokens=False):
                ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, len(table) - 1)
                # a text with no tokens gets the zero vector: it matches nothing
                tokens = table[ids].astype(np.float32)
                mean = tokens.mean(axis=0) if len(ids) else np.zeros(table.shape[1], np.float32)
                norm = float(np.linalg.norm(mean))
                vectors.append((mean / norm if norm else mean).tolist())
        return vectors


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbedderChoice:
    """One embedder a corpus can be ingested with."""

    model: str
    """The name its vectors are stored under (``Embedder.name``)."""
    extra: str
    """The optional extra that installs it."""
    build: Callable[[], Embedder]


EMBEDDERS: dict[str, EmbedderChoice] = {
    "minilm": EmbedderChoice(model="all-MiniLM-L6-v2", extra="dense", build=MiniLMEmbedder),
    "minilm-onnx": EmbedderChoice(
        model=OnnxMiniLMEmbedder.MODEL, extra="dense-onnx", build=OnnxMiniLMEmbedder
    ),
    "wordllama": EmbedderChoice(
        model=WordLlamaEmbedder.MODEL, extra="dense-light", build=WordLlamaEmbedder
    ),
}
"""The choices ``kforge ingest --embedder`` takes."""


def make_embedder(choice: str) -> Embedder:
    """The embedder ``choice`` names (``minilm``, ``minilm-onnx`` or ``wordllama``); a clear error naming the
    extra to install when its packages are missing."""
    entry = EMBEDDERS.get(choice)
    if entry is None:
        raise ConfigurationError(
            f"unknown embedder '{choice}'; use one of {', '.join(sorted(EMBEDDERS))}"
        )
    return entry.build()


def recorded_embedder(store: DocumentStore, corpus: str) -> Embedder | None:
    """The embedder that computed corpus ``corpus``'s vectors, to search it hybrid; None when it
    has no vectors, or when that embedder's extra is missing here (a warning says which: the
    corpus is then searched lexically)."""
    from kforge.rag.records import CORPORA_NAMESPACE

    meta = store.get_docs(CORPORA_NAMESPACE, [corpus]).get(corpus, {})
    model = meta.get("embedder")
    if not model:
        return None
    for choice in EMBEDDERS.values():
        if choice.model == model:
            try:
                return choice.build()
            except MissingExtraError as exc:
                _log.warning("corpus '%s' is searched lexically only: %s", corpus, exc)
                return None
    _log.warning(
        "corpus '%s' holds vectors of an unknown embedder '%s'; it is searched lexically only",
        corpus,
        model,
    )
    return None
