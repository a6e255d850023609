"""benchmarks/answer_quality.py: its scoring rules on hand-made answers, and the harness end to
end with the schema-driven test model (no timing assertions)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

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


def test_answer_sentence_maps_to_the_context_sentence_it_came_from(scoring: ModuleType) -> None:
    context = ["Paris is the capital of France.", " It has about two million inhabitants."]
    assert scoring.map_to_context("The capital of France is Paris", context) == 0
    assert scoring.map_to_context("Paris has two million inhabitants", context) == 1
    assert scoring.map_to_context("Berlin hosts the Bundestag", context) is None
    assert scoring.map_to_context("the of and", context) is None


def test_supporting_fact_scores_follow_hotpotqa(scoring: ModuleType) -> None:
    gold = {("A", 0), ("B", 1)}
    assert scoring.supporting_fact_scores({("A", 0), ("C", 2)}, gold) == {
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "em": 0.0,
    }
    assert scoring.supporting_fact_scores(set(gold), gold)["em"] == 1.0
    assert scoring.supporting_fact_scores(set(), gold)["f1"] == 0.0


def test_predicted_facts_come_only_from_cited_paragraphs(bench: ModuleType) -> None:
    paragraphs = [
        ("Paris", ["Paris is the capital of France.", " It lies on the Seine."]),
        ("Seine", ["The Seine flows through Paris."]),
    ]
    citations = [{"number": 1, "file": "p0"}, {"number": 2, "file": "p1"}]
    answer = "Paris is the capital of France [1]. Paris lies on the Seine [1]. Uncited Seine."
    assert bench.predicted_facts(answer, citations, paragraphs) == {("Paris", 0), ("Paris", 1)}


def test_bm25_floor_picks_the_sentences_sharing_the_question_terms(scoring: ModuleType) -> None:
    paragraphs = [
        ("Okapi", ["Okapi BM25 ranks documents.", " It was built in London."]),
        ("Vectors", ["Dense retrieval uses embeddings."]),
    ]
    assert scoring.bm25_top_sentences("Where was Okapi built?", paragraphs, top=1) == [("Okapi", 1)]


def test_harness_end_to_end_with_the_test_model(bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "answers.json"
    want_hotpot = bench.HOTPOT.is_file()
    argv = ["--model", "test", "--limit", "2", "--json", str(out), "--baseline-bm25"]
    assert bench.main([*argv, "--set", "all" if want_hotpot else "samples"]) == 0
    report = json.loads(out.read_text())
    samples = report["samples"]
    assert samples["totals"]["questions"] == 2 == len(samples["rows"])
    assert samples["totals"]["completed"] + samples["totals"]["failed"] == 2
    for row in samples["rows"]:
        assert row["status"] in ("completed", "failed")
        assert row["seconds"] >= 0
    again = tmp_path / "rescored.json"
    assert bench.main(["--rescore", str(out), "--json", str(again)]) == 0
    assert json.loads(again.read_text())["samples"]["totals"] == samples["totals"]
    if not want_hotpot:
        pytest.skip(f"HotpotQA part not run: no sample at {bench.HOTPOT} (../shared is absent)")
    hotpot = report["hotpotqa"]
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
