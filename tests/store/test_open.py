"""``open_store`` on a database written before the run log and the passage store were two
protocols (``data/before_the_split.sql``: a run waiting for its user's answer, and a corpus of
two notes, as that version left them): it opens as it is, its run resumes and its corpus is
searched where it lies."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from kforge.llm.testing.scripted import ScriptedModel
from kforge.store import RunStatus
from kforge.store.migrations import MIGRATIONS, schema_version
from kforge.store.open import open_store
from tests.agents.helpers import runtime

EARLIER = Path(__file__).parent / "data" / "before_the_split.sql"
SRC = Path(__file__).resolve().parents[2] / "src"


def earlier_database(tmp_path: Path) -> Path:
    path = tmp_path / "kforge.db"
    conn = sqlite3.connect(path)
    conn.executescript(EARLIER.read_text(encoding="utf-8"))
    conn.close()
    return path


async def test_an_earlier_database_s_run_resumes_and_its_corpus_is_searched(
    tmp_path: Path,
) -> None:
    path = earlier_database(tmp_path)
    store = open_store(path)
    [waiting] = store.list_runs(status=RunStatus.AWAITING_USER)
    assert (waiting.pending_interaction or {}).get("prompt") == "Which country?"
    model = ScriptedModel(
        [
            {
                "thought": "Look it up",
                "action": "tool_call",
                "tool": "lookup_capital",
                "arguments": {"country": "Japan"},
            },
            {"observation": "Tokyo", "goal_achieved": True},
            "Tokyo.",
        ]
    )
    rt = runtime(model, store=store)  # type: ignore[arg-type]
    await rt.resume(waiting.id, "Japan")
    done = await rt.wait(waiting.id)
    assert done.status == RunStatus.COMPLETED, done.error
    assert (done.result or {}).get("answer") == "Tokyo."
    model.assert_consumed()

    corpus = rt.services.corpus("docs")
    before = store.index_version("docs")
    [best, *_] = corpus.search("When was the Fastnet light first lit?", 2)
    assert "1904" in best.chunk.text
    assert store.index_version("docs") == before  # the run's commits leave it as it is
    store.close()
    conn = sqlite3.connect(path)
    assert schema_version(conn) == MIGRATIONS[-1][0]
    conn.close()


def test_the_cli_lists_an_earlier_database_s_runs_and_corpora(tmp_path: Path) -> None:
    path = earlier_database(tmp_path)

    def kforge(*argv: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "kforge", "--db", str(path), *argv],
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "awaiting_user" in kforge("runs", "list")
    listed = kforge("corpora", "list")
    assert "docs" in listed and "/srv/notes" in listed
