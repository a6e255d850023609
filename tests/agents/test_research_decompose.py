"""A research question broken into its parts, topic names from titles with a subtitle, and the
rules a category name obeys (said by the question or the documents, no variant of another)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.agents.common.naming import is_variant, occurs_in, overlaps, topic_name
from kforge.agents.research.decompose import question_parts


@pytest.mark.parametrize(
    ("title", "topic"),
    [
        (
            "The Closure API (libffi: the portable foreign function interface library)",
            "The Closure API",
        ),
        ("GNU gettext utilities: 10. Producing Binary MO Files", "Producing Binary MO Files"),
        ("GNU gettext utilities: A. Language Codes", "Language Codes"),
        ("10.1 Invoking the msgmerge Program", "Invoking the msgmerge Program"),
        ("Class: Worker", "Worker"),
        ("Agent Architectures: An Overview", "Agent Architectures"),
        ("threading — Thread-based parallelism — Python 3.11 documentation", "threading"),
        ("Configuration - MkDocs", "Configuration"),
        ("The Closure API (libffi: the portable", "The Closure API"),  # cut short
        ("worker.terminate()", "worker.terminate()"),
        ("Node.js", "Node.js"),
        ("What is a closure?", ""),
        ("docs/closures.md", ""),
        ("1.1.1.1", ""),
        ("Research Question", ""),  # an echo of the instructions
    ],
)
def test_a_title_with_a_subtitle_is_a_topic(title: str, topic: str) -> None:
    assert topic_name(title) == topic


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "What is a worker thread in Node.js, how do threads share memory, and how is a "
            "worker terminated?",
            [
                ("Worker thread in Node.js", "What is a worker thread in Node.js?"),
                ("Threads share memory", "How do threads share memory?"),
                ("Terminating a worker", "How is a worker terminated?"),
            ],
        ),
        (
            "What is a PO file, how is it created and what are its limits?",
            [
                ("PO file", "What is a PO file?"),
                ("Creating a PO file", "How is a PO file created?"),
                ("Limits of a PO file", "What are the limits of a PO file?"),
            ],
        ),
        (
            "How do I get from a PO file to an MO file?",
            [
                ("Get from a PO file to an MO file", "How do I get from a PO file to an MO file?"),
                ("PO file", "What is a PO file?"),
                ("MO file", "What is an MO file?"),
            ],
        ),
        (
            "How do fs.readFile, fs.writeFile and fs.appendFile report errors?",
            [
                ("fs.readFile report errors", "How do fs.readFile report errors?"),
                ("fs.writeFile report errors", "How do fs.writeFile report errors?"),
                ("fs.appendFile report errors", "How do fs.appendFile report errors?"),
            ],
        ),
        (
            "worker threads vs child processes",
            [
                ("Worker threads vs child processes", "Worker threads vs child processes?"),
                ("Worker threads", "What are worker threads?"),
                ("Child processes", "What are child processes?"),
            ],
        ),
        (
            "How do worker threads and child processes differ?",
            [
                (
                    "Worker threads and child processes differ",
                    "How do worker threads and child processes differ?",
                ),
                ("Worker threads", "What are worker threads?"),
                ("Child processes", "What are child processes?"),
            ],
        ),
        (
            "How are structures passed by value?",
            [("Structures passed by value", "How are structures passed by value?")],
        ),
    ],
)
def test_a_question_is_asked_in_its_parts(question: str, parts: list[tuple[str, str]]) -> None:
    assert [(p.category, p.question) for p in question_parts(question)] == parts


@pytest.mark.parametrize(
    ("name", "others"),
    [
        ("closure_api_category", ["The Closure API"]),
        ("workerThreads", ["Worker Threads"]),
        ("workerthreads", ["Worker Threads"]),
        ("WORKER THREADS", ["Worker Threads"]),
        ("Overview, Closures, Calling", ["Closures"]),
    ],
)
def test_case_slug_and_join_variants_are_refused(name: str, others: list[str]) -> None:
    assert is_variant(name, others)


def test_a_new_name_is_no_variant_and_a_narrower_one_overlaps() -> None:
    assert not is_variant("Shared memory", ["Worker Threads"])
    assert overlaps("Worker Threads", ["Worker thread in Node.js"])
    assert not overlaps("Shared memory", ["Worker thread in Node.js"])


def test_a_name_occurs_as_a_phrase_or_by_its_words_in_a_question() -> None:
    text = "The `node:worker_threads` module enables the use of threads."
    assert occurs_in("worker_threads", text) and occurs_in("Worker threads", text)
    assert not occurs_in("shared memory", text)
    question = "How is a worker terminated?"
    assert occurs_in("Terminating a worker", question, words=True)
    assert not occurs_in("Terminating a worker", question)


_WORDS = st.sampled_from(
    [
        "worker",
        "thread",
        "memory",
        "share",
        "terminate",
        "file",
        "message",
        "port",
        "buffer",
        "stream",
        "closure",
        "type",
        "PO",
        "MO",
        "catalog",
        "fs.link",
        "os.EOL",
        "value",
    ]
)
_LEADS = st.sampled_from(["what is", "how do", "how is", "why does", "when should I", "can"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(_LEADS, st.lists(_WORDS, min_size=1, max_size=4)), min_size=1, max_size=4),
    st.sampled_from([", ", ", and ", " and ", "; "]),
)
def test_every_part_is_named_from_the_question_s_own_words(
    clauses: list[tuple[str, list[str]]], joiner: str
) -> None:
    question = joiner.join(f"{lead} {' '.join(words)}" for lead, words in clauses) + "?"
    parts = question_parts(question)
    assert parts
    for part in parts:
        assert occurs_in(part.category, question, words=True), (part, question)
        assert part.question.endswith("?")
