from __future__ import annotations

from pathlib import Path

from kforge.rag.corpus import Corpus
from kforge.rag.ingest import ingest_folder
from kforge.rag.tool import hits_from_result, retrieve_chunks_tool
from kforge.rag.types import SourceDocument
from kforge.store.memory import MemoryStore
from kforge.tools.result import ToolResult


def _corpus() -> Corpus:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents(
        [
            SourceDocument("a", "Checkpoints let durable runs resume.", "Durability"),
            SourceDocument("b", "Compost feeds the garden.", "Garden"),
        ]
    )
    return corpus


async def test_tool_is_read_only_and_returns_hits_with_provenance() -> None:
    corpus = _corpus()
    retrieve = retrieve_chunks_tool(corpus)
    assert retrieve.name == "retrieve_chunks"
    assert retrieve.annotations.read_only_hint
    schema = retrieve.input_schema
    assert set(schema["properties"]) == {"query", "k"} and schema["required"] == ["query"]
    result = retrieve.func(query="durable runs resume", k=1)
    assert isinstance(result, ToolResult) and not result.is_error
    assert "a (chars 0-" in result.text
    [hit] = hits_from_result(result)
    assert hit.chunk.file == "a"
    assert hits_from_result(result.to_dict()) == [hit]


def test_bad_arguments_are_errors_the_model_can_fix() -> None:
    retrieve = retrieve_chunks_tool(_corpus(), max_k=3)
    assert "k must be between 1 and 3" in retrieve.func(query="x", k=9).text
    assert retrieve.func(query="  ").is_error
    assert hits_from_result(retrieve.func(query="  ")) == []


def _manual() -> Corpus:
    """A command's manual: its notes say "branch" again and again, its options entry says
    what deletes one; filler pages make "delete" and "branch" usual words of the corpus."""
    corpus = Corpus.open(MemoryStore(), "manual")
    notes = (
        "If you create a branch to switch to it at once, switch with the branch option. A "
        "branch tracks its upstream branch; a new branch starts where the current branch is. "
        "Branch names may hold slashes. Renaming a branch keeps its branch log; a branch "
        "merged into another branch stays a branch. Deleted tags are fetched again by others."
    )
    options = (
        "--list: List branches matching a pattern. --copy: Copy a branch with its log. "
        "--move: Move a branch together with its log. --delete: Delete a branch; it must be "
        "fully merged. --force: Reset a branch to another start point. --quiet: Be quiet. "
        "--verbose: Show the hash and subject of each head. --color: Color the output. "
        "--column: Display the listing in columns. --sort: Sort by the given key. --abbrev: "
        "Use the shortest prefix of each object name that is unique."
    )
    filler = [
        SourceDocument(f"page{n}", f"Page {n} mentions a branch of work and a delete key.", "")
        for n in range(6)
    ]
    corpus.add_documents(
        [
            SourceDocument("branch-notes", notes, "Notes"),
            SourceDocument("branch-options", options, "Options"),
            *filler,
        ]
    )
    return corpus


def test_passages_are_reranked_by_the_unit_that_says_it() -> None:
    corpus = _manual()
    # BM25 alone ranks the page that says "branch" most first
    assert corpus.search("How do I delete a branch?", 1)[0].chunk.file == "branch-notes"
    result = retrieve_chunks_tool(corpus).func(query="How do I delete a branch?", k=2)
    hits = hits_from_result(result)
    assert hits[0].chunk.file == "branch-options"
    assert [h.rank for h in hits] == [1, 2]
    unranked = retrieve_chunks_tool(corpus, rerank=False).func(query="How do I delete a branch?")
    assert hits_from_result(unranked)[0].chunk.file == "branch-notes"


def test_what_is_x_is_reranked_to_the_unit_that_defines_x() -> None:
    corpus = Corpus.open(MemoryStore(), "glossary")
    uses = " ".join(
        f"Step {n} adds the file to the index and shows the index beside the work tree."
        for n in range(4)
    )
    corpus.add_documents(
        [
            SourceDocument("tutorial", uses, "Tutorial"),
            SourceDocument(
                "glossary",
                "hook: A script run at certain points.\n\nindex: A collection of files with "
                "their stat information, whose contents are stored as objects.\n\nobject: The "
                "unit of storage, named by its hash.\n\nref: A name that points to an object.",
                "Glossary",
            ),
            *[SourceDocument(f"p{n}", f"Page {n} lists the index once.", "") for n in range(5)],
        ]
    )
    assert corpus.search("What is the index?", 1)[0].chunk.file == "tutorial"
    hits = hits_from_result(retrieve_chunks_tool(corpus).func(query="What is the index?", k=1))
    assert hits[0].chunk.file == "glossary"


def test_how_to_is_reranked_to_the_section_named_for_it_that_says_how(tmp_path: Path) -> None:
    (tmp_path / "contributing.md").write_text(
        "# Contributing\n\n## Installing for development\n\nInstall the tool from a clone to "
        "work on the tool itself. Installing it so installs the tool in development mode: the "
        "installed tool runs your changes. Install the tool again after a pull.\n",
        encoding="utf-8",
    )
    (tmp_path / "installation.md").write_text(
        "# Installation\n\n## Installing the tool\n\nInstall the tool with the package manager:\n\n"
        "    pkg add tool\n\nCheck that it worked with `tool --version`, which prints the "
        "version number and the place of its configuration file, and then read the guide to "
        "writing your first configuration file.\n",
        encoding="utf-8",
    )
    for n in range(5):
        (tmp_path / f"p{n}.md").write_text(f"# Page {n}\n\nOther things.\n", encoding="utf-8")
    corpus = Corpus.open(MemoryStore(), "install")
    ingest_folder(corpus, tmp_path)
    assert corpus.search("How do I install the tool?", 1)[0].chunk.file == "contributing.md"
    hits = hits_from_result(retrieve_chunks_tool(corpus).func(query="How do I install the tool?"))
    assert hits[0].chunk.file == "installation.md"


def test_a_quantity_counts_the_sentence_giving_the_number_with_its_subject() -> None:
    """ "Activate inspector on host:port. Default is 127.0.0.1:9229.": the value's sentence
    leaves its subject to the sentence before, and together they hold the question."""
    from kforge.rag.focus import question_focus
    from kforge.rag.question import read_question
    from kforge.rag.rerank import DEFINES_WEIGHT, best_unit_share
    from kforge.rag.types import Chunk, SearchHit

    text = "Activate inspector on `host:port`. Default is `127.0.0.1:9229`."
    chunk = Chunk("c", "cli.md", "cli.md", "Options", "--inspect", None, 0, len(text), text)
    hit = SearchHit(chunk, 1.0, 1)
    question = "What port does the inspector listen on by default?"
    focus = question_focus(question)
    alone = best_unit_share(focus, hit)  # each sentence on its own
    together = best_unit_share(focus, hit, read_question(question))
    assert together >= alone + DEFINES_WEIGHT
    version = text.replace("`127.0.0.1:9229`", "in version 1.2.3")
    versioned = SearchHit(Chunk("c", "cli.md", "cli.md", "Options", "", None, 0, 9, version), 1, 1)
    assert best_unit_share(focus, versioned, read_question(question)) < together


def test_a_sentence_counts_what_the_next_one_says_of_it_at_a_lower_weight() -> None:
    """Of two passages whose best sentences hold the same question terms, the one whose next
    sentence holds the rest ("It skips them ...") ranks first; a list item's neighbour adds
    nothing, as it stands alone."""
    from kforge.rag.focus import question_focus
    from kforge.rag.rerank import NEXT_WEIGHT, best_unit_share, rerank_hits
    from kforge.rag.types import Chunk, SearchHit

    def hit(name: str, text: str) -> SearchHit:
        return SearchHit(Chunk(name, name, name, "", "", None, 0, len(text), text), 1.0, 1)

    question = "Why does the scheduler skip paused jobs?"
    focus = question_focus(question)
    lists = hit("dashboard", "The dashboard shows the scheduler's paused jobs in grey.")
    says = hit(
        "cycles",
        "The scheduler treats paused jobs as finished for the current cycle. It skips them, "
        "so that a paused job never holds up the queue.",
    )
    assert best_unit_share(focus, says) > best_unit_share(focus, lists)
    assert [h.chunk.file for h in rerank_hits(focus, [lists, says], 2)] == ["cycles", "dashboard"]
    items = hit("items", "- The scheduler treats paused jobs as finished.\n- It skips them.")
    alone = best_unit_share(focus, hit("one", "The scheduler treats paused jobs as finished."))
    assert best_unit_share(focus, items) == alone
    assert best_unit_share(focus, says) <= alone + NEXT_WEIGHT
