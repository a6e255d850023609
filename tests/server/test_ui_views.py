"""The web UI's views of a run in headless Chromium: frames as what they mean with filters and
search, the phase graph, state after a step with its diff, forks from the timeline and the
comparison of two runs, the trace, live updates, and a run of 5,000 frames."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kforge.frames import frame_from_dict, stamped, utc_now
from kforge.llm.testing.scripted import ScriptedModel
from kforge.runtime import Runtime
from kforge.server import ServerSettings
from kforge.store.base import RunRecord, RunStatus
from tests.agents.helpers import runtime as react_runtime
from tests.agents.test_react import GOAL, call, observed, reflection
from tests.agents.test_research import QUESTION
from tests.server.agents import GATES
from tests.server.helpers import LiveServer
from tests.server.test_ui import ARGS, CHROMIUM, playwright_api, research_server

expect = playwright_api.expect
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)"
)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with research_server(tmp_path) as server:
        yield server


@pytest.fixture
def page(live: LiveServer) -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        opened = browser.new_context(viewport={"width": 1280, "height": 1100}).new_page()
        opened.set_default_timeout(30_000)
        try:
            yield opened
        finally:
            browser.close()


def _runtime(live: LiveServer) -> Runtime:
    runtime: Runtime = live.app.state.kforge.runtime
    return runtime


def _research_run(live: LiveServer, page: Any = None) -> str:
    """A research run taken through its checkpoint to the end (and opened in ``page``)."""
    runtime = _runtime(live)
    run_id = live.call(runtime.start("research", {"question": QUESTION, "corpus": "docs"}))
    live.call(runtime.wait(run_id))
    live.call(runtime.resume(run_id, {"action": "approve"}))
    assert live.call(runtime.wait(run_id)).status.value == "completed"
    if page is not None:
        page.goto(f"{live.url}/ui/#/runs/{run_id}")
    return run_id


def _paced_run(live: LiveServer, page: Any, answer: str = "", **args: Any) -> str:
    """A paced run taken to the end (its question answered with ``answer``), opened in ``page``."""
    runtime = _runtime(live)
    run_id = live.call(runtime.start("test.paced", args))
    live.call(runtime.wait(run_id))
    if answer:
        live.call(runtime.resume(run_id, {"action": answer}))
        live.call(runtime.wait(run_id))
    page.goto(f"{live.url}/ui/#/runs/{run_id}")
    return run_id


def test_frames_read_as_what_they_mean_with_raw_json_filters_and_search(
    live: LiveServer, page: Any, shots: Path
) -> None:
    run_id = _research_run(live, page)
    last = _runtime(live).get_run(run_id).last_seq
    expect(page.locator("#meter-frames")).to_have_text(str(last))
    rows = page.locator("#timeline li")
    expect(rows).to_have_count(last)
    # a phase change reads as the move it is, a model call folds its reply
    phase = rows.filter(has=page.locator(".type", has_text="phase.changed")).first
    expect(phase.locator(".text")).to_contain_text("start → decompose")
    call = rows.filter(has=page.locator(".type", has_text="model.call")).first
    fold = call.locator("details.fold")
    expect(fold.locator("summary")).to_contain_text("Reply")
    fold.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(fold.locator("section.reply h4").first).to_have_text("Reply")
    expect(fold.locator("section.reply pre").first).not_to_be_empty()
    done = rows.filter(has=page.locator(".type", has_text="complete")).last
    done.locator("details.fold summary").click()
    expect(done.locator("details.fold")).to_contain_text("ReAct")
    # the raw JSON is one click away, and another click folds it again
    raw_button = call.get_by_role("button", name="Raw JSON of frame")
    raw_button.click()
    raw = json.loads(call.locator("pre.raw").text_content() or "")
    assert raw["type"] == "model.call" and raw["run_id"] == run_id
    call.scroll_into_view_if_needed()
    page.locator("#timeline").screenshot(path=str(shots / "frames.png"))
    expect(raw_button).to_have_attribute("aria-expanded", "true")
    raw_button.click()
    expect(call.locator("pre.raw")).to_have_count(0)
    # filter by type, then search within it
    page.get_by_label("Type").select_option("phase")
    visible = page.locator("#timeline li:visible")
    phases = visible.locator(".type").all_text_contents()
    assert phases and all(t.startswith("phase.") for t in phases)
    expect(page.locator("#timeline-count")).to_contain_text(f"of {last} frames")
    page.get_by_label("Search").fill("rise_above")
    expect(visible.locator(".text").first).to_contain_text("rise_above")
    for text in visible.locator(".text").all_text_contents():
        assert "rise_above" in text
    page.get_by_label("Type").select_option("")
    page.get_by_label("Search").fill("no frame says this")
    expect(visible).to_have_count(0)
    expect(page.locator("#timeline-count")).to_have_text(f"0 of {last} frames")
    page.get_by_label("Search").fill("")
    expect(visible).to_have_count(last)


def test_the_agent_filter_shows_the_frames_of_one_agent_of_the_tree(
    live: LiveServer, page: Any
) -> None:
    runtime = _runtime(live)
    parent = live.call(runtime.start("test.paced", {"steps": 2, "ask_at": 1}))
    child = live.call(runtime.start("test.paced", {"steps": 2, "ask_at": 1}, parent_id=parent))
    page.goto(f"{live.url}/ui/#/runs/{parent}")
    expect(page.locator(f'#timeline li[data-run="{child}"]').first).to_be_visible()
    page.locator("#filter-agent").select_option(child)
    visible = page.locator("#timeline li:visible")
    expect(visible).not_to_have_count(0)
    runs = set(visible.evaluate_all("items => items.map(li => li.dataset.run)"))
    assert runs == {child}
    expect(visible.locator(".agent").first).to_have_text(child[:8])
    # a frame of the child shows the child's state, and forks the child
    visible.first.locator("button.seq").click()
    expect(page.locator("#inspect-summary")).to_contain_text(f"of agent {child[:8]}")
    expect(page.locator("#fork-source")).to_have_text(child[:8])


def test_the_phase_graph_is_drawn_with_the_path_taken_and_the_current_phase(
    live: LiveServer, page: Any, shots: Path
) -> None:
    run_id = _research_run(live, page)
    moves = [f for f in _runtime(live).frames(run_id) if f.type == "phase.changed"]
    graph = page.locator("#graph svg")
    expect(graph.locator("g.phase")).to_have_count(5)
    expect(graph.locator("g.phase.current")).to_have_count(1)
    names = graph.locator("g.phase").evaluate_all("gs => gs.map(g => g.dataset.phase)")
    assert names == ["decompose", "answer", "rise_above", "expand", "complete"]
    expect(graph.locator("g.phase.current")).to_have_attribute("data-phase", moves[-1].to_phase)
    expect(graph.locator('g.phase[data-phase="decompose"] .visits')).to_have_text("1 visit")
    # three backward transitions with their triggers, none taken by this run
    back = graph.locator("g.edge.back")
    expect(back).to_have_count(3)
    expect(graph.locator("g.edge.taken")).to_have_count(len(moves) - 1)
    expect(back.locator(".cond")).to_contain_text(["new_category_discovered"])
    assert back.evaluate_all("es => es.filter(e => e.classList.contains('taken')).length") == 0
    taken = graph.locator("g.edge.taken").evaluate_all(
        "es => es.map(e => e.dataset.from + '>' + e.dataset.to)"
    )
    assert taken == [f"{m.from_phase}>{m.to_phase}" for m in moves if m.from_phase]
    # keyboard: each phase takes focus, and says its visits
    graph.locator('g.phase[data-phase="answer"]').focus()
    title = page.evaluate("document.activeElement.querySelector('title').textContent")
    assert title.startswith("answer: 1 visit")
    page.locator("#graph").screenshot(path=str(shots / "phase-graph.png"))


def test_an_agent_without_phases_shows_its_steps_in_a_row(live: LiveServer, page: Any) -> None:
    _paced_run(live, page, steps=4)
    expect(page.locator("#graph svg g.step")).to_have_count(4)
    expect(page.locator("#graph svg g.step.current")).to_have_attribute("data-step", "4")


def test_a_frame_shows_the_state_after_its_step_and_what_the_step_changed(
    live: LiveServer, page: Any, shots: Path
) -> None:
    _paced_run(live, page, steps=3, per_step=2)
    # the first tick of the second step (the one that takes 'done' from 1 to 2)
    tick = page.locator("#timeline li").filter(has_text='"step":1,"i":0')
    seq = tick.get_attribute("data-seq")
    tick.get_by_role("button", name=f"Frame {seq}: state after it").press("Enter")
    panel = page.locator("#inspect")
    expect(page.locator("#inspect-title")).to_have_text("State after step 2")
    expect(page.locator("#inspect-title")).to_be_focused()
    done = panel.locator('#diff li[data-path="agent.done"]')
    expect(done).to_have_text("agent.done: 1 → 2")
    assert '"done": 2' in page.locator("#state-json").text_content()
    expect(tick).to_have_class(re.compile(r"\bselected\b"))
    page.locator("#inspect").screenshot(path=str(shots / "state-diff.png"))
    # the step before changed 'done' from 0 to 1: its last frame is the one above, by keyboard
    tick.focus()
    page.keyboard.press("End")
    expect(page.locator("#timeline li").last).to_be_focused()
    tick.focus()
    page.keyboard.press("ArrowUp")
    first = page.locator("#timeline li").filter(has_text='"step":0,"i":1')
    expect(first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#inspect-title")).to_have_text("State after step 1")
    expect(done).to_have_text("agent.done: 0 → 1")


def test_a_fork_from_the_timeline_runs_with_its_own_limit(live: LiveServer, page: Any) -> None:
    runtime = _runtime(live)
    run_id = _paced_run(live, page, steps=3, per_step=2)
    # the last frame of the first step: the fork keeps one step and takes the other two again
    tick = page.locator("#timeline li").filter(has_text='"step":0,"i":1')
    seq = int(tick.get_attribute("data-seq") or 0)
    tick.locator("button.seq").click()
    expect(page.get_by_label("Keep frames up to seq")).to_have_value(str(seq))
    page.get_by_label("Step limit for the fork").fill("50")
    page.get_by_label("Token limit for the fork").fill("90000")
    page.get_by_label("Time limit for the fork").fill("600")
    expect(page.get_by_label("Run the fork now")).to_be_checked()
    page.get_by_role("button", name="Fork from here").press("Enter")
    expect(page).not_to_have_url(re.compile(run_id))
    fork_id = page.url.rsplit("/", 1)[-1]
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#meter-steps")).to_have_text("3 / 50")
    fork = runtime.get_run(fork_id)
    assert fork.forked_from == run_id and fork.forked_at_seq == seq
    assert fork.result == {"ticks": 6, "answer": None}
    limits = fork.input["limits"]
    assert (limits["max_steps"], limits["max_tokens"], limits["max_wall_time_s"]) == (
        50,
        90000,
        600,
    )
    # the fork's own frames after the shared ones, then the ones the source also had
    ticks = [f for f in runtime.frames(fork_id) if f.type == "data.tick"]
    assert [t.payload["step"] for t in ticks] == [0, 0, 1, 1, 2, 2]  # type: ignore[attr-defined]


def test_a_fork_answered_otherwise_compares_side_by_side_with_its_source(
    live: LiveServer, page: Any, shots: Path
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    run_id = _paced_run(live, page, "approve", steps=2, ask_at=1)
    asked = page.locator("#timeline li").filter(has_text="asks: Go on?")
    asked.locator("button.seq").click()
    page.get_by_role("button", name="Fork from here").click()
    # the fork waits on the same question: this time it is rejected
    expect(page.locator("#checkpoint")).to_be_visible()
    fork_id = page.url.rsplit("/", 1)[-1]
    assert fork_id != run_id
    page.get_by_role("button", name="Reject", exact=True).click()
    expect(page.locator("#run-status")).to_have_text("completed")
    page.get_by_role("button", name="Compare with the run it was forked from").click()
    expect(page).to_have_url(re.compile(f"#/compare/{run_id}/{fork_id}$"))
    expect(page.locator("#compare-answer-verdict")).to_have_text("they differ")
    expect(page.locator('.answer[data-side="left"]')).to_contain_text('"approve"')
    expect(page.locator('.answer[data-side="right"]')).to_contain_text('"reject"')
    rows = page.locator(".compare-frames tbody tr")
    expect(rows.first).to_have_class("same")  # the frames the fork shares
    differ = page.locator(".compare-frames tbody tr.differ")
    expect(differ.filter(has_text="answered")).not_to_have_count(0)
    page.get_by_label("Show only the frames that differ").check()
    expect(rows.first).to_be_hidden()
    page.screenshot(path=str(shots / "compare.png"), full_page=True)
    assert errors == []  # a run whose answer is not text shows like any other


def test_the_trace_lays_out_stretches_steps_calls_pauses_and_child_runs(
    live: LiveServer, page: Any, shots: Path
) -> None:
    run_id = _research_run(live, page)
    frames = _runtime(live).frames(run_id)
    calls = [f for f in frames if f.type == "model.call"]
    trace = page.locator("#trace .waterfall")
    expect(trace.locator("li.model")).to_have_count(len(calls))
    # two stretches (before and after the checkpoint) with the wait for a person between them
    kinds = trace.locator("li.span").evaluate_all("ls => ls.map(l => l.dataset.kind)")
    tops = [k for k in kinds if k in ("stretch", "pause")]
    assert tops == ["stretch", "pause", "stretch"]
    steps = _runtime(live).get_run(run_id).iteration
    assert kinds.count("step") == steps
    # each model call sits under a step, and says its tokens and how long it took
    first_call = kinds.index("model")
    assert kinds[first_call - 1] in ("step", "model", "tool", "ask")
    assert "step" in kinds[:first_call]
    usage = calls[0].response["usage"]  # type: ignore[attr-defined]
    tokens = usage["input_tokens"] + usage["output_tokens"]
    expect(trace.locator("li.model .metrics").first).to_contain_text(f"{tokens} tok")
    expect(trace.locator("li.model .metrics").first).to_contain_text("ms")
    expect(trace.locator("li.pause")).to_have_attribute(
        "aria-label", re.compile("waiting for a person")
    )
    page.locator("#trace-box").screenshot(path=str(shots / "trace.png"))


def test_a_child_run_sits_in_the_trace_under_its_parent(live: LiveServer, page: Any) -> None:
    runtime = _runtime(live)
    parent = live.call(runtime.start("test.paced", {"steps": 2, "ask_at": 1}))
    live.call(runtime.wait(parent))
    child = live.call(runtime.start("test.paced", {"steps": 1}, parent_id=parent))
    live.call(runtime.wait(child))
    page.goto(f"{live.url}/ui/#/runs/{parent}")
    row = page.locator("#trace li.child")
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-depth", "2")
    expect(row.get_by_role("link")).to_have_attribute("href", f"#/runs/{child}")
    expect(row).to_contain_text("completed")


def test_counters_tree_graph_and_trace_follow_the_stream(live: LiveServer, page: Any) -> None:
    runtime = _runtime(live)
    gate = GATES["ui-views-live"] = threading.Semaphore(0)
    try:
        root = live.call(
            runtime.start("test.paced", {"steps": 4, "per_step": 1, "gate": "ui-views-live"})
        )
        page.goto(f"{live.url}/ui/#/runs/{root}")
        expect(page.locator("#run-status")).to_have_text("running")
        for done in (1, 2):
            gate.release()
            expect(page.locator("#meter-steps")).to_have_text(f"{done} / 200")
            expect(page.locator("#graph g.step")).to_have_count(done)
            expect(page.locator("#graph g.step.current")).to_have_attribute("data-step", str(done))
            expect(page.locator("#trace li.step")).to_have_count(done)
            ticks = page.locator("#timeline li").filter(has_text='"i":0')
            expect(ticks).to_have_count(done)
        expect(page.locator("#trace li.stretch")).to_have_count(1)
        child = live.call(runtime.start("test.paced", {"steps": 1}, parent_id=root))
        expect(page.locator(f'li[data-agent="{child}"] .badge').first).to_have_text("completed")
        expect(page.locator("#trace li.child")).to_contain_text("completed")
        expect(page.locator(f'#timeline li[data-run="{child}"]').first).to_be_visible()
        gate.release(2)
        expect(page.locator("#run-status")).to_have_text("completed")
        expect(page.locator("#trace li.step")).to_have_count(4)
        expect(page.locator("#graph g.step")).to_have_count(4)
    finally:
        gate.release(10)


def test_the_phase_graph_follows_a_run_from_the_form_to_its_end(
    live: LiveServer, page: Any
) -> None:
    page.goto(f"{live.url}/ui/")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Start").click()
    current = page.locator("#graph g.phase.current")
    expect(page.locator("#checkpoint")).to_be_visible()
    expect(current).to_have_attribute("data-phase", "decompose")
    expect(page.locator("#graph g.edge.taken")).to_have_count(0)
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(current).to_have_attribute("data-phase", "complete")
    expect(page.locator("#graph g.edge.taken")).to_have_count(4)
    expect(page.locator("#trace li.pause")).to_have_count(1)


def test_a_run_of_5000_frames_renders_and_stays_responsive(
    live: LiveServer, page: Any, shots: Path
) -> None:
    runtime = _runtime(live)
    run_id = live.call(runtime.start("test.paced", {"steps": 50, "per_step": 100}))
    live.call(runtime.wait(run_id))
    last = runtime.get_run(run_id).last_seq
    assert last >= 5000
    started = time.perf_counter()
    page.goto(f"{live.url}/ui/#/runs/{run_id}")
    expect(page.locator("#meter-frames")).to_have_text(str(last), timeout=120_000)
    expect(page.locator("#timeline li")).to_have_count(last, timeout=60_000)
    expect(page.locator("#trace li.step")).to_have_count(50, timeout=60_000)
    rendered = time.perf_counter() - started
    in_page = page.evaluate("performance.now()") / 1000
    started = time.perf_counter()
    page.get_by_label("Search").fill('"step":49,')
    page.wait_for_function(
        "document.getElementById('timeline-count').textContent.includes(' of ')", timeout=60_000
    )
    expect(page.locator("#timeline-count")).to_have_text(f"100 of {last} frames", timeout=60_000)
    searched = time.perf_counter() - started
    started = time.perf_counter()
    page.locator("#timeline li:visible button.seq").first.click()
    expect(page.locator("#inspect-title")).to_have_text("State after step 50", timeout=60_000)
    inspected = time.perf_counter() - started
    started = time.perf_counter()
    page.get_by_label("Type").select_option("lifecycle")
    page.get_by_label("Search").fill("")
    expect(page.locator("#timeline li:visible")).not_to_have_count(0)
    filtered = time.perf_counter() - started
    print(
        f"\n{last} frames: rendered in {rendered:.2f} s ({in_page:.2f} s since navigation), "
        f"search {searched:.2f} s, state of a step {inspected:.2f} s, filter {filtered:.2f} s"
    )
    page.screenshot(path=str(shots / "run-5000-frames.png"))
    assert rendered < 120  # a sanity bound only: the figure above is what is measured


def test_tool_calls_read_with_their_arguments_and_results_and_sit_in_the_trace(
    page: Any,
) -> None:
    model = ScriptedModel(
        [
            call("Frankreich"),
            reflection("The tool knows English names only.", "Call it with 'France'."),
            call("France", "Use the English name"),
            observed("The result names Paris.", True),
            "Paris is the capital of France.",
        ]
    )
    runtime = react_runtime(model)
    with LiveServer(runtime, ServerSettings(), model=model) as server:
        run = server.call(runtime.run("react", {"goal": GOAL}))
        page.goto(f"{server.url}/ui/#/runs/{run.id}")
        # every frame drawn before a fold is clicked: a later batch scrolls the timeline
        expect(page.locator("#meter-frames")).to_have_text(str(runtime.get_run(run.id).last_seq))
        rows = page.locator("#timeline li")
        calls = rows.filter(has=page.locator(".type", has_text="tool.call"))
        expect(calls).to_have_count(2)
        expect(calls.first.locator(".text")).to_contain_text(
            'calls lookup_capital({"country":"Frankreich"})'
        )
        results = rows.filter(has=page.locator(".type", has_text="tool.result"))
        expect(results.first).to_contain_text("lookup_capital failed: ")
        results.last.locator("details.fold summary").click()
        expect(results.last.locator("details.fold pre")).to_contain_text("Paris")
        expect(rows.filter(has_text="reflects on not_found")).to_have_count(1)
        page.get_by_label("Type").select_option("tool")
        expect(page.locator("#timeline li:visible")).to_have_count(4)
        tools = page.locator("#trace li.tool")
        expect(tools).to_have_count(2)
        expect(tools.first).to_have_class(re.compile(r"\bfailed\b"))
        expect(tools.last).to_contain_text("tool lookup_capital")


def test_a_model_call_shows_the_prompt_it_was_sent_folded_beside_its_reply(
    page: Any, shots: Path
) -> None:
    model = ScriptedModel(
        [
            {"thought": "Which one?", "action": "ask_user", "question": "Which country?"},
            {"thought": "Known", "action": "respond", "answer": "Paris is the capital."},
        ]
    )
    runtime = react_runtime(model)
    with LiveServer(runtime, ServerSettings(), model=model) as server:
        run_id = server.call(runtime.start("react", {"goal": GOAL}))
        server.call(runtime.wait(run_id))
        server.call(runtime.resume(run_id, "France, the one in Europe"))
        assert server.call(runtime.wait(run_id)).status.value == "completed"
        page.goto(f"{server.url}/ui/#/runs/{run_id}")
        expect(page.locator("#meter-frames")).to_have_text(str(runtime.get_run(run_id).last_seq))
        calls = page.locator("#timeline li").filter(
            has=page.locator(".type", has_text="model.call")
        )
        expect(calls).to_have_count(2)
        # the first call, opened from the keyboard: its row, then its fold
        first = calls.first
        first.focus()
        page.keyboard.press("ArrowRight")  # the seq
        page.keyboard.press("ArrowRight")  # the fold
        expect(first.locator("details.fold > summary")).to_be_focused()
        expect(first.locator("details.fold > summary")).to_have_text(
            "Prompt · Reply · Structured output"
        )
        page.keyboard.press("Enter")
        prompt, reply = first.locator("section.prompt"), first.locator("section.reply")
        expect(reply.locator("pre").first).to_contain_text("ask_user")
        sent = model.calls[0].messages
        messages = prompt.locator("details.message")
        expect(messages).to_have_count(len(sent))
        system = messages.first
        expect(system).to_have_attribute("data-role", "system")
        page.keyboard.press("ArrowRight")
        expect(system.locator("summary")).to_be_focused()
        page.keyboard.press("Enter")  # each message folds on its own
        expect(system.locator("pre")).to_be_visible()
        expect(system.locator("pre")).to_contain_text(GOAL)
        assert system.locator("pre").text_content() == sent[0].content
        expect(prompt).to_contain_text(f"{len(sent)} messages, {len(sent)} new in this call")
        page.keyboard.press("Escape")
        expect(first).to_be_focused()
        # the second call of the conversation: the person's answer is in its prompt, new
        second = calls.last
        second.locator("details.fold > summary").click()
        answered = second.locator("details.message").filter(has_text="France, the one in Europe")
        expect(answered).to_have_count(1)
        expect(answered).to_have_attribute("data-role", "user")
        expect(answered).to_have_class(re.compile(r"\bfresh\b"))
        expect(second.locator("details.message")).to_have_count(len(model.calls[1].messages))
        base = calls.first.get_attribute("data-seq")
        expect(second.locator("section.prompt")).to_contain_text(f"as in the call of frame {base}")
        second.locator("details.message").first.locator("summary").click()
        expect(second.locator("details.message").first.locator("pre")).to_contain_text(GOAL)
        second.scroll_into_view_if_needed()
        page.locator("#timeline").screenshot(path=str(shots / "model-call.png"))


def test_a_call_recorded_before_prompts_were_says_its_prompt_was_not_recorded(
    page: Any,
) -> None:
    model = ScriptedModel([])
    runtime = react_runtime(model)
    now = utc_now()
    runtime.store.create_run(
        RunRecord("old-run", "react", RunStatus.COMPLETED, now, now, {"args": {"goal": GOAL}})
    )
    # a model call as frames held it before prompts were recorded
    old = frame_from_dict({"type": "model.call", "model": "m", "response": {"text": "Paris."}})
    runtime.store.commit("old-run", [stamped(old, "old-run", 1)])
    with LiveServer(runtime, ServerSettings(), model=model) as server:
        page.goto(f"{server.url}/ui/#/runs/old-run")
        row = page.locator("#timeline li")
        expect(row).to_have_count(1)
        row.locator("details.fold > summary").click()
        expect(row.locator("section.prompt")).to_contain_text("prompt not recorded")
        expect(row.locator("section.reply pre")).to_have_text("Paris.")


def test_a_timeline_row_is_one_tab_stop_and_its_controls_are_reached_with_the_arrows(
    live: LiveServer, page: Any
) -> None:
    run_id = _research_run(live, page)
    rows = page.locator("#timeline li")
    expect(rows).to_have_count(_runtime(live).get_run(run_id).last_seq)
    # every row is focusable, and nothing inside a row is in the tab order
    stops = page.evaluate(
        """() => [...document.querySelectorAll('#timeline *')]
             .filter((e) => e.tabIndex >= 0).map((e) => e.tagName)"""
    )
    assert stops == ["LI"] * rows.count()
    call = rows.filter(has=page.locator(".type", has_text="model.call")).first
    below = call.locator("xpath=following-sibling::li[1]")
    call.focus()
    page.keyboard.press("Tab")
    expect(below).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(call).to_be_focused()
    # its controls with the arrows: the seq, the fold, the raw JSON; Escape back to the row
    page.keyboard.press("ArrowRight")
    expect(call.locator("button.seq")).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(call.locator("details.fold > summary")).to_be_focused()
    page.keyboard.press("ArrowRight")
    raw = call.get_by_role("button", name="Raw JSON of frame")
    expect(raw).to_be_focused()
    page.keyboard.press("Enter")
    expect(call.locator("pre.raw")).to_be_visible()
    page.keyboard.press("ArrowRight")  # the last control stays focused
    expect(raw).to_be_focused()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(call).to_be_focused()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Escape")
    expect(call).to_be_focused()
    # Enter on the row shows the state after it
    page.keyboard.press("Enter")
    expect(page.locator("#inspect-title")).to_be_focused()
    expect(page.locator("#inspect-summary")).to_contain_text(
        f"Frame {call.get_attribute('data-seq')} (model.call)"
    )
