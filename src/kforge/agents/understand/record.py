"""The learning record: the knowledge state, each objective with its cited explanation, the
check question and the learner's answer, and what remains, as Markdown."""

from __future__ import annotations

from kforge.agents.understand.context import UnderstandPhaseContext

__all__ = ["render_record"]

_STATUS = {
    "passed": "understood",
    "open": "not yet understood",
    "failed": "check failed",
    "reviewing": "check failed; being reviewed",
    "gap": "waiting for a prerequisite",
    "pending": "not taught yet",
    "explained": "explained; check not answered yet",
}


def render_record(topic: str, rc: UnderstandPhaseContext) -> str:
    numbers = {s["id"]: n for n, s in enumerate(rc.sources, 1)}
    state = rc.knowledge or {}
    out = [f"# Learning record: {topic}", ""]
    out += ["## What you knew", ""]
    for level, label in (("known", "Known"), ("partial", "Partly known"), ("unknown", "New")):
        out.append(f"- **{label}:** {', '.join(state.get(level, [])) or '-'}")
    if state.get("misconceptions"):
        out.append(f"- **Misconceptions:** {'; '.join(state['misconceptions'])}")
    if state.get("goal"):
        out.append(f"- **Goal:** {state['goal']}")
    out += ["", "## Objectives", ""]
    for number, objective in enumerate(rc.objectives, 1):
        out.append(f"### {number}. {objective['text']}")
        out.append("")
        status = _STATUS.get(objective["status"], objective["status"])
        remedial = " (review)" if objective.get("remedial_for") else ""
        document = f" — from `{objective['document']}`" if objective.get("document") else ""
        out += [f"_{objective['concept']}{remedial}{document} — {status}_", ""]
        text = []
        for segment in objective["explanation"]:
            sentence = segment["text"].rstrip()
            end = sentence[-1] if sentence and sentence[-1] in ".!?" else ""
            mark = f" [{numbers[segment['source_id']]}]" if segment["source_id"] in numbers else ""
            text.append(f"{sentence[: len(sentence) - len(end)]}{mark}{end}")
        if text:
            out += [" ".join(text), ""]
        if objective["check_question"]:
            out.append(f"**Check:** {objective['check_question']}")
            out.append("")
            answer = objective["answer"]
            out.append(f"**Your answer:** {answer if answer else '_(not answered)_'}")
            if objective["feedback"]:
                out.append(f"**Feedback:** {objective['feedback']}")
            out.append("")
    if not rc.objectives:
        out += ["_No objectives: you said you know what the documents teach about it._", ""]
    remaining = [o for o in rc.objectives if o["status"] != "passed"]
    out += ["## What remains", ""]
    out += [f"- {o['text']} ({_STATUS.get(o['status'], o['status'])})" for o in remaining] or [
        "- Nothing: every objective was understood."
        if rc.objectives
        else "- Nothing to teach: the knowledge state already holds it."
    ]
    cited = [s for s in rc.sources if any(s["id"] in o["source_ids"] for o in rc.objectives)]
    out += ["", "## Sources", ""]
    out += [f"[{numbers[s['id']]}] `{s['file']}` — {s['location']}" for s in cited] or [
        "_No source was cited._"
    ]
    return "\n".join(out).rstrip() + "\n"
