"""The build log: the plan, each step's checks and their results, the files, and how to check
the artifact again, as Markdown (``BUILD_LOG.md`` in the workspace)."""

from __future__ import annotations

from typing import Any

from kforge.agents.build.context import BuildPhaseContext
from kforge.agents.build.shapes import Shape

__all__ = ["render_log"]


def render_log(goal: str, shape: Shape, rc: BuildPhaseContext, workspace: str) -> str:
    numbers = {s["id"]: n for n, s in enumerate(rc.sources, 1)}
    out = [f"# Build log: {goal}", ""]
    fit = " (written for the goal: no known program does what it asks)" if not rc.fit else ""
    out += [f"**Program:** {shape.title}{fit}", "", rc.summary, ""]
    out += [f"**Workspace:** `{workspace}`", ""]
    out += ["## Concepts", ""]
    for concept in rc.concepts:
        cites = "".join(f" [{numbers[s]}]" for s in concept.get("source_ids", []) if s in numbers)
        origin = " _(from the documents)_" if cites else ""
        out.append(f"- **{concept['name']}**: {concept['explanation']}{cites}{origin}")
    out += ["", "## Constraints", ""]
    out += [f"- {c}" for c in rc.constraints] or ["_None._"]
    out += ["", "## Plan and checks", ""]
    for number, step in enumerate(rc.plan, 1):
        out.append(f"{number}. **{step['title']}** — {step['status']}")
        out.append(f"   - files: {', '.join(f'`{f}`' for f in step['files'])}")
        out.append(f"   - accepts when: {step['accept']}")
        for check in step.get("checks", []):
            verdict = "passed" if check["ok"] else "FAILED"
            output = _first_line(check.get("output", ""))
            out.append(
                f"   - check {check['attempt']} ({check['origin']} files): {verdict}"
                + (f" — {output}" if output else "")
            )
    out += ["", "## Files", ""]
    for path, record in sorted(rc.files.items()):
        out.append(
            f"- `{path}` ({record['bytes']} bytes, sha256 {record['sha256'][:12]}, "
            f"{record['origin']})"
        )
    out += ["", "## Check it yourself", "", "```bash", f"cd {workspace}", shape.check, "```"]
    if rc.sources:
        out += ["", "## Sources", ""]
        out += [f"[{numbers[s['id']]}] `{s['file']}` — {s['location']}" for s in rc.sources]
    return "\n".join(out).rstrip() + "\n"


def _first_line(text: Any) -> str:
    lines = [line.strip() for line in str(text or "").splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1] if len(lines) > 1 and lines[0].startswith("Traceback") else lines[0]
    return line if len(line) <= 160 else line[:159] + "…"
