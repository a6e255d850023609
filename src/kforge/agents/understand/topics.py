"""What the documents teach about a topic: the subjects of the passages the topic finds.

A passage counts when it holds as many of the topic's content words as the best passage does
(one fewer when the topic has three or more, and never under half of them); its subject is its
section heading (or its document's title when only the title names the topic), without a
subtitle or section number. Subjects that name the same thing are one, with every page that
speaks of it, so an objective is explained from its own pages. The search is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kforge.agents.common.naming import name_terms, overlaps, topic_name
from kforge.engine.run_context import RunContext

__all__ = ["PASSAGES_EVENT", "Subject", "subjects_of"]

PASSAGES_EVENT = "understand.passages"
"""Records the passages the topic finds (ids, files, headings, titles)."""
SEARCHED = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    concept: str
    files: tuple[str, ...]
    """The documents whose passages speak of it, best first."""


async def subjects_of(ctx: RunContext, corpus: str | None, topic: str) -> list[Subject]:
    """The subjects the passages matching ``topic`` speak of, best passage first."""
    focus = name_terms(topic)

    def passages() -> dict[str, Any]:
        hits = []
        for hit in ctx.corpus(corpus).search(topic, SEARCHED):
            chunk = hit.chunk
            held = len(focus & name_terms(f"{chunk.title} {chunk.heading} {chunk.text}"))
            hits.append((held, chunk))
        best = max((held for held, _ in hits), default=0)
        # the passages that hold the most of the topic's words (one fewer of three or more)
        needed = max(-(-len(focus) // 2), best - (1 if len(focus) > 2 else 0), 1)
        found = [
            {
                "chunk_id": chunk.id,
                "file": chunk.file,
                "heading": chunk.heading.split(" > ")[-1],
                "title": chunk.title,
            }
            for held, chunk in hits
            if held >= needed
        ]
        return {"passages": found}

    recorded = await ctx.step(PASSAGES_EVENT, passages)
    subjects: list[tuple[str, list[str]]] = []
    for item in recorded.get("passages", []):
        names = [n for n in (topic_name(item.get("heading")), topic_name(item.get("title"))) if n]
        named = [n for n in names if name_terms(n) & focus]
        concept = (named or names or [""])[0]
        if not concept:
            continue
        same = next((s for s in subjects if overlaps(concept, [s[0]])), None)
        if same is None:
            subjects.append((concept, [str(item["file"])]))
        elif item["file"] not in same[1]:
            same[1].append(str(item["file"]))
    return [Subject(concept=c, files=tuple(f)) for c, f in subjects]
