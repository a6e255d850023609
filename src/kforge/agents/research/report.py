"""Render the Research agent's findings as a Markdown report with numbered citations.

The markers in the text are the numbers of the report's Sources list: sources are numbered in
the order the report first cites them, and the list holds only the sources the text cites.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kforge.agents.research.question_tree import ResearchPhaseContext

__all__ = ["render_report"]


class _Numbering:
    """Report-wide source numbers, given in order of first citation."""

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.order: list[str] = []

    def marker(self, source_id: str) -> str:
        if source_id not in self.known:
            return ""
        if source_id not in self.order:
            self.order.append(source_id)
        return f" [{self.order.index(source_id) + 1}]"

    def cite(self, segments: Sequence[dict[str, Any]]) -> str:
        parts = []
        for segment in segments:
            text = str(segment.get("text", "")).rstrip()
            end = text[-1] if text and text[-1] in ".!?" else ""
            body = text[: len(text) - len(end)].rstrip()
            parts.append(f"{body}{self.marker(str(segment.get('source_id')))}{end}")
        return " ".join(parts)


def _answer_text(answer: dict[str, Any], numbering: _Numbering) -> str:
    segments = answer.get("segments")
    if segments:
        return numbering.cite(segments)
    # an answer recorded before answers kept their sentences: cite its sources at the end
    cites = "".join(numbering.marker(s).strip() for s in answer.get("source_ids", []))
    return f"{answer['text']} {cites}".rstrip()


def render_report(question: str, rc: ResearchPhaseContext) -> str:
    numbering = _Numbering({s["id"] for s in rc.sources})
    out = [f"# Research report: {question}", ""]
    out += ["## Question tree", ""]
    for category in rc.categories:
        out.append(f"- **{category['name']}**")
        for qid in category["question_ids"]:
            q = rc.question(qid)
            if q is not None:
                mark = "answered" if qid in rc.answers else "open"
                out.append(f"  - {q['text']} _({mark})_")
    out += ["", "## Answers", ""]
    for category in rc.categories:
        out += [f"### {category['name']}", ""]
        for qid in category["question_ids"]:
            q, answer = rc.question(qid), rc.answers.get(qid)
            if q is None:
                continue
            out.append(f"**{q['text']}**")
            out.append("")
            if answer is None:
                out += ["_Not answered yet._", ""]
                continue
            out.append(_answer_text(answer, numbering))
            if answer.get("fallback"):
                disclaimer = answer.get("disclaimer") or (
                    "No relevant source was found; this answer does not come from the documents."
                )
                out += ["", f"> {disclaimer}"]
            out.append("")
    out += ["## Insights by category", ""]
    listed = len(out)
    for category in rc.categories:
        segments = rc.insight_segments.get(category["id"])
        insight = numbering.cite(segments) if segments else rc.category_insights.get(category["id"])
        if insight:
            out.append(f"- **{category['name']}**: {insight}")
        elif category["id"] in rc.insight_gaps:
            # an empty insight says why, rather than the category going missing here
            out.append(
                f"- **{category['name']}**: _nothing further: {rc.insight_gaps[category['id']]}._"
            )
    if len(out) == listed:
        out.append("_No insights yet._")
    out += ["", "## Frontier: adjacent questions", ""]
    for item in rc.adjacent_questions:
        why = f" — {item['why']}" if item.get("why") else ""
        out.append(f"- {item['question']}{why}")
    if not rc.adjacent_questions:
        out.append("_None proposed._")
    out += ["", "## Sources", ""]
    by_id = {s["id"]: s for s in rc.sources}
    for number, source_id in enumerate(numbering.order, 1):
        source = by_id[source_id]
        out.append(f"[{number}] `{source['file']}` — {source['location']}")
    if not numbering.order:
        out.append("_No source was cited; answers above are marked as not from the documents._")
    return "\n".join(out).rstrip() + "\n"
