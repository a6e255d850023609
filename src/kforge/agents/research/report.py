"""Render the Research agent's findings as a Markdown report with numbered citations."""

from __future__ import annotations

from kforge.agents.research.context import ResearchPhaseContext

__all__ = ["render_report"]


def render_report(question: str, rc: ResearchPhaseContext) -> str:
    numbers = {s["id"]: i for i, s in enumerate(rc.sources, 1)}
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
            cites = "".join(f"[{numbers[s]}]" for s in answer["source_ids"] if s in numbers)
            out.append(f"{answer['text']} {cites}".rstrip())
            if answer.get("fallback"):
                out += [
                    "",
                    f"> {answer.get('disclaimer') or 'No relevant source was found; this answer comes from the model alone.'}",
                ]
            out.append("")
    out += ["## Insights by category", ""]
    for category in rc.categories:
        insight = rc.category_insights.get(category["id"])
        if insight:
            out.append(f"- **{category['name']}**: {insight}")
    if not rc.category_insights:
        out.append("_No insights yet._")
    out += ["", "## Frontier: adjacent questions", ""]
    for item in rc.adjacent_questions:
        why = f" — {item['why']}" if item.get("why") else ""
        out.append(f"- {item['question']}{why}")
    if not rc.adjacent_questions:
        out.append("_None proposed._")
    out += ["", "## Sources", ""]
    for source in rc.sources:
        out.append(f"[{numbers[source['id']]}] `{source['file']}` — {source['location']}")
    if not rc.sources:
        out.append("_No source was graded relevant; answers above are marked as model-only._")
    return "\n".join(out).rstrip() + "\n"
