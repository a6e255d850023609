"""Extractive answers: sentences of the passages that answer the question, each from its passage."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.rag.compose import candidate_sentences, compose_extractive
from kforge.rag.hops import mentions_title
from kforge.rag.question import read_question
from kforge.rag.types import Chunk
from kforge.rag.units import normalized


def chunk(i: int, text: str, title: str = "", heading: str = "") -> Chunk:
    return Chunk(
        id=f"c{i}",
        source=f"doc{i}.md",
        file=f"doc{i}.md",
        title=title or f"Doc {i}",
        heading=heading,
        page=None,
        start=0,
        end=len(text),
        text=text,
    )


BM25 = chunk(
    0,
    "# BM25\n\nBM25 is a ranking function used by search engines. The parameter k1 controls how "
    "quickly term frequency saturates. The parameter b controls length normalisation. "
    "It was developed in the 1990s.\n\n```\nscore = idf * tf\n```\n",
    "BM25",
)
DENSE = chunk(
    1,
    "Dense retrieval embeds queries and passages as vectors and ranks them by cosine similarity.",
    "Dense Retrieval",
)


def test_the_sentences_that_hold_the_question_terms_are_chosen_verbatim() -> None:
    segments = compose_extractive("What do k1 and b control in BM25?", [BM25, DENSE])
    texts = [s.text for s in segments]
    assert "The parameter k1 controls how quickly term frequency saturates." in texts
    assert "The parameter b controls length normalisation." in texts
    assert all(s.source == 0 for s in segments)  # nothing from the passage about vectors
    for segment in segments:
        assert segment.text in " ".join(BM25.text.split())


def test_headings_code_and_fragments_are_not_sentences_and_items_are_quoted_whole() -> None:
    sentences = candidate_sentences(BM25)
    assert not any("#" in s or "score = idf" in s for s in sentences)
    listed = chunk(2, "- **Idf.** Rare terms weigh more than common ones in a ranking.")
    # an item is one unit, its markup kept: only the bullet goes
    assert candidate_sentences(listed) == [
        "**Idf.** Rare terms weigh more than common ones in a ranking."
    ]


def test_a_passage_the_first_one_names_is_followed_for_a_second_hop() -> None:
    film = chunk(
        0,
        "Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.",
        "Kiss and Tell (1945 film)",
    )
    actress = chunk(
        1,
        "Shirley Temple was an American actress and diplomat. She served as United States "
        "ambassador to Ghana.",
        "Shirley Temple",
    )
    other = chunk(2, "Corliss Archer is a fictional teenage girl in radio plays of the 1940s.")
    question = (
        "What government position was held by the woman who played Corliss Archer in Kiss and Tell?"
    )
    segments = compose_extractive(question, [film, other, actress])
    assert {s.source for s in segments} == {0, 2}  # the film, then the actress it names
    assert "Shirley Temple was an American actress and diplomat." in [s.text for s in segments]


def test_no_usable_sentence_gives_no_answer() -> None:
    assert compose_extractive("What is BM25?", [chunk(0, "# Title only")]) == []
    assert compose_extractive("What is BM25?", []) == []


def test_a_namesake_is_not_a_hop_and_a_restated_fact_is_not_a_copy() -> None:
    song = chunk(
        0,
        '"Revenge" is a single by XXXTentacion. It was released in 2017 by Empire Distribution.',
        "Revenge (song)",
    )
    album = chunk(1, "Revenge is a mixtape by XXXTentacion, released in 2017.", "Revenge (album)")
    label = chunk(
        2,
        "Empire Distribution is an American record label based in San Francisco.",
        "Empire Distribution",
    )
    segments = compose_extractive(
        'Where is the company that distributed the single "Revenge" based?', [song, album, label]
    )
    assert [s.source for s in segments if s.source != 0] == [2]
    assert "based in San Francisco" in " ".join(s.text for s in segments)


def test_of_several_named_passages_the_hop_goes_to_the_one_the_question_describes() -> None:
    actor = chunk(
        0,
        "Tom Reed is an Irish actor. He played a baker in Flour Power, and a lighthouse keeper "
        "in Salt Wind.",
        "Tom Reed",
    )
    first_film = chunk(
        1, "Flour Power is a 2015 comedy film about a village bakery contest.", "Flour Power"
    )
    second_film = chunk(
        2,
        "Salt Wind is a 2016 drama film directed by Mara Quill, set on a remote lighthouse.",
        "Salt Wind",
    )
    segments = compose_extractive(
        "Tom Reed played a lighthouse keeper in a drama directed by whom?",
        [actor, first_film, second_film],
    )
    assert {s.source for s in segments} == {0, 2}
    assert "directed by Mara Quill" in " ".join(s.text for s in segments)


def test_a_further_sentence_must_answer_something_its_passage_has_not() -> None:
    sentences = [
        "Harbour Lines is a monthly sailing magazine published in Norway.",
        "The magazine is printed in Bergen by a family firm.",
        "The magazine was founded in 1961 by a sailor.",
    ]
    magazine = chunk(0, " ".join(sentences), "Harbour Lines")
    question = "When was the sailing magazine Harbour Lines founded?"
    texts = [s.text for s in compose_extractive(question, [magazine])]
    assert sentences[2] in texts
    assert sentences[1] not in texts  # holds no question term the others leave open


ARCHITECT = chunk(
    0,
    "Ada Stone was a Welsh architect. She trained in Cardiff. She designed Millbrook, a "
    "garden village for mill workers.",
    "Ada Stone",
)
VILLAGE = chunk(
    1,
    "Millbrook is a planned garden village in Gwent, built in 1921 for the workers of the "
    "Millbrook paper mill.",
    "Millbrook",
)


def test_each_hop_gives_its_best_sentence_before_any_introduction() -> None:
    question = "Ada Stone designed which garden village built in 1921?"
    two = compose_extractive(question, [ARCHITECT, VILLAGE], max_sentences=2)
    assert [s.source for s in two] == [0, 1]  # not the architect's lead at the village's cost
    assert two[0].text == "She designed Millbrook, a garden village for mill workers."
    three = compose_extractive(question, [ARCHITECT, VILLAGE], max_sentences=3)
    assert "Ada Stone was a Welsh architect." in [s.text for s in three]  # room for "She"


def test_a_title_named_only_inside_a_longer_title_is_no_hop() -> None:
    said = "Operation Blue Harbor was a 1944 naval raid led by Captain Ines Varga."
    raid = chunk(0, said, "Operation Blue Harbor")
    novel = chunk(1, "Blue Harbor is a novel by Tom Ash, set in a fishing town.", "Blue Harbor")
    segments = compose_extractive(
        "Which captain led the naval raid Operation Blue Harbor in 1944?", [raid, novel]
    )
    assert [s.source for s in segments] == [0]


def test_the_hop_goes_to_the_title_named_beside_the_question_words() -> None:
    actor = chunk(
        0,
        "Tom Reed is an Irish actor. He played Dylan in Flour Power, and Tyler in Salt Wind.",
        "Tom Reed",
    )
    films = [
        chunk(1, "Flour Power is a 2015 comedy film directed by Ann Lee.", "Flour Power"),
        chunk(2, "Salt Wind is a 2016 drama film directed by Mara Quill.", "Salt Wind"),
    ]
    question = "In which director's film was Tom Reed cast as Tyler?"
    segments = compose_extractive(question, [actor, *films])
    assert {s.source for s in segments} == {0, 2}


def test_a_hop_to_a_passage_without_a_usable_sentence_does_not_crash() -> None:
    film = chunk(
        0,
        "Kiss and Tell is a 1945 comedy film starring Shirley Temple as Corliss Archer.",
        "Kiss and Tell",
    )
    heading_only = chunk(1, "# Shirley Temple", "Shirley Temple")
    segments = compose_extractive(
        "Who played Corliss Archer in Kiss and Tell?", [film, heading_only]
    )
    assert [s.source for s in segments] == [0]


def test_a_title_is_a_name_not_a_word() -> None:
    assert mentions_title("See the Path module.", "Path")
    assert not mentions_title("The path is resolved first.", "Path")
    assert not mentions_title("Done. Path segments are joined.", "Path")  # a capitalised word
    assert mentions_title("a film starring Shirley Temple as", "Shirley Temple (actress)")
    fs = chunk(0, "Use `fs.unlink()` to delete a file. The path is resolved first.", "File system")
    path = chunk(1, "The path module provides utilities for working with file paths.", "Path")
    segments = compose_extractive("How do I delete a file?", [fs, path])
    assert {s.source for s in segments} == {0}


def test_identifiers_are_matched_whole_and_a_heading_naming_one_leads() -> None:
    constants = chunk(
        0,
        "## `os.constants`\n\nContains commonly used operating system-specific constants for "
        "error codes, process signals, and so on.",
        "OS",
    )
    eol = Chunk(
        id="c1",
        source="os.md",
        file="os.md",
        title="OS",
        heading="OS > os.EOL",
        page=None,
        start=0,
        end=0,
        text="## `os.EOL`\n\n* {string}\n\nThe operating system-specific end-of-line marker.\n\n"
        "* `\\n` on POSIX\n* `\\r\\n` on Windows\n",
    )
    texts = [s.text for s in compose_extractive("What does os.EOL contain?", [constants, eol])]
    assert "`\\n` on POSIX" in texts and "`\\r\\n` on Windows" in texts
    assert not any("Contains commonly used" in t for t in texts)


def test_a_procedure_question_is_answered_with_the_call_that_does_it() -> None:
    nlink = chunk(
        0,
        "### `stats.nlink`\n\n* {number|bigint}\n\nThe number of hard-links that exist for the file.",
    )
    link = chunk(
        1,
        "### `fs.link(existingPath, newPath, callback)`\n\n* `existingPath` {string|Buffer|URL}\n\n"
        "Creates a new link from the `existingPath` to the `newPath`. See the POSIX link(2) "
        "documentation for more detail.",
    )
    segments = compose_extractive("How do I create a hard link?", [nlink, link])
    assert segments and segments[0].source == 1
    assert "`fs.link(existingPath, newPath, callback)`" in [s.text for s in segments]


_titles = st.sampled_from(["Shirley Temple", "Kiss and Tell", "Path", "Ghana", "fs"])
_texts = st.lists(
    st.sampled_from(
        [
            "Shirley Temple was an American actress.",
            "Kiss and Tell is a 1945 film starring Shirley Temple.",
            "# Shirley Temple",
            "Path segments are joined with the separator.",
            "She served as ambassador to Ghana.",
            "",
            "* `fs.link()`",
            "```\ncode\n```",
            "x",
        ]
    ),
    max_size=4,
).map(lambda parts: "\n\n".join(parts))


@settings(max_examples=300, deadline=None)
@given(
    passages=st.lists(st.tuples(_texts, _titles), max_size=5),
    question=st.text(max_size=60)
    | st.sampled_from(["Who played Corliss Archer in Kiss and Tell?", "Where did she serve?"]),
    size=st.integers(1, 5),
)
def test_composing_never_raises_and_quotes_its_passages(
    passages: list[tuple[str, str]], question: str, size: int
) -> None:
    chunks = [chunk(i, text, title) for i, (text, title) in enumerate(passages)]
    segments = compose_extractive(question, chunks, max_sentences=size)
    assert len(segments) <= size + (read_question(question).kind == "comparison")
    for segment in segments:
        assert 0 <= segment.source < len(chunks)
        assert normalized(segment.text) in normalized(chunks[segment.source].text)


def test_a_heading_extracted_as_a_line_is_no_answer_sentence() -> None:
    page = Chunk(
        id="c0",
        source="json.html",
        file="json.html",
        title="json",
        heading="json > Infinite and NaN Number Values\u00b6",
        page=None,
        start=0,
        end=0,
        text="Infinite and NaN Number Values\u00b6\n\nThe RFC does not permit infinite or NaN "
        "number values.",
    )
    texts = [s.text for s in compose_extractive("Are NaN number values valid?", [page])]
    assert texts == ["The RFC does not permit infinite or NaN number values."]


def test_the_entry_of_the_asked_option_leads_over_a_sentence_that_mentions_it() -> None:
    options = chunk(
        0,
        "-d, --delete: Delete a branch.\n"
        "-f, --force: Reset <branchname> to <startpoint>, even if <branchname> exists already.\n"
        "Without -f, git branch refuses to change an existing branch.\n",
        "git-branch(1)",
    )
    segments = compose_extractive("What does -f do in git branch?", [options])
    best = min(segments, key=lambda s: s.rank)
    assert best.text.startswith("-f, --force: Reset <branchname>")


def test_what_is_x_takes_the_sentence_that_opens_with_x() -> None:
    page = chunk(
        0,
        "copy.copy(x): Return a shallow copy of x.\n\n"
        "Otherwise, the shallow copy is made by the copy protocol of the class.\n\n"
        "A shallow copy constructs a new compound object and then inserts references into it "
        "to the objects found in the original.",
    )
    segments = compose_extractive("What is a shallow copy?", [page])
    best = min(segments, key=lambda s: s.rank)
    assert best.text.startswith("A shallow copy constructs a new compound object")


def test_a_comparison_quotes_a_sentence_about_each_item() -> None:
    page = chunk(
        0,
        "This module provides generic shallow and deep copy operations.\n\n"
        "A shallow copy constructs a new compound object and then inserts references into it "
        "to the objects found in the original.\n\n"
        "A deep copy constructs a new compound object and then, recursively, inserts copies "
        "into it of the objects found in the original.\n\n"
        "Because deep copy copies everything it may copy too much.",
    )
    segments = compose_extractive(
        "What is the difference between a shallow copy and a deep copy?", [page]
    )
    texts = [s.text for s in segments]
    assert any(t.startswith("A shallow copy constructs") for t in texts)
    assert any(t.startswith("A deep copy constructs") for t in texts)


def test_each_compared_item_is_said_by_its_own_unit_or_section() -> None:
    notes = chunk(
        0,
        "The difference between pack.write and pack.writes is small in practice, and "
        "pack.write and pack.writes share one encoder.",
    )
    write = chunk(1, "pack.write(obj, stream): Serialize obj as packed bytes to the stream.")
    writes = chunk(
        2,
        "pack.writes\n\nReturn obj serialized as a packed bytes object.",
        "Command line",
        heading="Command line > pack.writes",
    )
    segments = compose_extractive(
        "What is the difference between pack.write and pack.writes?", [notes, write, writes]
    )
    texts = [s.text for s in segments]
    # the sentence naming both says nothing of either: each item's own unit is quoted
    assert "pack.write(obj, stream): Serialize obj as packed bytes to the stream." in texts
    # a section headed by the item says what it is in its first sentence
    assert "Return obj serialized as a packed bytes object." in texts


def test_what_is_x_prefers_the_sentence_saying_what_x_is_over_an_api_entry() -> None:
    page = chunk(
        0,
        "class collections.deque([iterable[, maxlen]]): Returns a new deque object "
        "initialized left-to-right with data from iterable.\n\n"
        "Deques are a generalization of stacks and queues.",
    )
    best = min(compose_extractive("What is a deque?", [page]), key=lambda s: s.rank)
    assert best.text == "Deques are a generalization of stacks and queues."


def test_a_code_block_is_about_what_its_caption_says() -> None:
    page = chunk(
        0,
        "Examples of daily use follow.\n\n"
        "Undo a commit and redo\n\n"
        "```\n$ git reset --soft HEAD^\n$ edit\n```\n\n"
        "Remove a file\n\n```\n$ git rm frotz.c\n```\n",
    )
    segments = compose_extractive("How do I undo the last commit?", [page])
    assert any("git reset --soft HEAD^" in s.text for s in segments)
    assert not any("git rm" in s.text for s in segments)


def test_a_sentence_continuing_another_names_entry_does_not_answer_for_the_asked_name() -> None:
    page = chunk(
        0,
        "os.path.exists(path): Return True if path refers to an existing path. Returns False "
        "for broken symbolic links.\n\n"
        "os.path.lexists(path): Return True if path refers to an existing path. Returns True "
        "for broken symbolic links.",
    )
    texts = [
        s.text
        for s in compose_extractive(
            "Does os.path.exists return True for broken symbolic links?", [page]
        )
    ]
    assert "Returns False for broken symbolic links." in texts
    assert "Returns True for broken symbolic links." not in texts


def test_an_options_entry_answers_how_to_do_what_it_does() -> None:
    page = chunk(
        0,
        "-u, --include-untracked: When used with the push and save commands, all untracked "
        "files are also stashed.\n\n"
        "When used with the show command, show the untracked files in the stash entry.",
    )
    best = min(
        compose_extractive("How do I stash untracked files too?", [page]), key=lambda s: s.rank
    )
    assert best.text.startswith("-u, --include-untracked:")


def test_a_parameter_item_does_not_answer_what_the_call_does() -> None:
    page = chunk(
        0,
        "* `path` {string} The path whose stats to get\n"
        "* Returns: {fs.Stats}\n\n"
        "Retrieves the stats of the path, following symbolic links.",
    )
    question = "How do I get the stats of a path?"
    best = min(compose_extractive(question, [page]), key=lambda s: s.rank)
    assert best.text.startswith("Retrieves the stats of the path")
    # asked about by name, the parameter's item answers
    asked = compose_extractive("What is the path parameter of stat?", [page])
    assert min(asked, key=lambda s: s.rank).text.startswith("`path` {string}")


def test_of_two_commands_saying_what_is_asked_the_one_saying_least_else_is_quoted() -> None:
    page = chunk(
        0,
        "To make manual pages for the tool, install the click-man package first:\n\n"
        "    pip install click-man\n    click-man --target path/to/man/pages tool\n\n"
        "Install the tool with pip:\n\n    pip install tool\n\n"
        "You should now have the tool command installed on your system.",
    )
    texts = [s.text for s in compose_extractive("How do I install the tool?", [page])]
    assert any(t.strip() == "pip install tool" for t in texts), texts


def test_the_sentence_going_on_from_the_best_one_comes_with_it() -> None:
    page = chunk(
        0,
        "Using fs.access() to check a file before calling fs.open() is not recommended. "
        "Doing so introduces a race condition, since other processes may change the file "
        "between the two calls. The access mode defaults to F_OK.",
        "fs.access",
    )
    segments = compose_extractive(
        "Why should I not call fs.access() to check a file before opening it?",
        [page],
        max_sentences=2,
    )
    assert [s.text[:20] for s in segments] == ["Using fs.access() to", "Doing so introduces "]


def test_a_sentence_introducing_a_list_comes_with_its_items_and_alone_is_no_answer() -> None:
    page = chunk(
        0,
        "The exit event is emitted when the process is about to exit as a result of either:\n\n"
        "* The process.exit() method being called explicitly;\n"
        "* The event loop no longer having any additional work to perform.\n",
        "Event: exit",
    )
    segments = compose_extractive("When is the exit event emitted?", [page], max_sentences=3)
    assert [s.text[:12] for s in segments] == ["The exit eve", "The process.", "The event lo"]
    code_after = chunk(1, "The exit event is emitted on these calls:\n\n```\nexit()\n```\n")
    assert compose_extractive("When is the exit event emitted?", [code_after]) == []


def test_what_does_x_do_is_answered_by_the_first_sentence_of_xs_entry() -> None:
    entry = chunk(
        0,
        "## `util.promisify(original)`\n\n* `original` {Function}\n\nTakes a function following "
        "the error-first callback style and returns a version that returns promises.\n\n"
        "If there is an `original[util.promisify.custom]` property present, `promisify` will "
        "return its value.",
        "Util",
        heading="Util > util.promisify(original)",
    )
    segments = compose_extractive("What does util.promisify do?", [entry], max_sentences=1)
    assert segments[0].text.startswith("Takes a function")


def test_how_do_i_names_the_entry_whose_sentence_says_how() -> None:
    entry = chunk(
        0,
        "## `os.homedir()`\n\n* Returns: {string}\n\nReturns the string path of the current "
        "user's home directory.",
        "OS",
        heading="OS > os.homedir()",
    )
    segments = compose_extractive("How do I get the current user's home directory?", [entry])
    assert [s.text for s in segments][:2] == [
        "`os.homedir()`",
        "Returns the string path of the current user's home directory.",
    ]


def test_a_part_of_an_entry_is_about_the_name_the_entry_documents() -> None:
    caveats = chunk(
        0,
        "#### Caveats\n\nThe recursive option is only supported on macOS and Windows.",
        "File system",
        heading="File system > fs.watch(filename[, options]) > Caveats",
    )
    options = chunk(
        1,
        "* `recursive` {boolean} Indicates whether all subdirectories should be watched, "
        "only on supported platforms.",
        "File system",
        heading="File system > fs.watch(filename[, options])",
    )
    segments = compose_extractive(
        "Does fs.watch support the recursive option on Linux?", [caveats, options]
    )
    assert segments[0].text == "The recursive option is only supported on macOS and Windows."


def test_an_index_row_points_elsewhere_and_is_no_answer() -> None:
    index = chunk(
        0,
        "| magic signature of MO files | 10.3 The Format of GNU MO Files |\n"
        "| MO file's format | 10.3 The Format of GNU MO Files |\n",
        "General Index",
    )
    assert compose_extractive("What is the magic number of a GNU MO file?", [index]) == []


def test_the_unit_giving_what_is_asked_joins_one_saying_only_of_it() -> None:
    page = chunk(
        0,
        "The magic number will always signal GNU MO files. The number is stored in the byte "
        "order used when the MO file was generated, so the magic number really is two numbers: "
        "0x950412de and 0xde120495.",
        "The Format of GNU MO Files",
    )
    segments = compose_extractive("What is the magic number of a GNU MO file?", [page])
    assert any("0x950412de" in s.text for s in segments)


def test_a_comparison_is_not_led_by_a_sentence_naming_both_and_saying_neither() -> None:
    overview = chunk(
        0,
        "The importance of the distinction between exec() and execFile() can vary based on "
        "platform.",
        "Child process",
    )
    entries = chunk(
        1,
        "* exec(): spawns a shell and runs a command within that shell.\n"
        "* execFile(): similar to exec() except that it spawns the command directly without "
        "first spawning a shell.\n",
        "Child process",
    )
    segments = compose_extractive(
        "What is the difference between exec() and execFile()?", [overview, entries]
    )
    assert segments and not segments[0].text.startswith("The importance")


def test_a_question_the_page_asks_is_answered_by_what_follows_it() -> None:
    page = chunk(
        0,
        "To build a URL to a specific function, use the url_for() function. Why would you want "
        "to build URLs using url_for() instead of hard-coding them into your templates? "
        "Reversing is often more descriptive than hard-coding the URLs. You can change your "
        "URLs in one go instead of needing to remember to change hard-coded URLs.",
        "URL Building",
    )
    segments = compose_extractive(
        "Why should I build links with url_for instead of writing the URLs by hand?",
        [page],
        max_sentences=2,
    )
    texts = [s.text for s in segments]
    assert not any(t.endswith("?") for t in texts)
    assert texts[0].startswith("Reversing is often more descriptive")
    assert texts[1].startswith("You can change your URLs in one go")


def test_a_version_note_is_no_answer_and_what_is_x_for_defines_x() -> None:
    page = chunk(
        0,
        "Instance Folders\n\nNew in version 0.8.\n\nThe instance folder is designed to not be "
        "under version control and be deployment specific.",
        "Configuration",
        heading="Configuration > Instance Folders",
    )
    segments = compose_extractive("What is the instance folder for?", [page])
    assert [s.text[:30] for s in segments] == ["The instance folder is designe"]


def test_the_entry_of_the_name_asked_is_not_one_of_a_longer_name() -> None:
    longer = chunk(
        0,
        "An SQLITE_BUSY error can occur at any point in a transaction: when the transaction is "
        "first started, during any write or update operations, or when it commits.",
        "Result codes",
        heading="Result Code Meanings > (5) SQLITE_BUSY",
    )  # a later part of the entry: it does not open it
    own = chunk(
        1,
        "(5) SQLITE_BUSY\n\nThe SQLITE_BUSY result code indicates that the database file could "
        "not be written because of concurrent activity by some other database connection.",
        "Result codes",
        heading="Result Code Meanings > (5) SQLITE_BUSY",
    )
    segments = compose_extractive("What does the SQLITE_BUSY error mean?", [longer, own])
    assert segments[0].text.startswith("The SQLITE_BUSY result code indicates")


def test_a_sentence_ending_by_naming_the_subject_defines_it() -> None:
    page = chunk(
        0,
        "The amalgamation build of the library runs about five percent faster.\n\n"
        "Over 100 separate source files are concatenated into a single large file of C-code "
        'named "sqlite3.c" and referred to as "the amalgamation".',
        "The Amalgamation",
    )
    segments = compose_extractive("What is the amalgamation?", [page], max_sentences=1)
    assert segments[0].text.startswith("Over 100 separate source files")


def test_a_sentence_pointing_back_comes_after_the_one_it_points_to() -> None:
    page = chunk(
        0,
        "This module provides an interface for parsing TOML. This module does not support "
        "writing TOML.\n\n"
        "The TOML Kit package is a style-preserving TOML library with both read and write "
        "capability. It is a recommended replacement for this module for editing already "
        "existing TOML files.",
        "tomllib — Parse TOML files",
    )
    texts = [
        s.text for s in compose_extractive("What should I use for editing TOML files?", [page])
    ]
    said = texts.index(
        "It is a recommended replacement for this module for editing already existing TOML files."
    )
    assert said > 0
    assert texts[said - 1].startswith("The TOML Kit package is a style-preserving TOML library")


def test_an_it_that_stands_for_what_follows_takes_no_sentence_before_it() -> None:
    page = chunk(
        0,
        "The body is read as text first. Servers often label their payloads wrongly.\n\n"
        "Unfortunately, some servers send a wrong content type. It is possible to parse the "
        "body as JSON anyway by passing content_type=None.",
        "Client quickstart",
    )
    texts = [s.text for s in compose_extractive("How do I parse a body labelled wrongly?", [page])]
    assert "It is possible to parse the body as JSON anyway by passing content_type=None." in texts
    assert "Unfortunately, some servers send a wrong content type." not in texts


def test_a_page_titled_by_a_name_spelled_from_the_question_answers_how() -> None:
    genex = chunk(
        0,
        "Whitespace And Quoting\n\nGenerator expressions are typically parsed after command "
        "arguments. To add include directories of a target to a custom command:\n\n"
        "add_custom_target(run_some_tool\n  COMMAND some_tool "
        "-I$<JOIN:$<TARGET_PROPERTY:tgt,INCLUDE_DIRECTORIES>, -I>\n  VERBATIM\n)",
        "cmake-generator-expressions(7)",
        "cmake-generator-expressions(7) > Whitespace And Quoting",
    )
    command = chunk(
        1,
        "target_include_directories\n\nAdd include directories to a target.\n\n"
        "target_include_directories(<target> [SYSTEM] [AFTER|BEFORE]\n"
        "  <INTERFACE|PUBLIC|PRIVATE> [items1...])",
        "target_include_directories",
        "target_include_directories",
    )
    segments = compose_extractive(
        "How do I add an include directory to a target?", [genex, command]
    )
    best = min(segments, key=lambda s: s.rank)
    assert best.source == 1
