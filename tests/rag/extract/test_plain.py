"""Plain text read for its numbered outline, with its table of contents and banner blanked."""

from __future__ import annotations

from kforge.rag.extract import extract

FAQ = """\
   __        __
  /  \\  /\\  /  \\
  \\__/ /--\\ \\__/

Widget FAQ

 1. Basics
  1.1 What is a widget?
  1.2 Who makes widgets?
 2. Building
  2.1 How do I build a widget?

==========================================================

1. Basics

  1.1 What is a widget?

  A widget is a small part that does one thing.

  1.2 Who makes widgets?

  Volunteers make them.

2. Building

  2.1 How do I build a widget?

  Follow these steps:

  1. fetch the parts

  2. join them in order.

  3. test the result
"""


def test_numbered_headings_are_sections_and_their_contents_is_blanked() -> None:
    doc = extract("FAQ", FAQ.encode())
    assert doc.format == "text" and len(doc.text) == len(FAQ)  # offsets point into the file
    assert [s.heading for s in doc.sections] == [
        "1. Basics",
        "1. Basics > 1.1 What is a widget?",
        "1. Basics > 1.2 Who makes widgets?",
        "2. Building",
        "2. Building > 2.1 How do I build a widget?",
    ]
    for section in doc.sections:
        assert FAQ[section.start : section.body_start].strip() == section.heading.split(" > ")[-1]
    # the contents and the logo show nothing; the steps of 2.1 are no headings
    assert doc.text.index("1.1 What is a widget?") > doc.text.index("=====")
    assert "/--\\" not in doc.text and doc.text.count("\n") == FAQ.count("\n")
    assert "Widget FAQ" in doc.text and "2. join them in order." in doc.text


def test_text_without_an_outline_is_left_as_it_is() -> None:
    text = "Notes\n\n1. Buy milk.\n\n2. Call home\n\nSee you.\n"
    doc = extract("notes.txt", text.encode())
    assert doc.text == text and doc.sections == ()
