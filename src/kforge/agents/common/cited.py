"""Cited text from the run's documents, for agents that explain: retrieve for a question, keep
the passages graded relevant, write through the checked grounded path (extractive for small
models), and add the passages the text cites to the agent's sources list."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from kforge.agents.common.evidence import gather_evidence, source_record
from kforge.agents.common.writing import write_grounded
from kforge.engine.run_context import RunContext
from kforge.llm.types import ModelSettings
from kforge.rag.grounded import AnswerStyle

__all__ = ["Cited", "cited_text"]

WRITING = ModelSettings(temperature=0.2, max_tokens=400)


@dataclass(frozen=True, slots=True)
class Cited:
    segments: list[dict[str, Any]]
    """``{"text", "source_id"}``: each sentence with the source it rests on."""
    source_ids: list[str]
    new_sources: list[dict[str, Any]]
    """Source records of passages the text cites that were not in the sources given."""
    path: str
    """Which path wrote it (``extractive``, ``generative``, ... or ``none``: no passage)."""
    queries: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(s["text"] for s in self.segments)


async def cited_text(
    ctx: RunContext,
    question: str,
    search: Mapping[str, Any],
    sources: list[dict[str, Any]],
    *,
    style: AnswerStyle,
    purpose: str,
    system: str,
    exclude: Collection[str] = (),
    max_sentences: int = 3,
    files: Collection[str] = (),
) -> Cited:
    """``search`` holds the retrieval arguments (``corpus``, ``k``, ...; ``question`` is the
    run's overall subject); ``files``, when given, are the only documents read. ``sources`` is
    read, not changed: the sources the text cites that it does not hold yet are in
    ``Cited.new_sources``, numbered after it."""
    evidence = await gather_evidence(
        ctx, question, search, lexical=style == "extractive", files=files
    )
    if not evidence.passages:
        return Cited([], [], [], "none", list(evidence.queries))
    written = await write_grounded(
        ctx,
        question,
        [p.as_chunk() for p in evidence.passages],
        style=style,
        purpose=purpose,
        settings=WRITING,
        system=system,
        exclude=exclude,
        max_sentences=max_sentences,
    )
    segments: list[dict[str, Any]] = []
    source_ids: list[str] = []
    new: list[dict[str, Any]] = []
    for segment in written.segments:
        every = [*sources, *new]
        record = source_record(evidence.passages[segment["source"]], {s["id"] for s in every})
        known = next((s for s in every if s["chunk_id"] == record["chunk_id"]), None)
        if known is None:
            new.append(record)
            known = record
        if known["id"] not in source_ids:
            source_ids.append(known["id"])
        segments.append({"text": segment["text"], "source_id": known["id"]})
    return Cited(segments, source_ids, new, written.path, list(evidence.queries))
