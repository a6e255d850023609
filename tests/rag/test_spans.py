"""The answering span of a question asking for one thing, through ``write_answer`` (the public
path: the short answer line) and the rules of ``kforge.rag.spans`` on their own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kforge.rag.grounded import write_answer
from kforge.rag.named_answer import answer_span, widen_place
from kforge.rag.question import read_question
from kforge.rag.spans import cloze_span, described_subject, kind_of, named_kind, shared_attribute
from tests.rag.test_short_answer import chunk


async def short(question: str, *pages: tuple[str, str]) -> str:
    chunks = [chunk(i, text, title) for i, (title, text) in enumerate(pages)]
    return (await write_answer(question, chunks, None)).short_answer


async def test_a_cloze_gives_what_the_sentence_says_where_the_question_has_its_what() -> None:
    line = await short(
        "The Vardon Treaty was signed by three ministers, one of whom was killed as part of what?",
        ("Vardon Treaty", "The Vardon Treaty was signed in 1931 by ministers Abel, Brun and Carr."),
        ("Olaf Brun", "Olaf Brun was a minister of Estland. Brun was killed as part of a failed "
         "palace coup by army officers in 1932."),
    )  # fmt: skip
    assert line == "a failed palace coup"


async def test_the_subject_a_sentence_describes_as_the_question_does_is_the_answer() -> None:
    line = await short(
        "Who is this Welsh chemist and naval adviser that worked with the poet Ada Finch?",
        ("Ada Finch", "Ada Finch is an English poet. She worked with Gwen Morgan on a book."),
        ("Gwen Morgan", "Gwen Morgan (born 1901) is a Welsh chemist and naval adviser to the "
         "Royal Navy."),
    )  # fmt: skip
    assert line == "Gwen Morgan"


async def test_what_two_people_have_in_common_is_the_word_both_descriptions_use() -> None:
    line = await short(
        "What profession do Ann Lee and Bo Park have in common?",
        ("Ann Lee", "Ann Lee (born 1950) is a Canadian journalist and novelist."),
        ("Bo Park", "Bo Park (born 1961) is an American writer, the author of twelve novels."),
    )
    assert line == "novelist"


async def test_a_place_keeps_the_larger_place_after_it() -> None:
    line = await short(
        'Where is the label that released the single "Glow" based?',
        ("Glow (song)", '"Glow" is a single released by Kestrel Records in 2015.'),
        ("Kestrel Records", "Kestrel Records is an American record label based in San Jose, "
         "California, with offices in Austin."),
    )  # fmt: skip
    assert line == "San Jose, California"


async def test_a_choice_is_quoted_as_the_text_writes_the_name() -> None:
    line = await short(
        "Which of Jonny Reed and Pete Hall has been a member of more bands?",
        ("Jonny Reed", 'Jonathan "Jonny" Reed (born 1980) has been a member of nine bands.'),
        ("Pete Hall", "Pete Hall is a singer in one band."),
    )
    assert line == 'Jonny" Reed'


async def test_are_both_x_or_y_is_answered_yes_or_no() -> None:
    line = await short(
        "Are both Lygodium or Maxillaria a genus of orchids?",
        ("Lygodium", "Lygodium is a genus of about 40 species of ferns."),
        ("Maxillaria", "Maxillaria is a large genus of orchids."),
    )
    assert line == "No."


def test_the_name_after_the_asked_noun_is_a_title_the_question_does_not_give() -> None:
    asked = read_question("She voiced roles for what Star Rangers spinoff series?")
    found = named_kind(asked, ['Her roles include the spin-off series "Star Rangers Go!".'])
    assert found is not None and found.text == '"Star Rangers Go!"'


def test_which_type_of_thing_is_the_kind_a_sentence_gives() -> None:
    asked = read_question("Which type of dragon is featured in the Morrow books?")
    found = kind_of(asked, ["The Morrow books feature Tilly.", "Tilly is a fictional dragon."])
    assert found is not None and found.text == "fictional dragon"


def test_a_cloze_needs_the_word_the_what_hangs_on() -> None:
    asked = read_question("The song was covered by what band?")
    assert cloze_span(asked, ["It was written by Kyle Cook and Lisa Drew."]) is None
    found = cloze_span(asked, ["It was covered by American country duo Love and Theft."])
    assert found is not None and found.text == "Love and Theft"  # the name the phrase ends in


def test_a_subject_the_question_names_or_a_pronoun_is_not_the_answer() -> None:
    asked = read_question("Which public research university does the union serve?")
    units = ["It is a public research university in Leicestershire.",
             "Lough University (abbreviated Lough) is a public research university."]  # fmt: skip
    found = described_subject(asked, units, ["Lough University", "Lough University"])
    assert found is not None and found.text == "Lough University" and found.unit == 1


def test_nothing_in_common_without_two_items() -> None:
    asked = read_question("What profession do Ann Lee and Bo Park have in common?")
    assert shared_attribute(asked, ["Ann Lee is a Canadian novelist."], [0]) is None


def test_a_place_is_widened_only_by_a_short_place_name() -> None:
    assert widen_place("based in Hilo, Hawaii.", "Hilo") == "Hilo, Hawaii"
    assert widen_place("in Hilo, which has a port.", "Hilo") == "Hilo"


_VOCABULARY = (
    "the a of in at by from is was an what which who airport band Airport Grass Blue "
    'Kentucky , . ( ) born 1947 singer American killed covered Love and Theft " She It'
)
_WORDS = st.sampled_from(_VOCABULARY.split())
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=18).map(" ".join)
_QUESTIONS = st.sampled_from(
    [
        "The trainer was killed at what Kentucky airport?",
        "Who is this American singer born in 1947?",
        "The song was covered by what band?",
        "What profession do Ann Lee and Bo Park have in common?",
        "Which type of band is Love and Theft?",
        "Where is the Blue Grass band based?",
    ]
)


@settings(max_examples=300, deadline=None)
@given(question=_QUESTIONS, sentences=st.lists(_SENTENCE, min_size=1, max_size=5))
def test_for_any_sentences_a_span_is_copied_from_the_passage_it_names(
    question: str, sentences: list[str]
) -> None:
    passages = [chunk(i, s, f"Page {i}") for i, s in enumerate(sentences)]
    found = answer_span(
        read_question(question), sentences[:2], list(range(min(2, len(sentences)))), passages
    )
    if found is not None:
        text, source = found
        assert text.strip() and text in passages[source].text


async def test_in_what_year_is_the_date_where_the_question_has_its_what() -> None:
    line = await short(
        "The 1999 Harbor Festival took place at the arena that was completed in what year?",
        ("1999 Harbor Festival", "The 1999 Harbor Festival took place in 2002 at the Harbor "
         "Arena, the indoor arena of Rivertown."),
        ("Harbor Arena", "Harbor Arena is home to the Rivertown Sharks. The arena was completed "
         "in 1998 and seats 19,000 people."),
    )  # fmt: skip
    assert line == "1998"
