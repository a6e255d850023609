"""The web UI in Debian's Chromium, headless, driven by Playwright: start a research run from
the form, watch its timeline live, approve its checkpoint, read the report; delete a child
agent of a tree; see an API error. Screenshots go to KFORGE_SCREENSHOTS or a tmp folder."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kforge.agents.research import ResearchAgent
from kforge.llm.testing.function import FunctionModel
from kforge.rag.ingest import ingest_folder
from kforge.runtime import AgentRegistry, Runtime
from kforge.server import ServerSettings
from kforge.store.sqlite import SQLiteStore
from tests.agents.test_research import DOCS, QUESTION, Script
from tests.server.agents import GATES, PacedAgent
from tests.server.helpers import LiveServer

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)"
)
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Actions wait up to 30 s (each page's default); assertions wait 15 s instead of Playwright's 5 s,
# so a request a loaded machine answers late is not read as a wrong page.
playwright_api.expect.set_options(timeout=15_000)


@contextmanager
def research_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A real server on 127.0.0.1 whose runtime has the research agent (scripted model) over
    the research tests' documents, and the paced test agent."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    registry = AgentRegistry()
    registry.register("research", ResearchAgent)
    registry.register(PacedAgent.agent_type, PacedAgent)
    model = FunctionModel(Script())
    runtime = Runtime(SQLiteStore(tmp_path / "k.db"), model=model, registry=registry)
    ingest_folder(runtime.services.corpus("docs"), docs)
    with LiveServer(runtime, ServerSettings(), model=model) as live:
        yield live


@pytest.fixture
def ui_server(tmp_path: Path) -> Iterator[LiveServer]:
    with research_server(tmp_path) as live:
        yield live


@pytest.fixture
def page(ui_server: LiveServer) -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(30_000)
        try:
            yield page
        finally:
            browser.close()


def test_start_watch_approve_and_read_the_report(
    ui_server: LiveServer, page: Any, shots: Path
) -> None:
    expect = playwright_api.expect
    missing: list[str] = []  # the page asks for nothing the server lacks (e.g. /favicon.ico)
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    page.goto(f"{ui_server.url}/ui/")
    expect(page.locator("#start-corpus option")).to_have_text(["docs"])
    expect(page.get_by_role("alert")).to_be_hidden()
    expect(page.locator("#token-form")).to_be_hidden()
    page.get_by_label("Agent", exact=True).select_option("research")
    page.get_by_label("Question").fill("How do agents reason, act and remember?")
    page.get_by_role("button", name="Start").press("Enter")  # keyboard, not a click

    checkpoint = page.locator("#checkpoint")
    expect(checkpoint).to_be_visible()
    expect(page.locator("#run-status")).to_have_text("awaiting_user")
    expect(page.locator("#checkpoint-prompt")).not_to_be_empty()
    # the question's three parts, and the model's "Memory" ("Reasoning" is one of the parts)
    expect(page.locator("#tree-editor fieldset")).to_have_count(4)
    timeline = page.locator("#timeline li .type")
    expect(timeline.filter(has_text="interaction.requested")).to_have_count(1)
    before = page.locator("#timeline li").count()
    assert before > 5
    expect(page.locator("#phases li.current")).to_have_text("decompose")
    page.screenshot(path=str(shots / "run-checkpoint.png"), full_page=True)

    page.get_by_role("button", name="Approve", exact=True).focus()
    page.keyboard.press("Enter")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(checkpoint).to_be_hidden()
    expect(timeline.filter(has_text="complete")).to_have_count(1)
    assert page.locator("#timeline li").count() > before  # the timeline grew live
    seqs = [
        int(s)
        for s in page.locator("#timeline li").evaluate_all(
            "items => items.map(li => li.dataset.seq)"
        )
    ]
    assert seqs == list(range(1, len(seqs) + 1))
    report = page.locator("#report")
    expect(report.locator("h1, h2").first).to_be_visible()
    expect(report).to_contain_text("ReAct")
    page.screenshot(path=str(shots / "run-report.png"), full_page=True)
    assert (shots / "run-report.png").stat().st_size > 10_000
    assert missing == []
    # and the browser is told not to ask for /favicon.ico, which the server does not have
    assert page.locator("link[rel=icon]").get_attribute("href") == "data:,"


def test_modify_the_question_tree_at_the_checkpoint(ui_server: LiveServer, page: Any) -> None:
    expect = playwright_api.expect
    page.goto(f"{ui_server.url}/ui/")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#tree-editor fieldset")).to_have_count(3)  # the question, 2 of the model
    page.locator("#cat-questions-0").fill("What is episodic memory for agents?")
    page.locator("#cat-name-1").fill("Oversight")
    page.locator("#cat-questions-1").fill("How do checkpoints let a person steer a run?")
    page.get_by_role("button", name="Modify", exact=True).click()
    # the edited tree comes back to the checkpoint to be approved
    asked = page.locator("#timeline li .type").filter(has_text="interaction.requested")
    expect(asked).to_have_count(2)
    expect(page.locator("#cat-name-1")).to_have_value("Oversight")
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#report")).to_contain_text("Oversight")


def test_delete_a_child_agent_from_the_tree_and_see_api_errors(
    ui_server: LiveServer, page: Any, shots: Path
) -> None:
    expect = playwright_api.expect
    runtime = ui_server.app.state.kforge.runtime
    parent = ui_server.call(runtime.start("test.paced", {"steps": 2, "ask_at": 1}))
    child = ui_server.call(runtime.start("test.paced", {"steps": 2, "ask_at": 1}, parent_id=parent))
    page.goto(f"{ui_server.url}/ui/#/runs/{parent}")
    node = page.locator(f'li[data-agent="{child}"] .badge').first
    expect(node).to_have_text("awaiting_user")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=f"Delete agent {child[:8]}").click()
    expect(node).to_have_text("deleted")
    expect(page.locator(f'li[data-agent="{parent}"] .badge').first).to_have_text("awaiting_user")
    page.screenshot(path=str(shots / "agent-tree.png"), full_page=True)

    page.goto(f"{ui_server.url}/ui/#/runs/does-not-exist")
    expect(page.get_by_role("alert")).to_contain_text("404")
    expect(page.get_by_role("alert")).to_contain_text("does-not-exist")


def test_steps_and_the_tree_follow_a_run_that_works_without_changing_status(
    ui_server: LiveServer, page: Any, shots: Path
) -> None:
    expect = playwright_api.expect
    runtime = ui_server.app.state.kforge.runtime
    gate = GATES["ui-live"] = threading.Semaphore(0)
    try:
        args = {"steps": 5, "per_step": 1, "gate": "ui-live"}
        root = ui_server.call(runtime.start("test.paced", args))
        page.goto(f"{ui_server.url}/ui/#/runs/{root}")
        steps = page.locator("#meter-steps")
        expect(page.locator("#run-status")).to_have_text("running")
        expect(steps).to_have_text("0 / 200")
        for done in (1, 2):
            gate.release()  # one more step, and the run stays running
            expect(steps).to_have_text(f"{done} / 200")
        expect(page.locator("#run-status")).to_have_text("running")
        # a subagent starts, waits, and ends while its parent keeps running
        child = ui_server.call(
            runtime.start("test.paced", {"steps": 2, "ask_at": 1}, parent_id=root)
        )
        badge = page.locator(f'li[data-agent="{child}"] .badge').first
        expect(badge).to_have_text("awaiting_user")
        ui_server.call(runtime.cancel(child, reason="not needed"))
        expect(badge).to_have_text("error")  # the tree's name for cancelled
        expect(page.locator(f'li[data-agent="{root}"] .badge').first).to_have_text("running")
        page.screenshot(path=str(shots / "live-counters.png"), full_page=True)
        gate.release(3)
        expect(page.locator("#run-status")).to_have_text("completed")
        expect(steps).to_have_text("5 / 200")
    finally:
        gate.release(10)


def test_a_server_with_a_token_asks_for_it_once(tmp_path: Path) -> None:
    expect = playwright_api.expect
    token = "ui-test-token-0123456789"
    registry = AgentRegistry()
    registry.register(PacedAgent.agent_type, PacedAgent)
    runtime = Runtime(SQLiteStore(tmp_path / "k.db"), model="test", registry=registry)
    settings = ServerSettings(host="0.0.0.0", token=token)
    with (
        LiveServer(runtime, settings, model="test") as live,
        playwright_api.sync_playwright() as p,
    ):
        run_id = live.call(runtime.start("test.paced", {"steps": 1}))
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page()
            page.goto(f"{live.url}/ui/#/runs/{run_id}")
            expect(page.get_by_role("alert")).to_contain_text("401")
            page.get_by_label("This server needs its API token").fill(token)
            page.keyboard.press("Enter")
            expect(page.locator("#token-form")).to_be_hidden()
            expect(page.locator("#run-status")).to_have_text("completed")
            expect(page.locator("#runs a")).to_have_count(1)
            expect(page.get_by_role("alert")).to_be_hidden()
        finally:
            browser.close()
