"""benchmarks/answer_quality.py: its scoring rules on hand-made answers, and the harness end to
end with the schema-driven test model (no timing assertions)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scoring() -> ModuleType:
    return _load("answer_scoring")


@pytest.fixture(scope="module")
def hotpot() -> ModuleType:
    _load("answer_scoring")
    _load("answer_runs")
    return _load("answer_hotpot")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _load("answer_quality")


def test_a_looping_answer_is_degenerate_and_a_plain_one_is_not(scoring: ModuleType) -> None:
    loop = "a way of life that is also " * 12
    assert scoring.is_degenerate(loop)
    assert not scoring.is_degenerate(
        "BM25 ranks documents by term frequency, inverse document frequency and length [1]."
    )
    assert not scoring.is_degenerate("yes yes yes yes yes")  # under 8 words: not judged
    assert scoring.distinct_ngram_share(["a", "b", "c", "d", "a", "b", "c", "d"]) == 4 / 5


def test_echo_by_phrase_and_by_eight_word_run_from_the_prompt(scoring: ModuleType) -> None:
    prompt = "Write the reply from the listed texts and you keep it short and plain today."
    assert scoring.echo_evidence("The answer to the question in 2 to 4 sentences is: BM25.", [], [])
    assert scoring.echo_evidence("Question: what is BM25?\nBM25 is a ranking function.", [], [])
    echo = "Sure: from the listed texts and you keep it short [1]."
    assert scoring.echo_evidence(echo, [prompt], ["an unrelated chunk"]) == [
        "run: from the listed texts and you keep it",
        "run: the listed texts and you keep it short",
    ]
    quoted = "a chunk saying from the listed texts and you keep it short"
    assert not scoring.echo_evidence(echo, [prompt], [quoted])
    assert not scoring.echo_evidence("BM25 scores terms by frequency [1].", [prompt], [])
    # a phrase of the instructions that the cited document itself says is quoted, not echoed
    said = "Grading lets the final answer cite only passages judged relevant [1]."
    assert scoring.echo_evidence(said, [], ["unrelated"]) == ["phrase: cite only passages"]
    assert not scoring.echo_evidence(said, [], ["it lets the answer cite only passages judged"])


def test_sentences_take_the_markers_that_follow_them(scoring: ModuleType) -> None:
    answer = "First claim [1]. Second claim.[2][3] Third, no marker.\n- item [2]\n[4]"
    got = [(s.text, s.markers) for s in scoring.split_sentences(answer)]
    assert got == [
        ("First claim.", (1,)),
        ("Second claim.", (2, 3)),
        ("Third, no marker.", ()),
        ("item", (2, 4)),
    ]
    assert scoring.marker_numbers("a [1, 3] b [2]") == [1, 3, 2]


def test_support_counts_content_words_found_in_the_cited_chunks(scoring: ModuleType) -> None:
    chunks = {
        1: "The parameter k1 controls how quickly term frequency saturates.",
        2: "Dense retrieval encodes passages as vectors.",
    }
    answer = (
        "k1 controls the saturation of term frequency [1]. "
        "k1 controls the saturation of dense vectors [2]. "
        "Paris is the capital of France [1]. "
        "BM25 was invented in the Okapi system. "
        "The documents do not say who wrote it."
    )
    statuses = [(s.status, s.support) for s in scoring.score_sentences(answer, chunks)]
    assert statuses == [
        ("supported", 1.0),
        ("unsupported", 0.4),
        ("unsupported", 0.0),
        ("uncited", 0.0),
        ("exempt", None),
    ]


def test_markers_naming_nothing(scoring: ModuleType) -> None:
    assert scoring.unknown_markers("a [1] b [7] c [2, 36]", [1, 2]) == [7, 36]
    assert scoring.unknown_markers("no markers", []) == []


def test_answer_sentence_maps_to_the_context_sentence_it_came_from(hotpot: ModuleType) -> None:
    context = ["Paris is the capital of France.", " It has about two million inhabitants."]
    assert hotpot.map_to_context("The capital of France is Paris", context) == 0
    assert hotpot.map_to_context("Paris has two million inhabitants", context) == 1
    assert hotpot.map_to_context("Berlin hosts the Bundestag", context) is None
    assert hotpot.map_to_context("the of and", context) is None


def test_supporting_fact_scores_follow_hotpotqa(hotpot: ModuleType) -> None:
    gold = {("A", 0), ("B", 1)}
    assert hotpot.supporting_fact_scores({("A", 0), ("C", 2)}, gold) == {
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "em": 0.0,
    }
    assert hotpot.supporting_fact_scores(set(gold), gold)["em"] == 1.0
    assert hotpot.supporting_fact_scores(set(), gold)["f1"] == 0.0


def test_predicted_facts_come_only_from_cited_paragraphs(bench: ModuleType) -> None:
    paragraphs = [
        ("Paris", ["Paris is the capital of France.", " It lies on the Seine."]),
        ("Seine", ["The Seine flows through Paris."]),
    ]
    citations = [{"number": 1, "file": "p0"}, {"number": 2, "file": "p1"}]
    answer = "Paris is the capital of France [1]. Paris lies on the Seine [1]. Uncited Seine."
    assert bench.predicted_facts(answer, citations, paragraphs) == {("Paris", 0), ("Paris", 1)}


def test_bm25_floor_picks_the_sentences_sharing_the_question_terms(hotpot: ModuleType) -> None:
    paragraphs = [
        ("Okapi", ["Okapi BM25 ranks documents.", " It was built in London."]),
        ("Vectors", ["Dense retrieval uses embeddings."]),
    ]
    assert hotpot.bm25_top_sentences("Where was Okapi built?", paragraphs, top=1) == [("Okapi", 1)]


def test_harness_end_to_end_with_the_test_model(bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "answers.json"
    want_hotpot = bench.HOTPOT.is_file()
    argv = ["--model", "test", "--limit", "2", "--json", str(out), "--baseline-bm25"]
    assert bench.main([*argv, "--set", "samples"]) == 0
    report = json.loads(out.read_text())
    samples = report["samples"]
    assert samples["totals"]["questions"] == 2 == len(samples["rows"])
    assert samples["totals"]["completed"] + samples["totals"]["failed"] == 2
    assert samples["totals"]["with_key_fact"] == 2
    for row in samples["rows"]:
        assert row["status"] in ("completed", "failed")
        assert row["seconds"] >= 0
        assert row["cli"]["seconds"] > 0 and "exit" in row["cli"]
        if row["status"] == "completed":
            assert isinstance(row["stated_key_fact"], bool) and isinstance(row["refused"], bool)
    again = tmp_path / "rescored.json"
    assert bench.main(["--rescore", str(out), "--json", str(again)]) == 0
    assert json.loads(again.read_text())["samples"]["totals"] == samples["totals"]
    if not want_hotpot:
        pytest.skip(f"HotpotQA part not run: no sample at {bench.HOTPOT} (../shared is absent)")
    assert bench.main([*argv, "--set", "hotpotqa", "--half", "second"]) == 0
    hotpot = json.loads(out.read_text())["hotpotqa"]
    assert hotpot["half"] == "second"
    assert hotpot["answers"]["totals"]["questions"] == 2
    assert hotpot["published"]["sp_f1"] == 66.7
    assert 0 <= hotpot["bm25_floor"]["sp_f1"] <= 100


def test_missing_hotpot_data_is_skipped_with_a_reason(bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "answers.json"
    missing = tmp_path / "absent.jsonl"
    assert (
        bench.main(
            [
                "--set",
                "hotpotqa",
                "--skip-answers",
                "--hotpot-data",
                str(missing),
                "--json",
                str(out),
            ]
        )
        == 0
    )
    assert "not found" in json.loads(out.read_text())["hotpotqa"]["skipped"]


def test_the_answer_argument_is_passed_only_when_given(bench: ModuleType) -> None:
    assert "answer" not in bench.ask_arguments("What is BM25?", "samples", None)
    args = bench.ask_arguments("What is BM25?", "samples", "extractive")
    assert args["answer"] == "extractive"
    assert args["question"] == "What is BM25?" and args["corpus"] == "samples"


def test_echo_of_passage_headers_and_prompt_labels(scoring: ModuleType) -> None:
    header = "The answer is:\n\n (guide.md, § Keys > Idempotent keys, chars 1696-2072)\n## Keys"
    assert scoring.echo_evidence(header, [], []) == [
        "passage header: (guide.md, § Keys > Idempotent keys, chars 1696-2072)"
    ]
    assert scoring.echo_evidence("The passage is: (p3, chars 0-632) The 2017", [], [])
    assert not scoring.echo_evidence("BM25 (Robertson, 1994) ranks documents.", [], [])


# -- the key-fact rule ----------------------------------------------------------------------


def _fact(scoring: ModuleType, **parts: object) -> object:
    return scoring.KeyFact.from_json(parts)


def test_a_correct_answer_states_the_key_fact_and_a_wrong_one_does_not(
    scoring: ModuleType,
) -> None:
    link = _fact(scoring, any=[["fs.link", "fs.linkSync", "fsPromises.link"]])
    right = "`fs.link(existingPath, newPath, callback)` [1]\n\nCreates a new link [1]."
    wrong = "The number of hard-links that exist for the file [1]."
    assert scoring.states_key_fact(right, link)
    assert not scoring.states_key_fact(wrong, link)
    # a longer identifier is another name, not this one
    assert not scoring.states_key_fact("Use fs.linkSyncer() [1].", link)
    linked = _fact(scoring, any=[["both the Readable and Writable"]])
    marked_up = (
        "Duplex streams implement both the [`Readable`][] and [`Writable`](#w) interfaces [1]."
    )
    assert scoring.states_key_fact(marked_up, linked)
    assert not scoring.states_key_fact("Duplex streams are [Readable][] [1].", linked)
    both = _fact(scoring, all=["Readable", "Writable"])
    assert scoring.states_key_fact("Streams implementing both readable and writable [1].", both)
    assert not scoring.states_key_fact("Streams that implement the Readable interface [1].", both)


def test_identifiers_keep_their_case_and_words_do_not(scoring: ModuleType) -> None:
    variable = _fact(scoring, all=["LANGUAGE"])
    assert scoring.states_key_fact("Set the LANGUAGE variable to 'sv:de' [2].", variable)
    assert not scoring.states_key_fact("Set the language you prefer [2].", variable)
    race = _fact(scoring, all=["race condition"])
    assert scoring.states_key_fact("Race condition: another process may change it [1].", race)
    assert not scoring.states_key_fact("A race between two conditions [1].", race)
    option = _fact(scoring, all=["--check"])
    assert scoring.states_key_fact("Run msgfmt --check on the file [1].", option)
    assert not scoring.states_key_fact("Perform the checks implied by --check-format [1].", option)
    eol = _fact(scoring, all=["\\r\\n", "Windows"])
    assert scoring.states_key_fact("* `\\r\\n` on Windows [1]", eol)
    assert not scoring.states_key_fact("* `\\n` on Windows [1]", eol)


def test_a_number_needs_its_unit_and_markers_are_neither_numbers_nor_text(
    scoring: ModuleType,
) -> None:
    mark = _fact(scoring, number=[{"value": "16384", "units": ["KiB", "bytes"]}])
    assert scoring.states_key_fact("Defaults to `16384`[2] (16 KiB), or 16 [2].", mark)
    assert scoring.states_key_fact("The default is 16,384 bytes [1].", mark)
    assert not scoring.states_key_fact("Defaults to 16384 objects [1].", mark)
    assert not scoring.states_key_fact("Defaults to 163840 bytes [1].", mark)
    listeners = _fact(scoring, number=[{"value": "10", "units": ["listeners"]}])
    assert scoring.states_key_fact("A maximum of `10` listeners can be registered [3].", listeners)
    assert not scoring.states_key_fact("Listeners may be registered [10].", listeners)
    port = _fact(scoring, number=[{"value": "9229", "units": []}])
    assert scoring.states_key_fact("Default is `127.0.0.1:9229` [1].", port)
    assert not scoring.states_key_fact("Default is `127.0.0.1:92290` [1].", port)


def test_a_refusal_never_states_a_fact(scoring: ModuleType) -> None:
    link = _fact(scoring, all=["fs.link"])
    refusal = (
        "The documents do not say how to create a hard link with fs.link.\n\n"
        "See also:\n- fs.md § fs.link(existingPath, newPath, callback)"
    )
    assert scoring.is_refusal(refusal)
    assert not scoring.states_key_fact(refusal, link)
    answer = "fs.link [1]"
    assert scoring.states_key_fact(answer, link)
    assert not scoring.states_key_fact(answer, link, refused=True)
    assert not scoring.is_refusal("The documents say fs.link creates links [1].")
    assert scoring.is_refusal("Sorry, that is off topic.", {"out_of_scope": True})
    assert scoring.is_refusal("fs.link [1]", {"refused": True})
    assert not scoring.is_refusal("fs.link [1]", {"refused": False, "out_of_scope": False})
    assert not scoring.states_key_fact("anything", scoring.KeyFact())  # an empty fact: never


def test_a_key_fact_with_unknown_parts_is_refused(scoring: ModuleType) -> None:
    with pytest.raises(ValueError, match="unknown part"):
        scoring.KeyFact.from_json({"terms": ["fs.link"]})


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["fs.link", "creates", "a", "link", "16384", "KiB", "LANGUAGE"]),
        min_size=1,
        max_size=12,
    ),
    markers=st.lists(st.tuples(st.integers(0, 12), st.integers(1, 99)), max_size=4),
)
def test_for_any_answer_markers_between_words_change_nothing(
    scoring: ModuleType, words: list[str], markers: list[tuple[int, int]]
) -> None:
    facts = [
        _fact(scoring, all=["fs.link"]),
        _fact(scoring, any=[["LANGUAGE", "creates a link"]]),
        _fact(scoring, number=[{"value": "16384", "units": ["KiB"]}]),
    ]
    marked = list(words)
    for position, number in sorted(markers, reverse=True):
        marked.insert(min(position, len(marked)), f"[{number}]")
    plain, with_markers = " ".join(words), " ".join(marked)
    for fact in facts:
        assert scoring.states_key_fact(plain, fact) == scoring.states_key_fact(with_markers, fact)


def test_short_answer_is_the_given_line_or_the_first_paragraph(scoring: ModuleType) -> None:
    assert scoring.short_answer({"short_answer": "msgfmt [1]", "answer": "x"}) == "msgfmt"
    text = "Yes. It can share memory [1].\n\nUnlike child_process, it can [1]."
    assert scoring.short_answer({"answer": text}) == "Yes. It can share memory."
    assert scoring.short_answer({"answer": "One paragraph only [2]."}) == "One paragraph only."


def test_quoted_pieces_must_be_in_a_chunk_their_markers_name(scoring: ModuleType) -> None:
    chunks = {
        1: "Creates a new link from the\n existingPath to the newPath. See link(2).",
        2: "Lines starting with #. hold **extracted** comments",
    }
    answer = (
        "`fs.link` [1]\n\nCreates a new link from the existingPath to the newPath [1]. "
        "Lines starting with #. hold extracted comments [2]. Creates a link [2]. Unmarked."
    )
    found, counted, missing = scoring.quoted_sentences(answer, chunks)
    assert missing == ["`fs.link`", "Creates a link", "Unmarked."]
    assert (found, counted) == (2, 5)
    assert scoring.cited_spans("a [1][2]. b [3, 4].") == [("a", (1, 2)), ("b", (3, 4))]


# -- the question sets -----------------------------------------------------------------------


DOC_SETS = [
    "nodejs",
    "gettext",
    "sqlite",
    "flask",
    "click",
    "jinja",
    "pytest",
    "scrapy",
    "postgresql",
    "sphinx",
    "borgbackup",
    "mypy",
    "django",
    "celery",
    "psycopg",
    "aiohttp",
    "snakemake",
    "doxygen",
    "diffutils",
    "hypothesis",
    "apache",
    "attrs",
    "requests",
    "werkzeug",
    "cmd2",
    "doit",
    "factoryboy",
]
"""The doc sets whose question files the tests below check: every set of ``QUESTION_SETS``."""

HELD_OUT = [
    "psycopg",
    "aiohttp",
    "snakemake",
    "doxygen",
    "diffutils",
    "hypothesis",
    "apache",
    "attrs",
    "requests",
    "werkzeug",
]
"""Sets written from the documents alone with the type mix below, held out when written (aiohttp,
doxygen and snakemake have since been read and designed on)."""

HELD_OUT_TYPES = {
    "procedure": 8,
    "quantity": 6,
    "yes_no": 5,
    "definition": 4,
    "comparison": 3,
    "reason": 2,
    "who_when_where": 2,
}


@pytest.fixture(scope="module")
def docsets() -> ModuleType:
    _load("answer_scoring")
    return _load("answer_docsets")


@pytest.mark.parametrize("name", DOC_SETS)
def test_question_files_follow_the_schema(docsets: ModuleType, name: str) -> None:
    assert sorted(DOC_SETS) == sorted(docsets.QUESTION_SETS)
    items = docsets.load_questions(docsets.QUESTION_SETS[name])
    assert len(items) >= 25
    unanswerable = [i for i in items if not i["answerable"]]
    assert 4 <= len(unanswerable) <= 6
    assert len({i["type"] for i in items if i["answerable"]}) == len(docsets.QUESTION_TYPES)


def test_a_question_without_its_key_fact_is_rejected(docsets: ModuleType, tmp_path: Path) -> None:
    bad = tmp_path / "q.jsonl"
    bad.write_text(
        json.dumps({"id": "a", "question": "Q?", "type": "definition", "answerable": True})
    )
    with pytest.raises(ValueError, match="needs a key_fact"):
        docsets.load_questions(bad)
    bad.write_text(json.dumps({"id": "a", "question": "Q?", "type": "guess", "answerable": False}))
    with pytest.raises(ValueError, match="type 'guess'"):
        docsets.load_questions(bad)


def _docset_folder(name: str) -> Path:
    sys.path.insert(0, str(BENCHMARKS))
    from docsets import docset_path

    try:
        return docset_path(name, fetch=False)
    except FileNotFoundError as exc:
        pytest.skip(f"doc set {name!r} not fetched ({exc}); quotes are checked when it is")


@pytest.mark.parametrize("name", DOC_SETS)
def test_every_quote_is_in_the_named_section_and_states_the_key_fact(
    docsets: ModuleType, scoring: ModuleType, name: str
) -> None:
    folder = _docset_folder(name)
    for item in docsets.load_questions(docsets.QUESTION_SETS[name]):
        if not item["answerable"]:
            continue
        path = folder / item["source"]["file"]
        quotes = [" ".join(q.split()) for q in docsets.quotes_of(item)]
        text = docsets.document_text(path)
        in_section = [t for h, t in docsets.sections(path) if h == item["source"]["section"]]
        assert in_section, f"{item['id']}: no section {item['source']['section']!r} in {path.name}"
        for quote in quotes:
            assert quote in text, f"{item['id']}: quote not in {path.name}: {quote!r}"
            assert any(quote in t for t in in_section), f"{item['id']}: quote outside its section"
        stated = " ".join([item["source"]["section"], *quotes])
        fact = scoring.KeyFact.from_json(item["key_fact"])
        assert scoring.states_key_fact(stated, fact), f"{item['id']}: the quote lacks the key fact"


@pytest.mark.parametrize("name", HELD_OUT)
def test_held_out_sets_have_the_type_mix_and_every_key_fact_term_in_the_quote(
    docsets: ModuleType, scoring: ModuleType, name: str
) -> None:
    items = docsets.load_questions(docsets.QUESTION_SETS[name])
    assert len(items) == 30 and sum(i["answerable"] for i in items) == 25
    types: dict[str, int] = {}
    for item in items:
        types[item["type"]] = types.get(item["type"], 0) + 1
    assert types == HELD_OUT_TYPES
    for item in items:
        if not item["answerable"]:
            assert item["absent_terms"], f"{item['id']}: name the terms the set never mentions"
            continue
        quotes = scoring.fact_text(" ".join(docsets.quotes_of(item)))
        fact = scoring.KeyFact.from_json(item["key_fact"])
        terms = [*fact.all, *(t for group in fact.any for t in group)]
        for term in terms:
            assert scoring.term_occurs(term, quotes), f"{item['id']}: {term!r} not in the quote"
        for value, units in fact.number:
            alone = scoring.KeyFact(number=((value, units),))
            assert scoring.states_key_fact(quotes, alone), f"{item['id']}: {value} not quoted"


@pytest.mark.parametrize("name", DOC_SETS)
def test_unanswerable_questions_name_what_the_set_never_mentions(
    docsets: ModuleType, name: str
) -> None:
    folder = _docset_folder(name)
    texts = [docsets.document_text(p).lower() for p in sorted(folder.rglob("*")) if p.is_file()]
    for item in docsets.load_questions(docsets.QUESTION_SETS[name]):
        for term in item.get("absent_terms") or []:
            assert not any(term.lower() in t for t in texts), f"{item['id']}: {term!r} occurs"


def test_sample_key_facts_are_stated_by_their_expected_documents(scoring: ModuleType) -> None:
    corpus = BENCHMARKS.parent / "src" / "kforge" / "samples" / "corpus"
    for line in (BENCHMARKS / "data" / "answer_questions.jsonl").read_text().splitlines():
        item = json.loads(line)
        text = " ".join((corpus / f).read_text(encoding="utf-8") for f in item["expected"])
        assert scoring.states_key_fact(text, scoring.KeyFact.from_json(item["key_fact"])), item[
            "id"
        ]


def test_sections_split_markdown_and_html_at_headings(docsets: ModuleType, tmp_path: Path) -> None:
    md = tmp_path / "a.md"
    md.write_text("intro\n\n## `fs.link(a, b)`\n\nCreates a\nlink.\n\n### Next\n\nmore\n")
    assert docsets.sections(md) == [
        ("", "intro"),
        ("`fs.link(a, b)`", "Creates a link."),
        ("Next", "more"),
    ]
    page = tmp_path / "a.html"
    page.write_text(
        "<h2><a href='#x'>10.1 Invoking the <code>msgfmt</code> Program</a></h2>"
        "<p>The msgfmt programs generates &lsquo;x&rsquo;.</p><h3>10.1.1 Input</h3><p>in</p>"
    )
    assert docsets.sections(page)[1] == (
        "10.1 Invoking the msgfmt Program",
        "The msgfmt programs generates \u2018x\u2019.",
    )


# -- doc sets end to end ---------------------------------------------------------------------


def test_a_doc_set_runs_through_kforge_ingest_and_ask(bench: ModuleType, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fs.md").write_text(
        "# File system\n\n## `fs.link(existingPath, newPath, callback)`\n\n"
        "Creates a new link from the `existingPath` to the `newPath`.\n"
    )
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "hard-link",
            "question": "How do I create a hard link?",
            "type": "procedure",
            "answerable": True,
            "key_fact": {"all": ["fs.link"]},
            "source": {"file": "fs.md", "section": "`fs.link(existingPath, newPath, callback)`"},
            "quote": "Creates a new link from the `existingPath` to the `newPath`.",
        },
        {
            "id": "webpack",
            "question": "How do I configure a webpack loader?",
            "type": "procedure",
            "answerable": False,
            "key_fact": None,
            "absent": "not in the folder",
            "absent_terms": ["webpack"],
        },
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "report.json"
    argv = ["--set", "nodejs", "--folder", str(docs), "--questions", str(questions)]
    assert bench.main([*argv, "--model", "test", "--json", str(out)]) == 0
    section = json.loads(out.read_text())["nodejs"]
    totals = section["totals"]
    assert (totals["questions"], totals["answerable"], totals["unanswerable"]) == (2, 1, 1)
    assert "1 files" in section["ingest"]["summary"] or "1 added" in section["ingest"]["summary"]
    for row in section["rows"]:
        assert row["cli_exit"] == 0, row.get("error")
        assert row["seconds"] > 0 and row["seconds_in_process"] >= 0
        assert isinstance(row["refused"], bool)
    assert isinstance(section["rows"][0]["stated_key_fact"], bool)
    assert section["rows"][1]["stated_key_fact"] is None
    # the one passage states the key fact: the search finds it and the answer reads it first
    assert section["rows"][0]["key_passage_searched"] == 0
    assert section["rows"][0]["key_passage_read"] == 0
    assert "key_passage_read" not in section["rows"][1]
    assert (totals["key_passage_searched"], totals["key_passage_first"]) == (1, 1)


def test_the_key_passage_is_the_one_holding_a_quotes_opening(docsets: ModuleType) -> None:
    item = {"quote": ["The `-o` option appends.", "With -O, the file is overwritten!"]}
    assert docsets.holds_quote("Exports: with -O the file is overwritten.", item)
    assert docsets.holds_quote("THE -O OPTION APPENDS to it", item)
    assert not docsets.holds_quote("The option appends.", item)


def test_a_doc_set_without_apt_get_is_a_clear_error(
    bench: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("KFORGE_DOCSETS", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no apt-get, no dpkg-deb
    assert bench.main(["--set", "gettext", "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "doc set 'gettext' is not available" in err and "apt-get" in err
