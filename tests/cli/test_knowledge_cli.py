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

import pytest

from tests.agents.knowledge_scripts import check_in_clean_shell

SRC = Path(__file__).resolve().parents[2] / "src"


def kforge(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("KFORGE_MODEL", None)
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
    assert "I found nothing to teach about quantum chromodynamics in these documents" in done.stderr
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
