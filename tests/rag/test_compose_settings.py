"""A setting asked for in a user's words: "is there a switch for that?" asks for an option."""

from __future__ import annotations

from kforge.rag.compose import compose_extractive
from kforge.rag.idioms import plain_words
from tests.rag.helpers import page_chunk as chunk


def test_a_switch_asked_for_is_an_option_not_the_verb() -> None:
    assert plain_words("Is there a switch for that?") == "Is there a option for that?"
    assert plain_words("Is there a knob to limit it?") == "Is there a option to limit it?"
    assert plain_words("Can I switch to JSON?") == "Can I switch to JSON?"
    assert plain_words("Which switch statement is it?") == "Which switch statement is it?"
    dates = chunk(
        0,
        "We decide to switch to using the ISO 8601 format for our unstructured datetime "
        "instances. The converter then writes each datetime as a string.",
        "Customizing > Using hooks",
    )
    omit = chunk(
        1,
        "omit_if_default: This override can be applied on a per-class or per-attribute basis. "
        "The generated unstructuring function will skip unstructuring values that are equal "
        "to their default or factory values.",
        "Customizing > Options",
    )
    question = (
        "When dumping my objects I'd like attributes that still hold their default value to "
        "be left out of the resulting dict. Is there a switch for that?"
    )
    segments = compose_extractive(question, [dates, omit])
    assert any("equal to their default" in s.text for s in segments)
    assert not any("decide to switch" in s.text for s in segments)


def test_which_thing_reads_on_to_the_sentence_saying_what_the_way_gives() -> None:
    queue = chunk(
        0,
        "SimPy Events and time\n\n"
        "SimPy\u2019s event queue is implemented as a heap queue. So if we insert events as "
        "tuples (t, event) into it, the first element in the queue will by definition always "
        "be the one with the smallest t and the next one to be processed.\n\n"
        "However, storing (t, event) tuples will not work if two events are scheduled at the "
        "same time because events are not comparable. To fix this, we also store a strictly "
        "increasing event ID with them: (t, eid, event). That way, if two events get "
        "scheduled for the same time, the one scheduled first will always be processed first.",
        "Time and Scheduling > SimPy Events and time",
    )
    question = (
        "Two trucks are scheduled to arrive at exactly the same simulated time. Which one "
        "does SimPy handle first, or is it random?"
    )
    texts = [s.text for s in compose_extractive(question, [queue])]
    assert any(t.startswith("That way, if two events") for t in texts), texts


def test_what_makes_a_thing_so_asks_what_such_a_thing_is() -> None:
    assert plain_words("What exactly makes a function pure in the sense the docs use?") == (
        "What is a pure function?"
    )
    assert plain_words("What makes it work?") == "What makes it work?"
    references = chunk(
        0,
        "Python: The Python standard library. Clojure: A functional language whose standard "
        "library has several counterparts in toolz. Functional Programming HOWTO: The "
        "description of functional programming features from the official Python docs.",
        "References",
    )
    purity = chunk(
        1,
        "A function is pure if it meets the following conditions. It does not depend on "
        "hidden state, or equivalently it only depends on its inputs. Evaluation of the "
        "function does not cause side effects.",
        "Function Purity",
    )
    question = "What exactly makes a function pure in the sense the toolz docs use?"
    texts = [s.text for s in compose_extractive(question, [references, purity])]
    assert any("only depends on its inputs" in t for t in texts), texts
