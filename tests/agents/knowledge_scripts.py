"""Function models for the Understand and Build agents: each reply is decided from the schema
the agent asked for, with switches that make each backward trigger fire once."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kforge.agents.build.prompts import CodeReply, GapNote, Grounding
from kforge.agents.build.shapes import load_shape
from kforge.agents.understand.prompts import (
    Assessment,
    Calibration,
    CheckQuestion,
    Diagnosis,
    Grade,
    Remedial,
)
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo
from kforge.llm.types import Message
from kforge.rag.grading import Grade as RelevanceGrade
from kforge.rag.rewrite import Rewrite

__all__ = [
    "DOCS",
    "BuildScript",
    "UnderstandScript",
    "check_in_clean_shell",
    "schema_name",
    "write_docs",
]

DOCS = {
    "checkpoints.md": "# Checkpoints\n\nA blocking checkpoint pauses the run until a person "
    "approves, modifies or rejects the plan. The run waits without holding a worker, and the "
    "answer resumes it at the exact step.\n",
    "approval.md": "# Approval workflows\n\nAn approval workflow asks a person before a "
    "destructive tool runs. The person sees the tool, its arguments and the agent's reasoning, "
    "then approves or rejects the call.\n",
    "state.md": "# Durable state\n\nEvery step commits its frames and state change together, "
    "so a crashed run resumes from the last committed step without asking the model again.\n",
}

_SCHEMAS = {
    "relevance": schema_for(RelevanceGrade),
    "rewrite": schema_for(Rewrite),
    "calibrate": schema_for(Calibration),
    "assess": schema_for(Assessment),
    "diagnose": schema_for(Diagnosis),
    "remedial": schema_for(Remedial),
    "check_question": schema_for(CheckQuestion),
    "grade": schema_for(Grade),
    "grounding": schema_for(Grounding),
    "gap": schema_for(GapNote),
    "code": schema_for(CodeReply),
}


def write_docs(folder: Path) -> Path:
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def check_in_clean_shell(folder: Path, command: str) -> subprocess.CompletedProcess[str]:
    """An artifact's check command ("python check_x.py"), run from its folder with this Python
    and a bare environment, as a person would run it in a new shell."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder)}
    return subprocess.run(
        [sys.executable, *command.split()[1:]],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def schema_name(info: CallInfo) -> str:
    if info.output_schema is None:
        return "text"
    return next(k for k, v in _SCHEMAS.items() if v == info.output_schema)


@dataclass
class UnderstandScript:
    """A capable model teaching 'human checkpoints'; ``*_once`` switches fire a trigger once."""

    inaccurate_once: str = ""
    fail_once: bool = False
    missing_once: str = ""
    calls: list[str] = field(default_factory=list)
    systems: dict[str, list[str]] = field(default_factory=dict)
    """The system prompt of each call, by what was asked."""

    def __call__(self, messages: list[Message], info: CallInfo) -> Any:
        name = schema_name(info)
        if name == "text":
            name = "explain"
        self.calls.append(name)
        self.systems.setdefault(name, []).append(messages[0].content)
        match name:
            case "relevance":
                return {"relevance": "relevant", "confidence": 0.9, "reasoning": "on topic"}
            case "rewrite":
                return {"query": "checkpoint person approves"}
            case "calibrate":
                return {
                    "concepts": [
                        {"name": "Checkpoints", "level": "unknown"},
                        {"name": "Approval workflows", "level": "partial"},
                    ],
                    "check_questions": ["What does an approval workflow ask a person?"],
                }
            case "assess":
                return {
                    "known": [],
                    "partial": ["Approval workflows"],
                    "unknown": ["Checkpoints"],
                    "misconceptions": ["checkpoints stop the run for good"],
                    "goal": "design agents that people can steer",
                }
            case "diagnose":
                issue, self.inaccurate_once = self.inaccurate_once, ""
                return {
                    "objectives": [
                        {
                            "concept": "Checkpoints",
                            "objective": "Explain what a blocking checkpoint does",
                            "prerequisites": [],
                            "misconception": "checkpoints stop the run for good",
                        }
                    ],
                    "calibration_accurate": not issue,
                    "calibration_issue": issue,
                }
            case "remedial":
                return {"objective": "Name the three answers a person can give at a checkpoint"}
            case "check_question":
                return {"question": "What can a person do at a blocking checkpoint?"}
            case "grade":
                if self.missing_once:
                    missing, self.missing_once = self.missing_once, ""
                    return {
                        "understood": False,
                        "feedback": "The answer does not know what a run is.",
                        "missing_prerequisite": missing,
                    }
                if self.fail_once:
                    self.fail_once = False
                    return {
                        "understood": False,
                        "feedback": "A checkpoint pauses the run; it does not end it.",
                        "missing_prerequisite": "",
                    }
                return {"understood": True, "feedback": "Right.", "missing_prerequisite": ""}
        return (
            "A blocking checkpoint pauses the run until a person approves, modifies or "
            "rejects the plan [1]."
        )


@dataclass
class BuildScript:
    """A capable model building 'a CSV summary tool': it writes the module itself; switches
    make its first module fail its check, import a missing package, or name a gap."""

    broken_once: bool = False
    missing_module_once: bool = False
    gap_once: str = ""
    calls: list[str] = field(default_factory=list)
    systems: dict[str, list[str]] = field(default_factory=dict)

    def __call__(self, messages: list[Message], info: CallInfo) -> Any:
        name = schema_name(info)
        self.calls.append(name)
        self.systems.setdefault(name, []).append(messages[0].content)
        match name:
            case "relevance":
                return {"relevance": "not_relevant", "confidence": 0.9, "reasoning": "off topic"}
            case "rewrite":
                return {"query": "csv columns"}
            case "grounding":
                return {
                    "shape": "csv_summary",
                    "summary": "A command-line tool that prints a summary of each column of a "
                    "CSV file.",
                    "concepts": [],
                    "constraints": ["Print one line per column."],
                }
            case "gap":
                return {
                    "concept": {
                        "name": "CSV dialects",
                        "explanation": "The csv module reads quoted cells and other dialects.",
                    },
                    "constraint": "Read the file with csv.DictReader.",
                }
            case "code":
                if self.gap_once:
                    gap, self.gap_once = self.gap_once, ""
                    return {"files": [], "conceptual_gap": gap}
                if self.missing_module_once:
                    self.missing_module_once = False
                    return {
                        "files": [{"path": "csv_summary.py", "content": "import pandas\n"}],
                        "conceptual_gap": "",
                    }
                if self.broken_once:
                    self.broken_once = False
                    return {
                        "files": [
                            {
                                "path": "csv_summary.py",
                                "content": "def summarize(path):\n    return {'rows': 0}\n",
                            }
                        ],
                        "conceptual_gap": "",
                    }
                good = load_shape("csv_summary").template("csv_summary.py")
                return {
                    "files": [{"path": "csv_summary.py", "content": good}],
                    "conceptual_gap": "",
                }
        return "A tool that summarises the columns of a CSV file."
