"""The router agent: guardrail → router ⇄ executor → grading → generation, with
multi-turn conversations whose follow-ups are routed using the earlier turns."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kforge import jsoncodec
from kforge.agents.router import RouterAgent
from kforge.agents.router.prompts import GuardrailVerdict
from kforge.engine.restore import load_state
from kforge.frames import (
    AgentResponse,
    AgentStatus,
    DataEvent,
    ErrorFrame,
    ToolCallFrame,
)
from kforge.llm.structured import schema_for
from kforge.llm.testing.function import CallInfo, FunctionModel
from kforge.llm.testing.scripted import ScriptedModel
from kforge.llm.types import Message, ModelResponse
from kforge.rag.analyze import STOPWORDS, tokenize
from kforge.rag.corpus import Corpus
from kforge.rag.grading import Grade
from kforge.rag.types import Citation, SourceDocument
from kforge.runtime import Runtime
from kforge.store.base import RunRecord, RunStatus
from kforge.store.memory import MemoryStore
from kforge.tools import ToolResult, tool
from tests.agents.helpers import of_type, runtime

DOCS = [
    SourceDocument(
        "vit",
        "Vision transformers (ViT) split an image into fixed-size patches and feed them to a "
        "transformer encoder; they rival convolutional networks for image classification.",
        "Vision Transformers",
    ),
    SourceDocument(
        "detr",
        "DETR brings vision transformers to object detection: a transformer encoder-decoder "
        "predicts a set of boxes with bipartite matching, without anchors.",
        "Detection Transformers",
    ),
    SourceDocument(
        "yolo",
        "YOLO is a convolutional object detection network. Object detection with YOLO is fast: "
        "one pass predicts boxes for object detection in real time.",
        "YOLO Object Detection",
    ),
    SourceDocument("bread", "Bread needs flour, water, yeast and salt.", "Baking Bread"),
]

IN_SCOPE = {"reason": "About machine learning.", "in_scope": True}
RELEVANT = {"relevance": "relevant", "confidence": 0.9, "reasoning": "On topic."}
IRRELEVANT = {"relevance": "not_relevant", "confidence": 0.8, "reasoning": "Off topic."}


def corpus_store() -> MemoryStore:
    store = MemoryStore()
    Corpus.open(store, "ml").add_documents(DOCS)
    return store


async def ask_extractive(
    store: MemoryStore, corpus: str, question: str, k: int, **more: Any
) -> tuple[Runtime, RunRecord]:
    """One extractive router run over ``corpus`` (no model call is scripted)."""
    rt = runtime(ScriptedModel([]), store=store)
    args = {"question": question, "corpus": corpus, "answer": "extractive", "k": k, **more}
    return rt, await rt.run("router", args)


def route(query: str, action: str = "retrieve_chunks") -> dict[str, str]:
    return {"reasoning": f"search for {query}", "action": action, "query": query}


GENERATE = {"reasoning": "The passages answer it.", "action": "generate", "query": ""}


def steps(frames: list[Any]) -> list[str]:
    return [f.phase for f in frames if isinstance(f, AgentStatus)]


async def test_one_turn_walks_the_graph_and_cites_only_relevant_passages() -> None:
    store = corpus_store()
    model = ScriptedModel(
        [
            RELEVANT,  # vit
            IRRELEVANT,  # detr
            "ViTs split images into patches [1]; see also [2].",
        ]
    )
    rt = runtime(model, store=store)
    run = await rt.run(
        "router", {"question": "What is a vision transformer?", "corpus": "ml", "k": 2}
    )
    assert run.status == RunStatus.COMPLETED, run.error
    frames = rt.frames(run.id)
    assert steps(frames) == [
        "guardrail",
        "routing",
        "executing",
        "tool_start",
        "tool_end",
        "grading",
        "routing",
        "generation",
    ]
    result = run.result or {}
    # the first search is the user's own question, with no routing call to the model
    assert result["queries"] == ["What is a vision transformer?"]
    # only the passage graded relevant is numbered, so the stray [2] is removed
    # the checked sentences (no short line: a "what is" line would repeat the one sentence)
    assert result["answer"] == "ViTs split images into patches; see also [1]."
    assert [c["file"] for c in result["citations"]] == ["vit"]
    assert result["answer_path"] == "generative"
    assert not result["fallback"] and not result["out_of_scope"]
    model.assert_consumed()


async def test_questions_the_documents_know_nothing_of_are_refused_without_asking_the_model() -> (
    None
):
    store = corpus_store()
    model = ScriptedModel([])
    rt = runtime(model, store=store)
    for question, named in (
        ("Will it rain in Oslo tomorrow?", "rain, Oslo or tomorrow"),
        ("write me a poem about Paris", "poem or Paris"),
    ):
        run = await rt.run("router", {"question": question, "corpus": "ml"})
        assert run.status == RunStatus.COMPLETED
        result = run.result or {}
        assert result["out_of_scope"] is True and result["refused"] is True
        assert result["answer"] == f"The documents do not say. No passage found mentions {named}."
        assert result["citations"] == [] and result["short_answer"] == ""
        frames = rt.frames(run.id)
        assert steps(frames) == ["guardrail", "out_of_scope"]
        assert not of_type(frames, ToolCallFrame)
        [response] = of_type(frames, AgentResponse)
        assert response.goal_achieved is False
    model.assert_consumed()


async def test_a_model_verdict_decides_only_between_a_clear_match_and_nothing() -> None:
    store = corpus_store()
    model = ScriptedModel(
        [
            {"reason": "Bread is not machine learning.", "in_scope": False},
            IRRELEVANT,
            "Bake bread at 230 degrees.",
        ]
    )
    rt = runtime(model, store=store)
    # "bread" is in the documents, "oven" is not: not a clear match, so the model judges
    run = await rt.run(
        "router",
        {
            "question": "How hot should my oven be for bread?",
            "corpus": "ml",
            "k": 1,
            "max_iterations": 1,
        },
    )
    result = run.result or {}
    assert result["out_of_scope"] is False  # the documents hold one of its words: continue
    model.assert_consumed()
    [evidence] = [
        f for f in of_type(rt.frames(run.id), DataEvent) if f.name == "guardrail.evidence"
    ]
    assert evidence.payload["matched"] == ["bread"]


async def test_simple_messages_exit_early_without_tools() -> None:
    model = ScriptedModel([IN_SCOPE, "Hello!"])
    rt = runtime(model, store=corpus_store())
    run = await rt.run("router", {"question": "Hi there!", "corpus": "ml"})
    result = run.result or {}
    assert result["answer"] == "Hello!" and result["citations"] == [] and not result["fallback"]
    assert "executing" not in steps(rt.frames(run.id))
    model.assert_consumed()


async def test_nothing_relevant_falls_back_to_a_disclaimed_model_answer() -> None:
    model = ScriptedModel(
        [
            IN_SCOPE,
            IRRELEVANT,
            route("flour water"),
            IRRELEVANT,
            "Bread rises because yeast makes gas.",
        ]
    )
    rt = runtime(model, store=corpus_store())
    run = await rt.run(
        "router",
        {"question": "Why does bread rise?", "corpus": "ml", "k": 1, "max_iterations": 2},
    )
    result = run.result or {}
    assert result["fallback"] is True and result["citations"] == []
    assert result["answer"].startswith("Note: no relevant passages were found")
    assert result["queries"] == ["Why does bread rise?", "flour water"]
    assert result["answer_path"] == "model_only"
    model.assert_consumed()


async def test_a_repeated_query_is_rewritten_and_bad_router_output_is_retried() -> None:
    model = ScriptedModel(
        [
            IRRELEVANT,
            ModelResponse(text="retrieve more please"),  # not JSON
            route("Is YOLO faster than DETR?"),  # the question again: rewritten
            RELEVANT,
            "YOLO detects objects in one pass [1].",
        ]
    )
    rt = runtime(model, store=corpus_store())
    run = await rt.run("router", {"question": "Is YOLO faster than DETR?", "corpus": "ml", "k": 1})
    result = run.result or {}
    assert result["queries"][0] == "Is YOLO faster than DETR?"
    assert len(result["queries"]) == 2 and result["queries"][1] != result["queries"][0]
    frames = rt.frames(run.id)
    errors = of_type(frames, ErrorFrame)
    assert [e.error_type for e in errors] == ["invalid_router_decision"]
    assert [c["file"] for c in result["citations"]] == ["yolo"]
    assert result["answer"] == "YOLO detects objects in one pass [1]."
    model.assert_consumed()


async def test_web_search_runs_the_configured_tool() -> None:
    @tool(name="search_web_for_info", read_only=True)
    def fake_search(query: str) -> ToolResult:
        """Search the web.

        Args:
            query: What to search for.
        """
        snippet = "Real-time detection transformers, 2024"
        results = [{"title": "RT-DETR", "url": "https://example.org/rtdetr", "snippet": snippet}]
        return ToolResult.success("1 result", {"query": query, "results": results})

    model = ScriptedModel(
        [
            IRRELEVANT,  # the documents' best passage
            route("detection transformers 2024", "web_search"),
            RELEVANT,
            "RT-DETR appeared in 2024 [1].",
        ]
    )
    rt = runtime(model, fake_search, store=corpus_store())
    run = await rt.run(
        "router",
        {
            "question": "Any 2024 detection transformers?",
            "corpus": "ml",
            "web_search": True,
            "k": 1,
        },
    )
    result = run.result or {}
    assert [c["file"] for c in result["citations"]] == ["https://example.org/rtdetr"]
    assert "web_search" in str(model.calls[1].output_schema)
    [start, web] = of_type(rt.frames(run.id), ToolCallFrame)
    assert start.tool_name == "retrieve_chunks" and web.tool_name == "search_web_for_info"


# -- multi-turn ------------------------------------------------------------------------------


FILLER = {"what", "about", "researching", "tell", "any"}


def keywords(text: str) -> list[str]:
    return [w for w in tokenize(text) if w not in STOPWORDS and w not in FILLER and len(w) > 2]


def reasoning_model(seen: list[str]) -> FunctionModel:
    """Stands in for an LLM that reads the conversation: it grades every passage relevant and
    answers by quoting its first passage. ``seen`` collects the answering prompts."""

    def reply(messages: list[Message], info: CallInfo) -> Any:
        schema = info.output_schema
        prompt = messages[-1].content
        if schema == schema_for(GuardrailVerdict):
            return IN_SCOPE
        if schema == schema_for(Grade):
            return RELEVANT
        seen.append(prompt)
        first = re.search(r"^\[1\] \([^)]*\)\n(.*?)(?:[.;]|$)", prompt, flags=re.MULTILINE)
        return f"{first.group(1)} [1]." if first else "I do not know."

    return FunctionModel(reply, name="test:reasoning")


async def test_a_follow_up_is_searched_with_the_earlier_turn_of_its_session() -> None:
    store, seen = corpus_store(), []
    rt = runtime(reasoning_model(seen), store=store)
    first = await rt.run(
        "router",
        {"question": "I'm researching vision transformers", "corpus": "ml", "k": 1},
        session_id="chat-1",
    )
    assert [c["file"] for c in (first.result or {})["citations"]] == ["vit"]

    second = await rt.run(
        "router",
        {"question": "What about for object detection?", "corpus": "ml", "k": 1},
        session_id="chat-1",
    )
    result = second.result or {}
    frames = rt.frames(second.id)
    [loaded] = [f for f in of_type(frames, DataEvent) if f.name == "conversation.loaded"]
    assert loaded.payload["turns"][0]["question"] == "I'm researching vision transformers"
    assert "User: I'm researching vision transformers" in seen[-1]  # the answering prompt
    assert result["queries"] == [
        "I'm researching vision transformers What about for object detection?"
    ]
    assert [c["file"] for c in result["citations"]] == ["detr"]  # not the CNN detector
    assert result["history_turns"] == 1

    # The same follow-up without the conversation finds a different document.
    alone = await rt.run(
        "router", {"question": "What about for object detection?", "corpus": "ml", "k": 1}
    )
    assert (alone.result or {})["queries"] == ["What about for object detection?"]
    assert [c["file"] for c in (alone.result or {})["citations"]] == ["yolo"]


async def test_history_passed_in_args_is_used_instead_of_the_store() -> None:
    seen: list[str] = []
    rt = runtime(reasoning_model(seen), store=corpus_store())
    history = [{"question": "I'm researching vision transformers", "answer": "ViTs use patches."}]
    run = await rt.run(
        "router",
        {
            "question": "What about for object detection?",
            "corpus": "ml",
            "k": 1,
            "history": history,
        },
        session_id="other",
    )
    result = run.result or {}
    assert result["queries"] == [
        "I'm researching vision transformers What about for object detection?"
    ]
    assert "Assistant: ViTs use patches." in seen[0]
    assert not [f for f in of_type(rt.frames(run.id), DataEvent) if f.name == "conversation.loaded"]


def test_arguments_are_checked() -> None:
    import pytest

    from kforge.agents.router import RouterAgent
    from kforge.errors import ValidationError

    with pytest.raises(ValidationError, match="non-empty 'question'"):
        RouterAgent({"question": "  "})
    with pytest.raises(ValidationError, match="'k' must be a positive integer"):
        RouterAgent({"question": "q", "k": 0})
    with pytest.raises(ValidationError, match="'guardrail' must be true or false"):
        RouterAgent({"question": "q", "guardrail": "false"})
    with pytest.raises(ValidationError, match="'answer' must be one of extractive, generative"):
        RouterAgent({"question": "q", "answer": "poetic"})


async def test_a_document_named_by_a_relevant_passage_is_the_second_hop() -> None:
    store = MemoryStore()
    Corpus.open(store, "films").add_documents(
        [
            SourceDocument(
                "kiss",
                "Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.",
                "Kiss and Tell (1945 film)",
            ),
            SourceDocument(
                "temple",
                "Shirley Temple was an American actress. She later served as United States "
                "ambassador to Ghana and to Czechoslovakia.",
                "Shirley Temple",
            ),
            SourceDocument("meet", "Meet Corliss Archer is a radio sitcom.", "Meet Corliss Archer"),
        ]
    )
    _rt, run = await ask_extractive(
        store, "films", "Which post did the star of the 1945 comedy Kiss and Tell hold later?", 1
    )
    result = run.result or {}
    # numbered by first use: the short answer line may quote the second hop first
    assert sorted(c["file"] for c in result["citations"]) == ["kiss", "temple"]
    assert "ambassador to Ghana" in result["answer"]
    assert result["answer_path"] == "extractive"


async def test_a_named_document_with_no_sentence_to_quote_is_no_second_hop() -> None:
    """A document a relevant passage names by title, whose text holds no sentence an answer
    can quote (one run-on line of 70 words, as in a corpus of generated text), is not hopped
    to: the answer quotes the relevant passage (the hop once indexed its empty list of units:
    an IndexError in the answering step)."""
    store = MemoryStore()
    run_on = " ".join(["shirley", "temple", "actress", "ghana", "diplomat"] * 14)
    Corpus.open(store, "films").add_documents(
        [
            SourceDocument(
                "kiss",
                "Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.",
                "Kiss and Tell (1945 film)",
            ),
            SourceDocument("temple", run_on, "Shirley Temple"),
        ]
    )
    rt = runtime(ScriptedModel([]), store=store)
    run = await rt.run(
        "router",
        {
            "question": "Which 1945 comedy film starred Shirley Temple as Corliss Archer?",
            "corpus": "films",
            "answer": "extractive",
            "k": 1,
        },
    )
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert [c["file"] for c in result["citations"]] == ["kiss"]
    assert "Kiss and Tell is a 1945 comedy film" in result["answer"]
    linked = [f for f in of_type(rt.frames(run.id), DataEvent) if f.name == "rag.linked"]
    assert [c["file"] for f in linked for c in f.payload["chunks"]] == ["temple"]


# -- the documents do not say ---------------------------------------------------------------


def node_path_store(tmp_path: Path) -> MemoryStore:
    """A corpus of Node.js's path page only, with the sentence newer releases add to
    ``path.normalize()`` (not safe for mitigating path traversals)."""
    from tests.rag.test_focus import node_corpus

    return node_corpus(tmp_path, "path.md").store  # type: ignore[return-value]


async def test_when_no_passage_holds_the_focus_the_documents_do_not_say(tmp_path: Path) -> None:
    model = ScriptedModel([])  # a small model is never asked to answer alone
    rt = runtime(model, store=node_path_store(tmp_path))
    run = await rt.run(
        "router", {"question": "Is libffi thread safe?", "corpus": "node", "answer": "extractive"}
    )
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    answer = result["answer"]
    assert answer.startswith("The documents do not say. The closest passages mention safe but not")
    assert "\n\nSee also:\n- path.md § Path > path.normalize(path)" in answer
    assert "mitigating" not in answer  # the closest passage is listed, not quoted
    assert result["refused"] is True and result["short_answer"] == ""
    assert result["citations"] == [] and not result["out_of_scope"]
    assert result["answer_path"] == "none"
    model.assert_consumed()
    # before saying so it read twice as far, with fewer words
    searched = [f.arguments for f in rt.frames(run.id) if isinstance(f, ToolCallFrame)]
    first, *later = searched
    assert first == {"query": "Is libffi thread safe?", "k": 5}
    assert later and all(call["k"] == 10 and call["query"] != first["query"] for call in later)

    # a question the page does answer is answered from it
    run = await rt.run(
        "router",
        {"question": "What does path.normalize do?", "corpus": "node", "answer": "extractive"},
    )
    result = run.result or {}
    assert not result["refused"] and result["citations"]
    assert all(c["file"] == "path.md" for c in result["citations"])


async def test_a_capable_model_still_answers_alone_with_its_disclaimer(tmp_path: Path) -> None:
    # the model grades the passage on "safe" relevant; it lacks the focus, so nothing is cited
    model = ScriptedModel([RELEVANT, "libffi documents its closures as thread safe."])
    rt = runtime(model, store=node_path_store(tmp_path))
    run = await rt.run(
        "router",
        {
            "question": "Is libffi thread safe?",
            "corpus": "node",
            "answer": "generative",
            "guardrail": False,
            "max_iterations": 1,
            "k": 1,
        },
    )
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert result["answer"].startswith("Note: no relevant passages were found")
    assert result["answer_path"] == "model_only" and result["citations"] == []
    assert result["short_answer"] == "" and not result["refused"]
    model.assert_consumed()


def test_the_short_answer_is_the_opening_line_that_stands_apart() -> None:
    from kforge.agents.common.answer import short_answer

    assert short_answer("`\\n` on POSIX [1].\n\nThe end-of-line marker [1].") == "`\\n` on POSIX."
    assert short_answer("One paragraph only [1].") == ""
    assert short_answer("A list\nof lines [1]\n\nthen more.") == ""


# -- which question is searched in a conversation -------------------------------------------


async def test_a_standalone_question_after_an_unrelated_one_is_searched_alone() -> None:
    rt = runtime(reasoning_model([]), store=corpus_store())
    history = [{"question": "Why does bread need yeast?", "answer": "To rise."}]
    for question, searched in (
        ("How does YOLO detect objects?", "How does YOLO detect objects?"),
        ("What is DETR?", "What is DETR?"),  # short, but the bread page is no help with it
        ("Is it fast?", "Why does bread need yeast? Is it fast?"),  # refers back
        ("And vision transformers?", "Why does bread need yeast? And vision transformers?"),
    ):
        run = await rt.run(
            "router", {"question": question, "corpus": "ml", "k": 1, "history": history}
        )
        assert (run.result or {})["queries"][0] == searched, question


async def test_a_short_follow_up_is_searched_with_its_topic_when_that_finds_both() -> None:
    rt = runtime(reasoning_model([]), store=corpus_store())
    history = [{"question": "What is YOLO?", "answer": "A fast detector."}]
    run = await rt.run(
        "router",
        {"question": "How fast is detection?", "corpus": "ml", "k": 1, "history": history},
    )
    result = run.result or {}
    assert result["queries"][0] == "What is YOLO? How fast is detection?"
    assert [c["file"] for c in result["citations"]] == ["yolo"]


async def test_a_comparison_searches_each_compared_item_and_quotes_both() -> None:
    """Pages that name both items outrank each item's own entry; the answer still says what
    each one is, from its entry."""
    store = MemoryStore()
    Corpus.open(store, "ser").add_documents(
        [
            SourceDocument(
                "notes",
                "Both pack.write and pack.writes take the same options; pack.write and "
                "pack.writes share their encoder. The difference between pack.write and "
                "pack.writes is small in practice.",
                "Notes",
            ),
            SourceDocument(
                "cli",
                "The command line tool calls pack.writes for its output and pack.write when "
                "given a file; see pack.write and pack.writes for their options.",
                "Command line",
            ),
            SourceDocument(
                "history",
                "Version 2 made pack.write and pack.writes faster, and pack.writes gained an "
                "indent option; pack.write followed in version 3.",
                "History",
            ),
            SourceDocument(
                "write",
                "pack.write(obj, stream): Serialize obj as packed bytes to the open stream, "
                "which must be writable in binary mode.",
                "pack.write",
            ),
            SourceDocument(
                "writes",
                "pack.writes(obj): Serialize obj to a packed bytes object and return it; "
                "nothing is written anywhere.",
                "pack.writes",
            ),
            *[
                SourceDocument(f"other{n}", f"Chapter {n} explains a difference of setup.", "")
                for n in range(4)
            ],
        ]
    )
    rt, run = await ask_extractive(
        store,
        "ser",
        "What is the difference between pack.write and pack.writes?",
        3,
        max_iterations=1,  # each item is searched beyond the rounds asked for
    )
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    answer = result["answer"]
    assert "to the open stream" in answer, answer
    assert "return it" in answer, answer
    cited = {c["file"] for c in result["citations"]}
    assert {"write", "writes"} <= cited
    searched = [f.arguments["query"] for f in of_type(rt.frames(run.id), ToolCallFrame)]
    assert searched[1:] == ["pack.write", "pack.writes"]


async def test_the_router_keeps_citations_as_objects_and_reads_a_state_saved_with_dicts() -> None:
    store = corpus_store()
    rt = runtime(ScriptedModel([RELEVANT, "ViTs split images into patches [1]."]), store=store)
    args = {"question": "What is a vision transformer?", "corpus": "ml", "k": 1}
    run = await rt.run("router", args)
    cited = rt.result(run.id).citations
    assert cited and all(isinstance(c, Citation) for c in cited)
    # the saved state is the one the previous version wrote: each citation's to_dict
    saved = load_state(rt.store, run.id)[0]["agent"]
    assert saved["citations"] == [c.to_dict() for c in cited]
    agent = RouterAgent(args)
    agent.restore_state(jsoncodec.loads(jsoncodec.dumps(saved)))
    assert agent.state.citations == list(cited)
    assert agent.result().citations == cited
    assert agent.get_state()["citations"] == saved["citations"]
    # saved by an older version still: a citation without its title, heading or quote
    older = {k: v for k, v in saved["citations"][0].items() if k not in ("title", "quote")}
    agent.restore_state({**saved, "citations": [older]})
    (citation,) = agent.state.citations
    assert isinstance(citation, Citation) and citation.title == "" and citation.quote == ""
    assert citation.label == cited[0].label
    await rt.aclose()


async def test_a_search_in_fewer_words_is_graded_with_the_earlier_one(monkeypatch: Any) -> None:
    """The question's own search finds the passage that answers, but its passages do not hold
    the question's focus between them; the search in fewer words finds passages that do, with
    the question's other words. Graded together, the earlier passage answers, and leads."""
    import kforge.agents.router.agent as router_agent

    store = MemoryStore()
    corpus = Corpus.open(store, "borg")
    corpus.add_documents(
        [
            SourceDocument(
                "ttl",
                "The files cache keeps an entry for 20 backup runs at most: an entry not seen "
                "for that many runs is removed.",
                "Files cache",
            ),
            SourceDocument(
                "tool", "The tool drops connections that stay unseen for an hour.", "Net"
            ),
            SourceDocument("notes", "Before you go on, read the backup notes.", "Notes"),
            SourceDocument("bread", "Bread needs flour, water, yeast and salt.", "Baking"),
        ]
    )
    hits = {h.chunk.file: h for h in corpus.search("cache tool go bread", 10)}
    searched: list[str] = []

    def scripted(_corpus: Corpus) -> Any:
        def retrieve_chunks(query: str, k: int = 5) -> ToolResult:
            searched.append(query)
            found = ["ttl", "bread"] if len(searched) == 1 else ["tool", "notes"]
            return ToolResult.success(query, {"hits": [hits[f].to_dict() for f in found]})

        return tool(name="retrieve_chunks", read_only=True)(retrieve_chunks)

    monkeypatch.setattr(router_agent, "retrieve_tool", scripted)
    question = "How many backup runs can a file go unseen before the tool drops it from its cache?"
    _rt, run = await ask_extractive(store, "borg", question, 2)
    assert run.status == RunStatus.COMPLETED, run.error
    result = run.result or {}
    assert len(searched) == 2 and searched[1] != question  # the second in fewer words
    assert [c["file"] for c in result["citations"]][:1] == ["ttl"]
    assert "20 backup runs" in result["answer"]
