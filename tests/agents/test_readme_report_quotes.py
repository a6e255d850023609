"""The README's main job (`kforge research "How do agents keep a human in the loop?" --yes` on the
bundled model and the sample documents): every question of its tree is about the question, and
every sentence of its report is a verbatim stretch of the passage its marker cites."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kforge
from kforge.agents.research.planning import about_question
from kforge.rag import sample_corpus_path
from kforge.rag.focus import CorpusStatistics, question_focus
from kforge.rag.ingest import ingest_folder
from kforge.runtime import Runtime
from kforge.store import MemoryStore

SRC = Path(kforge.__file__).resolve().parents[1]
QUESTION = "How do agents keep a human in the loop?"
_SOURCE = re.compile(r"^\[(\d+)\] `([^`]+)` — .*chars (\d+)-(\d+)$")
_MARKER = re.compile(r"\s*\[(\d+)\]")
_QUESTION_LINE = re.compile(r"\*\*[^*]+\*\*")


def _flat(text: str) -> str:
    return " ".join(text.split())


def quoted_pieces(report: str) -> list[tuple[str, int]]:
    """Each stretch of the report's answers and insights that ends in a marker, with the
    number it cites."""
    body = report.split("\n## Frontier")[0].split("\n## Answers", 1)[1]
    pieces = []
    for line in body.splitlines():
        line = re.sub(r"^- \*\*[^*]+\*\*: ", "", line.strip())
        # a heading, or a sub-question's line (all bold); an answer may open in bold
        if not _MARKER.search(line) or line.startswith("#") or _QUESTION_LINE.fullmatch(line):
            continue
        start = 0
        for marker in _MARKER.finditer(line):
            piece = line[start : marker.start()].lstrip(" .;,")
            start = marker.end()
            if piece:
                pieces.append((piece, int(marker.group(1))))
    return pieces


@pytest.mark.slow
def test_the_readme_reports_sentences_are_quoted_exactly(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kforge",
            "--db",
            str(tmp_path / "k.db"),
            "research",
            QUESTION,
            "--yes",
            "-o",
            str(tmp_path / "r.md"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "r.md").read_text()
    tree = report.split("## Question tree", 1)[1].split("## Answers", 1)[0]
    asked = re.findall(r"^  - (.+?) _\(", tree, re.MULTILINE)
    corpus = Runtime(MemoryStore()).services.corpus("samples")
    ingest_folder(corpus, sample_corpus_path())
    focus = question_focus(QUESTION, CorpusStatistics.of(corpus))
    assert asked and asked[0] == QUESTION
    off = [q for q in asked if not about_question(q, [focus])]
    assert not off, off  # not "What are agent architectures?", which shares only "agents"
    sources = {}
    for line in report.split("## Sources", 1)[1].splitlines():
        found = _SOURCE.match(line.strip())
        if found:
            number, file, lo, hi = found.groups()
            text = (sample_corpus_path() / file).read_text(encoding="utf-8")
            sources[int(number)] = _flat(text[int(lo) : int(hi)])
    pieces = quoted_pieces(report)
    assert len(pieces) >= 4
    for piece, number in pieces:
        assert _flat(piece) in sources[number], (piece, number)
