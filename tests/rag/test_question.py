"""What a question asks: the items it compares, and the kind of question it is."""

from __future__ import annotations

import pytest

from kforge.rag.defining import subject_phrase
from kforge.rag.focus import question_focus
from kforge.rag.idioms import plain_words
from kforge.rag.question import mentions, read_question


@pytest.mark.parametrize(
    ("question", "items"),
    [
        (
            "What is the difference between a shallow copy and a deep copy?",
            ("shallow copy", "deep copy"),
        ),
        ("How does fs.stat differ from fs.lstat?", ("fs.stat", "fs.lstat")),
        ("How is msgmerge different from msgcat?", ("msgmerge", "msgcat")),
        ("Compare git merge and git rebase", ("git merge", "git rebase")),
        ("spawn vs exec?", ("spawn", "exec")),
        # the words after the second item say what for, not which item
        (
            "How does rsync compare with scp for copying a home folder?",
            ("rsync", "scp"),
        ),
        (
            "What is the difference between inline comments and block comments in a C file?",
            ("inline comments", "block comments"),
        ),
        (
            "What is the difference between a tag and a branch, and when should I use which?",
            ("tag", "branch"),
        ),
        # after a leading clause; "one" says the first item's noun again
        (
            "For the docs site, how does the hosted search service compare with the local one?",
            ("hosted search service", "local search service"),
        ),
        # which is better is for the documents to say: both items are described
        ("For logins, is crypt or bcrypt the safer choice?", ("crypt", "bcrypt")),
        ("Is crypt or bcrypt the safer choice?", ("crypt", "bcrypt")),  # no yes or no
    ],
)
def test_a_comparison_names_its_two_items_however_it_is_asked(
    question: str, items: tuple[str, str]
) -> None:
    asked = read_question(question)
    assert asked.kind == "comparison"
    assert asked.options == items


def test_when_should_i_asks_in_what_case_and_two_ways_are_compared() -> None:
    both = read_question("When should I skip a test and when should I mark it xfail?")
    assert both.kind == "comparison" and both.options == ("skip", "xfail")
    assert read_question("When should I use a fixture?").kind != "when"
    assert read_question("When was the first release published?").kind == "when"
    ways = read_question("Should I configure my spider with spider arguments or with settings?")
    assert ways.kind == "comparison" and ways.options == ("spider arguments", "settings")


def test_a_question_after_the_users_situation_is_read_by_the_sentence_that_asks() -> None:
    asked = read_question("My print() calls show nothing while the tests run. How do I see them?")
    assert asked.kind == "procedure"
    assert "print" in asked.terms  # the situation's words still search
    asked = read_question("My laptop lost its connection halfway. Is the part sent kept?")
    assert asked.kind == "yesno"
    asked = read_question("An archive ending in .checkpoint showed up. What is it?")
    assert asked.kind == "definition"
    assert subject_phrase(asked) == ""  # "it" names nothing to look for
    assert read_question("We have a huge codebase. How many lines should we start with?").kind == (
        "quantity"
    )
    # an initial ends no sentence
    asked = read_question("How many schools does the university where Andrew J. Elliot works have?")
    assert asked.kind == "quantity"


def test_a_measure_asked_by_its_extreme_is_a_quantity() -> None:
    assert read_question("Roughly what share of applications use it?").kind == "quantity"
    assert read_question("What's the longest cache key Memcached accepts?").kind == "quantity"
    assert read_question("What's the oldest Python that mypy itself runs on?").kind == "quantity"
    # a place or a person at an extreme is not a measure
    assert read_question("What is the largest city in Georgia?").kind != "quantity"
    assert read_question("What is the mascot of the oldest university?").kind != "quantity"


def test_whether_there_is_a_way_asks_for_the_way() -> None:
    asked = read_question("Is there something like `make clean` that deletes what it made?")
    assert asked.kind == "procedure"
    assert read_question("Is there a way to skip a test?").kind == "procedure"
    assert read_question("Is there a limit on the key length?").kind == "yesno"


def test_a_command_asked_for_is_a_procedure() -> None:
    assert read_question("Which command writes them back to disk?").kind == "procedure"
    assert read_question("What else do I have to run?").kind == "procedure"
    assert read_question("What should I install?").kind == "procedure"
    assert read_question("Which exit code means no tests ran?").kind != "procedure"
    assert read_question("What do I add to my snakemake command so jobs go to SLURM?").kind == (
        "procedure"
    )
    # what to add, not to a command: a file, a marker ("add a py.typed file")
    assert read_question("What do I add so mypy uses my package's types?").kind != "procedure"
    # a line of code to add to one's own class or file
    asked = "I'd like Tab to complete file paths for my load command. What do I add to my class?"
    assert read_question(asked).kind == "procedure"


def test_a_condition_or_premise_before_the_asking_words_does_not_type_the_question() -> None:
    asked = read_question("If I mark a constant Final, will Python stop a reassignment?")
    assert asked.kind == "yesno"
    asked = read_question("B is a subclass of A, so why won't mypy accept a list of B?")
    assert asked.kind == "reason"
    asked = read_question(
        "When a parameter can be anything, should I annotate it as Any or as object?"
    )
    assert asked.kind == "comparison" and asked.options == ("Any", "object")
    # an asking "when" is no condition
    assert read_question("When was the first release, and what was its number?").kind == "when"
    # nor a setting: where, with what, on which system
    asked = read_question("On Windows, why does a longer connect timeout make no difference?")
    assert asked.kind == "reason" and asked.asking.startswith("why does")
    assert read_question("In a unit file, how do I restart a service on failure?").kind == (
        "procedure"
    )
    # "by default" before a yes or no question: it still asks yes or no, not for a value
    assert read_question("By default, does find follow symbolic links?").kind == "yesno"
    assert read_question("By default, how many times does wget retry?").kind == "quantity"
    # "if I don't pass a stream": by default, a place is still asked for, and the sentence
    # still starts where the condition did
    asked = "I wrapped it in factory.debug(). If I don't pass a stream, where does the log go?"
    assert "). By default a stream, where" in plain_words(asked)
    assert read_question(asked).kind == "where"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        (
            "My server logs every request and I don't want that. How do I switch it off?",
            "procedure",
        ),
        ("Why shouldn't I open a new ClientSession for each request?", "reason"),
        ("Isn't the cache cleared when the process exits?", "yesno"),
        ("You'll need a config file. Where's it kept?", "where"),
        ("Can't I run two workers on one queue?", "yesno"),
    ],
)
def test_a_contraction_is_no_word_of_what_is_asked(question: str, kind: str) -> None:
    asked = read_question(question)
    assert asked.kind == kind
    for part in ("t", "shouldn", "isn", "ll", "ca", "don"):
        assert part not in asked.terms, asked.terms
    focus = question_focus(question)
    assert not {"t", "shouldn", "isn", "ll", "ca"} & {t.match for t in focus.terms}


def test_a_dotted_name_is_mentioned_by_its_last_part_when_that_is_a_code_name() -> None:
    assert mentions("run_app() provides a simple blocking API.", "web.run_app")
    assert mentions("Use aiohttp.web.run_app() as the entry point.", "web.run_app")
    assert mentions("Call readFileSync() instead.", "fs.readFileSync")
    assert not mentions("Join the two paths first.", "os.path.join")  # "join" is a word
    assert not mentions("run_application() starts it.", "web.run_app")
    focus = question_focus("What does web.run_app() do?")
    held = {t.text for t in focus.held("run_app() provides a simple blocking API.")}
    assert "web.run_app" in held, held


@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("How do I make an option mandatory?", "make an option required"),
        ("Which formats does it accept if I don't give any?", "accept by default"),
        ("What happens when you do not set a timeout?", "happens by default"),
        ("What's the simplest way to send an email?", "the way to send"),
        ("Can I hide a page from people who are not signed in?", "not logged in"),
        ("Does the admin work with several databases?", "with multiple databases"),
        ("How can I make pytest stop as soon as one test fails?", "stop when one test"),
        ("How do I show my own page when a 404 error happens?", "my custom page"),
        ("How do I show my own page when a 404 error happens?", "error occurs"),
        ("How can I tell whether the file exists?", "check whether"),
        ("How do I tell the flask command which application to load?", "I specify the"),
        ("How do I make the counter start over in setUp()?", "make the counter reset"),
    ],
)
def test_everyday_phrases_are_read_in_a_manuals_words(question: str, says: str) -> None:
    assert says in plain_words(question)


def test_a_quoted_name_is_read_as_written() -> None:
    question = 'Which film came first, "You\'re Next" or "Several Days"? I don\'t know.'
    plain = plain_words(question)
    assert '"You\'re Next"' in plain and '"Several Days"' in plain
    assert "do not know" in plain


def test_the_two_items_of_a_situation_are_compared_when_the_question_refers_back_to_them() -> None:
    asked = read_question(
        "For a report command I'm choosing between SimpleTable and BorderedTable from "
        "cmd2.table_creator. How do the two look different?"
    )
    assert asked.kind == "comparison" and asked.options == ("SimpleTable", "BorderedTable")
    asked = read_question(
        "I can't decide between SubFactory and RelatedFactory. How do they differ in when the "
        "other object gets made?"
    )
    assert asked.options == ("SubFactory", "RelatedFactory")


def test_an_attribute_of_the_users_own_object_is_asked_by_its_name() -> None:
    question = "My old app feeds lines into self.cmdqueue. Will that still work in cmd2?"
    assert read_question(question).identifiers == ("cmdqueue",)
    focus = question_focus(question)
    held = {
        t.text
        for t in focus.held("Since version 0.9.13 cmd2 has removed support for Cmd.cmdqueue.")
    }
    assert "cmdqueue" in held, held
