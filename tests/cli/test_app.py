"""``--app MODULE`` (or ``KFORGE_APP``): a tree run that uses an application's own tool,
started with its module, killed, and continued from the command line: without the module the
command refuses, naming the run's agent and the option, and changes nothing; with it the run
completes, the tool called once. A worker given the module executes runs that use its tool."""

from __future__ import annotations

import shutil
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from kforge.agents.tree import prompts
from kforge.frames import ToolResultFrame
from kforge.llm.types import ToolCall
from kforge.runtime import Runtime
from kforge.store import RunStatus, SQLiteStore
from tests.cli import shop_app
from tests.cli.function_endpoint import FunctionEndpoint
from tests.cli.processes import kforge_popen

REQUEST = "What does the cake cost?"


class Shop:
    """Replies to the tree's decisions (nothing to clarify, no subquestions); its answer call
    asks the tool, then answers with what the tool said. The first answer call is held."""

    def __init__(self) -> None:
        self.held = threading.Event()
        self.release = threading.Event()
        self.answer_calls = 0

    def __call__(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> Any:
        system = messages[0].get("content") or ""
        if system == prompts.CLARIFY_PROMPT:
            return {"ambiguous": False, "question": ""}
        if system == prompts.MISSING_PROMPT:
            return {"missing": False, "question": ""}
        if system == prompts.RESOLVE_PROMPT:
            return {"ask": False, "question": ""}
        if schema is not None:
            return {"subquestions": []}
        said = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
        if said:
            return f"The cake costs {said[-1].split(': ')[-1]}."
        self.answer_calls += 1
        if self.answer_calls == 1:
            self.held.set()
            self.release.wait(60)
        return ToolCall("lookup", {"item": "cake"}, "call-1")


def test_a_tree_using_an_applications_tool_continues_with_its_module(tmp_path: Path) -> None:
    shutil.copy(Path(shop_app.__file__), tmp_path / "shopapp.py")
    ledger = tmp_path / "ledger.txt"
    db = tmp_path / "shop.db"
    shop = Shop()
    with FunctionEndpoint(shop) as endpoint:
        env = {
            "KFORGE_BASE_URL": endpoint.base_url,
            "OPENAI_API_KEY": "test-key",
            "SHOP_LEDGER": str(ledger),
        }

        def kforge(*args: str, **extra: str) -> Any:
            return kforge_popen(
                ["--db", str(db), *args], cwd=tmp_path, env={**env, **extra}, path=[tmp_path]
            )

        unknown = kforge("assist", REQUEST, "--tools", "lookup", "--no-docs", "--model", "openai:x")
        _, err = unknown.communicate(timeout=120)
        assert unknown.returncode == 1, err
        assert not db.exists() or not SQLiteStore(db).list_runs()  # no run was started
        assert "--tools uses tool 'lookup', which this process was not given; pass --app" in err
        started = kforge(
            "assist", REQUEST, "--app", "shopapp", "--tools", "lookup", "--no-docs", "--yes",
            "--model", "openai:fake",
        )  # fmt: skip
        assert shop.held.wait(60)
        started.send_signal(signal.SIGKILL)
        started.wait(60)
        shop.release.set()
        store = SQLiteStore(db)
        (root,) = [r for r in store.list_runs() if r.parent_id is None]
        assert root.status == RunStatus.RUNNING and root.agent_type == "tree"

        refused = kforge("runs", "resume", root.id)
        _, err = refused.communicate(timeout=120)
        assert refused.returncode == 1, err
        assert f"run {root.id} (tree agent) uses tool 'lookup'" in err, err
        assert "--app MODULE" in err and "KFORGE_APP" in err and "nothing was resumed" in err
        assert "react agent" not in err and "Traceback" not in err
        after = store.get_run(root.id)
        assert (after.status, after.last_seq) == (RunStatus.RUNNING, root.last_seq)

        resumed = kforge("runs", "resume", root.id, KFORGE_APP="shopapp")
        _, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        done = store.get_run(root.id)
        assert done.status == RunStatus.COMPLETED, done.error
        assert "The cake costs 12 euros." in (done.result or {})["answer"]
        assert ledger.read_text(encoding="utf-8").splitlines() == ["cake"]
        store.close()


def test_serve_refuses_an_application_module_that_cannot_load_before_it_listens(
    tmp_path: Path,
) -> None:
    (tmp_path / "broken.py").write_text("def kforge_services():\n    return 42\n")
    for spec, says in (
        ("nosuchapp", "cannot import nosuchapp"),
        ("broken", "must return kforge.Services or a list of tools (got int)"),
        ("broken:missing", "broken has no function missing()"),
    ):
        proc = kforge_popen(
            ["--db", str(tmp_path / "x.db"), "serve", "--no-samples", "--app", spec],
            cwd=tmp_path,
            path=[tmp_path],
        )
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 1 and says in err and "Traceback" not in err, err


async def test_a_worker_given_the_module_executes_runs_that_use_its_tool(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("dbos", reason="the dbos extra is not installed")
    from tests.runtime.test_workers import start_worker, stop_workers

    ledger = tmp_path / "ledger.txt"
    monkeypatch.setenv("SHOP_LEDGER", str(ledger))
    rt = Runtime(postgres_url, model="test", executor="dbos")
    app = ("--app", "tests.cli.shop_app")
    proc, _ = start_worker(postgres_url, tmp_path / "effects.txt", 1, *app)
    try:
        args = {"goal": "Price the cake", "tools": ["lookup"], "decision_mode": "native"}
        run = await rt.run("react", args)
    finally:
        stop_workers([proc])
    assert run.status == RunStatus.COMPLETED, run.error
    results = [f for f in rt.frames(run.id) if isinstance(f, ToolResultFrame)]
    assert results and all(f.tool_name == "lookup" and f.success for f in results)
    assert len(ledger.read_text(encoding="utf-8").splitlines()) == len(results)
    await rt.aclose()
