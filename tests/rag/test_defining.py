"""What a sentence defines: the subject a "what is X" question asks to define, and whether a
sentence opens with it or says what it is."""

from __future__ import annotations

from kforge.rag.defining import defined_subject, defines_subject, opens_with_subject
from kforge.rag.question import read_question, unit_terms


def test_a_short_what_is_question_names_its_subject() -> None:
    assert defined_subject(read_question("What is a deque?")) == unit_terms("deque")
    assert defined_subject(read_question("What is the index in Git?")) == unit_terms("index")
    assert defined_subject(read_question("What are named tuples?")) == unit_terms("named tuples")


def test_a_long_what_question_asks_for_a_name_not_a_definition() -> None:
    question = read_question("What is the name of the stadium where the team played in 1990?")
    assert defined_subject(question) == frozenset()
    assert defined_subject(read_question("How do I delete a branch?")) == frozenset()


def test_a_sentence_opens_with_its_subject_past_an_article_and_emphasis() -> None:
    subject = defined_subject(read_question("What is a checkpoint?"))
    assert opens_with_subject("The word **checkpoint** is used in two senses.", subject)
    assert opens_with_subject("checkpoint: a point where a person reviews the run", subject)
    assert not opens_with_subject("Otherwise, the checkpoint is skipped.", subject)


def test_a_sentence_defines_its_subject_when_it_says_what_it_is() -> None:
    subject = defined_subject(read_question("What is a Counter?"))
    assert defines_subject("A Counter is a dict subclass for counting objects.", subject) == 1.0
    assert defines_subject("A counter tool is provided for rapid tallies.", subject) == 0.6
    assert defines_subject("Changed in version 3.7: a Counter keeps order.", subject) == 0.0
    # a summary table's row whose first cell is the subject says what it is
    assert defines_subject("Counter | dict subclass for counting hashable objects", subject) == 1.0
    assert defines_subject("deque | list-like container with fast appends", subject) == 0.0


def test_what_it_means_to_declare_x_and_what_x_expresses_ask_to_define_x() -> None:
    question = read_question("What does it mean to declare a variable Final?")
    assert defined_subject(question) == unit_terms("Final")
    question = read_question("What does a Literal type express?")
    assert question.kind == "definition"
    assert defined_subject(question) == unit_terms("Literal type")


def test_a_sentence_saying_what_its_subject_lets_you_do_defines_it() -> None:
    subject = unit_terms("TypedDict")
    assert defines_subject("TypedDict lets you give precise types for dictionaries.", subject) == 1
    assert defines_subject("A TypedDict object is not a subtype of dict.", subject) < 1
    # or what it represents: "CommandSets represent a logical grouping of commands"
    subject = unit_terms("CommandSet")
    says = "CommandSets represent a logical grouping of commands within an application."
    assert defines_subject(says, subject) == 1
    assert defines_subject("CommandSets with constructor parameters go first.", subject) < 1


def test_a_qualified_name_opens_a_sentence_with_its_last_part() -> None:
    bordered = unit_terms("BorderedTable")
    text = "cmd2.table_creator.BorderedTable - Implementation which draws borders around rows."
    assert opens_with_subject(text, bordered)
    assert not opens_with_subject("cmd2.table_creator.SimpleTable - Implementation.", bordered)
    assert not opens_with_subject("The expect_eof() method is gone.", unit_terms("expect"))


def test_a_quoted_name_in_a_long_what_is_question_is_its_subject() -> None:
    question = read_question("What is the 'authenticated' mode you can choose when creating one?")
    assert defined_subject(question) == unit_terms("authenticated mode")
