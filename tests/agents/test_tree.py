"""The tree agent: the six steps, questions answered, declined and parked, parallel subagents,
interventions while they run, and a failure at each step of a subagent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kforge import Intervention, InterventionAction, Runtime, Services
from kforge.agents.results import TreeResult
from kforge.agents.tree import STEPS, TreeAgent
from kforge.engine.registry import AgentRegistry
from kforge.engine.run_context import RunContext
from kforge.errors import InvalidRunStateError, ValidationError
from kforge.rag.types import Citation
from kforge.runtime.interventions import intervene
from kforge.store.base import RunRecord, RunStatus, Snapshot
from kforge.tools.approval import ApprovalPolicy
from tests.agents.tree_model import Gates, TreeScript, barrier_gate, held_worker, phases

PARTY = "Plan my birthday party"
FOOD = "What food should we serve?"
VENUE = "Which venue works best?"
GUESTS = "Who should we invite?"
MUSIC = "What music should play?"


def runtime(tmp_path: Path, script: TreeScript, **kwargs: Any) -> Runtime:
    return Runtime(tmp_path / "tree.db", model=script.model(), **kwargs)


async def answering(answers: list[str | None]) -> Any:
    asked: list[tuple[str, str]] = []

    async def handler(agent_id: str, prompt: str) -> str | None:
        asked.append((agent_id, prompt))
        return answers.pop(0) if answers else None

    return handler, asked


async def test_the_six_steps_in_order_with_questions_answered_by_the_handler(
    tmp_path: Path,
) -> None:
    script = TreeScript(
        ambiguous=(PARTY,),
        missing={PARTY: ["How many guests are coming?"]},
        subquestions={PARTY: [FOOD, VENUE]},
    )
    rt = runtime(tmp_path, script)
    handler, asked = await answering(["The one on Saturday", "About twenty"])
    rt.set_query_user_handler(handler)
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.COMPLETED, run.error
    assert phases(rt.frames(run.id)) == list(STEPS[1:])
    assert [p for _, p in asked] == [
        "Which party do you mean exactly?",
        "How many guests are coming?",
    ]
    result = run.result or {}
    meta = result["metadata"]
    assert [c["answer"] for c in meta["clarifications"]] == ["The one on Saturday", "About twenty"]
    assert meta["partial"] is False and meta["declined"] == []
    assert [c["prompt"] for c in result["subagents"]] == [FOOD, VENUE]
    assert {c["status"] for c in result["subagents"]} == {"completed"}
    assert result["answer"].startswith(f"Answer about {PARTY}.")
    assert f"- {FOOD} Answer about {FOOD}." in result["answer"]
    # the answers reached the later decisions, and were recorded as answers
    assert any("A: About twenty" in seen for seen in script.seen)
    answered = [f for f in rt.frames(run.id) if f.type == "interaction.answered"]
    assert [a.answer["text"] for a in answered] == ["The one on Saturday", "About twenty"]
    # a second round asked nothing more, so the questions stopped there
    assert [c for c in script.calls if c == ("questions", PARTY)] == [("questions", PARTY)] * 2
    assert ("resolve", PARTY) not in script.calls  # nothing uncertain: no final question
    tree = rt.agent_tree(run.id)
    assert next(iter(tree)) == run.id and len(tree) == 3
    assert tree[run.id]["subagents"] == [c["id"] for c in result["subagents"]]
    assert all(node["status"] == "completed" for node in tree.values())
    assert tree[run.id]["tokens"]["input"] > 0
    await rt.aclose()


async def parked_on_clarification(tmp_path: Path) -> tuple[Runtime, TreeScript, RunRecord]:
    script = TreeScript(ambiguous=(PARTY,))
    rt = runtime(tmp_path, script)
    run = await rt.run("tree", {"prompt": PARTY, "max_subquestions": 0})
    assert run.status == RunStatus.AWAITING_USER
    return rt, script, run


async def test_a_clarification_parks_the_agent_until_it_is_answered(tmp_path: Path) -> None:
    rt, script, run = await parked_on_clarification(tmp_path)
    assert (run.pending_interaction or {})["prompt"] == "Which party do you mean exactly?"
    assert rt.agent_tree(run.id)[run.id]["status"] == "awaiting_user"
    assert not rt.is_active(run.id)  # it holds no worker while it waits
    await rt.resume(run.id, "The garden party")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    meta = (run.result or {})["metadata"]
    assert meta["clarifications"] == [
        {"question": "Which party do you mean exactly?", "answer": "The garden party"}
    ]
    # the clarification was asked of the model once: the resumed step replayed its decision
    assert script.calls.count(("clarify", PARTY)) == 1
    await rt.aclose()


async def test_a_declined_question_ends_the_questions_and_the_agent_completes(
    tmp_path: Path,
) -> None:
    script = TreeScript(
        missing={PARTY: ["What is the budget?", "What is the date?"]}, resolve=(PARTY,)
    )
    rt = runtime(tmp_path, script)
    handler, asked = await answering([None, "Yes, book it"])
    rt.set_query_user_handler(handler)
    run = await rt.run("tree", {"prompt": PARTY, "max_subquestions": 0})
    assert run.status == RunStatus.COMPLETED, run.error
    # no second round after a decline; the uncertainty it left brings one final question
    assert [p for _, p in asked] == ["What is the budget?", "Should I book the venue anyway?"]
    result = run.result or {}
    assert result["metadata"]["declined"] == ["What is the budget?"]
    assert "Not answered by you: What is the budget?" in result["answer"]
    assert result["answer"].endswith(
        "Your note: Yes, book it\n\nNot answered by you: What is the budget?"
    )
    answered = [f for f in rt.frames(run.id) if f.type == "interaction.answered"]
    assert answered[0].answer == {"declined": True}
    await rt.aclose()


async def test_questions_stop_after_three_rounds(tmp_path: Path) -> None:
    many = [
        "What is the budget?",
        "What is the date?",
        "Where will it be held?",
        "Which theme do you like?",
        "Who else is cooking?",
    ]
    script = TreeScript(missing={PARTY: many})
    rt = runtime(tmp_path, script)
    handler, asked = await answering(["a", "b", "c", "d"])
    rt.set_query_user_handler(handler)
    run = await rt.run("tree", {"prompt": PARTY, "max_subquestions": 0})
    assert run.status == RunStatus.COMPLETED
    assert len(asked) == 3
    await rt.aclose()


async def test_no_subquestions_means_no_subagents(tmp_path: Path) -> None:
    rt = runtime(tmp_path, TreeScript())
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.COMPLETED
    assert (run.result or {})["subagents"] == []
    assert rt.store.list_runs(parent_id=run.id) == []
    assert "Subquestions" not in (run.result or {})["answer"]
    await rt.aclose()


async def test_four_subagents_run_at_the_same_time(tmp_path: Path) -> None:
    barrier = asyncio.Barrier(4)  # passes only once all four children are inside a model call
    script = TreeScript(
        subquestions={PARTY: [FOOD, VENUE, GUESTS, MUSIC]},
        gates={q: barrier_gate(barrier) for q in (FOOD, VENUE, GUESTS, MUSIC)},
    )
    rt = runtime(tmp_path, script)
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.COMPLETED, run.error
    children = (run.result or {})["subagents"]
    assert [c["status"] for c in children] == ["completed"] * 4
    for child in children:
        child_run = rt.get_run(child["id"])
        assert child_run.parent_id == run.id
        assert child_run.input["args"]["depth"] == 1
        # at the depth limit: children spawn nothing
        assert ("subquestions", child["prompt"]) not in script.calls
    await rt.aclose()


async def test_delete_of_a_running_child_stops_it_at_its_next_step_and_the_parent_reports_it(
    tmp_path: Path,
) -> None:
    gates = Gates()
    script = TreeScript(subquestions={PARTY: [FOOD, VENUE]}, gates={VENUE: gates.gate(VENUE)})
    rt = runtime(tmp_path, script)
    root = await rt.start("tree", {"prompt": PARTY})
    await gates.entered(VENUE)  # the venue child is inside its main execution step
    venue = next(
        r for r in rt.store.list_runs(parent_id=root) if r.input["args"]["prompt"] == VENUE
    )
    outcome = await rt.intervene(venue.id, Intervention.delete())
    assert outcome["applied"] == "next_step"
    assert rt.agent_tree(root)[venue.id]["userComment"] == "delete"
    gates.release(VENUE)
    run = await rt.wait(root)
    while rt.is_active(root) or run.status != RunStatus.COMPLETED:
        run = await rt.wait(root)
    assert rt.get_run(venue.id).status == RunStatus.DELETED
    venue_frames = rt.frames(venue.id)
    # the step that was running finished; the next one never started
    assert phases(venue_frames)[-1] == "check"
    assert [f.action for f in venue_frames if f.type == "intervention"] == ["delete"]
    result = run.result or {}
    statuses = {c["prompt"]: c["status"] for c in result["subagents"]}
    assert statuses == {FOOD: "completed", VENUE: "deleted"}
    assert f"- {VENUE} (deleted by the user before it finished)" in result["answer"]
    assert result["metadata"]["partial"] is True
    with pytest.raises(InvalidRunStateError, match="finished"):
        await rt.intervene(venue.id, Intervention.comment("a late comment"))
    await rt.aclose()


async def test_modify_of_the_root_while_its_children_run_replans_with_the_new_instructions(
    tmp_path: Path,
) -> None:
    gates = Gates()
    picnic = "Plan a picnic instead"
    script = TreeScript(
        subquestions={PARTY: [FOOD, VENUE]},
        gates={FOOD: gates.gate(FOOD), VENUE: gates.gate(VENUE)},
    )
    rt = runtime(tmp_path, script)
    root = await rt.start("tree", {"prompt": PARTY})
    await gates.entered(FOOD)
    await gates.entered(VENUE)
    await rt.intervene(root, Intervention.modify(picnic))
    assert rt.agent_tree(root)[root]["status"] == "modified"
    gates.release(FOOD)
    gates.release(VENUE)
    run = await rt.wait(root)
    assert_replanned(rt, run, picnic)
    frames = rt.frames(root)
    assert any(f.type == "agent.thinking" and "Re-planning" in f.message for f in frames)
    assert phases(frames)[-3:] == ["execute", "check", "summary"]
    assert rt.agent_tree(root)[root]["userContent"] == picnic
    # the live stream (what `kforge assist` draws) shows the new task too, not the old one
    streamed = [c async for c in rt.stream(root, follow=False)]
    states = [c["state"] for c in streamed if c["type"] == "agent-state" and c["agentId"] == root]
    assert states[-1]["userContent"] == picnic
    await rt.aclose()


async def test_a_comment_on_a_waiting_agent_is_seen_at_its_next_step(tmp_path: Path) -> None:
    rt, _, run = await parked_on_clarification(tmp_path)
    outcome = await rt.intervene(run.id, Intervention.comment("keep it cheap"))
    assert outcome["applied"] == "now"
    assert rt.frames(run.id)[-1].type == "intervention"
    assert rt.agent_tree(run.id)[run.id]["userComment"] == "keep it cheap"
    await rt.resume(run.id, "the small one")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED
    assert "Noted: keep it cheap." in (run.result or {})["answer"]
    assert (run.result or {})["metadata"]["comments"] == ["keep it cheap"]
    await rt.aclose()


async def test_intervention_arguments_are_checked(tmp_path: Path) -> None:
    rt = runtime(tmp_path, TreeScript(ambiguous=(PARTY,)))
    run = await rt.run("tree", {"prompt": PARTY})
    with pytest.raises(ValidationError, match="must be one of delete, modify, comment"):
        Intervention(action="explode", content="now")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="modify intervention needs content"):
        Intervention.modify("  ")
    with pytest.raises(ValidationError, match="comment intervention needs content"):
        Intervention(action=InterventionAction.COMMENT)
    with pytest.raises(TypeError, match=r"takes an Intervention.*Intervention\.comment\(text\)"):
        await intervene(rt, run.id, "comment")  # type: ignore[arg-type]
    # the action as a string is refused, whatever the string, and nothing is recorded
    for action in ("comment", "delete", "explode"):
        with pytest.raises(TypeError, match=r"not str 'comment'|not str 'delete'|not str 'expl"):
            await rt.intervene(run.id, action)  # type: ignore[arg-type]
    assert rt.get_run(run.id).status == RunStatus.AWAITING_USER
    assert not [f for f in rt.frames(run.id) if f.type == "intervention"]
    deleted = await rt.intervene(run.id, Intervention(action="delete"))  # type: ignore[arg-type]
    assert deleted["applied"] == "now" and rt.get_run(run.id).status == RunStatus.DELETED
    assert rt.agent_tree(run.id)[run.id]["status"] == "deleted"
    await rt.aclose()


async def test_a_comment_is_typed_whatever_its_words(tmp_path: Path) -> None:
    rt, _, run = await parked_on_clarification(tmp_path)
    for words in ("delete", "modify", "unchanged"):
        outcome = await rt.intervene(run.id, Intervention.comment(words))
        assert outcome["action"] == "comment" and outcome["applied"] == "now"
        node = rt.agent_tree(run.id)[run.id]
        assert node["intervention"] == {"action": "comment", "content": words}
        assert node["status"] == "awaiting_user" and node["userContent"] == PARTY
    await rt.resume(run.id, "the small one")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert result["metadata"]["comments"] == ["delete", "modify", "unchanged"]
    assert result["metadata"]["modifications"] == []
    states = [
        c["state"] async for c in rt.stream(run.id, follow=False) if c["type"] == "agent-state"
    ]
    assert {"action": "comment", "content": "delete"} in [s["intervention"] for s in states]
    assert "modified" not in [s["status"] for s in states]
    await rt.aclose()


async def test_a_child_question_without_a_handler_parks_child_and_parent(tmp_path: Path) -> None:
    script = TreeScript(subquestions={PARTY: [FOOD, VENUE]}, ambiguous=(VENUE,))
    rt = runtime(tmp_path, script)
    root = await rt.start("tree", {"prompt": PARTY})
    run = await rt.wait(root)
    venue = next(
        r for r in rt.store.list_runs(parent_id=root) if r.input["args"]["prompt"] == VENUE
    )
    assert rt.get_run(venue.id).status == RunStatus.AWAITING_USER
    assert run.status == RunStatus.PAUSED and run.pause_reason == "subagents"
    assert not rt.is_active(root) and not rt.is_active(venue.id)
    tree = rt.agent_tree(root)
    assert tree[root]["status"] == "running" and tree[venue.id]["status"] == "awaiting_user"
    await rt.resume(venue.id, "The rooftop")
    await rt.wait(venue.id)
    # the child's end wakes its parent, which collects the results and completes
    for _ in range(100):
        run = await rt.wait(root)
        if run.status == RunStatus.COMPLETED:
            break
        assert run.status == RunStatus.PAUSED
        await asyncio.sleep(0)  # the wake-up is scheduled by the child's end
    assert run.status == RunStatus.COMPLETED
    result = rt.get_run(root).result or {}
    assert {c["status"] for c in result["subagents"]} == {"completed"}
    await rt.aclose()


def assert_replanned(rt: Runtime, run: RunRecord, instructions: str) -> None:
    """The run completed on ``instructions`` (a modify), with both subagents' answers."""
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert result["answer"].startswith(f"Answer about {instructions}.")
    assert result["metadata"]["modifications"] == [instructions]
    assert [c["status"] for c in result["subagents"]] == ["completed", "completed"]
    frames = rt.frames(run.id)
    assert [f.content for f in frames if f.type == "intervention"] == [instructions]


class FaultyTree(TreeAgent):
    """Fails at one step, in the venue subagent only."""

    fail_at = ""

    async def step(self, ctx: RunContext) -> Any:
        if self.state.prompt == VENUE and self.state.stage == self.fail_at:
            raise RuntimeError(f"injected failure at {self.fail_at}")
        return await super().step(ctx)


@pytest.mark.parametrize("step", STEPS)
async def test_a_failure_at_each_step_of_a_subagent_leaves_the_rest_complete(
    tmp_path: Path, step: str
) -> None:
    registry = AgentRegistry()
    faulty = type("Faulty", (FaultyTree,), {"fail_at": step})
    registry.register("tree", faulty)
    script = TreeScript(subquestions={PARTY: [FOOD, VENUE]})
    rt = runtime(tmp_path, script, registry=registry)
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    by_prompt = {c["prompt"]: c for c in result["subagents"]}
    assert by_prompt[FOOD]["status"] == "completed"
    assert by_prompt[VENUE]["status"] == "failed"
    assert f"injected failure at {step}" in by_prompt[VENUE]["error"]
    assert f"(no answer: RuntimeError: injected failure at {step})" in result["answer"]
    assert result["metadata"]["partial"] is True
    venue = rt.get_run(by_prompt[VENUE]["id"])
    errors = [f for f in rt.frames(venue.id) if f.type == "error"]
    assert errors and f"injected failure at {step}" in errors[0].message
    assert rt.agent_tree(run.id)[venue.id]["status"] == "error"
    await rt.aclose()


async def test_the_stream_yields_agent_states_and_text_for_the_whole_tree(tmp_path: Path) -> None:
    script = TreeScript(subquestions={PARTY: [FOOD, VENUE]})
    rt = runtime(tmp_path, script)
    root = await rt.start("tree", {"prompt": PARTY})
    chunks = [chunk async for chunk in rt.stream(root)]
    agents = {c["agentId"] for c in chunks}
    assert len(agents) == 3
    for agent in agents:
        states = [
            c["state"]["status"]
            for c in chunks
            if c["type"] == "agent-state" and c["agentId"] == agent
        ]
        assert states[-1] == "completed"
    texts = [c["textDelta"] for c in chunks if c["type"] == "text-delta" and c["agentId"] == root]
    # the text arrives in pieces as the model writes it (how many depends on scheduling)
    assert "".join(texts).startswith(f"Answer about {PARTY}.")
    assert len(texts) > 1 and "".join(texts) == (rt.get_run(root).result or {})["answer"]
    await rt.aclose()


async def test_an_intervention_sent_to_a_process_that_is_then_killed_applies_after_resume(
    tmp_path: Path,
) -> None:
    async with held_worker(tmp_path / "tree.db", PARTY, [FOOD, VENUE]) as root:
        picnic = "Plan a picnic instead"
        other = Runtime(tmp_path / "tree.db", model=TreeScript().model())
        assert other.get_run(root).is_live()
        outcome = await other.intervene(root, Intervention.modify(picnic))
        assert outcome["applied"] == "next_step"  # the other process executes it
        other.store.close()
    rt = runtime(tmp_path, TreeScript(subquestions={PARTY: [FOOD, VENUE]}))
    await rt.resume(root)
    # the subagents the killed process left behind are resumed and collected
    assert_replanned(rt, await rt.wait(root), picnic)
    assert rt.interventions.take(root) == []  # taken from the inbox once recorded
    await rt.aclose()


async def test_python_in_the_main_execution_forks_and_waits_for_tree_subagents(
    tmp_path: Path,
) -> None:
    code = f'h = fork("{VENUE}")\nprint(wait(h))'
    script = TreeScript(code={PARTY: code})
    rt = runtime(tmp_path, script, services=Services(approval=ApprovalPolicy.of(allow=["python"])))
    root = await rt.start("tree", {"prompt": PARTY, "tools": ["python"]})
    chunks = [chunk async for chunk in rt.stream(root)]
    run = rt.get_run(root)
    assert run.status == RunStatus.COMPLETED, run.error
    (child,) = rt.store.list_runs(parent_id=root)
    assert child.agent_type == "tree" and child.input["args"]["depth"] == 1
    assert rt.get_run(child.id).status == RunStatus.COMPLETED
    assert f"Tool said: Answer about {VENUE}." in (run.result or {})["answer"]
    calls = [c for c in chunks if c["type"] == "tool-call"]
    assert calls and calls[0]["toolName"] == "python" and calls[0]["agentId"] == root
    assert any(c["type"] == "agent-state" and c["agentId"] == child.id for c in chunks)


async def test_fork_past_the_depth_limit_is_refused(tmp_path: Path) -> None:
    agent = TreeAgent({"prompt": PARTY, "depth": 1, "max_depth": 1})
    with pytest.raises(ValidationError, match="depth limit"):
        agent.child_run(VENUE)
    assert TreeAgent({"prompt": PARTY, "max_depth": 2}).child_run(VENUE)[1]["depth"] == 1


@pytest.mark.parametrize(
    "proposed",
    [
        "The budget is 100,000,000,000,000",  # a statement...
        "The budget is 100,000,000,000,000?",  # ...with a question mark is still one
        "",
        "?",
        "What birthday party are you planning?",  # asks for nothing the request does not say
        "How do I plan my birthday party?",  # the request again
    ],
)
async def test_only_a_question_about_something_not_given_is_asked(
    tmp_path: Path, proposed: str
) -> None:
    script = TreeScript(missing={PARTY: [proposed]})
    rt = runtime(tmp_path, script)
    handler, asked = await answering(["whatever"])
    rt.set_query_user_handler(handler)
    run = await rt.run("tree", {"prompt": PARTY, "max_subquestions": 0})
    assert run.status == RunStatus.COMPLETED, run.error
    assert asked == []
    assert (run.result or {})["metadata"]["declined"] == []
    await rt.aclose()


async def test_a_question_already_answered_is_not_asked_again(tmp_path: Path) -> None:
    script = TreeScript(
        missing={PARTY: ["How many guests are coming?", "How many guests are coming to it?"]}
    )
    rt = runtime(tmp_path, script)
    handler, asked = await answering(["Twenty", "Twenty again"])
    rt.set_query_user_handler(handler)
    run = await rt.run("tree", {"prompt": PARTY, "max_subquestions": 0})
    assert run.status == RunStatus.COMPLETED, run.error
    assert [p for _, p in asked] == ["How many guests are coming?"]
    await rt.aclose()


@pytest.mark.parametrize(
    "proposed",
    [
        ["How do I plan my birthday party?", FOOD, f"{FOOD[:-1]} at the party?", VENUE],
        ["What birthday party is it?", FOOD, "Plan my birthday party", VENUE],
    ],
)
async def test_no_subagent_restates_its_parent_or_another(
    tmp_path: Path, proposed: list[str]
) -> None:
    # the request again, a question it answers itself, another subquestion again: none is run
    rt = runtime(tmp_path, TreeScript(subquestions={PARTY: proposed}))
    run = await rt.run("tree", {"prompt": PARTY})
    assert run.status == RunStatus.COMPLETED, run.error
    assert [c["prompt"] for c in (run.result or {})["subagents"]] == [FOOD, VENUE]
    await rt.aclose()


TASKS = "Compare Python with Go; explain closures; and how to install Go"


@pytest.mark.parametrize(
    "proposed",
    [[], [TASKS], ["Compare Python with Go, explain closures?"], ["explain closures", "Go"]],
)
async def test_a_request_that_names_its_parts_is_split_into_them(
    tmp_path: Path, proposed: list[str]
) -> None:
    # the model's split is empty, the request again, or close to it: the request's parts are used
    rt = runtime(tmp_path, TreeScript(subquestions={TASKS: proposed}))
    run = await rt.run("tree", {"prompt": TASKS})
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    parts = ["Compare Python with Go", "Explain closures", "How to install Go"]
    assert [c["prompt"] for c in result["subagents"]] == parts
    assert {c["status"] for c in result["subagents"]} == {"completed"}
    split = [f for f in rt.frames(run.id) if f.type == "data.tree.split"]
    assert [f.payload["by"] for f in split] == ["parts"]
    two = await rt.run("tree", {"prompt": TASKS, "max_subquestions": 2})
    assert [c["prompt"] for c in (two.result or {})["subagents"]] == [
        "Compare Python with Go",
        "Explain closures; How to install Go",
    ]
    await rt.aclose()


async def test_a_model_split_that_covers_every_named_part_is_kept(tmp_path: Path) -> None:
    mine = ["Compare Python with Go for speed", "Explain closures in Go", "How to install Go"]
    rt = runtime(tmp_path, TreeScript(subquestions={TASKS: mine}))
    run = await rt.run("tree", {"prompt": TASKS})
    assert run.status == RunStatus.COMPLETED, run.error
    assert [c["prompt"] for c in (run.result or {})["subagents"]] == mine
    split = [f for f in rt.frames(run.id) if f.type == "data.tree.split"]
    assert [f.payload["by"] for f in split] == ["model"]
    await rt.aclose()


async def test_a_tree_saved_with_a_dict_main_answer_resumes_with_citation_objects(
    tmp_path: Path,
) -> None:
    """A parked tree whose saved state holds its main answer the earlier way (a dict, its
    citations dicts, one without a title or a quote) resumes and answers with ``Citation``s."""
    rt, script, run = await parked_on_clarification(tmp_path)
    snapshot = rt.store.latest_snapshot(run.id)
    assert snapshot is not None and snapshot.state["agent"]["main"] is None
    old_main = {
        "text": "Bring lemonade [1] and a blanket [2].",
        "citations": [
            {
                "number": 1,
                "chunk_id": "c-1",
                "file": "picnic.md",
                "title": "Picnics",
                "heading": "Drinks",
                "page": None,
                "start": 0,
                "end": 40,
                "quote": "Lemonade keeps well.",
            },
            {"number": 2, "chunk_id": "c-2", "file": "kit.pdf", "page": 2, "start": 5, "end": 9},
        ],
        "path": "extractive",
    }
    state = {**snapshot.state, "agent": {**snapshot.state["agent"], "main": old_main}}
    rt.store.commit(run.id, [], snapshot=Snapshot(snapshot.step, snapshot.seq, state))
    await rt.resume(run.id, "The garden party")
    run = await rt.wait(run.id)
    assert run.status == RunStatus.COMPLETED, run.error
    result = rt.result(run.id)
    assert isinstance(result, TreeResult) and result.main_answer == old_main["text"]
    assert [type(c) for c in result.citations] == [Citation, Citation]
    assert [c.label for c in result.citations] == [
        "[1] picnic.md § Drinks, chars 0-40",
        "[2] kit.pdf p. 2, chars 5-9",
    ]
    assert ("answer", PARTY) not in script.calls  # the saved main answer was used as it is
    await rt.aclose()


def test_a_tree_state_saved_before_an_answer_as_an_empty_dict_reads_as_none() -> None:
    agent = TreeAgent({"prompt": PARTY})
    saved = agent.get_state()
    assert saved["main"] is None
    agent.restore_state({**saved, "main": {}, "stage": "execute"})
    assert agent.state.main is None and agent.state.stage == "execute"
