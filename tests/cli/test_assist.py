"""``kforge assist``, ``kforge tree`` and ``kforge intervene`` through the entry point, in
subprocesses against a scripted OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kforge
from kforge.store import RunStatus, SQLiteStore
from tests.agents.tree_model import TreeScript
from tests.cli.tree_endpoint import TreeEndpoint

SRC = Path(kforge.__file__).resolve().parents[1]
PARTY = "Plan my birthday party"
FOOD = "What food should we serve?"
VENUE = "Which venue works best?"


def kforge_proc(endpoint: TreeEndpoint, db: Path, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "KFORGE_BASE_URL": endpoint.base_url,
        "OPENAI_API_KEY": "test-key",
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("KFORGE_MODEL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "kforge", "--db", str(db), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=db.parent,
    )


def assist(endpoint: TreeEndpoint, db: Path, *extra: str, stdin: str = "") -> tuple[int, str, str]:
    proc = kforge_proc(endpoint, db, "assist", PARTY, "--model", "openai:fake", "--no-docs", *extra)
    out, err = proc.communicate(stdin, timeout=120)
    return proc.returncode, out, err


def root_of(err: str) -> str:
    return next(line.split()[1] for line in err.splitlines() if line.startswith("run "))


def script() -> TreeScript:
    return TreeScript(
        ambiguous=(PARTY,),
        missing={PARTY: ["How many guests are coming?"]},
        subquestions={PARTY: [FOOD, VENUE]},
    )


def test_assist_yes_declines_the_questions_and_prints_the_answer(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with TreeEndpoint(script()) as endpoint:
        code, out, err = assist(endpoint, db, "--yes")
    assert code == 0, err
    assert out.startswith(f"Answer about {PARTY}.")
    assert f"- {FOOD} Answer about {FOOD}." in out
    assert "Not answered by you: Which party do you mean exactly?" in out
    assert "? [" in err and "(declined: --yes)" in err
    root = root_of(err)
    # one line per agent as its state changes; all three end completed
    assert f"completed     {root[:8]}  {PARTY}" in err
    assert err.count("completed") >= 3
    assert "Traceback" not in err


def test_assist_reads_answers_from_stdin_when_it_is_not_a_terminal(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with TreeEndpoint(script()) as endpoint:
        code, _out, err = assist(endpoint, db, stdin="The one on Saturday\n\n")
    assert code == 0, err
    store = SQLiteStore(db)
    run = store.get_run(root_of(err))
    store.close()
    meta = (run.result or {})["metadata"]
    assert meta["clarifications"] == [
        {"question": "Which party do you mean exactly?", "answer": "The one on Saturday"}
    ]
    assert meta["declined"] == ["How many guests are coming?"]  # the empty line declined it


def test_assist_takes_answers_from_a_file(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    answers = tmp_path / "answers.txt"
    answers.write_text("The garden one\nTwenty\n", encoding="utf-8")
    with TreeEndpoint(script()) as endpoint:
        code, _out, err = assist(endpoint, db, "--answers", str(answers))
        missing = assist(endpoint, db, "--answers", str(tmp_path / "nope.txt"))
    assert code == 0, err
    assert "  The garden one" in err and "  Twenty" in err
    assert missing[0] == 1 and "--answers" in missing[2] and "no such file" in missing[2]


def test_tree_and_intervene_commands(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with TreeEndpoint(TreeScript(subquestions={PARTY: [FOOD, VENUE]}), hold=VENUE) as endpoint:
        proc = kforge_proc(endpoint, db, "assist", PARTY, "--model", "openai:fake", "--no-docs")
        assert proc.stderr is not None
        root = ""
        while not root:
            line = proc.stderr.readline()
            assert line, proc.communicate()[1]
            if line.startswith("run "):
                root = line.split()[1]
        assert endpoint.held.wait(60)  # the venue subagent is inside its main execution
        shown = kforge_proc(endpoint, db, "tree", root[:10], "--json")
        tree = json.loads(shown.communicate(timeout=60)[0])
        venue = next(a for a, node in tree.items() if node["userContent"] == VENUE)
        deleted = kforge_proc(endpoint, db, "intervene", venue, "--delete")
        _, said = deleted.communicate(timeout=60)
        assert deleted.returncode == 0, said
        assert "next step" in said
        endpoint.release.set()
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert f"- {VENUE} (deleted by the user before it finished)" in out
        lines = kforge_proc(endpoint, db, "tree", root)
        printed, _ = lines.communicate(timeout=60)
        assert printed.splitlines()[0].startswith(f"completed     {root[:8]}  {PARTY}")
        assert f"  deleted       {venue[:8]}  {VENUE}  [delete]" in printed
        late = kforge_proc(endpoint, db, "intervene", root, "--comment", "too late")
        _, refused = late.communicate(timeout=60)
        assert late.returncode == 1
        assert "is completed: it has finished, so it takes no intervention" in refused
        bad = kforge_proc(endpoint, db, "intervene", root)
        assert bad.wait(60) == 2
        empty = kforge_proc(endpoint, db, "intervene", root, "--modify", " ")
        _, said = empty.communicate(timeout=60)
        assert empty.returncode == 1 and "--modify needs text" in said
    store = SQLiteStore(db)
    assert store.get_run(venue).status == RunStatus.DELETED
    store.close()


def test_assist_refuses_bad_options_before_any_run(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with TreeEndpoint(TreeScript()) as endpoint:
        code, _, err = assist(endpoint, db, "--subquestions", "9")
        assert code == 1 and "--subquestions must be 0 to 4 (got 9)" in err
        empty = kforge_proc(endpoint, db, "assist", "  ", "--no-docs")
        _, said = empty.communicate(timeout=60)
        assert empty.returncode == 1 and "the request is empty" in said


def test_kforge_tree_shows_a_persons_comment_whole() -> None:
    from kforge.cli.tree import tree_lines

    note = "please compare the two venues by price, distance from the station and capacity"
    tree = {
        "a" * 32: {
            "status": "running",
            "userContent": "Plan a party",
            "userComment": note,
            "subagents": [],
        }
    }
    assert tree_lines(tree) == [f"running       aaaaaaaa  Plan a party  [{note}]"]


def test_assist_asks_no_statement_and_splits_a_request_into_the_parts_it_names(
    tmp_path: Path,
) -> None:
    tasks = "Compare Python with Go; explain closures; and how to install Go"
    db = tmp_path / "k.db"
    statements = TreeScript(missing={tasks: ["The budget is 100,000,000,000,000"]})
    with TreeEndpoint(statements) as endpoint:
        proc = kforge_proc(endpoint, db, "assist", tasks, "--model", "openai:fake", "--no-docs")
        out, err = proc.communicate("", timeout=120)
    assert proc.returncode == 0, err
    assert "? [" not in err and "budget" not in err + out  # nothing was asked
    for part in ("Compare Python with Go", "Explain closures", "How to install Go"):
        assert f"- {part} Answer about {part}." in out
