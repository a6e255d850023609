"""Topic names from what a small model writes: a long run of numbers is no topic, and reading it
takes one pass, not one per way of splitting its digits."""

from __future__ import annotations

import pytest

from kforge.agents.common.naming import topic_name


@pytest.mark.parametrize(
    "value",
    [
        # what the bundled model proposed as a missing category on the gettext manual
        "10.2023.2023.2023.2023.2023.2023.2023.2023.2023.2023.2023.20",
        "1." + "1" * 60 + "!",
        "A." + "2023" * 15 + "?",
    ],
)
def test_a_run_of_numbers_is_no_topic(value: str) -> None:
    assert topic_name(value) == ""


def test_section_numbers_still_come_off_titles() -> None:
    assert topic_name("10.1 Invoking the msgmerge Program") == "Invoking the msgmerge Program"
    assert topic_name("A.1. Language Codes") == "Language Codes"
