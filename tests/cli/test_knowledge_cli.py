"""``kforge understand`` and ``kforge build`` as a user runs them: real processes, a real
database, the answers file, exit codes, nothing written outside ``--out``, and the artifact's
check passing from a clean shell. The ``test`` model with extractive answers is the small-model
path without the model; the ``slow`` tests run the bundled model end to end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agents.knowledge_scripts import check_in_clean_shell
from tests.cli.function_endpoint import FunctionEndpoint

SRC = Path(__file__).resolve().parents[2] / "src"


def kforge(
    cwd: Path, *args: str, timeout: float = 300, base_url: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("KFORGE_MODEL", None)
    if base_url:
        env.update(KFORGE_BASE_URL=base_url, OPENAI_API_KEY="test-key")
    return subprocess.run(
        [sys.executable, "-m", "kforge", "--db", str(cwd / "k.db"), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


FAKE = ("--model", "test:cli", "--answer", "extractive")
ANSWERS = """# what I know, what I want, then the checks
I have built a chatbot
design agents people can steer
it pauses the run for a person
not sure
{"action": "modify", "modifications": {"goal": "steer agents safely"}}
approve
a checkpoint is a saved copy of a run's state from which it can resume
not sure
not sure
not sure
not sure
not sure
"""


def understand(
    tmp_path: Path, *options: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``kforge understand`` on the samples, answered from ANSWERS, the record in record.md."""
    (tmp_path / "answers.txt").write_text(ANSWERS)
    topic = "human-in-the-loop checkpoints"
    return kforge(
        tmp_path,
        "understand",
        topic,
        "--answers",
        "answers.txt",
        "-o",
        "record.md",
        *options,
        timeout=timeout,
    )


def test_understand_answers_from_a_file_and_writes_the_learning_record(tmp_path: Path) -> None:
    done = understand(tmp_path, *FAKE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "report written to record.md"
    record = (tmp_path / "record.md").read_text()
    assert "- **Goal:** steer agents safely" in record  # the modify line of the file
    assert "**Your answer:** a checkpoint is a saved copy" in record
    assert "## Sources" in record and "checkpoints-and-resume.md" in record
    assert "? In a sentence or two, what do you understand by" in done.stderr
    explained = kforge(tmp_path, "runs", "explain", done.stderr.split("run ")[1].split()[0])
    assert "learning:" in explained.stdout and "checks understood:" in explained.stdout


def test_understand_waits_when_the_answers_run_out_and_says_how_to_answer(
    tmp_path: Path,
) -> None:
    (tmp_path / "answers.txt").write_text("I have built a chatbot\n")
    done = kforge(tmp_path, "understand", "checkpoints", "--answers", "answers.txt", *FAKE)
    assert done.returncode == 3, done.stderr
    assert "--answer 'YOUR ANSWER'" in done.stderr
    missing = kforge(tmp_path, "understand", "checkpoints", "--answers", "nope.txt", *FAKE)
    assert missing.returncode == 1
    assert "kforge: error: answers file nope.txt does not exist" in missing.stderr


def test_understand_with_nothing_to_teach_exits_1_and_writes_no_record(tmp_path: Path) -> None:
    (tmp_path / "answers.txt").write_text(ANSWERS)
    done = kforge(
        tmp_path,
        "understand",
        "quantum chromodynamics",
        "--answers",
        "answers.txt",
        "-o",
        "record.md",
        *FAKE,
    )
    assert done.returncode == 1, done.stderr
    assert (
        "\nkforge: error: I found nothing to teach about quantum chromodynamics in these documents"
        in done.stderr
    )
    assert not (tmp_path / "record.md").exists()
    assert "every objective was understood" not in done.stdout + done.stderr


def test_research_asks_each_part_of_the_question_and_answers_it_from_the_documents(
    tmp_path: Path,
) -> None:
    question = (
        "What is a human checkpoint, how is a paused run resumed, and what are the limits "
        "of an agent loop?"
    )
    done = kforge(tmp_path, "research", question, "--yes", "-o", "report.md", *FAKE)
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "report.md").read_text()
    tree = report.split("## Answers")[0]
    for category, asked in [
        ("Human checkpoint", "What is a human checkpoint?"),
        ("Resuming a paused run", "How is a paused run resumed?"),
        ("Limits of an agent loop", "What are the limits of an agent loop?"),
    ]:
        assert f"- **{category}**\n  - {asked} _(answered)_" in tree
        answer = report.split(f"**{asked}**\n\n", 1)[1].split("\n\n", 1)[0]
        assert re.search(r"\[\d+\]", answer), answer  # taken from the documents, cited


def test_build_writes_only_in_out_and_the_artifact_checks_itself(tmp_path: Path) -> None:
    done = kforge(tmp_path, "build", "a CSV summary tool", "--out", "tool", "--yes", *FAKE)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "tool"
    assert done.stdout.strip() == f"artifact written to {out}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.db", "tool"]
    assert "check it with: cd" in done.stderr
    checked = check_in_clean_shell(out, "python check_csv_summary.py")
    assert checked.returncode == 0, checked.stderr
    assert "all checks passed" in checked.stdout
    log = (out / "BUILD_LOG.md").read_text()
    assert "check 1 (template files): passed" in log
    run_id = done.stderr.split("\nrun ")[1].split()[0]
    explained = kforge(tmp_path, "runs", "explain", run_id)
    assert "build: 5 files | checks passed: 3 of 3" in explained.stdout


def test_build_refuses_a_folder_that_is_not_empty_and_waits_without_yes(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "mine.txt").write_text("keep me")
    refused = kforge(tmp_path, "build", "a CSV summary tool", "--out", "busy", *FAKE)
    assert refused.returncode == 1
    assert "cannot build in busy: it is not empty" in refused.stderr
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["mine.txt"]
    waiting = kforge(tmp_path, "build", "a CSV summary tool", "--out", "new", *FAKE)
    assert waiting.returncode == 3
    assert "Proceed with this plan?" in waiting.stderr
    assert not any((tmp_path / "new").iterdir())  # nothing is made before the plan is approved


TOC = "a tool that prints a table of contents from the headings of a Markdown file"
TOC_PROGRAM = """import sys


def contents(text):
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            if line[level:].strip():
                lines.append("  " * (level - 1) + "- " + line[level:].strip())
    return lines


def main(argv):
    with open(argv[0], encoding="utf-8") as f:
        print("\\n".join(contents(f.read())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""


def toc_model(program: str) -> FunctionEndpoint:
    """A capable model asked for a table of contents: it first offers the CSV shape (its
    nearest), then plans the program with a check from the goal and writes ``program``."""

    def reply(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> Any:
        fields = set((schema or {}).get("properties") or {})
        if "shape" in fields:
            return {"shape": "csv_summary", "summary": "", "concepts": [], "constraints": []}
        if "sample_name" in fields:
            return {
                "module": "toc",
                "title": "Markdown table of contents",
                "sample_name": "sample.md",
                "sample": "# Guide\n\nHow to start.\n\n## Install\n\n```\n# not a heading\n"
                "```\n\n## Use\n\n### Options\n",
                "arguments": ["sample.md"],
                "expected": ["- Guide", "  - Install", "  - Use", "    - Options"],
            }
        if "files" in fields:
            return {"files": [{"path": "toc.py", "content": program}], "conceptual_gap": ""}
        if schema:
            raise AssertionError(f"unexpected request for {sorted(fields)}")
        return "A tool that prints a table of contents of the headings of a Markdown file."

    return FunctionEndpoint(reply)


def build_toc(tmp_path: Path, program: str) -> subprocess.CompletedProcess[str]:
    with toc_model(program) as endpoint:
        return kforge(
            tmp_path, "build", TOC, "--yes", "--out", "toc", "--model", "openai:fake",
            base_url=endpoint.base_url,
        )  # fmt: skip


def test_build_refuses_a_goal_no_known_program_does_on_a_model_that_writes_no_code(
    tmp_path: Path,
) -> None:
    refused = kforge(tmp_path, "build", TOC, "--yes", "--out", "toc", *FAKE)
    assert refused.returncode == 1, refused.stderr
    error = refused.stderr.split("kforge: error: ")[-1]
    assert f'cannot build "{TOC}"' in error and "none of them does what the goal asks" in error
    assert '"a CSV summary tool"' in error and "--answer generative" in error
    assert "artifact written" not in refused.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.db"]  # nothing written


def test_build_checks_a_capable_models_program_against_the_goal_not_a_shape(
    tmp_path: Path,
) -> None:
    done = build_toc(tmp_path, TOC_PROGRAM)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "toc"
    assert sorted(p.name for p in out.iterdir()) == [
        "BUILD_LOG.md", "README.md", "check_toc.py", "sample.md", "toc.py",
    ]  # fmt: skip
    assert "check it with: cd" in done.stderr and "python check_toc.py" in done.stderr
    checked = check_in_clean_shell(out, "python check_toc.py")
    assert checked.returncode == 0, checked.stderr
    assert "all checks passed" in checked.stdout
    readme = (out / "README.md").read_text()
    assert "CSV" not in readme and "csv" not in readme
    assert "python toc.py sample.md" in readme and "'    - Options'" in readme
    log = (out / "BUILD_LOG.md").read_text()
    assert "written for the goal" in log and "check 1 (model files): passed" in log


def test_build_says_a_program_failed_its_goals_check_and_the_readme_says_so(
    tmp_path: Path,
) -> None:
    echo = "import sys\nprint(open(sys.argv[1]).read())\n"  # prints the file: not a TOC
    done = build_toc(tmp_path, echo)
    assert done.returncode == 1, done.stderr
    assert "some steps did not pass their checks" in done.stderr
    readme = (tmp_path / "toc" / "README.md").read_text()
    assert "**Not working:** The program toc.py: did not pass its check" in readme
    assert (tmp_path / "toc" / "toc.py").read_text() == echo  # no other program put in its place


@pytest.mark.slow
def test_understand_and_build_complete_on_the_default_model(tmp_path: Path) -> None:
    learned = understand(tmp_path, timeout=900)
    assert learned.returncode == 0, learned.stderr
    record = (tmp_path / "record.md").read_text()
    assert "## Objectives" in record and "[1] `" in record
    built = kforge(tmp_path, "build", "a CSV summary tool", "--yes", "--out", "tool", timeout=900)
    assert built.returncode == 0, built.stderr
    checked = check_in_clean_shell(tmp_path / "tool", "python check_csv_summary.py")
    assert checked.returncode == 0, checked.stderr


def test_a_waiting_question_shows_its_explanation_and_sources_as_text() -> None:
    from kforge.cli.pending import render_review

    lines = render_review(
        {
            "objective": "What is a checkpoint?",
            "explanation": "A checkpoint pauses the run [1]. " * 6,
            "sources": ["[1] checkpoints.md (§ Checkpoints)"],
            "knowledge": {"known": ["Approval"], "unknown": []},
        }
    )
    assert lines[0] == "objective  What is a checkpoint?"
    assert lines[1].startswith("explanation A checkpoint pauses the run [1].")
    wrapped = lines[1].split("\n")
    assert len(wrapped) > 1 and all(w.startswith(" " * 12) and w[12] != " " for w in wrapped[1:])
    assert "  - [1] checkpoints.md (§ Checkpoints)" in lines
    assert "  known           Approval" in lines and "  unknown         -" in lines
