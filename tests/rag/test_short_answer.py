"""Question types and the short answer line, through ``write_answer`` (the public path)."""

from __future__ import annotations

import pytest

from kforge.llm.types import ModelResponse
from kforge.rag.grounded import write_answer
from kforge.rag.question import read_question
from kforge.rag.types import Chunk


def chunk(i: int, text: str, title: str = "", heading: str = "") -> Chunk:
    return Chunk(
        id=f"c{i}",
        source=f"d{i}",
        file=f"d{i}.md",
        title=title or f"Doc {i}",
        heading=heading,
        page=None,
        start=0,
        end=len(text),
        text=text,
    )


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What is a closure in libffi?", "definition"),
        ("What does os.EOL contain?", "definition"),
        ("How do I create a hard link?", "procedure"),
        ("How many bytes does a pointer take?", "quantity"),
        ("What is the default highWaterMark?", "quantity"),
        ("Is libffi thread safe?", "yesno"),
        ("What is the difference between fs.link and fs.symlink?", "comparison"),
        ("Which is older, git or gettext?", "choice"),
        ("Why does fs.watch report rename events?", "reason"),
        ("Who wrote the closure API?", "who"),
        ("When was fs.link added?", "when"),
        ("Where is the configuration file stored?", "where"),
    ],
)
def test_questions_are_typed_by_rule(question: str, kind: str) -> None:
    assert read_question(question).kind == kind


def test_identifiers_are_whole_and_short_stems_are_never_terms() -> None:
    asked = read_question("What does os.EOL contain with --force?")
    assert asked.identifiers == ("os.EOL", "--force")
    assert "o" not in asked.terms and "os" in asked.terms


async def answer(question: str, *texts: str) -> tuple[str, str]:
    written = await write_answer(question, [chunk(i, t) for i, t in enumerate(texts)], None)
    return written.short_answer, written.text


async def test_quantity_is_a_number_with_its_unit() -> None:
    short, text = await answer(
        "How many bytes does the header take?",
        "The header of every message takes 16 bytes, and the body follows it in version 2.",
    )
    assert short == "16 bytes"
    assert text.startswith("16 bytes [1]\n\nThe header of every message takes 16 bytes")


async def test_procedure_is_the_call_or_code() -> None:
    short, _ = await answer(
        "How do I create a hard link?",
        "### `fs.link(existingPath, newPath, callback)`\n\nCreates a new link from the "
        "`existingPath` to the `newPath`.",
    )
    assert short == "`fs.link(existingPath, newPath, callback)`"
    short, _ = await answer(
        "How do I install the package?",
        "To install the package, run the following command.\n\n```sh\n$ npm install kforge\n```\n",
    )
    assert short == "$ npm install kforge"


async def test_yes_no_says_yes_or_no_then_quotes_the_deciding_phrase() -> None:
    short, text = await answer(
        "Is the closure API thread safe?",
        "The closure API is not thread safe on every platform, so guard it with a lock.",
    )
    assert short == "No."
    assert text.startswith("No. The closure API is not thread safe on every platform [1]\n\n")


async def test_definition_is_the_defining_clause() -> None:
    short, _ = await answer(
        "What is a closure in libffi?",
        "A closure is a function pointer that calls a generic handler, made at run time. "
        "This facility is called the closure API.",
    )
    assert short == "a function pointer that calls a generic handler"


async def test_when_is_a_date_and_choice_is_one_of_the_two() -> None:
    short, _ = await answer(
        "When was the release made?", "The first release was made on 12 March 1998 in Berlin."
    )
    assert short == "12 March 1998"
    short, _ = await answer(
        "Which was founded first, Acme Works or Zenith Mills?",
        "Acme Works was founded in 1921 in Ohio.",
        "Zenith Mills was founded in 1887 in Maine.",
    )
    assert short == "Zenith Mills"


async def test_reason_is_the_clause_that_gives_it() -> None:
    short, _ = await answer(
        "Why is the file opened twice?",
        "The file is opened twice because the first handle is closed by the watcher.",
    )
    assert short == "because the first handle is closed by the watcher"


async def test_a_quantity_keeps_its_code_span_and_unit_whole() -> None:
    short, _ = await answer(
        "What is the maximum number of listeners for one event?",
        "By default, a maximum of `10` listeners can be registered for any single event.",
    )
    assert short == "`10` listeners"


async def test_a_code_block_gives_the_line_that_does_what_is_asked() -> None:
    short, text = await answer(
        "How do I create a directory recursively?",
        "Creating a nested directory needs the recursive option.\n\n```js\nimport { mkdir } "
        "from 'node:fs/promises';\n\ntry {\n  await mkdir(folder, { recursive: true });\n} "
        "catch (err) {\n  console.error(err.message);\n}\n```\n",
    )
    assert short == "await mkdir(folder, { recursive: true });"
    assert "```js\nimport { mkdir } from 'node:fs/promises';" in text  # the block, whole


async def test_a_bridge_question_is_answered_from_the_passage_it_leads_to() -> None:
    member = chunk(
        0,
        "Ana Ruiz (born 4 May 1950) was a Chilean diplomat who served two terms as president "
        "of the Harbour League.",
        "Ana Ruiz",
    )
    league = chunk(
        1,
        "The Harbour League is an association of port cities founded on 12 June 1921 in Bergen.",
        "Harbour League",
    )
    written = await write_answer(
        "The organization that Ana Ruiz served as president was founded on what date?",
        [member, league],
        None,
    )
    assert written.short_answer == "12 June 1921"
    born = await write_answer("When was Ana Ruiz born?", [member, league], None)
    assert born.short_answer == "4 May 1950"


async def test_a_model_short_line_is_kept_only_when_a_passage_supports_it() -> None:
    class Reply:
        def __init__(self, text: str) -> None:
            self.text = text

        async def __call__(self, messages: object, settings: object) -> ModelResponse:
            return ModelResponse(text=self.text)

    passage = chunk(0, "The header of every message takes 16 bytes, and the body follows it.")
    body = "The header of every message takes 16 bytes [1]."
    kept = await write_answer(
        "How big is the header?", [passage], Reply(f"16 bytes [1]\n\n{body}"), style="generative"
    )
    assert kept.short_answer == "16 bytes" and kept.text.startswith("16 bytes [1]\n\n")
    invented = await write_answer(
        "How big is the header?",
        [passage],
        Reply(f"32 kilobytes [1]\n\n{body}"),
        style="generative",
    )
    assert invented.short_answer == "16 bytes"  # drawn from the checked sentence instead
